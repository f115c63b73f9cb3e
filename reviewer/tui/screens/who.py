"""Who is labeling: asked when the app opens in a browser (`reviewer serve`), where every browser
session is its own process and its own labeler, and the login name would be the server's for all."""

from __future__ import annotations

import secrets

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewer.models import MAX_LABELER, clean_labeler

#: The longest labeler name taken (a name, not a text).
MAX_NAME = MAX_LABELER


def session_name() -> str:
    """A name of its own for a browser session whose labeler gave none."""
    return f"browser-{secrets.token_hex(3)}"


def clean_name(text: str) -> str | None:
    """The name typed, trimmed, or None when it cannot be one (empty, too long, control
    characters): the CLI's rule (``models.clean_labeler``)."""
    return clean_labeler(text)


class WhoModal(ModalScreen[str]):
    """Returns the labeler's name (a session name of its own when Esc or an empty Enter)."""

    BINDINGS = [Binding("escape", "skip", "Skip", id="who.skip")]
    DEFAULT_CSS = """
    WhoModal { align: center middle; }
    WhoModal > Vertical { width: 80%; max-width: 80; height: auto; border: thick $accent;
        background: $surface; padding: 0 1; }
    WhoModal #who-problem { color: $error; }
    """

    def __init__(self, reason: str | None = None) -> None:
        super().__init__()
        self.fallback = session_name()
        self.reason = reason or (
            "Each browser session is its own labeler: your labels are stored under this name."
        )

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Who is labeling?", id="who-title")
            yield Static(self.reason)
            yield Input(placeholder=self.fallback, id="who-name")
            yield Static("", id="who-problem")
            yield Static(f"Enter takes it · Esc (or nothing typed) labels as {self.fallback}")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.dismiss(self.fallback)
            return
        name = clean_name(event.value)
        if name is None:
            self.query_one("#who-problem", Static).update(
                f"a name of 1 to {MAX_NAME} printable characters"
            )
            return
        self.dismiss(name)

    def action_skip(self) -> None:
        self.dismiss(self.fallback)
