"""The first screen: every run with its reliability, cost and date; pick two to compare."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.text import counted
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key, num
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.report import RunSummary


def _left_out(r: RunSummary) -> str:
    parts = []
    if r.infra:
        parts.append(f"{r.infra} infra")
    if r.unscored:
        parts.append(f"{r.unscored} unscored")
    return " · ".join(parts) or "-"


def _cost(v: float | None) -> str:
    """A run's cost in cents, but a cost under a cent to two figures: a run of $0.00135 read $0.00."""
    if v is None:
        return "-"
    if 0 < v < 0.005:
        return f"${v:.4f}" if v >= 0.00005 else "<$0.0001"
    return f"${v:,.2f}"


class RunsLoaded(Message):
    def __init__(self, rows: list[RunSummary], k: int | None = 1, chosen: bool = False) -> None:
        super().__init__()
        self.rows = rows
        self.k = k
        self.chosen = chosen


#: from this width the import date is a column; narrower, it is on the line under the table
WIDE = 100
#: the narrowest the run names get before optional columns move under the table
NAME_MIN = 24


class RunWarnings(Message):
    def __init__(self, lines: dict[str, str], audits: dict[str, str] | None = None) -> None:
        super().__init__()
        self.lines = lines  # run -> its graded-rewards warning
        self.audits = audits or {}  # run -> what its audit found (``audit_note``)


