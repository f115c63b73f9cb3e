"""One modal for every failure a worker reports: the app keeps running."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from reviewer.tui.safe import safe_text


class ErrorModal(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter", "dismiss", "Close", id="error.close")]

    DEFAULT_CSS = """
    ErrorModal { align: center middle; }
    ErrorModal > Vertical {
        width: 70%; max-width: 100; height: auto; max-height: 80%;
        border: thick $error; background: $surface; padding: 1 2;
    }
    ErrorModal #error-title { text-style: bold; color: $error; }
    ErrorModal Button { margin-top: 1; }
    """

    def __init__(self, title: str, detail: str) -> None:
        super().__init__()
        self.error_title = title
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(safe_text(self.error_title), id="error-title")
            yield Static(safe_text(self.detail), id="error-detail")
            yield Button("Close", variant="error", id="error-close")

    def on_button_pressed(self) -> None:
        self.dismiss()
