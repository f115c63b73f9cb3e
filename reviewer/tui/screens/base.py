"""What every screen shares: the one way to reach the database from a worker, and a worker that fails
shows the one error modal while the app keeps running."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from textual.screen import Screen
from textual.worker import Worker, WorkerState

if TYPE_CHECKING:
    from reviewer.tui.app import ReviewerApp
    from reviewer.workflows.store_access import Store


def store_of(app: Any) -> Store:
    """A fresh connection to the app's database for the calling worker thread; the caller closes it
    (``with store_of(app) as db:``)."""
    return cast("ReviewerApp", app).open_store()


class StoreAccess:
    """``with self.store() as db:`` in a worker thread: a fresh connection, closed on leaving."""

    app: Any

    def store(self) -> Store:
        return store_of(self.app)


class ReviewerScreen(StoreAccess, Screen[None]):
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            show = getattr(self.app, "show_error", None)
            if show is not None:
                show(f"{event.worker.group or event.worker.name} failed", event.worker.error)
