"""`P` on the Runs screen: a stored run's graded rewards judged again by a pass threshold (the job of
`reviewer rescore RUN --pass-threshold X`). Each threshold typed is tried first (what it would turn,
nothing written); Enter applies it."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import StoreAccess


class Rescored(Message):
    def __init__(
        self, threshold: str, lines: list[str], error: bool, applied: bool, apply: bool
    ) -> None:
        super().__init__()
        self.threshold = threshold
        self.lines = lines
        self.error = error
        self.applied = applied
        self.apply = apply  # the answer to Enter, not to a preview


class RescoreModal(StoreAccess, ModalScreen[bool]):
    """Returns True when a threshold was applied (the screens below reload)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="rescore.cancel")]
    DEFAULT_CSS = """
    RescoreModal { align: center middle; }
    RescoreModal > Vertical { width: 80%; max-width: 100; height: auto; border: thick $accent; background: $surface; padding: 0 1; }
    RescoreModal #rescore-preview { margin-top: 1; }
    """

    def __init__(self, run: str, warning: str | None = None) -> None:
        super().__init__()
        self.run = run
        self.warning = warning
        self.busy = False

    def compose(self) -> ComposeResult:
        with Vertical():
            title = safe_text(f"Pass threshold for run {self.run}", single_line=True, limit=90)
            yield Static(title, id="rescore-title")
            if self.warning:
                yield Static(safe_text(self.warning), id="rescore-warning", classes="warning")
            yield Static(
                "A reward at or above it passes (trials whose source said pass or fail keep it)."
            )
            yield Input(placeholder="e.g. 0.7", id="rescore-threshold")
            yield Static("Type a threshold to see what it changes.", id="rescore-preview")
            yield Static("Enter applies · Esc cancels", id="rescore-keys")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        text = event.value.strip()
        if text:
            self.preview(text)
        else:
            self.query_one("#rescore-preview", Static).update(
                "Type a threshold to see what it changes."
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        if text and not self.busy:
            self.busy = True
            event.input.disabled = True
            self.query_one("#rescore-preview", Static).update("applying…")
            self.apply(text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rescore-preview")
    def preview(self, text: str) -> None:
        self._job(text, apply=False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="rescore-apply")
    def apply(self, text: str) -> None:
        self._job(text, apply=True)

    def _job(self, text: str, *, apply: bool) -> None:
        import sqlite3

        from reviewer.workflows.rescore import RescoreError, check_threshold, rescore_run
        from reviewer.workflows.store_access import StoreError, describe_error

        try:
            x = check_threshold(text, "pass threshold")
            with self.store() as db:
                result = rescore_run(db, self.run, x, apply=apply)
        except (RescoreError, StoreError) as e:  # refused; or locked past the wait, damaged
            self.post_message(Rescored(text, [str(e)], True, False, apply))
            return
        except (sqlite3.Error, OSError) as e:  # the write refused: read-only, disk full
            self.post_message(
                Rescored(text, [describe_error(self.app.db_path, e)], True, False, apply)
            )
            return
        self.post_message(Rescored(text, result.lines(run_width=40), False, apply, apply))

    def on_rescored(self, message: Rescored) -> None:
        if message.applied:
            # the first line names the run and the rule (the screen below shows both)
            self.notify(
                "\n".join(message.lines[1:]),
                title=f"Pass threshold {message.threshold}",
                markup=False,
            )
            self.dismiss(True)
            return
        box = self.query_one(Input)
        if message.apply:  # the apply was refused: the input is the user's again
            self.busy = False
            box.disabled = False
            box.focus()
        elif self.busy or box.value.strip() != message.threshold:
            return  # an older preview: the text has moved on
        preview = self.query_one("#rescore-preview", Static)
        preview.update(safe_text("\n".join(message.lines)))
        preview.set_class(message.error, "error")

    def action_cancel(self) -> None:
        if not self.busy:
            self.dismiss(False)
