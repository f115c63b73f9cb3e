"""Power planning for one run: what `reviewer plan --run R --delta D` prints (the detectable drop,
the tasks and trials a drop of D needs, and their cost), wrapped to the screen. ``+`` steps the drop
to detect through 0.05, 0.1 and 0.2."""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter

DELTAS = (0.05, 0.1, 0.2)


class PlanReady(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class PlanScreen(ReviewerScreen):
    """The plan of one run (the same ``workflows.plan.plan_for_run`` as the CLI)."""

    BINDINGS = [
        Binding("plus", "next_delta", "Drop to detect", id="plan.delta"),
        Binding("escape", "app.pop_screen", "Back", id="plan.back"),
    ]

    def __init__(self, run: str, delta: float = 0.1) -> None:
        super().__init__()
        self.run, self.delta = run, delta

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(safe_text(f"Plan for {self.run}", single_line=True), classes="title")
        with VerticalScroll():
            yield Static("planning…", id="plan-text")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._load()

    def action_next_delta(self) -> None:
        i = DELTAS.index(self.delta) if self.delta in DELTAS else -1
        self.delta = DELTAS[(i + 1) % len(DELTAS)]
        self._load()

    def _load(self) -> None:
        self.query_one("#plan-text", Static).update(
            f"planning for a drop of {self.delta:g} (simulating comparisons)…"
        )
        # the text is wrapped to the screen, less the scroll bar and the padding
        self.load(self.delta, max(40, self.app.size.width - 4))

    @work(thread=True, exclusive=True, exit_on_error=False, group="plan-load")
    def load(self, delta: float, width: int) -> None:
        from reviewer.workflows.plan import plan_for_run

        with self.store() as db:
            plan = plan_for_run(db, self.run, delta=delta)
        self.post_message(PlanReady(plan.render(width)))

    def on_plan_ready(self, message: PlanReady) -> None:
        self.query_one("#plan-text", Static).update(safe_text(message.text))
