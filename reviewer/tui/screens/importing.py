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
    from reviewer.tui.app import ReviewerApp


class ImportProgress(Message):
    def __init__(self, file: str, records: int, files_done: int, files: int) -> None:
        super().__init__()
        self.file, self.records, self.files_done, self.files = file, records, files_done, files

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ImportProgress)


class ImportDone(Message):
    def __init__(self, summary: str) -> None:
        super().__init__()
        self.summary = summary


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
            yield Static(
                "Import a file or folder (native JSONL, tau-bench, tau2-bench, Inspect, OpenAI chat)"
            )
            yield Input(placeholder="path, e.g. runs/ or results.jsonl", id="import-path")
            yield ProgressBar(id="import-progress", show_eta=False)
            yield Static("Enter imports · Esc cancels", id="import-status")

    def on_mount(self) -> None:
        self.query_one(ProgressBar).display = False
        self.query_one(Input).focus()

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        path = event.value.strip()
        if not path or self.running:
            return
        self.running = True
        bar = self.query_one(ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#import-status", Static).update("importing… (Esc cancels)")
        self.run_import(path)

    @work(thread=True, exclusive=True, exit_on_error=False, group="import-run")
    def run_import(self, path: str) -> None:
        from reviewer.importer import discover, import_paths
        from reviewer.store.violations import check_new_trials

        worker = get_current_worker()
        files, _ = discover([path])
        done = [0]

        def progress(name: str, records: int) -> None:
            if worker.is_cancelled:
                raise InterruptedError("import cancelled")
            self.post_message(ImportProgress(name, records, done[0], len(files)))

        def on_file(_result: object) -> None:
            done[0] += 1
            self.post_message(ImportProgress("", 0, done[0], len(files)))

        with self.store() as db:
            summary = import_paths(db, [path], progress=progress, on_file=on_file)
            check_new_trials(db, summary.new_ids)
        problems = [f.error for f in summary.files if f.error and not f.ignored] + summary.errors
        text = (
            f"imported {summary.added} trials ({len(summary.runs)} runs, {len(summary.tasks)} tasks); "
            f"{summary.already} already stored; {len(summary.skipped)} records skipped"
        )
        from reviewer.importer import pairs_summary

        pairs = pairs_summary(summary, check=False)
        if pairs:
            text += "\n" + pairs
        if problems:
            text += "\n" + "\n".join(str(p) for p in problems[:5])
        self.post_message(ImportDone(text))
        self.imported = summary.added > 0

    def on_import_progress(self, message: ImportProgress) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=max(message.files, 1), progress=message.files_done)
        if message.file:
            self.query_one("#import-status", Static).update(
                safe_text(
                    f"{message.file}: {message.records} records (Esc cancels)", single_line=True
                )
            )

    def on_import_done(self, message: ImportDone) -> None:
        self.running = False
        self.query_one(ProgressBar).display = False
        self.query_one("#import-status", Static).update(safe_text(message.summary + "\nEsc closes"))

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
