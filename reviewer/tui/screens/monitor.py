"""The Monitor screen: `reviewer monitor` in the app. One row per window with each rate (alerts
marked !), a sparkline per rate over the windows, the alert lines; Enter on a window lists its flagged
conversations, Enter on one opens its transcript (] / [ step through the others)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key
from reviewer.tui.widgets.footer import KeyFooter

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float | None]) -> str:
    """One block character per value, scaled from 0 to the largest (a gap for no value)."""
    known = [v for v in values if v is not None]
    top = max(known, default=0.0)
    out = []
    for v in values:
        if v is None:
            out.append(" ")
        else:
            out.append(
                _BARS[min(len(_BARS) - 1, int(v / top * (len(_BARS) - 1) + 0.5))]
                if top
                else _BARS[0]
            )
    return "".join(out)


@dataclass
class MonitorView:
    """What the screen shows, computed in the worker (a flagged row: id, name, why)."""

    header: str
    metrics: list[str]
    rows: list[tuple[str, list[Text]]]  # window start -> cells
    sparks: list[Text]
    alerts: list[str]
    notes: list[str]
    flagged: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)


class MonitorLoaded(Message):
    def __init__(self, view: MonitorView) -> None:
        super().__init__()
        self.view = view


class MonitorScreen(ReviewerScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="monitor.back"),
        Binding("enter", "open_window", "Flagged", id="monitor.open"),
        Binding("h", "toggle_window", "Day/hour", id="monitor.window"),
        Binding("V", "judge", "Judge the sample", id="monitor.judge"),
        Binding("R", "reload", "Reload", id="monitor.reload"),
    ]

    def __init__(self, size: str | None = None) -> None:
        super().__init__()
        self.window_size = size
        self.view: MonitorView | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Monitor", classes="title", id="monitor-title")
        yield Static("", id="monitor-sparks")
        yield DataTable(id="windows", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="monitor-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load(False)

    def action_reload(self) -> None:
        self.query_one("#monitor-status", Static).update("loading…")
        self.load(False)

    def action_judge(self) -> None:
        self.query_one("#monitor-status", Static).update("judging the sample…")
        self.load(True)

    def action_toggle_window(self) -> None:
        self.window_size = "hour" if (self.window_size or "day") == "day" else "day"
        self.action_reload()

    @work(thread=True, exclusive=True, exit_on_error=False, group="monitor-load")
    def load(self, judge: bool) -> None:
        from reviewer.metrics.monitor import metric_words
        from reviewer.store.monitor import trial_names
        from reviewer.workflows.monitor import MonitorError, MonitorRequest, run_monitor

        notes: list[str] = []
        with self.store() as db:
            try:
                report = run_monitor(
                    db, MonitorRequest(window=self.window_size, judge=judge), on_note=notes.append
                )
            except MonitorError as e:
                view = MonitorView(f"monitor: {e}", [], [], [], [], [])
                self.post_message(MonitorLoaded(view))
                return
            names = trial_names(db, list(report.flagged))
        cols = [*report.metrics, "tool_error_rate"]
        rows = []
        for w in report.windows:
            cells = [Text(w.start), Text(str(w.conversations), justify="right")]
            for m in cols:
                r = w.rates[m]
                alert = m in w.alerts
                value = "-" if r.rate is None else f"{100 * r.rate:.1f}%" + ("!" if alert else "")
                cells.append(Text(value, justify="right", style="bold red" if alert else ""))
            jp = w.judge_pass
            alert = "judge_fail" in w.alerts
            judge_cell = (
                "-" if jp.rate is None else f"{jp.rate:.2f} n={jp.n}" + ("!" if alert else "")
            )
            cells.append(Text(judge_cell, justify="right", style="bold red" if alert else ""))
            cells.append(Text(str(w.flagged), justify="right"))
            rows.append((w.start, cells))
        sparks = []
        width = max([len(metric_words(m)) for m in [*cols, "judge pass"]] + [4])
        for m in cols:
            series = [w.rates[m].rate for w in report.windows]
            sparks.append(safe_text(f"{metric_words(m):<{width}}  {sparkline(series)}"))
        series = [w.judge_pass.rate for w in report.windows]
        sparks.append(safe_text(f"{'judge pass':<{width}}  {sparkline(series)}"))
        flagged: dict[str, list[tuple[str, str, str]]] = {}
        for tid, why in report.flagged.items():
            run, task, trial = names.get(tid, ("?", "?", 0))
            flagged.setdefault(report.window_of[tid], []).append(
                (tid, f"{run} / {task} #{trial}", ", ".join(why))
            )
        notes += [n for n in (report.judge_line, report.judge_problem) if n]
        view = MonitorView(
            report.header(), cols, rows, sparks, report.alert_lines(), notes, flagged
        )
        self.post_message(MonitorLoaded(view))

    def on_monitor_loaded(self, message: MonitorLoaded) -> None:
        from reviewer.metrics.monitor import metric_words

        view = self.view = message.view
        table = self.query_one("#windows", DataTable)
        table.clear(columns=True)
        if view.rows:
            table.add_column("window", key="window")
            table.add_column(Text("convs", justify="right"), key="convs")
            for m in view.metrics:
                table.add_column(Text(metric_words(m), justify="right"), key=m)
            table.add_column(Text("judge pass", justify="right"), key="judge")
            table.add_column(Text("flagged", justify="right"), key="flagged")
            for start, cells in view.rows:
                table.add_row(*cells, key=start)
        self.query_one("#monitor-sparks", Static).update(Text("\n").join(view.sparks))
        status = [safe_text(view.header, single_line=True)]
        status += [safe_text(a, "bold red", single_line=True) for a in view.alerts]
        status += [safe_text(n, "dim", single_line=True) for n in view.notes[-3:]]
        if not view.rows and view.header.startswith("monitor: "):
            status.append(Text("no conversation with a time (started_at, timestamp) yet"))
        self.query_one("#monitor-status", Static).update(Text("\n").join(status))
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open_window(self) -> None:
        start = cursor_key(self.query_one("#windows", DataTable))
        if start is not None:
            self._open(start)

    def _open(self, start: str) -> None:
        rows = (self.view.flagged if self.view else {}).get(start, [])
        if not rows:
            self.notify(f"no flagged conversation in {start}")
            return
        self.app.push_screen(FlaggedScreen(start, rows))


class FlaggedScreen(ReviewerScreen):
    """The flagged conversations of one window and why; Enter opens the transcript."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="flagged.back"),
        Binding("enter", "open", "Transcript", id="flagged.open"),
    ]

    def __init__(self, window: str, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.window = window
        self.rows = rows

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            safe_text(f"Flagged in {self.window}: {len(self.rows)}", single_line=True),
            classes="title",
        )
        yield DataTable(id="flagged", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#flagged", DataTable)
        table.add_column("trial", key="trial")
        table.add_column("conversation", key="conv")
        table.add_column("why", key="why")
        for tid, name, why in self.rows:
            table.add_row(
                Text(tid[:12]),
                safe_text(name, single_line=True, limit=48),
                safe_text(why, single_line=True, limit=80),
                key=tid,
            )
        table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open(self) -> None:
        tid = cursor_key(self.query_one("#flagged", DataTable))
        if tid is not None:
            self._open(tid)

    def _open(self, trial_id: str) -> None:
        from reviewer.tui.nav import ListSequence
        from reviewer.tui.screens.transcript import TranscriptScreen

        ids = [r[0] for r in self.rows]
        self.app.push_screen(TranscriptScreen(trial_id, ListSequence(ids)))
