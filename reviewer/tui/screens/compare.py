"""Two runs side by side: the comparison table of `reviewer compare` and the pass^k-vs-k chart."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Footer, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen


class ComparisonReady(Message):
    def __init__(self, lines: list[Any], chart: str) -> None:
        super().__init__()
        self.lines = lines
        self.chart = chart


class CompareScreen(ReviewerScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="compare.back"),
        Binding("w", "swap", "Swap old/new", id="compare.swap"),
    ]

    def __init__(self, old: str, new: str) -> None:
        super().__init__()
        self.old, self.new = old, new

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
        yield Footer()

    def on_mount(self) -> None:
        self.load()

    def action_swap(self) -> None:
        self.old, self.new = self.new, self.old
        self.query_one("#compare-title", Static).update(
            safe_text(f"{self.old} → {self.new}", single_line=True)
        )
        self.query_one("#comparison", Static).update("comparing…")
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare-load")
    def load(self) -> None:
        from reviewer.metrics.active_rules import active_rules
        from reviewer.metrics.compare import compare_runs, comparison_lines
        from reviewer.metrics.plot import passk_curve, plot_passk
        from reviewer.metrics.report import pass_rules
        from reviewer.metrics.rules import severities
        from reviewer.store.queries import task_counts
        from reviewer.store.trials import trial_stats

        with self.store() as db:
            active = active_rules(db)
            cmp = compare_runs(
                trial_stats(db, self.old),
                trial_stats(db, self.new),
                rules_severity=severities(active.rules) if active else {},
                old_name=self.old,
                new_name=self.new,
            )
            cmp.pass_rules = pass_rules(db, self.old, self.new)
            curves = {
                r: passk_curve([(n, c) for _, n, c in task_counts(db, r)])
                for r in (self.old, self.new)
            }
        self.post_message(ComparisonReady(comparison_lines(cmp), plot_passk(curves)))

    def on_comparison_ready(self, message: ComparisonReady) -> None:
        self.query_one("#comparison", Static).update(Text("\n").join(message.lines))
        self.query_one("#chart", Static).update(safe_text("\n" + message.chart))
