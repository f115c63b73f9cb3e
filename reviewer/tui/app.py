"""The reviewer app: runs → tasks → trials → transcript, failure clusters, comparison, help and palette."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from reviewer.tui.commands import ReviewerCommands
from reviewer.tui.safe import clean
from reviewer.tui.screens.runs import RunsScreen

if TYPE_CHECKING:
    from reviewer.models import Rubric
    from reviewer.store.db import Store


def _login_name() -> str:
    from reviewer.config import Config

    return Config().labeler_name()


class ReviewerApp(App[None]):
    """Triage agent runs from the terminal."""

    CSS_PATH = "app.tcss"
    TITLE = "reviewer"
    COMMANDS = App.COMMANDS | {ReviewerCommands}
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+p", "command_palette", "Palette", id="app.palette", show=False),
    ]

    def __init__(
        self,
        db_path: str | Path = "reviewer.db",
        keymap: dict[str, str] | None = None,
        labeler: str | None = None,
        rubric: Rubric | None = None,
    ) -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.sub_title = self.db_path.name
        self._user_keymap = dict(keymap or {})
        self.labeler = labeler or _login_name()
        self._migrated = False
        self.rubric = rubric

    def open_store(self) -> Store:
        """A fresh connection for the calling (worker) thread; the caller closes it."""
        from reviewer.store import open_store

        # migrations run on the first open only; later worker connections skip the check
        db = open_store(self.db_path, migrate=not self._migrated, on_wait=self._waiting)
        self._migrated = True
        return db

    def _waiting(self, message: str) -> None:
        """A writer waits for another process's write lock: say so (from any thread; notify posts)."""
        self.notify(message, severity="warning")

    def on_mount(self) -> None:
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        self.push_screen(RunsScreen())

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast (``widget.notify`` lands here too) is plain text: never markup, and control
        characters and escape sequences are shown, not sent to the terminal."""
        super().notify(
            clean(message),
            title=clean(title, single_line=True),
            severity=severity,
            timeout=timeout,
            markup=False,
        )

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's title and sub-title (a database file name, a screen's title) as plain text."""
        return super().format_title(
            clean(title, single_line=True), clean(sub_title, single_line=True)
        )

    def action_help(self) -> None:
        from reviewer.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def show_error(self, title: str, error: BaseException | str) -> None:
        """Show a failure in the one error modal; the untrusted text is never markup."""
        from reviewer.tui.screens.error import ErrorModal

        detail = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.push_screen(ErrorModal(title, detail))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.show_error(f"{event.worker.group or event.worker.name} failed", event.worker.error)
