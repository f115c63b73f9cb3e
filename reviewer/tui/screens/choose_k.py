"""`k` (or the palette's "pass^k: choose k"): the k of pass^k on the runs and tasks screens; empty goes
back to the default (``metrics.passk.shared_k``)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class ChooseK(ModalScreen[int | None]):
    """Returns the k typed, 0 for the default, None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="choosek.cancel")]
    DEFAULT_CSS = """
    ChooseK { align: center middle; }
    ChooseK > Vertical { width: 60; height: auto; border: thick $accent; background: $surface; padding: 0 1; }
    """

    def __init__(self, current: int | None) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("k for pass^k (every trial of k passes) — empty: the default")
            yield Input(
                "" if self.current is None else str(self.current),
                placeholder="e.g. 4",
                type="integer",
                id="k-input",
            )
            yield Static("", id="k-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if not text:
            self.dismiss(0)
            return
        try:
            k = int(text)
        except ValueError:
            k = 0
        if k < 1:
            self.query_one("#k-error", Static).update("k must be a whole number, 1 or more")
            return
        self.dismiss(k)

    def action_cancel(self) -> None:
        self.dismiss(None)


def choose_k(app: Any) -> None:
    """Ask for k; the app remembers it and the runs and tasks screens reload with it."""

    def done(k: int | None) -> None:
        if k is None:
            return
        app.pass_k = k or None
        app.notify(f"pass^k: k = {k}" if k else "pass^k: the default k")
        for screen in app.screen_stack:
            reload = getattr(screen, "reload_k", None)
            if reload is not None:
                reload()

    app.push_screen(ChooseK(getattr(app, "pass_k", None)), done)
