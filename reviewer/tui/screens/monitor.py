"""The Monitor screen: `reviewer monitor` in the app. One row per window with each rate (alerts
marked !), a sparkline per rate over the windows, the alert lines; Enter on a window lists its flagged
conversations, Enter on one opens its transcript (] / [ step through the others)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.monitor import Detectable

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


def spark_lines(
    series: list[tuple[str, list[float | None]]],
    width: int,
    unit: str = "day",
    marks: list[str] | None = None,
) -> list[Text]:
    """One line per rate, never wider than ``width``: its name, its mark (the baseline rate and
    the rate the next window alerts at), then one bar per window, the newest last; when the windows
    do not fit, the newest that do, and a first line saying how many."""
    if not series:
        return []
    label = max([len(name) for name, _ in series] + [4])
    marks = marks or [""] * len(series)
    mark = max(map(len, marks))
    total = len(series[0][1])
    room = max(1, width - label - 2 - (mark + 2 if mark else 0))
    shown = min(total, room)
    head = (
        f"rates per {unit}, {total} window{'' if total == 1 else 's'}, newest right"
        if shown == total
        else f"rates per {unit}: the last {shown} of {total} windows, newest right"
    )
    if mark:
        head += f"; now -> the next {unit} alerts at"
    lines = [Text(head[: max(1, width)], style="dim", no_wrap=True)]
    for (name, values), m in zip(series, marks, strict=True):
        # scaled over every window, so the bars do not change with the screen's width
        bars = sparkline(values)[total - shown :]
        middle = f"{m:>{mark}}  " if mark else ""
        lines.append(safe_text(f"{name:<{label}}  {middle}{bars}", single_line=True))
    return lines


def detect_mark(d: Detectable | None) -> str:
    """A rate's baseline and the rate its next window alerts at alone: ``8.0% -> 12.9%``."""
    if d is None:
        return "no baseline"
    alone = f"{100 * d.alone:.1f}%" if d.alone is not None else "never"
    return f"{100 * d.base_rate:.1f}% -> {alone}"


def why_words(why: list[str]) -> str:
    """A flagged conversation's reasons with the table's names (``tool error``, ``user repeated``,
    ``rule ID``); a rate that alerted in its window says so."""
    from reviewer.workflows.monitor import metric_words

    alerted = {w.removeprefix("alert:") for w in why if w.startswith("alert:")}
    return ", ".join(
        metric_words(w) + (" (alert)" if w in alerted else "")
        for w in why
        if not w.startswith("alert:")
    )


NO_DATA = (
    "No production conversation with a time yet. Import some: `reviewer monitor --import FILE` "
    '(native JSONL with "outcome": null and a started_at time), or i here; '
    "`python sample_runs/generate.py --production prod/` writes 14 days to try. "
    "See docs/ci-and-monitoring.md, 'In production: the monitor'."
)


