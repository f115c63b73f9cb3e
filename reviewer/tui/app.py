"""The reviewer app: runs → tasks → trials → transcript, failure clusters, comparison, help and palette."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding
from textual.content import Content
from textual.notifications import SeverityLevel
from textual.worker import Worker, WorkerState

from reviewer.tui.commands import ReviewerCommands
from reviewer.tui.safe import clean
from reviewer.tui.screens.runs import RunsScreen

if TYPE_CHECKING:
    from reviewer.config import Settings
    from reviewer.models import Rubric
    from reviewer.workflows.store_access import Store


def state_path() -> Path:
    """Where the app keeps what it remembers between sessions (the theme): ``app-state.json`` beside
    the user's config file (``~/.config/reviewer/``, ``XDG_CONFIG_HOME`` honoured)."""
    from reviewer.config import user_config_path

    return user_config_path().parent / "app-state.json"


def load_state() -> dict[str, Any]:
    import json

    try:
        data = json.loads(state_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_state(**changes: Any) -> None:
    """Merge ``changes`` into the state file (written whole, then renamed); a failure is not fatal."""
    import json
    import os

    path = state_path()
    data = {**load_state(), **changes}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


#: How long a toast stays, in seconds, by severity: Textual's 5 for a note; a warning or an error is
#: read before it goes. A long text gets a second more for every 80 characters past the first 80, up
#: to TOAST_MAX (a text longer still belongs in a panel that scrolls, as the export's report does).
TOAST_SECONDS: dict[str, float] = {"information": 5.0, "warning": 8.0, "error": 10.0}
TOAST_MAX = 12.0


def toast_seconds(text: str, severity: str = "information") -> float:
    """How long a toast of ``text`` stays: the one rule for every toast of the app."""
    base = TOAST_SECONDS.get(severity, TOAST_SECONDS["information"])
    return max(base, min(base + max(0, len(text) - 80) / 80, TOAST_MAX))


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
        import_report: list[str] | None = None,
        import_note: str = "",
        settings: Settings | None = None,
        ask_labeler: bool = False,
        ask_reason: str | None = None,
    ) -> None:
        from reviewer.config import Settings

        super().__init__()
        #: reviewer.toml, read once for the app's whole life; every job is given it
        self.settings = settings if settings is not None else Settings()
        from reviewer.workflows.store_access import is_url, shown_url

        #: a SQLite file's path, or a PostgreSQL database's URL as given
        self.db_path: str | Path = str(db_path) if is_url(db_path) else Path(db_path)
        self.sub_title = (
            shown_url(str(db_path)) if isinstance(self.db_path, str) else self.db_path.name
        )
        self._user_keymap = dict(keymap or {})
        self.labeler = labeler or _login_name()
        self._migrated = False
        self.rubric = rubric
        self.import_report = list(import_report or [])
        self.import_note = import_note
        self.pass_k: int | None = None  # k of pass^k chosen with `k`; None: metrics.passk.shared_k
        #: bumped by every import that stored something, from whichever screen: a screen that read
        #: the store (the runs screen) reads it again when shown and this has moved
        self.data_version = 0
        #: served to a browser (`reviewer serve`): each session asks who labels before anything
        self.ask_labeler = ask_labeler
        #: why it asks, when not for a browser session (no login name to go by)
        self.ask_reason = ask_reason

    def open_store(self) -> Store:
        """A fresh connection for the calling (worker) thread; the caller closes it."""
        from reviewer.workflows.store_access import open_store

        # migrations run on the first open only; later worker connections skip the check
        db = open_store(self.db_path, migrate=not self._migrated, on_wait=self._waiting)
        self._migrated = True
        return db

    def _labeler_given(self, name: str | None) -> None:
        if name:
            self.labeler = name
            self.notify(f"Labeling as {name}", markup=False)

    def _theme_changed(self, theme: Any) -> None:
        """The palette's "change theme" (or any theme change) is remembered for the next session."""
        save_state(theme=getattr(theme, "name", str(theme)))

    def _waiting(self, message: str) -> None:
        """A writer waits for another process's write lock: say so (from any thread; notify posts)."""
        self.notify(message, severity="warning")

    def on_mount(self) -> None:
        if self._user_keymap:
            self.set_keymap(self._user_keymap)
        theme = load_state().get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.push_screen(RunsScreen())
        if self.ask_labeler:
            from reviewer.tui.screens.who import WhoModal

            self.push_screen(WhoModal(self.ask_reason), self._labeler_given)
        if self.import_report:
            from reviewer.tui.screens.import_report import ImportReport

            self.push_screen(ImportReport(self.import_report))
        elif self.import_note:  # only files it does not read: said, without stopping the user
            self.notify(self.import_note, title="Import")

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
        characters and escape sequences are shown, not sent to the terminal. A toast the same as one
        still on the screen is not stacked again (a key pressed twice says it once). It stays as
        long as ``toast_seconds`` says unless ``timeout`` is given."""
        text, head = clean(message), clean(title, single_line=True)
        for shown in self._notifications:
            if (shown.message, shown.title, shown.severity) == (text, head, severity):
                return
        if timeout is None:
            timeout = toast_seconds(text, severity)
        super().notify(text, title=head, severity=severity, timeout=timeout, markup=False)

    def withdraw(self, message: str) -> None:
        """Take off the screen the toasts that say MESSAGE (one that said work had started, now
        that its result is shown)."""
        text = clean(message)
        for shown in list(self._notifications):
            if shown.message == text:
                self._unnotify(shown)

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's title and sub-title (a database file name, a screen's title) as plain text."""
        return super().format_title(
            clean(title, single_line=True), clean(sub_title, single_line=True)
        )

    async def action_quit(self) -> None:
        """Quit; when the screen holds work not stored yet (rubric answers on a trial not labeled),
        ask first."""
        check = getattr(self.screen, "unsaved_work", None)
        lost = check() if callable(check) else None
        if not lost:
            self.exit()
            return
        from reviewer.tui.screens.label import ConfirmModal

        def answered(leave: bool | None) -> None:
            if leave:
                self.exit()

        self.push_screen(
            ConfirmModal(f"Quit? {lost}.", hint="Enter quits without them · Esc stays"), answered
        )

    def action_help(self) -> None:
        from reviewer.tui.screens.help import HelpScreen

        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(self.screen))

    def show_error(self, title: str, error: BaseException | str) -> None:
        """Show a failure in the one error modal; the untrusted text is never markup."""
        import sqlite3

        from reviewer.tui.screens.error import ErrorModal
        from reviewer.workflows.store_access import StoreError, describe_error, shown_db

        if isinstance(error, str):
            detail = error
        elif isinstance(error, StoreError):  # one line naming the database already
            detail = str(error)
        elif isinstance(error, sqlite3.Error):  # the line the CLI prints (a lost connection ...)
            detail = describe_error(shown_db(self.db_path), error)
        else:
            detail = f"{type(error).__name__}: {error}"
        self.push_screen(ErrorModal(title, detail))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.show_error(f"{event.worker.group or event.worker.name} failed", event.worker.error)
