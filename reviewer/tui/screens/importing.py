"""Import a file or folder from inside the app, in a worker, with a progress bar; Esc cancels."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, ProgressBar, Static
from textual.worker import get_current_worker

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import StoreAccess

if TYPE_CHECKING:
    from reviewer.models import Rubric
    from reviewer.tui.app import ReviewerApp
    from reviewer.workflows.imports import ImportOptions, ImportProgress, ImportSummary


class ImportMoved(Message):
    """Where the import is (the workflow's measure, bytes of the files, as the CLI's bar shows)."""

    def __init__(self, progress: ImportProgress) -> None:
        super().__init__()
        self.progress = progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ImportMoved)


class ImportDone(Message):
    def __init__(self, summary: str, rubric: Rubric | None = None, stored: bool = False) -> None:
        super().__init__()
        self.summary = summary
        self.rubric = rubric
        self.stored = stored  # the store changed: the app's screens read it again


def summary_text(summary: ImportSummary, options: ImportOptions | None = None) -> str:
    """What an import did, for the modal: the CLI's lines (the first skipped records with their
    ``file:line: reason``, the count line, the outcomes), then the rules and the rubric."""
    from reviewer.workflows.imports import summary_lines

    lines = summary_lines(summary, check=False, max_skips=8, options=options)
    lines += summary.rule_lines()
    if summary.rubric_problem:
        lines.append(summary.rubric_problem)
    if summary.rubric is not None:
        lines.append(f"rubric: {summary.rubric.ref} from {summary.rubric_file}")
    if summary.cancelled:
        lines.insert(0, "cancelled: the file being read was rolled back")
    return "\n".join(line.removeprefix("reviewer: ") for line in lines)


def import_prompt() -> str:
    """The modal's first line, the formats listed from the ingest registry so it cannot drift."""
    from reviewer.workflows.imports import FORMATS

    return "Import a file or folder; formats: " + ", ".join(fmt.NAME for fmt in FORMATS)


class ImportModal(StoreAccess, ModalScreen[bool]):
    """Path in, import in a worker, summary out; the screens below reload when it closes."""

    BINDINGS = [Binding("escape", "cancel", "Cancel / close", id="import.cancel")]
    DEFAULT_CSS = """
    ImportModal { align: center middle; }
    ImportModal > Vertical { width: 80%; max-width: 110; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    ImportModal ProgressBar { margin-top: 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.running = False
        self.imported = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(import_prompt(), id="import-formats")
            yield Input(placeholder="path, e.g. runs/ or results.jsonl", id="import-path")
            yield Input(
                placeholder="pass threshold for graded rewards, e.g. 0.7 (optional)",
                id="import-threshold",
            )
            yield ProgressBar(id="import-progress", show_eta=False)
            yield Static(
                "Enter imports · Tab: the pass threshold · Esc cancels", id="import-status"
            )

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one("#import-path", Input).focus()

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        from reviewer.workflows.rescore import RescoreError, check_threshold

        path_box = self.query_one("#import-path", Input)
        threshold_box = self.query_one("#import-threshold", Input)
        path = path_box.value.strip()
        if not path or self.running:
            if not path:
                path_box.focus()
            return
        threshold: float | None = None
        if threshold_box.value.strip():
            try:
                threshold = check_threshold(threshold_box.value.strip(), "pass threshold")
            except RescoreError as e:
                self.query_one("#import-status", Static).update(safe_text(str(e)))
                threshold_box.focus()
                return
        self.running = True
        for box in (path_box, threshold_box):  # what is typed now would not be what is imported
            box.disabled = True
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#import-status", Static).update("importing… (Esc cancels)")
        self.run_import(path, threshold)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import-run")
    def run_import(self, path: str, threshold: float | None = None) -> None:
        from reviewer.config import ConfigError
        from reviewer.workflows.imports import import_options, import_paths

        worker = get_current_worker()
        try:  # the threshold typed, else reviewer.toml's [import], as on the CLI
            options = import_options(self._app().settings.get(), pass_threshold=threshold)
        except (ConfigError, ValueError) as e:
            self.post_message(ImportDone(f"not imported: {e}", None))
            return

        def moved(at: ImportProgress) -> None:
            self.post_message(ImportMoved(at))

        with self.store() as db:
            summary = import_paths(
                db,
                [path],
                progress=moved,
                cancelled=lambda: worker.is_cancelled,
                options=options,
            )
        stored = summary.added + summary.updated > 0 or summary.rules_file is not None
        self.imported = self.imported or stored
        self.post_message(ImportDone(summary_text(summary, options), summary.rubric, stored))

    def on_import_moved(self, message: ImportMoved) -> None:
        at = message.progress
        self.query_one(ProgressBar).update(total=max(at.total, 1), progress=at.done)
        if not at.file:
            return
        if at.files_done == at.files:  # every file stored: the log and the audit are left
            text = f"{at.file}: {at.records:,} records; finishing (the log, the audit)…"
        else:
            files = f", {at.files_done} of {at.files} files done" if at.files > 1 else ""
            text = f"{at.file}: {at.records:,} records{files} (Esc cancels)"
        self.query_one("#import-status", Static).update(safe_text(text, single_line=True))

    def on_import_done(self, message: ImportDone) -> None:
        self.running = False
        if message.stored:
            self._app().data_version += 1
        if message.rubric is not None and self._app().rubric is None:
            self._app().rubric = message.rubric
        self.query_one(ProgressBar).display = False
        self.query_one("#import-threshold", Input).disabled = False
        path = self.query_one("#import-path", Input)
        path.disabled = False
        path.value = ""
        path.focus()
        self.query_one("#import-status", Static).update(
            safe_text(message.summary + "\nEnter imports another path · Esc closes")
        )

    def action_cancel(self) -> None:
        if self.running:
            for w in self.workers:
                if w.group == "import-run":
                    w.cancel()
            self.query_one("#import-status", Static).update(
                "cancelling: the file being read is rolled back…"
            )
            return
        self.dismiss(self.imported)
