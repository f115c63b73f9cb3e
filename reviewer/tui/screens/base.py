"""What every screen shares: a worker that fails shows the one error modal, and the app keeps running."""

from __future__ import annotations

from textual.screen import Screen
from textual.worker import Worker, WorkerState


class ReviewerScreen(Screen[None]):
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            show = getattr(self.app, "show_error", None)
            if show is not None:
                show(f"{event.worker.group or event.worker.name} failed", event.worker.error)
