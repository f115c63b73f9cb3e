"""A run's tasks: n, c, pass@1, pass@k, pass^k, the trial outcome strip, steps and cost; sortable."""

from __future__ import annotations

from typing import Any, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.text import counted, crashed
from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key, money, num, strip
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.report import TaskRow

# (column key to sort by, what the status line calls it)
_SORTS: list[tuple[str, str]] = [
    ("order", "import order"),
    ("phk", "pass^k, worst first"),
    ("p1", "pass@1, worst first"),
    ("flaky", "flaky first"),
    ("steps", "most steps first"),
    ("cost", "most expensive first"),
    ("task", "task name"),
]


class TasksLoaded(Message):
    def __init__(
        self,
        k: int,
        rows: list[TaskRow],
        rule: str = "",
        averages: str = "",
        warning: str = "",
        rewards: dict[str, float] | None = None,
        audit: str = "",
    ) -> None:
        super().__init__()
        self.k = k
        self.rows = rows
        self.rule = rule  # the run's pass rule in words, when not the default
        self.averages = averages  # the run's averages with their intervals, in words
        self.warning = warning  # the graded-rewards warning
        self.rewards = rewards or {}  # mean reward by task, when some rewards are partial
        self.audit = audit  # what the audit found (copies counted once change pass^k)


class FlakinessLoaded(Message):
    def __init__(self, tasks: dict[str, Any]) -> None:
        super().__init__()
        self.tasks = tasks


