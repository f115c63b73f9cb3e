"""Two runs side by side: the comparison table of `reviewer compare` and the pass^k-vs-k chart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table


class ComparisonReady(Message):
    def __init__(self, lines: list[Any], chart: str, drill: list[Drill] | None = None) -> None:
        super().__init__()
        self.lines = lines
        self.chart = chart
        self.drill = drill or []


@dataclass(frozen=True)
class Drill:
    """One row under the comparison that Enter opens: a rule's or a task's trials in the new run
    (`reviewer trials --run NEW --rule ID` / `--task ID` on the command line)."""

    key: str
    what: str  # "rule" or "task"
    id: str
    text: str
    style: str


def drill_rows(cmp: Any) -> list[Drill]:
    """The rules that moved (RED FLAG, worse, still broken first) and the shared tasks whose pass^k
    changed, the biggest drop first."""
    rules: list[Drill] = []
    for r in cmp.rows:
        if not r.metric.startswith("rule:") or not (r.mark or r.new):
            continue
        rid = r.metric.removeprefix("rule:")
        style = "bold red" if r.direction in ("RED FLAG", "worse") else "yellow" if r.mark else ""
        text = f"{r.label}: {_pct(r.old)} → {_pct(r.new)}" + (f"  {r.mark}" if r.mark else "")
        rules.append(Drill(f"rule\0{rid}", "rule", rid, text, style))
    rules.sort(key=lambda d: (d.style != "bold red", d.style != "yellow"))
    tasks: list[Drill] = []
    moved = [t for t in cmp.tasks if (t.old_c, t.old_n) != (t.new_c, t.new_n) or t.delta]
    moved.sort(key=lambda t: (t.delta if t.delta is not None else 0.0, t.task_id))
    for t in moved:
        hats = ""
        if t.old_pass_hat is not None and t.new_pass_hat is not None:
            hats = f"pass^{cmp.k} {t.old_pass_hat:.2f} → {t.new_pass_hat:.2f} · "
        text = f"task {t.task_id}: {hats}passed {t.old_c}/{t.old_n} → {t.new_c}/{t.new_n}"
        delta = t.delta if t.delta is not None else 0.0
        style = "red" if delta < 0 else "green" if delta > 0 else ""
        tasks.append(Drill(f"task\0{t.task_id}", "task", t.task_id, text, style))
    return rules + tasks


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1%}"


class CompareScreen(ReviewerScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="compare.back"),
        Binding("w", "swap", "Swap old/new", id="compare.swap"),
        Binding("W", "outcome", "Outcomes from", id="compare.outcome"),
        Binding("R", "reload", "Reload", show=False, id="compare.reload"),
        # the comparison scrolls whatever has the focus (the drill list takes the arrows): at
        # 80x24 the intervals listed under the table are below the fold
        Binding("pagedown", "scroll_body(1)", "Scroll down", id="compare.page_down", priority=True),
        Binding(
            "pageup",
            "scroll_body(-1)",
            "Scroll up",
            show=False,
            id="compare.page_up",
            priority=True,
        ),
    ]

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new
        self.outcome = "harness"  # where the outcomes come from: W cycles harness, human, judge

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(
            safe_text(f"{self.old} → {self.new}", single_line=True),
            classes="title",
            id="compare-title",
        )
        with VerticalScroll(id="compare-body"):
            yield Static("comparing…", id="comparison")
            yield Static("", id="chart")
        yield Static("", id="compare-drill-title", classes="status")
        yield Table(id="compare-drill", cursor_type="row", zebra_stripes=True, show_header=False)
        yield KeyFooter()

    DEFAULT_CSS = """
    CompareScreen #compare-body { height: 1fr; }
    CompareScreen #compare-drill { height: auto; max-height: 35%; }
    """

    def on_mount(self) -> None:
        self.drill: dict[str, Drill] = {}
        #: the screen width the comparison was laid out for (a resize lays it out again)
        self.laid_out_for = 0
        self.query_one("#compare-drill", DataTable).add_column("row", key="row")
        self.load()

    def on_resize(self) -> None:
        if self.size.width and self.size.width != self.laid_out_for:
            self.load()

    def action_reload(self) -> None:
        self.load()

    def action_scroll_body(self, direction: int) -> None:
        body = self.query_one("#compare-body", VerticalScroll)
        if direction > 0:
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def action_swap(self) -> None:
        self.old, self.new = self.new, self.old
        self.query_one("#compare-title", Static).update(
            safe_text(f"{self.old} → {self.new}", single_line=True)
        )
        self.query_one("#comparison", Static).update("comparing…")
        self.load()

    def action_outcome(self) -> None:
        from reviewer.workflows.compare import OUTCOME_SOURCES

        self.outcome = OUTCOME_SOURCES[(OUTCOME_SOURCES.index(self.outcome) + 1) % 3]
        self.notify(f"outcomes from: {self.outcome}")
        self.query_one("#comparison", Static).update("comparing…")
        self.load()

    def load(self) -> None:
        """Compare the two runs and lay the comparison out for the screen's width now."""
        self.laid_out_for = self.size.width
        self._load(self.size.width or 100)

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare-load")
    def _load(self, screen_width: int) -> None:
        from reviewer.workflows.compare import (
            CompareError,
            comparison_lines,
            format_value,
            plot_passk,
            view_comparison,
        )

        with self.store() as db:
            try:
                view = view_comparison(db, self.old, self.new, outcome=self.outcome)
            except CompareError as e:  # the one line `reviewer compare` prints
                self.post_message(ComparisonReady([safe_text(str(e), "yellow")], ""))
                return
        cmp, warnings = view.comparison, view.audit_warnings
        cmp.old_name = cmp.new_name = ""
        # the table's width with empty names says how much room the two names have
        width = max(40, screen_width - 2)  # a narrow screen gets the narrow layout
        table = comparison_lines(cmp, width=width)[: len(cmp.rows) + 1]
        values = (
            max(len(format_value(v, r.unit)) for r in cmp.rows for v in (r.old, r.new))
            if cmp.rows
            else 0
        )
        spare = screen_width - 2 - max((len(t.plain) for t in table), default=0)
        old_short, new_short = short_names(self.old, self.new, values + max(0, spare) // 2)
        cmp.old_name, cmp.new_name = old_short, new_short
        curves = {
            short: view.curves[r] for short, r in ((old_short, self.old), (new_short, self.new))
        }
        lines = comparison_lines(cmp, width=width)
        if (old_short, new_short) != (self.old, self.new):  # say which run each short name is
            lines[:0] = [
                safe_text(f"old: {self.old}", "dim", single_line=True),
                safe_text(f"new: {self.new}", "dim", single_line=True),
                Text(""),
            ]
        if warnings:  # the independence audit's warnings, as `reviewer compare` prints them
            lines[:0] = [*(safe_text(w, "yellow") for w in warnings), Text("")]
        self.post_message(ComparisonReady(lines, plot_passk(curves), drill_rows(cmp)))

    def on_comparison_ready(self, message: ComparisonReady) -> None:
        self.query_one("#comparison", Static).update(Text("\n").join(message.lines))
        self.query_one("#chart", Static).update(safe_text("\n" + message.chart))
        table = self.query_one("#compare-drill", DataTable)
        keep = table.cursor_row if table.row_count else 0
        table.clear()
        self.drill = {d.key: d for d in message.drill}
        for d in message.drill:
            table.add_row(safe_text(d.text, d.style, single_line=True), key=d.key)
        title = self.query_one("#compare-drill-title", Static)
        if message.drill:
            title.update(
                safe_text(
                    f"Enter opens the trials of {self.new} · rules that moved, then the tasks "
                    "whose pass^k changed (biggest drop first)",
                    single_line=True,
                )
            )
            table.move_cursor(row=min(keep, table.row_count - 1))
            table.focus()
        else:
            title.update("")
        table.display = bool(message.drill)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        d = self.drill.get(str(event.row_key.value))
        if d is None:
            return
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        if d.what == "rule":
            f = TrialFilter(run=self.new, rule_id=d.id)
            title = f"Trials of {self.new} breaking rule {d.id} (from the comparison)"
        else:
            f = TrialFilter(run=self.new, task_id=d.id)
            title = f"Trials of {self.new}, task {d.id} (from the comparison)"
        self.app.push_screen(TrialsScreen(f, title=title))


def short_names(old: str, new: str, room: int) -> tuple[str, str]:
    """Both run names cut in the middle to at most ``room`` cells (at least 5) so the table fits the
    screen; the two stay different."""
    from reviewer.text import visible

    room = max(5, room)
    a, b = visible(old, single_line=True), visible(new, single_line=True)
    if len(a) <= room and len(b) <= room:
        return old, new

    def cut(s: str) -> str:
        if len(s) <= room:
            return s
        head = (room - 1) // 3  # run names often differ at the end: keep more of it
        return s[:head] + "…" + s[len(s) - (room - 1 - head) :]

    sa, sb = cut(a), cut(b)
    if sa == sb:
        sa = cut("old " + a)
        sb = cut("new " + b)
    return sa, sb