@dataclass
class MonitorView:
    """What the screen shows, computed in the worker (a flagged row: id, name, why)."""

    header: str
    metrics: list[str]
    rows: list[tuple[str, list[Text]]]  # window start -> cells
    series: list[tuple[str, list[float | None]]]  # rate name -> its value per window
    alerts: list[str]
    notes: list[str]
    flagged: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)
    unit: str = "day"
    focus: str | None = None  # the window the cursor starts on: the newest that alerted
    marks: list[str] = field(default_factory=list)  # per series: baseline -> alerts at
    rule: str = ""  # how windows are tested
    sampled: list[str] = field(default_factory=list)  # the judge's seeded sample (V judges it)
    judge_cap: float | None = None


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
        Binding("i", "import", "Import", id="monitor.import"),
    ]

    def __init__(self, size: str | None = None) -> None:
        super().__init__()
        self.window_size = size
        self.view: MonitorView | None = None

    DEFAULT_CSS = """
    MonitorScreen #monitor-sparks-box { height: auto; max-height: 35%; }
    MonitorScreen #monitor-alerts-box { height: auto; max-height: 25%; }
    MonitorScreen #monitor-alerts { padding: 0 1; }
    MonitorScreen #windows { height: 1fr; min-height: 5; }
    """

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Monitor", classes="title", id="monitor-title")
        with VerticalScroll(id="monitor-sparks-box"):
            yield Static("", id="monitor-sparks")
        with VerticalScroll(id="monitor-alerts-box"):
            yield Static("", id="monitor-alerts")
        yield Table(id="windows", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="monitor-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load(False)

    def action_import(self) -> None:
        """The import dialog, as on the runs screen; the windows are read again after it."""
        from reviewer.tui.screens.importing import ImportModal

        def done(imported: bool | None) -> None:
            if imported:
                self.action_reload()

        self.app.push_screen(ImportModal(), done)

    def action_reload(self) -> None:
        self.query_one("#monitor-status", Static).update("loading…")
        self.load(False)

    def action_judge(self) -> None:
        """Judge the sample's unjudged conversations: the judge window shows what that would send
        and cost, and asks first (the monitor's max_cost caps it); the table reloads after."""
        from reviewer.tui.screens.judging import JudgeScreen

        view = self.view
        if view is None or not view.sampled:
            self.notify("no conversation is in the judged sample", markup=False)
            return
        self.app.push_screen(
            JudgeScreen(list(view.sampled), only_unjudged=True, max_cost=view.judge_cap)
        )

    def action_toggle_window(self) -> None:
        self.window_size = "hour" if (self.window_size or "day") == "day" else "day"
        self.action_reload()

    @work(thread=True, exclusive=True, exit_on_error=False, group="monitor-load")
    def load(self, judge: bool) -> None:
        from reviewer.workflows.monitor import (
            MonitorError,
            MonitorRequest,
            metric_words,
            run_monitor,
            trial_names,
        )
        from reviewer.workflows.monitor_report import judge_cell

        notes: list[str] = []
        with self.store() as db:
            try:
                report = run_monitor(
                    db,
                    MonitorRequest(window=self.window_size, judge=judge),
                    cfg=self.app.settings,
                    on_note=notes.append,
                )
            except MonitorError as e:
                view = MonitorView(
                    f"monitor: {e}", [], [], [], [], [], unit=self.window_size or "day"
                )
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
            alert = "judge_fail" in w.alerts  # the fail rate, as the CLI's column and the sparks
            cells.append(
                Text(judge_cell(w, False), justify="right", style="bold red" if alert else "")
            )
            cells.append(Text(str(w.flagged), justify="right"))
            rows.append((w.start, cells))
        series: list[tuple[str, list[float | None]]] = []
        marks: list[str] = []
        if report.windows:
            series = [(metric_words(m), [w.rates[m].rate for w in report.windows]) for m in cols]
            fails = [
                None if r is None else 1 - r for r in (w.judge_pass.rate for w in report.windows)
            ]
            series.append(("judge fail", fails))
            marks = [detect_mark(report.detectable.get(m)) for m in [*cols, "judge_fail"]]
        flagged: dict[str, list[tuple[str, str, str]]] = {}
        for tid, why in report.flagged.items():
            run, task, trial = names.get(tid, ("?", "?", 0))
            flagged.setdefault(report.window_of[tid], []).append(
                (tid, f"{run} / {task} #{trial}", why_words(why))
            )
        notes += [n for n in (report.judge_line, report.judge_problem) if n]
        alerting = [w.start for w in report.windows if w.alerts]
        view = MonitorView(
            report.header(),
            cols,
            rows,
            series,
            report.alert_lines(),
            notes,
            flagged,
            unit=self.window_size or "day",
            focus=alerting[-1] if alerting else None,
            marks=marks,
            rule=report.detect_lines()[0] if report.windows else "",
            sampled=list(report.sampled),
            judge_cap=report.judge_cap,
        )
        self.post_message(MonitorLoaded(view))

    def on_monitor_loaded(self, message: MonitorLoaded) -> None:
        from reviewer.workflows.monitor import metric_words

        view = self.view = message.view
        table = self.query_one("#windows", DataTable)
        table.clear(columns=True)
        if view.rows:
            table.add_column("window", key="window")
            table.add_column(Text("convs", justify="right"), key="convs")
            for m in view.metrics:
                table.add_column(Text(metric_words(m), justify="right"), key=m)
            table.add_column(Text("judge fail", justify="right"), key="judge")
            table.add_column(Text("flagged", justify="right"), key="flagged")
            for start, cells in view.rows:
                table.add_row(*cells, key=start)
            if view.focus is not None:  # the newest incident in sight, not the oldest windows
                table.move_cursor(row=table.get_row_index(view.focus))
        self._show_sparks()
        self.query_one("#monitor-sparks-box").display = bool(view.series)
        panel = [safe_text(view.header, "bold")]
        if view.rule:
            panel.append(safe_text(view.rule, "dim"))
        panel += [safe_text(a, "bold red") for a in view.alerts]
        panel += [safe_text(n, "dim") for n in view.notes[-3:]]
        if not view.rows:
            panel.append(safe_text(NO_DATA))
        self.query_one("#monitor-alerts", Static).update(Text("\n").join(panel))
        self.query_one("#monitor-alerts-box").display = bool(panel)
        n = len(view.alerts)
        status = f"{n} alert{'s' * (n != 1)} above" if n else "no alert"
        if view.rows:
            status += " · Enter: flagged conversations · h day/hour"
        self.query_one("#monitor-status", Static).update(status)
        table.focus()

    def _show_sparks(self) -> None:
        if self.view is None:
            return
        width = self.query_one("#monitor-sparks-box").content_region.width or self.size.width
        lines = spark_lines(self.view.series, max(20, width - 2), self.view.unit, self.view.marks)
        self.query_one("#monitor-sparks", Static).update(Text("\n").join(lines))

    def on_resize(self) -> None:
        self._show_sparks()

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
        yield Table(id="flagged", cursor_type="row", zebra_stripes=True)
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
