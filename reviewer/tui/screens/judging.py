"""Run the LLM judge from the app: a progress bar, the running cost, Esc to cancel.

Verdicts are stored one by one as they arrive (the runner commits each), so every other screen shows
them when it next reads; the screen underneath is refreshed when the run ends.
"""

from __future__ import annotations

import threading
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import ProgressBar, Static

from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import StoreAccess


class JudgeScreen(StoreAccess, ModalScreen[None]):
    """Judges ``trial_ids`` (None: every trial this judge has not graded yet)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="judge.cancel")]
    DEFAULT_CSS = """
    JudgeScreen { align: center middle; }
    JudgeScreen #judge-box {
        width: 84; height: auto; padding: 1 2; border: round $accent; background: $surface;
    }
    JudgeScreen #judge-progress { margin: 1 0; }
    JudgeScreen #judge-hint { color: $text-muted; }
    """

    def __init__(self, trial_ids: list[str] | None = None) -> None:
        super().__init__()
        self.trial_ids = trial_ids
        self.cancel_event = threading.Event()
        self.finished = False
        self.summary = ""
        self.outcome = "Done"  # the title when it ends: Done, Failed, Cancelled or Incomplete

    def compose(self) -> ComposeResult:
        with Vertical(id="judge-box"):
            yield Static(Text("Judging…"), id="judge-title")
            yield ProgressBar(id="judge-progress", show_eta=False)
            yield Static(Text("starting"), id="judge-status")
            yield Static(Text("Esc cancels (every verdict received is kept)"), id="judge-hint")

    def on_mount(self) -> None:
        self.run_judge()

    def action_cancel(self) -> None:
        if self.finished:
            self.dismiss(None)
            return
        self.cancel_event.set()
        self.query_one("#judge-status", Static).update(Text("cancelling…"))

    def _progress(self, stats: Any, outcome: Any) -> None:
        self.app.call_from_thread(self._show, stats)

    def _show(self, stats: Any) -> None:
        bar = self.query_one("#judge-progress", ProgressBar)
        bar.update(total=max(stats.total, 1), progress=stats.done)
        cost = f"${stats.cost_usd:.4f}" if stats.cost_known else "cost unknown"
        line = f"{stats.done} / {stats.total} judged · {cost} · {stats.errors} errors"
        self.query_one("#judge-status", Static).update(Text(line))

    def _note(self, line: str) -> None:
        self.app.call_from_thread(self._status, line)

    def _status(self, line: str) -> None:
        self.query_one("#judge-status", Static).update(safe_text(line, single_line=True))

    def _start(self, judge: str, rubric: str, total: int) -> None:
        self.app.call_from_thread(self._started, f"Judging {total} trials with {judge}", total)

    def _started(self, title: str, total: int) -> None:
        self.query_one("#judge-title", Static).update(safe_text(title, single_line=True))
        self.query_one("#judge-progress", ProgressBar).update(total=max(total, 1), progress=0)

    def on_worker_state_changed(self, event: Any) -> None:
        from textual.worker import WorkerState

        if event.worker.group == "judge-run" and event.state == WorkerState.ERROR:
            self.summary = f"judge: {event.worker.error}"
            self.outcome = "Failed"
            self._done()

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-run")
    def run_judge(self) -> None:
        from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials

        request = JudgeRequest(trial_ids=self.trial_ids, only_unjudged=self.trial_ids is None)
        with self.store() as db:
            try:
                result = judge_trials(
                    db,
                    request,
                    on_note=self._note,
                    on_start=self._start,
                    on_progress=self._progress,
                    cancel=self.cancel_event,
                )
                self.summary = result.summary
                self.outcome = end_title(result, self.cancel_event.is_set())
            except JudgeFailed as e:
                self.summary = f"judge: {e}"
                self.outcome = "Failed"
        self.app.call_from_thread(self._done)

    def _done(self) -> None:
        self.finished = True
        self.query_one("#judge-status", Static).update(safe_text(self.summary))
        self.app.notify(clean(self.summary), markup=False, timeout=8)
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        refresh = getattr(below, "action_refresh", None) or getattr(below, "reload", None)
        if callable(refresh):
            refresh()
        bar = self.query_one("#judge-progress", ProgressBar)
        if bar.total is None:
            bar.update(total=1, progress=0)
        style = {"Done": "bold green", "Failed": "bold red"}.get(self.outcome, "bold yellow")
        self.query_one("#judge-title", Static).update(Text(self.outcome, style=style))
        self.query_one("#judge-hint", Static).update(Text("Esc closes"))


def end_title(result: Any, cancelled: bool) -> str:
    """Done only when every planned trial got a verdict: else Cancelled, Failed (nothing judged, or
    every request failed) or Incomplete (some left: the cost cap, failed requests)."""
    stats = getattr(result, "stats", None)
    if cancelled:
        return "Cancelled"
    if stats is not None and stats.total and stats.errors >= stats.total:
        return "Failed"
    if stats is not None and stats.errors:
        return "Incomplete" if stats.errors < stats.total else "Failed"
    if getattr(result, "incomplete", False):
        return "Incomplete"
    return "Done"
