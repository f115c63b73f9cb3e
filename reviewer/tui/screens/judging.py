"""Run the LLM judge from the app: a progress bar, the running cost, Esc to cancel.

Verdicts are stored one by one as they arrive (the runner commits each), so every other screen shows
them when it next reads; the screen underneath is refreshed when the run ends.
"""

from __future__ import annotations

import contextlib
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
    """Judges ``trial_ids`` (None: every trial this judge has not graded yet), after showing what it
    would send and cost (the cache, tokens, dollars, the cost cap) and waiting for Enter."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="judge.cancel"),
        Binding("enter", "start", "Start", id="judge.start"),
    ]
    DEFAULT_CSS = """
    JudgeScreen { align: center middle; }
    JudgeScreen #judge-box {
        width: 84; max-width: 100%; height: auto; padding: 1 2; border: round $accent;
        background: $surface;
    }
    JudgeScreen #judge-progress { margin: 1 0; }
    JudgeScreen #judge-hint { color: $text-muted; }
    """

    def __init__(
        self,
        trial_ids: list[str] | None = None,
        *,
        only_unjudged: bool | None = None,
        max_cost: float | None = None,
    ) -> None:
        super().__init__()
        self.trial_ids = trial_ids
        self.only_unjudged = trial_ids is None if only_unjudged is None else only_unjudged
        self.max_cost = max_cost
        self.cancel_event = threading.Event()
        self.phase = "estimating"  # estimating | asking | running | finished
        self.finished = False
        self.summary = ""
        self.outcome = "Done"  # the title when it ends: Done, Failed, Cancelled or Incomplete

    def compose(self) -> ComposeResult:
        with Vertical(id="judge-box"):
            yield Static(Text("Judge: estimating the cost…"), id="judge-title")
            yield ProgressBar(id="judge-progress", show_eta=False)
            yield Static(Text(""), id="judge-status")
            yield Static(Text("Esc cancels"), id="judge-hint")

    def on_mount(self) -> None:
        self.query_one("#judge-progress", ProgressBar).display = False
        self.estimate()

    def on_unmount(self) -> None:
        # the app is closing (SIGTERM, SIGHUP, a closed terminal): the run stops sending and stores
        # the replies on their way, as the CLI's does; it went on sending to the end before
        self.cancel_event.set()

    def _from_thread(self, callback: Any, *args: Any) -> None:
        """``app.call_from_thread`` from the workers; nothing once the app is gone (a run storing
        its last replies after the app closed printed a traceback for each)."""
        from textual._context import NoActiveAppError

        try:
            app = self.app
        except NoActiveAppError:
            return
        with contextlib.suppress(RuntimeError):  # the app's loop has stopped
            app.call_from_thread(callback, *args)

    def _request(self) -> Any:
        from reviewer.workflows.judge import JudgeRequest

        overrides = {} if self.max_cost is None else {"max_cost": self.max_cost}
        return JudgeRequest(
            trial_ids=self.trial_ids, only_unjudged=self.only_unjudged, overrides=overrides
        )

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-estimate")
    def estimate(self) -> None:
        from reviewer.workflows.judge import JudgeFailed, estimate_judging

        with self.store() as db:
            try:
                est = estimate_judging(db, self._request(), cfg=self.app.settings)
            except JudgeFailed as e:
                self._from_thread(self._cannot, f"judge: {e}")
                return
        self._from_thread(self._ask, est)

    def _cannot(self, line: str) -> None:
        self.summary, self.outcome = line, "Failed"
        self._done()

    def _ask(self, est: Any) -> None:
        if self.phase != "estimating":
            return  # cancelled meanwhile
        if not est.to_send and not est.trials:
            self.summary, self.outcome, self.phase = est.lines()[0], "Done", "finished"
            self.finished = True
            self.query_one("#judge-title", Static).update(Text("Nothing to judge", "bold"))
            self.query_one("#judge-status", Static).update(safe_text(self.summary))
            self.query_one("#judge-hint", Static).update(Text("Esc closes"))
            return
        self.phase = "asking"
        self.query_one("#judge-title", Static).update(Text("Judge these trials?", "bold"))
        self.query_one("#judge-status", Static).update(safe_text("\n".join(est.lines())))
        self.query_one("#judge-hint", Static).update(Text("Enter starts · Esc cancels"))

    def action_start(self) -> None:
        if self.phase != "asking":
            if self.finished:
                self.dismiss(None)
            return
        self.phase = "running"
        self.query_one("#judge-title", Static).update(Text("Judging…"))
        self.query_one("#judge-progress", ProgressBar).display = True
        self.query_one("#judge-status", Static).update(Text("starting"))
        self.query_one("#judge-hint", Static).update(
            Text("Esc cancels (every verdict received is kept)")
        )
        self.run_judge()

    def action_cancel(self) -> None:
        if self.finished or self.phase in ("estimating", "asking"):
            self.phase = "finished"
            self.dismiss(None)
            return
        self.cancel_event.set()
        self.query_one("#judge-status", Static).update(Text("cancelling…"))

    def _progress(self, stats: Any, outcome: Any) -> None:
        self._from_thread(self._show, stats)

    def _show(self, stats: Any) -> None:
        bar = self.query_one("#judge-progress", ProgressBar)
        bar.update(total=max(stats.total, 1), progress=stats.done)
        cost = f"${stats.cost_usd:.4f}" if stats.cost_known else "cost unknown"
        line = f"{stats.done} / {stats.total} judged · {cost} · {stats.errors} errors"
        self.query_one("#judge-status", Static).update(Text(line))

    def _note(self, line: str) -> None:
        self._from_thread(self._status, line)

    def _status(self, line: str) -> None:
        self.query_one("#judge-status", Static).update(safe_text(line, single_line=True))

    def _start(self, judge: str, rubric: str, total: int) -> None:
        self._from_thread(self._started, f"Judging {total} trials with {judge}", total)

    def _started(self, title: str, total: int) -> None:
        self.query_one("#judge-title", Static).update(safe_text(title, single_line=True))
        self.query_one("#judge-progress", ProgressBar).update(total=max(total, 1), progress=0)

    def on_worker_state_changed(self, event: Any) -> None:
        from textual.worker import WorkerState

        if event.worker.group in ("judge-run", "judge-estimate") and (
            event.state == WorkerState.ERROR
        ):
            self.summary = f"judge: {event.worker.error}"
            self.outcome = "Failed"
            self._done()

    @work(thread=True, exclusive=True, exit_on_error=False, group="judge-run")
    def run_judge(self) -> None:
        from reviewer.workflows.judge import JudgeFailed, judge_trials

        request = self._request()
        with self.store() as db:
            try:
                result = judge_trials(
                    db,
                    request,
                    cfg=self.app.settings,
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
        self._from_thread(self._done)

    def _done(self) -> None:
        self.finished = True
        self.phase = "finished"
        self.query_one("#judge-progress", ProgressBar).display = True
        self.query_one("#judge-status", Static).update(safe_text(self.summary))
        self.app.notify(clean(self.summary), markup=False)
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
