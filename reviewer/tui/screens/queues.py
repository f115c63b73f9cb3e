"""Calibration queues: their progress, a new stratified sample, and labeling one (Enter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key
from reviewer.tui.widgets.footer import KeyFooter

if TYPE_CHECKING:
    from reviewer.tui.app import ReviewerApp


class QueuesLoaded(Message):
    def __init__(self, rows: list[tuple[str, str, int, int, str]]) -> None:
        super().__init__()
        self.rows = rows


class QueueMade(Message):
    """The `a` key's queue: sampled now, or found stored under its default name."""

    def __init__(self, name: str, created: bool, done: int, total: int, infra: int = 0) -> None:
        super().__init__()
        self.infra = infra  # trials ended by infrastructure errors, left out of the sample
        self.name = name
        self.created = created
        self.done = done
        self.total = total


class QueuesScreen(ReviewerScreen):
    BINDINGS = [
        Binding("enter", "label", "Label", id="queues.label"),
        Binding("a", "new", "New queue of 50", id="queues.new"),
        Binding("escape", "app.pop_screen", "Back", id="queues.back"),
    ]

    def __init__(self, run: str | None = None) -> None:
        super().__init__()
        self.run = run

    def _app(self) -> ReviewerApp:
        return cast("ReviewerApp", self.app)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Calibration queues", classes="title")
        yield DataTable(id="queues", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="queues-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#queues", DataTable)
        table.add_column("queue", key="queue")
        table.add_column("labeler", key="labeler")
        table.add_column(Text("done", justify="right"), key="done")
        table.add_column("created", key="created")
        self.load()

    def on_screen_resume(self) -> None:
        """Back from labeling: the progress shown is the database's, not the one at first sight."""
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="queues-load")
    def load(self) -> None:
        from reviewer.store.queues import list_queues, queue_progress

        with self.store() as db:
            rows = []
            for q in list_queues(db):
                done, total, _ = queue_progress(db, q.name, self._app().labeler)
                rows.append((q.name, q.labeler, done, total, q.created_at[:16].replace("T", " ")))
        self.post_message(QueuesLoaded(rows))

    def on_queues_loaded(self, message: QueuesLoaded) -> None:
        table = self.query_one("#queues", DataTable)
        table.clear()
        for name, labeler, done, total, created in message.rows:
            table.add_row(
                safe_text(name, single_line=True),
                safe_text(labeler, single_line=True),
                Text(f"{done} / {total}", justify="right", style="green" if done == total else ""),
                safe_text(created, single_line=True),
                key=name,
            )
        who = self._app().labeler
        self.query_one("#queues-status", Static).update(
            safe_text(
                f"{len(message.rows)} queues · labeling as {who} · Enter labels the queue · "
                "a samples a new stratified queue of 50",
                single_line=True,
            )
        )
        table.focus()

    def _current(self) -> str | None:
        return cursor_key(self.query_one("#queues", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_label()

    def action_label(self) -> None:
        from reviewer.tui.screens.label import LabelScreen

        name = self._current()
        if name is None:
            self.notify("No queue yet: press a to sample one.", severity="warning")
            return
        app = self._app()
        self.app.push_screen(LabelScreen(name, app.labeler, app.rubric))

    def action_new(self) -> None:
        self.sample()

    @work(thread=True, exclusive=True, exit_on_error=False, group="queues-sample")
    def sample(self) -> None:
        """The same job as `reviewer sample` with its defaults: a new queue, or the stored one to resume."""
        from reviewer.workflows.queues import make_queue

        app = self._app()
        try:
            with self.store() as db:
                made = make_queue(db, app.labeler, run=self.run)
        except ValueError as e:  # nothing left to sample, an unknown run
            self.notify(clean(str(e), single_line=True), severity="warning", markup=False)
            return
        self.post_message(
            QueueMade(made.queue.name, made.created, made.done, made.total, made.infra_left_out)
        )

    def on_queue_made(self, message: QueueMade) -> None:
        name = clean(message.name, single_line=True)
        if message.created:
            crashed = (
                f" {message.infra} ended by infrastructure errors left out."
                if message.infra
                else ""
            )
            self.notify(f"Queue {name}: {message.total} trials sampled.{crashed}", markup=False)
            self.load()
            return
        self.notify(
            f"Queue {name} exists ({message.done} / {message.total} labeled): resuming it.",
            markup=False,
        )
        from reviewer.tui.screens.label import LabelScreen

        app = self._app()
        self.app.push_screen(LabelScreen(message.name, app.labeler, app.rubric))
