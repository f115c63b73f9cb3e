"""The reviewer app: runs, and the per-task reliability table of a run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import Worker, WorkerState

from reviewer.tui.safe import safe_text

if TYPE_CHECKING:
    from sqlite_utils import Database


@dataclass
class TaskRow:
    task_id: str
    n: int
    c: int
    pass_at_1: float | None
    pass_at_k: float | None
    pass_hat_k: float | None
    strip: str


def _num(v: float | None) -> Text:
    return Text("-" if v is None else f"{v:.2f}", justify="right")


class RunsLoaded(Message):
    def __init__(self, rows: list[tuple[str, int, int, float, str]]) -> None:
        super().__init__()
        self.rows = rows


class TasksLoaded(Message):
    def __init__(self, run: str, k: int, rows: list[TaskRow]) -> None:
        super().__init__()
        self.run = run
        self.k = k
        self.rows = rows


class RunsScreen(Screen[None]):
    BINDINGS = [
        Binding("enter", "open_run", "Open run", id="runs.open"),
        Binding("r", "reload", "Reload", id="runs.reload"),
        Binding("q", "app.quit", "Quit", id="app.quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Runs", classes="title")
        yield DataTable(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="runs-status", classes="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        table.add_column("run", key="run")
        table.add_column(Text("tasks", justify="right"), key="tasks")
        table.add_column(Text("trials", justify="right"), key="trials")
        table.add_column(Text("pass@1", justify="right"), key="pass1")
        table.add_column("imported", key="imported")
        self.action_reload()

    def action_reload(self) -> None:
        self.query_one("#runs-status", Static).update("loading…")
        self.load_runs()

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs-load")
    def load_runs(self) -> None:
        app = self.app
        assert isinstance(app, ReviewerApp)
        db = app.open_db()
        try:
            from reviewer.store.queries import list_runs

            rows = [
                (
                    r.name,
                    r.tasks,
                    r.trials,
                    (r.passed / r.trials) if r.trials else 0.0,
                    r.imported_at or "",
                )
                for r in list_runs(db)
            ]
        finally:
            db.close()
        self.post_message(RunsLoaded(rows))

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        table = self.query_one("#runs", DataTable)
        table.clear()
        for name, tasks, trials, p1, imported in message.rows:
            table.add_row(
                safe_text(name, single_line=True),
                Text(str(tasks), justify="right"),
                Text(str(trials), justify="right"),
                _num(p1),
                safe_text(imported, single_line=True),
                key=name,
            )
        status = self.query_one("#runs-status", Static)
        if message.rows:
            status.update(f"{len(message.rows)} runs — Enter opens a run's tasks")
        else:
            status.update("No runs yet: quit and run `reviewer import PATH` or `reviewer PATH`.")
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.app.push_screen(TasksScreen(str(event.row_key.value)))

    def action_open_run(self) -> None:
        table = self.query_one("#runs", DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
            if key.value is not None:
                self.app.push_screen(TasksScreen(str(key.value)))


class TasksScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="tasks.back"),
        Binding("q", "app.quit", "Quit", id="app.quit"),
    ]

    def __init__(self, run: str) -> None:
        super().__init__()
        self.run = run

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(safe_text(f"Tasks of {self.run}", single_line=True), classes="title")
        yield DataTable(id="tasks", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="tasks-status", classes="status")
        yield Footer()

    def on_mount(self) -> None:
        self.load_tasks()

    @work(thread=True, exclusive=True, exit_on_error=False, group="tasks-load")
    def load_tasks(self) -> None:
        app = self.app
        assert isinstance(app, ReviewerApp)
        db = app.open_db()
        try:
            from reviewer.metrics.passk import default_ks, pass_at_k, pass_hat_k
            from reviewer.store.queries import task_counts, task_outcomes

            counts = task_counts(db, self.run)
            outcomes = task_outcomes(db, self.run)
        finally:
            db.close()
        ks = default_ks(n for _, n, _ in counts)
        k = ks[-1]
        rows = [
            TaskRow(
                task_id,
                n,
                c,
                pass_at_k(n, c, 1),
                pass_at_k(n, c, k),
                pass_hat_k(n, c, k),
                "".join("●" if ok else "○" for ok in outcomes.get(task_id, [])),
            )
            for task_id, n, c in counts
        ]
        self.post_message(TasksLoaded(self.run, k, rows))

    def on_tasks_loaded(self, message: TasksLoaded) -> None:
        table = self.query_one("#tasks", DataTable)
        table.clear(columns=True)
        k = message.k
        table.add_column("task", key="task")
        for key, label in (
            ("n", "n"),
            ("c", "c"),
            ("p1", "pass@1"),
            ("pak", f"pass@{k}"),
            ("phk", f"pass^{k}"),
        ):
            table.add_column(Text(label, justify="right"), key=key)
        table.add_column("trials", key="strip")
        for row in message.rows:
            flaky = 0 < row.c < row.n
            table.add_row(
                safe_text(row.task_id, "bold" if flaky else "", single_line=True),
                Text(str(row.n), justify="right"),
                Text(str(row.c), justify="right"),
                _num(row.pass_at_1),
                _num(row.pass_at_k),
                _num(row.pass_hat_k),
                Text(
                    row.strip,
                    style="green" if row.c == row.n else ("red" if row.c == 0 else "yellow"),
                ),
                key=row.task_id,
            )
        n_flaky = sum(1 for r in message.rows if 0 < r.c < r.n)
        self.query_one("#tasks-status", Static).update(
            f"{len(message.rows)} tasks, {n_flaky} flaky (0 < c < n) — ● pass ○ fail — Esc back"
        )
        table.focus()


class ReviewerApp(App[None]):
    """Triage agent runs from the terminal."""

    CSS_PATH = "app.tcss"
    TITLE = "reviewer"

    def __init__(self, db_path: str | Path = "reviewer.db") -> None:
        super().__init__()
        self.db_path = Path(db_path)
        self.sub_title = str(self.db_path)

    def open_db(self) -> Database:
        """A fresh connection for the calling (worker) thread."""
        from reviewer.store import open_db

        return open_db(self.db_path)

    def on_mount(self) -> None:
        self.push_screen(RunsScreen())

    def show_error(self, title: str, error: BaseException | str) -> None:
        """Show a failure in the one error modal; the untrusted text is never markup."""
        from reviewer.tui.screens.error import ErrorModal

        detail = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.push_screen(ErrorModal(title, detail))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.show_error(f"{event.worker.group or event.worker.name} failed", event.worker.error)
