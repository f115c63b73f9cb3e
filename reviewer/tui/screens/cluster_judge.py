"""The judge's pass over the failure clusters from the app (`V` on the Failures screen), the same
job as `reviewer cluster --stored --with-judge`: the estimate first and Enter to send, a progress bar,
Esc to cancel; then the names are shown on the clusters and the merge proposals listed, `m` accepting
the highlighted one (an ordinary merge: `z` on the Failures screen undoes it)."""

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
from textual.widgets import DataTable, ProgressBar, Static

from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import StoreAccess
from reviewer.tui.widgets.table import Table


class ClusterJudgeScreen(StoreAccess, ModalScreen[None]):
    """Estimate, ask, run, then list the merge proposals to accept one by one."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="clusterjudge.cancel"),
        # before the proposals table's own Enter: it starts the run (and closes a finished window)
        Binding("enter", "start", "Start", id="clusterjudge.start", priority=True),
        Binding("m", "accept", "Merge proposal", id="clusterjudge.merge"),
    ]
    DEFAULT_CSS = """
    ClusterJudgeScreen { align: center middle; }
    ClusterJudgeScreen #cj-box {
        width: 110; max-width: 100%; height: auto; max-height: 100%; padding: 1 2;
        border: round $accent; background: $surface;
    }
    ClusterJudgeScreen #cj-progress { margin: 1 0; }
    ClusterJudgeScreen #cj-proposals { height: auto; max-height: 14; }
    ClusterJudgeScreen #cj-hint { color: $text-muted; }
    """

    def __init__(self, max_cost: float | None = None) -> None:
        super().__init__()
        self.max_cost = max_cost
        self.cancel_event = threading.Event()
        self.phase = "estimating"  # estimating | asking | running | finished
        self.summary = ""
        self.proposals: list[Any] = []
        self.applied: set[str] = set()

    def compose(self) -> ComposeResult:
        with Vertical(id="cj-box"):
            yield Static(Text("Judge the clusters: estimating the cost…"), id="cj-title")
            yield ProgressBar(id="cj-progress", show_eta=False)
            yield Static(Text(""), id="cj-status")
            yield Table(id="cj-proposals", cursor_type="row", zebra_stripes=True)
            yield Static(Text("Esc cancels"), id="cj-hint")

    def on_mount(self) -> None:
        self.query_one("#cj-progress", ProgressBar).display = False
        table = self.query_one("#cj-proposals", DataTable)
        table.add_column("proposal", key="id")
        # what became of it (merged, not merged): beside its id, never past the screen's edge
        table.add_column("", key="state")
        table.add_column(Text("trials", justify="right"), key="size")
        table.add_column("merge", key="clusters")
        table.add_column("why", key="reason")
        table.display = False
        self.estimate()

    def on_unmount(self) -> None:
        self.cancel_event.set()  # the app is closing: stop sending, keep what arrived

    def _from_thread(self, callback: Any, *args: Any) -> None:
        from textual._context import NoActiveAppError

        try:
            app = self.app
        except NoActiveAppError:
            return
        with contextlib.suppress(RuntimeError):  # the app's loop has stopped
            app.call_from_thread(callback, *args)

    def _request(self) -> Any:
        from reviewer.workflows.cluster_judge import ClusterJudgeRequest

        overrides = {} if self.max_cost is None else {"max_cost": self.max_cost}
        return ClusterJudgeRequest(overrides=overrides)

    def _set(self, widget: str, text: Text) -> None:
        self.query_one(widget, Static).update(text)

    # estimate, ask ------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="clusterjudge-estimate")
    def estimate(self) -> None:
        from reviewer.workflows.cluster_judge import estimate_cluster_judging
        from reviewer.workflows.judge import JudgeFailed

        with self.store() as db:
            try:
                est = estimate_cluster_judging(db, self._request(), cfg=self.app.settings)
            except JudgeFailed as e:
                self._from_thread(self._finish, f"judge: {e}", "Failed")
                return
        self._from_thread(self._ask, est)

    def _ask(self, est: Any) -> None:
        if self.phase != "estimating":
            return  # closed meanwhile
        self.phase = "asking"
        self._set("#cj-title", Text("Name the clusters and look for merges?", "bold"))
        self._set("#cj-status", safe_text("\n".join(est.lines())))
        self._set("#cj-hint", Text("Enter sends · Esc cancels"))

    def action_start(self) -> None:
        if self.phase == "finished" and not self.proposals:
            self.dismiss(None)
            return
        if self.phase != "asking":
            return
        self.phase = "running"
        self._set("#cj-title", Text("Asking the judge…"))
        self.query_one("#cj-progress", ProgressBar).display = True
        self._set("#cj-status", Text("starting"))
        self._set("#cj-hint", Text("Esc cancels (every reply received is kept)"))
        self.run_pass()

    def action_cancel(self) -> None:
        if self.phase in ("estimating", "asking", "finished"):
            self.phase = "finished"
            self._refresh_below()
            self.dismiss(None)
            return
        self.cancel_event.set()
        self._set("#cj-status", Text("cancelling…"))

    # run ----------------------------------------------------------------------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="clusterjudge-run")
    def run_pass(self) -> None:
        from reviewer.workflows.cluster_judge import judge_clusters
        from reviewer.workflows.judge import JudgeFailed

        with self.store() as db:
            try:
                result = judge_clusters(
                    db,
                    self._request(),
                    cfg=self.app.settings,
                    on_note=lambda line: self._from_thread(self._note, line),
                    on_progress=lambda stats, o: self._from_thread(self._show, stats),
                    cancel=self.cancel_event,
                )
            except JudgeFailed as e:
                self._from_thread(self._finish, f"judge: {e}", "Failed")
                return
        title = "Cancelled" if self.cancel_event.is_set() else "Done"
        if title == "Done" and result.incomplete:
            title = "Incomplete"
        self._from_thread(self._finished, result, title)

    def _note(self, line: str) -> None:
        self._set("#cj-status", safe_text(line, single_line=True))

    def _show(self, stats: Any) -> None:
        bar = self.query_one("#cj-progress", ProgressBar)
        bar.update(total=max(stats.total, 1), progress=stats.done)
        self._set("#cj-status", Text(f"{stats.done} / {stats.total} · ${stats.cost_usd:.4f}"))

    def _finished(self, result: Any, title: str) -> None:
        self.proposals = list(result.proposals)
        table = self.query_one("#cj-proposals", DataTable)
        table.clear()
        for p in self.proposals:
            names = " + ".join(clean(n, single_line=True) for _, n, _ in p.clusters)
            table.add_row(
                Text(p.id),
                Text(""),
                Text(str(sum(s for _, _, s in p.clusters)), justify="right"),
                safe_text(names, single_line=True, limit=60),
                safe_text(p.reason, single_line=True, limit=30),
                key=p.id,
            )
        table.display = bool(self.proposals)
        if self.proposals:
            table.focus()
        self._finish("\n".join(result.lines()), title)

    def _finish(self, summary: str, title: str) -> None:
        self.phase = "finished"
        self.summary = summary
        style = {"Done": "bold green", "Failed": "bold red"}.get(title, "bold yellow")
        self._set("#cj-title", Text(title, style=style))
        self._set("#cj-status", safe_text(summary))
        self.app.notify(clean(summary.splitlines()[0] if summary else title), markup=False)
        hint = (
            "m merges the highlighted proposal · Esc closes (z on the failures undoes a merge)"
            if self.proposals
            else "Esc closes"
        )
        self._set("#cj-hint", Text(hint))
        self._refresh_below()

    def _refresh_below(self) -> None:
        below = self.app.screen_stack[-2] if len(self.app.screen_stack) > 1 else None
        reload = getattr(below, "load", None)
        if callable(reload):
            reload()

    def on_worker_state_changed(self, event: Any) -> None:
        from textual.worker import WorkerState

        if event.state == WorkerState.ERROR and event.worker.group.startswith("clusterjudge-"):
            self._finish(f"judge: {event.worker.error}", "Failed")

    # accept -------------------------------------------------------------------------------------
    def action_accept(self) -> None:
        if self.phase != "finished" or not self.proposals:
            return
        table = self.query_one("#cj-proposals", DataTable)
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        chosen = next((p for p in self.proposals if p.id == key), None)
        if chosen is None or chosen.id in self.applied:
            return
        self.accept(chosen)

    @work(thread=True, exclusive=True, exit_on_error=False, group="clusterjudge-merge")
    def accept(self, proposal: Any) -> None:
        from reviewer.workflows.cluster_judge import accept_merges

        with self.store() as db:
            applied, problems = accept_merges(db, [proposal])
        self._from_thread(self._accepted, proposal.id, applied, problems)

    def _accepted(self, pid: str, applied: list[str], problems: list[str]) -> None:
        table = self.query_one("#cj-proposals", DataTable)
        if applied:
            self.applied.add(pid)
            table.update_cell(pid, "state", Text("merged", style="bold green"), update_width=True)
            self.app.notify(f"Merged {pid} (z on the failures undoes it).", markup=False)
        for line in problems:
            table.update_cell(pid, "state", Text("not merged", style="bold red"), update_width=True)
            self.app.notify(clean(line, single_line=True), severity="warning", markup=False)
        self._refresh_below()