class TasksScreen(ReviewerScreen):
    BINDINGS = [
        Binding("enter", "open_task", "Trials", id="tasks.open"),
        Binding("F", "failing", "Failing trials", id="tasks.failing"),
        Binding("s", "sort", "Sort", id="tasks.sort"),
        Binding("y", "flaky_only", "Flaky only", id="tasks.flaky"),
        Binding("k", "choose_k", "Choose k", id="tasks.k"),
        Binding("P", "rescore", "Pass threshold", id="tasks.rescore", show=False),
        Binding("U", "audit", "Audit", id="tasks.audit", show=False),
        Binding("R", "reload", "Reload", show=False, id="tasks.reload"),
        Binding("escape", "app.pop_screen", "Back", id="tasks.back"),
    ]

    def __init__(self, run: str, k: int | None = None) -> None:
        super().__init__()
        self.run = run
        self.k = 1
        self.runs_k = k  # the k of the runs screen it was opened from: the same pass^k
        self.rows: list[TaskRow] = []
        self.sort_index = 0
        self.flaky_only = False
        self.rule = ""
        self.rewards: dict[str, float] = {}  # mean reward by task (partial rewards only)
        self.warning = ""  # the graded-rewards warning
        self.flakiness: dict[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(safe_text(f"Tasks of {self.run}", single_line=True), classes="title")
        warning = Static("", id="tasks-warning", classes="status")
        warning.display = False
        yield warning
        yield Table(id="tasks", cursor_type="row", zebra_stripes=True)
        # the averages of `reviewer report` with their 95% intervals over tasks
        yield Static("", id="tasks-average", classes="status")
        # where the highlighted task's failures come from (one line, like the status line)
        yield Static("", id="tasks-flakiness", classes="status")
        yield Static("loading…", id="tasks-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load_tasks()
        self.load_flakiness()

    # --- flakiness attribution (issue 18): one line for the highlighted task -----------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="tasks-flakiness")
    def load_flakiness(self) -> None:
        from reviewer.workflows.report import run_flakiness

        with self.store() as db:
            tasks = run_flakiness(db, self.run)
        self.post_message(FlakinessLoaded({t.task_id: t for t in tasks}))

    def on_flakiness_loaded(self, message: FlakinessLoaded) -> None:
        self.flakiness = message.tasks
        self._show_flakiness(self._current())

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value if event.row_key is not None else None
        self._show_flakiness(None if key is None else str(key))

    def _show_flakiness(self, task: str | None) -> None:
        t = self.flakiness.get(task) if task is not None else None
        if t is None:
            text = ""
        elif t.flaky:
            text = f"flaky: {t.summary()}"
        elif t.passed_when_run:
            text = (
                f"not flaky: every trial that ran to its end passed ({t.infra} of {t.trials} "
                "ended by infrastructure errors)"
            )
        elif t.infra and t.infra >= t.trials:  # the harness crashed every trial: none was scored
            text = (
                f"not flaky: no trial ran to its end ({counted(t.infra, 'infrastructure error')})"
            )
        else:
            text = "not flaky: every trial passed" if t.passed else "not flaky: no trial passed"
        self.query_one("#tasks-flakiness", Static).update(safe_text(text, single_line=True))

    @work(thread=True, exclusive=True, exit_on_error=False, group="tasks-load")
    def load_tasks(self) -> None:
        from reviewer.workflows.report import tasks_overview

        with self.store() as db:
            got = tasks_overview(db, self.run, getattr(self.app, "pass_k", None) or self.runs_k)
        self.post_message(
            TasksLoaded(
                got.k, got.rows, got.pass_rule, got.averages, got.warning, got.rewards, got.audit
            )
        )

    def on_tasks_loaded(self, message: TasksLoaded) -> None:
        self.k, self.rows, self.rule = message.k, message.rows, message.rule
        self.rewards = message.rewards
        warning = self.query_one("#tasks-warning", Static)
        self.warning = message.warning
        # the key first: never cut
        lines = [f"⚠ P: pass threshold · {message.warning}"] if message.warning else []
        if message.audit:  # as the report's header warns: these numbers count copies
            lines.append(f"⚠ U: audit · {message.audit}")
        warning.update(safe_text("\n".join(lines), "yellow") if lines else "")
        warning.display = bool(lines)
        self.query_one("#tasks-average", Static).update(safe_text(message.averages))
        table = self.query_one("#tasks", DataTable)
        table.clear(columns=True)
        k = self.k
        table.add_column("task", key="task")
        columns = [("n", "n"), ("c", "c"), ("p1", "pass@1")]
        if k > 1:  # with k = 1 both would repeat pass@1
            columns += [("pak", f"pass@{k}"), ("phk", f"pass^{k}")]
        for key, label in columns:
            table.add_column(Text(label, justify="right"), key=key)
        if self.rewards:  # partial credit: the mean reward says how near the fails came
            table.add_column(Text("reward", justify="right"), key="reward")
        table.add_column("trials", key="strip")
        table.add_column(Text("steps", justify="right"), key="steps")
        table.add_column(Text("cost", justify="right"), key="cost")
        self._fill()
        table.focus()

    def _values(self, r: TaskRow) -> dict[str, Any]:
        from reviewer.workflows.report import task_rates

        return task_rates(r.n, r.c, self.k)

    def _sorted(self) -> list[TaskRow]:
        rows = [r for r in self.rows if not self.flaky_only or 0 < r.c < r.n]
        key = _SORTS[self.sort_index][0]
        low = -1.0

        def value(r: TaskRow) -> Any:
            v = self._values(r)
            if key == "phk":
                return (v["phk"] if v["phk"] is not None else low, v["p1"])
            if key == "p1":
                return v["p1"]
            if key == "flaky":
                return (not v["flaky"], r.c / r.n if r.n else 0)
            if key == "steps":
                return -(r.avg_steps or 0)
            if key == "cost":
                return -(r.avg_cost or 0)
            if key == "task":
                return r.task_id
            return 0

        return sorted(rows, key=value) if key != "order" else rows

    def _fill(self) -> None:
        table = self.query_one("#tasks", DataTable)
        table.clear()
        for r in self._sorted():
            v = self._values(r)
            table.add_row(
                safe_text(
                    r.task_id, "bold yellow" if v["flaky"] else "", single_line=True, limit=40
                ),
                Text(str(r.n), justify="right"),
                Text(str(r.c), justify="right"),
                num(v["p1"]),
                *([num(v["pak"]), num(v["phk"])] if self.k > 1 else []),
                *([num(self.rewards.get(r.task_id))] if self.rewards else []),
                strip(r.outcomes, r.kinds),
                num(r.avg_steps, "{:.1f}"),
                money(r.avg_cost),
                key=r.task_id,
            )
        flaky = sum(1 for r in self.rows if 0 < r.c < r.n)
        shown = "flaky only" if self.flaky_only else "all"
        infra = sum(r.infra for r in self.rows)
        unscored = sum(r.unscored for r in self.rows)
        legend = "● pass ○ fail"
        left_out = []
        if infra:
            legend += " ⚠ infrastructure error"
            left_out.append(f"{crashed(infra)}, left out")
        if unscored:
            legend += " · unscored"
            left_out.append(f"{unscored} unscored, left out")
        rule = f" · {self.rule}" if self.rule else ""
        chosen = "chosen with k" if getattr(self.app, "pass_k", None) else "this run's own"
        rule += (
            f" · k={self.k} ({chosen})"
            if self.k > 1
            else " · one trial per task: pass^k needs two or more (k chooses)"
            if all(r.n <= 1 for r in self.rows)
            else f" · k=1 ({chosen}; k chooses)"
        )
        self.query_one("#tasks-status", Static).update(
            # what changes the numbers first (left out, the pass rule, k), the legend last: the
            # line is cut at the screen's width, and at 80 columns it ended before them
            safe_text(
                counted(len(self.rows), "task")
                + "".join(f" · {x}" for x in left_out)
                + " · n counts scored trials" * bool(left_out)
                + f" · {flaky} flaky (0 < c < n, in yellow)"
                + rule
                + f" · showing {shown} · sorted by {_SORTS[self.sort_index][1]} · {legend}"
            )
        )

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        for i, (key, _) in enumerate(_SORTS):
            if key == event.column_key.value:
                self.sort_index = i
                self._fill()
                return

    def action_audit(self) -> None:
        from reviewer.tui.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen(self.run))

    def action_rescore(self) -> None:
        from reviewer.tui.screens.rescore import RescoreModal

        def done(applied: bool | None) -> None:
            if applied:
                self.load_tasks()
                self.load_flakiness()
                for screen in self.app.screen_stack:  # the runs screen below shows the new rates
                    if screen is not self and hasattr(screen, "action_rescore"):
                        getattr(screen, "action_reload", lambda: None)()

        self.app.push_screen(RescoreModal(self.run, self.warning or None), done)

    def action_choose_k(self) -> None:
        from reviewer.tui.screens.choose_k import choose_k

        choose_k(self.app)

    def reload_k(self) -> None:
        self.runs_k = None
        self.load_tasks()

    def action_reload(self) -> None:
        self.load_tasks()

    def action_sort(self) -> None:
        self.sort_index = (self.sort_index + 1) % len(_SORTS)
        self._fill()

    def action_flaky_only(self) -> None:
        if not self.flaky_only and not any(0 < r.c < r.n for r in self.rows):
            # an empty table under a line about a task no longer shown says nothing: say why
            single = all(r.n <= 1 for r in self.rows)
            self.notify(
                "No flaky task in this run (0 < c < n): "
                + (
                    "with one scored trial per task none can be"
                    if single
                    else "every task passed all or none of its scored trials"
                ),
                markup=False,
            )
            return
        self.flaky_only = not self.flaky_only
        self._fill()

    def _current(self) -> str | None:
        return cursor_key(self.query_one("#tasks", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._trials(str(event.row_key.value), None)

    def action_open_task(self) -> None:
        task = self._current()
        if task is not None:
            self._trials(task, None)

    def action_failing(self) -> None:
        task = self._current()
        if task is None:
            return
        row = next((r for r in self.rows if r.task_id == task), None)
        if row is not None and row.c == row.n:  # no scored trial failed: an empty list says little
            others = [
                what
                for n, what in (
                    (row.infra, counted(row.infra, "infrastructure error")),
                    (row.unscored, f"{row.unscored} unscored"),
                )
                if n
            ]
            self.notify(
                f"No failing trials in task {clean(task, single_line=True)}: {row.c} of {row.n} "
                "scored trials passed"
                + (f" ({', '.join(others)}; Enter lists them)" if others else ""),
                markup=False,
            )
            return
        self._trials(task, "fail")

    def _trials(self, task: str, outcome: Literal["pass", "fail"] | None) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        title = f"{'Failing trials' if outcome else 'Trials'} of {task} ({self.run})"
        self.app.push_screen(
            TrialsScreen(TrialFilter(run=self.run, task_id=task, outcome=outcome), title=title)
        )
