"""Two runs side by side: the comparison table of `reviewer compare` and the pass^k-vs-k chart."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter


class ComparisonReady(Message):
    def __init__(self, lines: list[Any], chart: str) -> None:
        super().__init__()
        self.lines = lines
        self.chart = chart


class CompareScreen(ReviewerScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="compare.back"),
        Binding("w", "swap", "Swap old/new", id="compare.swap"),
        Binding("W", "outcome", "Outcomes from", id="compare.outcome"),
        Binding("R", "reload", "Reload", show=False, id="compare.reload"),
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
        with VerticalScroll():
            yield Static("comparing…", id="comparison")
            yield Static("", id="chart")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()

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

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare-load")
    def load(self) -> None:
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
        width = max(40, (self.size.width or 100) - 2)  # a narrow screen gets the narrow layout
        table = comparison_lines(cmp, width=width)[: len(cmp.rows) + 1]
        values = (
            max(len(format_value(v, r.unit)) for r in cmp.rows for v in (r.old, r.new))
            if cmp.rows
            else 0
        )
        spare = (self.size.width or 100) - 2 - max((len(t.plain) for t in table), default=0)
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
        self.post_message(ComparisonReady(lines, plot_passk(curves)))

    def on_comparison_ready(self, message: ComparisonReady) -> None:
        self.query_one("#comparison", Static).update(Text("\n").join(message.lines))
        self.query_one("#chart", Static).update(safe_text("\n" + message.chart))


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
