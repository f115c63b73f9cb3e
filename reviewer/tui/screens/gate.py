"""The CI gate in the app: `reviewer gate RUN` for the run under the cursor (G on the runs screen),
and B to make that run the baseline (`reviewer baseline set RUN`)."""

from __future__ import annotations

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


class GateDone(Message):
    def __init__(self, lines: list[Text]) -> None:
        super().__init__()
        self.lines = lines


class GateScreen(ReviewerScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="gate.back"),
        Binding("B", "set_baseline", "Make it the baseline", id="gate.baseline"),
        Binding("R", "rerun", "Again", id="gate.rerun"),
        Binding("W", "outcome", "Outcomes from", id="gate.outcome"),
    ]

    def __init__(self, run: str) -> None:
        super().__init__()
        self.run = run
        self.result_code: int | None = None  # 0 pass, 1 fail, 2 could not decide
        self.outcome: str | None = None  # None: [gate] outcome; W cycles harness, human, judge

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(safe_text(f"Gate: {self.run}", single_line=True), classes="title")
        with VerticalScroll():
            yield Static("gating…", id="gate-report")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()

    def action_rerun(self) -> None:
        self.query_one("#gate-report", Static).update("gating…")
        self.load()

    def action_outcome(self) -> None:
        from reviewer.workflows.compare import OUTCOME_SOURCES

        now = self.outcome or "harness"
        self.outcome = OUTCOME_SOURCES[(OUTCOME_SOURCES.index(now) + 1) % len(OUTCOME_SOURCES)]
        self.notify(f"outcomes from: {self.outcome}")
        self.action_rerun()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gate-load")
    def load(self) -> None:
        from reviewer.workflows.gate import GateError, run_gate

        with self.store() as db:
            try:
                # the app never spends on the judge without asking: the anchors' stored verdicts
                result = run_gate(
                    db, self.run, outcome=self.outcome, anchors="stored", cfg=self.app.settings
                )
            except GateError as e:
                self.result_code = 2
                lines = [safe_text(f"gate: cannot decide: {e}", "yellow")]
                if e.no_baseline:  # the key that mends it here, beside the command
                    lines.append(safe_text(f"B makes {self.run} the baseline", single_line=True))
                self.post_message(GateDone(lines))
                return
        self.result_code = result.exit_code
        head, *rest = result.report_lines()
        lines = [safe_text(head, "bold green" if result.passed else "bold red")]
        for line in rest:
            style = "yellow" if line.startswith("warning: ") else ""
            lines.append(safe_text(line, style))
        self.post_message(GateDone(lines))

    def on_gate_done(self, message: GateDone) -> None:
        self.query_one("#gate-report", Static).update(Text("\n").join(message.lines))

    def action_set_baseline(self) -> None:
        self.set_baseline()

    @work(thread=True, exclusive=True, exit_on_error=False, group="gate-baseline")
    def set_baseline(self) -> None:
        from reviewer.workflows.gate import GateError, set_baseline_run

        labeler = getattr(self.app, "labeler", None)
        with self.store() as db:
            try:
                entry = set_baseline_run(
                    db, self.run, labeler if isinstance(labeler, str) else None
                )
            except GateError as e:
                self.app.notify(str(e), severity="error")
                return
        self.app.notify(f"baseline: {entry.run}")
        # the report said "no baseline set": gate again against the new baseline
        self.app.call_from_thread(self.action_rerun)