class RunsScreen(ReviewerScreen):
    BINDINGS = [
        Binding("enter", "open_run", "Tasks", id="runs.open"),
        Binding("space", "mark", "Mark", id="runs.mark"),
        Binding("d", "compare", "Compare", id="runs.compare"),
        Binding("F", "failures", "Failures", id="runs.failures"),
        Binding("t", "trials", "Trials", id="runs.trials"),
        Binding("L", "label", "Label", id="runs.label"),
        # off the footer, which is full at 100 columns; `?` and the palette list it
        Binding("A", "agreement", "Judge agreement", id="runs.agreement", show=False),
        Binding("U", "audit", "Audit", id="runs.audit", show=False),
        Binding("D", "plan", "Power plan", id="runs.plan", show=False),
        Binding("G", "gate", "Gate vs baseline", id="runs.gate", show=False),
        Binding("M", "monitor", "Monitor", id="runs.monitor", show=False),
        Binding("i", "import", "Import", id="runs.import"),
        Binding("k", "choose_k", "Choose k", id="runs.k"),
        Binding("P", "rescore", "Pass threshold", id="runs.rescore", show=False),
        Binding("R", "reload", "Reload", show=False, id="runs.reload"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.marked: list[str] = []
        self.rows: list[RunSummary] = []
        self.k: int | None = 1  # None: each run at its own k (RunSummary.k)
        self.k_chosen = False
        self.shown_names: dict[str, str] = {}
        self._detail_names: dict[int, dict[str, str]] = {}  # room -> run -> name under the table
        self.warnings: dict[str, str] = {}  # run -> its graded-rewards warning
        self.data_version = -1  # the app's data_version when the runs were last read

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Runs", classes="title")
        yield Table(id="runs", cursor_type="row", zebra_stripes=True)
        yield Static("", id="runs-detail", classes="detail")
        yield Static("", id="runs-status", classes="status")
        warning = Static("", id="runs-warning", classes="status")
        warning.display = False
        yield warning
        yield KeyFooter()

    def on_mount(self) -> None:
        self.action_reload()

    def _columns(self, table: DataTable[Any], rows: list[RunSummary]) -> None:
        """Widths from the data itself, so the table looks the same however fast it was filled; the
        run names take what the other columns leave, cut in the middle and never two alike (the
        highlighted run's whole name is on the line under the table)."""
        from reviewer.text import distinct_elisions, visible

        total = self.size.width or 120
        table.clear(columns=True)
        columns: list[tuple[str, Text | str, int]] = [
            ("tasks", Text("tasks", justify="right"), 6),
            ("trials", Text("trials", justify="right"), 7),
            ("p1", Text("pass@1", justify="right"), 6),
            ("phk", Text(f"pass^{self.k or 'k'}", justify="right"), 8 if self.k else 11),
            (
                "cost",
                Text("cost", justify="right"),
                max([4] + [len(_cost(r.cost_usd)) for r in rows]),
            ),
        ]
        if total >= WIDE:  # narrower: the date goes to the line under the table
            columns.append(("imported", "imported", 16))
        # only when a run has them, so a plain database looks as it always did
        if any(r.infra or r.unscored for r in rows):
            width = max([len("left out")] + [len(_left_out(r)) for r in rows])  # its header too
            columns.append(("left_out", Text("left out", justify="right"), width))
        if len({r.model for r in rows if r.model}) > 1:  # when it tells runs apart
            width = min(28, max(len(r.model or "") for r in rows))
            columns.append(("model", "model", max(5, width)))
        names = {r.name: visible(r.name, single_line=True) for r in rows}

        def fixed_width() -> int:
            return 1 + sum(w for _, _, w in columns) + 2 * (len(columns) + 2) + 2

        # narrow: the model, then what was left out, go to the line under the table before the
        # run names shrink below NAME_MIN (a name cut to 12 characters tells runs apart poorly)
        for optional in ("model", "left_out"):
            if total - fixed_width() >= NAME_MIN:
                break
            columns = [c for c in columns if c[0] != optional]
        fixed = fixed_width()
        longest = max([3] + [len(n) for n in names.values()])
        run_w = max(3, min(longest, max(12, total - fixed)))
        shown = distinct_elisions(sorted(set(names.values())), run_w)
        self.shown_names = {name: shown[v] for name, v in names.items()}
        table.add_column(" ", key="mark", width=1)
        table.add_column("run", key="run", width=run_w)
        for key, label, width in columns:
            table.add_column(label, key=key, width=width)

    def action_reload(self) -> None:
        self.data_version = getattr(self.app, "data_version", 0)
        self.query_one("#runs-status", Static).update("loading…")
        self.load_runs()

    def on_screen_resume(self) -> None:
        """Shown again: an import made since the runs were read (from any screen) reads them again."""
        if getattr(self.app, "data_version", 0) != self.data_version:
            self.action_reload()

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs-load")
    def load_runs(self) -> None:
        from reviewer.workflows.report import runs_overview

        chosen = getattr(self.app, "pass_k", None)
        with self.store() as db:
            overview = runs_overview(db, chosen)
        rows, k = overview.rows, overview.k
        self.post_message(RunsLoaded(rows, k, chosen is not None))

    def on_runs_loaded(self, message: RunsLoaded) -> None:
        self.rows = message.rows
        self.k, self.k_chosen = message.k, message.chosen
        self._fill()
        self._status()
        self.query_one("#runs", DataTable).focus()
        self.load_warnings([r.name for r in message.rows])

    def on_resize(self) -> None:
        if self.rows:
            self._fill()

    def _fill(self) -> None:
        table = self.query_one("#runs", DataTable)
        keep = self._current() if table.row_count else None
        self._columns(table, self.rows)
        self._detail_names = {}
        left_out = "left_out" in table.columns
        with_model = "model" in table.columns
        with_date = "imported" in table.columns
        for r in self.rows:
            extra: list[Text] = []
            if left_out:
                extra.append(
                    Text(_left_out(r), justify="right", style="yellow" if r.infra else "dim")
                )
            if with_model:
                extra.append(safe_text(r.model or "", single_line=True, limit=28))
            date = [safe_text(r.imported_at, single_line=True)] if with_date else []
            table.add_row(
                Text("✓" if r.name in self.marked else " ", style="bold green"),
                Text(self.shown_names[r.name], no_wrap=True),
                Text(str(r.tasks), justify="right"),
                Text(str(r.trials), justify="right"),
                num(r.pass_at_1),
                Text(
                    ("-" if r.pass_hat_k is None else f"{r.pass_hat_k:.2f}")
                    + ("*" if r.short else "")
                    + ("" if self.k else f" k={r.k}"),
                    justify="right",
                ),
                Text(_cost(r.cost_usd), justify="right"),
                *date,
                *extra,
                key=r.name,
            )
        if keep is not None and keep in {r.name for r in self.rows}:
            table.move_cursor(row=table.get_row_index(keep))
        self._detail()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def _detail(self) -> None:
        """The highlighted run's name (the table may show it cut) and what the table left out at this
        width, on one line: a name too long for it is cut in the middle, so a long name never grows
        the line and takes rows (and the highlighted one) from the table."""
        from reviewer.text import visible

        detail = self.query_one("#runs-detail", Static)
        name = self._current()
        r = next((r for r in self.rows if r.name == name), None)
        if r is None:
            detail.update("")
            return
        table = self.query_one("#runs", DataTable)
        parts: list[str] = []
        if "imported" not in table.columns and r.imported_at:
            parts.append(f"imported {r.imported_at}")
        if r.model and "model" not in table.columns:
            parts.append(r.model)
        if (r.infra or r.unscored) and "left_out" not in table.columns:
            parts.append(f"left out: {_left_out(r)}")
        if r.pass_rule:
            parts.append(f"pass rule: {r.pass_rule}")
        rest = visible("".join(f" · {p}" for p in parts), single_line=True)
        # the name first: what the rest leaves, never under half the line (the rest is cut instead)
        width = max(1, (self.size.width or 120) - 2)
        shown = self._names_in(max(width // 2, width - len(rest)))[r.name]
        if r.source:  # what tells apart runs named alike (an eval run again: "popularity (2)"),
            # last: cut at the edge before anything else gives way to it
            file = r.source.replace(chr(92), "/").rsplit("/", 1)[-1]
            rest += visible(f" · first imported from {file}", single_line=True)
        detail.update(safe_text(shown + rest, single_line=True))

    def _names_in(self, room: int) -> dict[str, str]:
        """Every run's name in ``room`` characters, cut in the middle and never two alike (as the
        table cuts them), kept per room until the table is filled again."""
        from reviewer.text import distinct_elisions, visible

        if room not in self._detail_names:
            names = {r.name: visible(r.name, single_line=True) for r in self.rows}
            shown = distinct_elisions(sorted(set(names.values())), room)
            self._detail_names[room] = {name: shown[v] for name, v in names.items()}
        return self._detail_names[room]

    @work(thread=True, exclusive=True, exit_on_error=False, group="runs-warnings")
    def load_warnings(self, runs: list[str]) -> None:
        """Runs whose rewards look graded while no pass rule was chosen, and runs whose audit
        found something (copies, replays, leaked state), after the table is shown."""
        from reviewer.workflows.audit import audit_note, graded_warning

        with self.store() as db:
            found = {run: line for run in runs if (line := graded_warning(db, run, short=True))}
            audits = {run: line for run in runs if (line := audit_note(db, run))}
        self.post_message(RunWarnings(found, audits))

    def on_run_warnings(self, message: RunWarnings) -> None:
        self.warnings = message.lines
        # the key first, so that a narrow terminal never cuts what to do
        lines = [
            f"⚠ P on it: pass threshold · {self.shown_names.get(run, run)}: {line}"
            for run, line in message.lines.items()
        ]
        audited = list(message.audits.items())
        if len(audited) <= 2:  # as the report's header warns: these runs' numbers count copies
            lines += [
                f"⚠ U on it: audit · {self.shown_names.get(run, run)}: {line}"
                for run, line in audited
            ]
        else:  # a line each would push the table away: the runs named, U says the rest
            from reviewer.text import name_list

            names = name_list([self.shown_names.get(run, run) for run, _ in audited])
            lines.append(
                f"⚠ U on it: audit · the audit found something in {len(audited)} runs: {names}"
            )
        warning = self.query_one("#runs-warning", Static)
        warning.update(safe_text("\n".join(lines), "yellow") if lines else "")
        warning.display = bool(lines)  # no line at all for runs judged by a rule they fit

    def _status(self) -> None:
        status = self.query_one("#runs-status", Static)
        if not self.rows:
            status.update("No runs yet: press i to import a file or folder (ctrl+p: every action).")
        elif self.marked:
            status.update(
                safe_text(
                    f"marked: {', '.join(self.marked)} — "
                    + (
                        "d compares them"
                        if len(self.marked) >= 2
                        else "mark one more run (space), then d compares them"
                    ),
                    single_line=True,
                )
            )
        else:
            short = (
                " · *: tasks with fewer than k trials left out"
                if any(r.short for r in self.rows)
                else ""
            )
            if self.k_chosen:
                which = f"pass^{self.k} for every run (chosen with k)"
            elif self.k:
                which = f"pass^{self.k}: each run's own k, the same for all (k: choose)"
            else:
                which = "pass^k at each run's own k (k: one for all)"
            status.update(
                f"{counted(len(self.rows), 'run')} · {which}{short} · Enter: tasks · space, d: compare"
            )

    def _current(self) -> str | None:
        return cursor_key(self.query_one("#runs", DataTable))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open_run(self) -> None:
        run = self._run_for("the tasks screen")
        if run is not None:
            self._open(run)

    def _open(self, run: str) -> None:
        from reviewer.tui.screens.tasks import TasksScreen

        row = next((r for r in self.rows if r.name == run), None)
        self.app.push_screen(TasksScreen(run, k=row.k if row is not None else self.k))

    def action_mark(self) -> None:
        run = self._run_for("comparing")
        if run is None:
            return
        if run in self.marked:
            self.marked.remove(run)
        else:
            self.marked = (self.marked + [run])[-2:]
        table = self.query_one("#runs", DataTable)
        for r in self.rows:
            table.update_cell(
                r.name, "mark", Text("✓" if r.name in self.marked else " ", style="bold green")
            )
        self._status()

    def action_choose_k(self) -> None:
        from reviewer.tui.screens.choose_k import choose_k

        choose_k(self.app)

    def reload_k(self) -> None:
        self.action_reload()

    def action_compare(self) -> None:
        from reviewer.tui.screens.compare import CompareScreen

        if len(self.marked) != 2:
            self.notify("Mark two runs with space first (old, then new).", severity="warning")
            return
        self.app.push_screen(CompareScreen(self.marked[0], self.marked[1]))

    def action_failures(self) -> None:
        from reviewer.tui.screens.failures import FailuresScreen

        self.app.push_screen(FailuresScreen())

    def action_import(self) -> None:
        from reviewer.tui.screens.importing import ImportModal

        def done(imported: bool | None) -> None:
            if imported:
                self.action_reload()

        self.app.push_screen(ImportModal(), done)

    def action_rescore(self) -> None:
        from reviewer.tui.screens.rescore import RescoreModal

        run = self._run_for("a pass threshold")
        if run is None:
            return
        if run not in self.warnings and len(self.warnings) == 1:
            # the one run the "⚠ P on it" line names, wherever the cursor is
            (run,) = self.warnings
        warning = self.warnings.get(run)

        def done(applied: bool | None) -> None:
            if applied:
                self.action_reload()

        self.app.push_screen(RescoreModal(run, warning), done)

    def action_agreement(self) -> None:
        from reviewer.tui.screens.agreement import AgreementScreen

        self.app.push_screen(AgreementScreen())

    def action_audit(self) -> None:
        from reviewer.tui.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen(self._current()))

    def _run_for(self, what: str) -> str | None:
        """The highlighted run, or None with a toast saying why there is none."""
        run = self._current()
        if run is None:
            self.notify(
                f"No runs yet: {what} needs one. Press i to import a file or folder.",
                severity="warning",
            )
        return run

    def action_plan(self) -> None:
        from reviewer.tui.screens.plan import PlanScreen

        run = self._run_for("the power plan")
        if run is not None:
            self.app.push_screen(PlanScreen(run))

    def action_label(self) -> None:
        from reviewer.tui.screens.queues import QueuesScreen

        self.app.push_screen(QueuesScreen(self._current()))

    def action_trials(self) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        run = self._current()
        self.app.push_screen(
            TrialsScreen(TrialFilter(run=run), title=f"Trials of {run}" if run else "Trials")
        )

    def action_gate(self) -> None:
        from reviewer.tui.screens.gate import GateScreen

        run = self._run_for("the gate")
        if run is not None:
            self.app.push_screen(GateScreen(run))

    def action_monitor(self) -> None:
        from reviewer.tui.screens.monitor import MonitorScreen

        self.app.push_screen(MonitorScreen())
