"""Failure clusters ranked by size; open one to see its trials; rename, merge, split and undo
(persisted); scope the clustering to one run (b cycles every run, then each run); the scorecard
against the failure tags humans gave (H shows each tag's best cluster)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Header, Input, ProgressBar, Static
from textual.worker import get_current_worker

from reviewer.text import crashed, elide_middle, visible
from reviewer.tui.export_action import ExportMixin, ExportScope
from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cut_end, share_room, table_room
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.cluster_score import ClusterScore
from reviewer.workflows.clusters import ClusterRow, most_pieces, tasks_summary

#: The scope of a clustering of every run (as stored).
EVERY_RUN = "*"
#: The most cells the runs and the tasks columns take each (the line under the table has them all).
NAMES_ROOM = 24
#: The least the cluster's name keeps before runs and tasks give way.
NAME_MIN = 32


def _names_cells(r: ClusterRow) -> tuple[str, str, bool]:
    """A cluster's runs and tasks as plain one-line text, and whether the tasks are one task."""
    return (
        visible(", ".join(r.runs), single_line=True),
        visible(tasks_summary(r.tasks), single_line=True),
        len(r.tasks) == 1,
    )


class ClustersLoaded(Message):
    def __init__(
        self,
        rows: list[ClusterRow],
        info: dict[str, object],
        score: ClusterScore | None = None,
        runs: list[str] | None = None,
    ) -> None:
        super().__init__()
        self.rows = rows
        self.info = info
        self.score = score
        self.runs = runs or []


class ClusterProgress(Message):
    def __init__(self, stage: str, done: int, total: int | None) -> None:
        super().__init__()
        self.stage, self.done, self.total = stage, done, total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ClusterProgress)


class RenameModal(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="rename.cancel")]
    DEFAULT_CSS = """
    RenameModal { align: center middle; }
    RenameModal > Vertical { width: 70; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    """

    def __init__(self, current: str) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                "Rename cluster (empty restores the generated name; Enter saves, Esc cancels)"
            )
            yield Input(value=clean(self.current, single_line=True), id="rename-input")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class SplitModal(ModalScreen[int | None]):
    """How many pieces `S` splits the cluster into; empty is the default split (by signature when
    the members' differ, else the silhouette's choice; as `reviewer cluster split` without
    ``--into``); 0 means cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="split.cancel")]
    DEFAULT_CSS = """
    SplitModal { align: center middle; }
    SplitModal > Vertical { width: 70; max-width: 95%; height: auto; border: thick $accent; background: $surface; padding: 1 2; }
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.trials = size
        self.most = most_pieces(size)  # the workflow refuses more

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                f"Split this cluster of {self.trials} trials into how many pieces? "
                + (f"(2-{self.most}; " if self.most >= 2 else "(")
                + "empty: one piece per signature when they differ, else as many as the text "
                + "separates best) Enter splits, Esc cancels"
            )
            yield Input(
                placeholder="by signature, else best (silhouette)",
                id="split-input",
                restrict=r"[0-9]*",
            )
            yield Static("", id="split-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.dismiss(None)
            return
        n = int(value)
        if not 2 <= n <= self.most:
            self.query_one("#split-error", Static).update(
                f"{n} pieces: use 2 to {self.most} (pieces of 2 trials or more), or leave it empty"
                if self.most >= 2
                else f"{n} pieces: {self.trials} trials make no pieces of 2 or more; leave it empty"
            )
            return
        self.dismiss(n)

    def action_cancel(self) -> None:
        self.dismiss(0)


class FailuresScreen(ExportMixin, ReviewerScreen):
    BINDINGS = [
        Binding("enter", "open", "Trials", id="failures.open"),
        Binding("r", "rename", "Rename", id="failures.rename"),
        Binding("space", "mark", "Mark", id="failures.mark"),
        Binding("m", "merge", "Merge marked", id="failures.merge"),
        Binding("S", "split", "Split", id="failures.split"),
        Binding("z", "undo", "Undo edit", id="failures.undo"),
        Binding("C", "recluster", "Re-cluster", id="failures.recluster"),
        Binding("V", "judge_clusters", "Judge names", id="failures.judge"),
        Binding("R", "reload", "Reload", id="failures.reload", show=False),
        Binding("X", "cancel", "Cancel clustering", id="failures.cancel", show=False),
        Binding("T", "export_tasks", "Export tasks", id="failures.export"),
        Binding("b", "scope", "Run scope", id="failures.scope"),
        Binding("H", "score", "Tag scorecard", id="failures.score"),
        Binding("escape", "back", "Back", id="failures.back"),
    ]

    def __init__(self, recluster: bool = False, run: str | None = None) -> None:
        super().__init__()
        self.rows: list[ClusterRow] = []
        self.marked: list[str] = []
        self._recluster_on_mount = recluster or run is not None
        self._focus_after: str | None = None
        #: the run whose failures are clustered (EVERY_RUN for all); None: the stored clustering's
        self.scope: str | None = run
        self.runs: list[str] = []
        self.score: ClusterScore | None = None
        self.show_tags = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Failure clusters", id="failures-title", classes="title")
        yield Table(id="clusters", cursor_type="row", zebra_stripes=True)
        yield Static("", id="cluster-score", classes="detail")
        yield Static("", id="cluster-detail", classes="detail")
        yield ProgressBar(id="cluster-progress", show_eta=False)
        yield Static("loading…", id="clusters-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._columns(self.query_one("#clusters", DataTable))
        self.query_one("#cluster-progress", ProgressBar).display = False
        if self._recluster_on_mount:
            self.action_recluster()
        else:
            self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="clusters-load")
    def load(self) -> None:
        from reviewer.workflows.cluster_score import score_clusters
        from reviewer.workflows.clusters import count_outcomes, current
        from reviewer.workflows.store_access import run_names

        with self.store() as db:
            runs = run_names(db)
            stored = current(db)
            score = score_clusters(db) if stored is not None else None
            info = {} if stored is None else dict(stored.info)
            params = info.get("params")
            if stored is not None and not (
                isinstance(params, dict) and params.get("include_infra")
            ):
                scope = info.get("scope") or (params or {}).get("scope")
                run = None if scope in (None, "*") else str(scope)
                info["infra_left_out"] = count_outcomes(db, run).get("infra", 0)
        if stored is None:
            self.post_message(ClustersLoaded([], {}, runs=runs))
        else:
            self.post_message(ClustersLoaded(stored.rows, info, score, runs))

    def on_clusters_loaded(self, message: ClustersLoaded) -> None:
        self.runs, self.score = message.runs, message.score
        if message.info:
            self.scope = str(message.info.get("scope") or EVERY_RUN)
        self._title()
        self._score()
        table = self.query_one("#clusters", DataTable)
        # an edit or reload keeps the cursor on its cluster (or where it was, when that one is gone)
        was = self._current()
        keep_id, keep_row = (was.id if was else None), table.cursor_row
        if self._focus_after is not None:
            keep_id, self._focus_after = self._focus_after, None
        self.rows = message.rows
        self.marked = [m for m in self.marked if any(r.id == m for r in self.rows)]
        self._fill(table)
        if self.rows:
            index = next((i for i, r in enumerate(self.rows) if r.id == keep_id), None)
            if index is None:
                index = min(max(keep_row, 0), len(self.rows) - 1)
            table.move_cursor(row=index)
        status = self.query_one("#clusters-status", Static)
        if not message.info:
            status.update("No clustering yet — press C to cluster every failed trial.")
        else:
            total = message.info.get("n_failures", 0)
            infra = message.info.get("infra_left_out", 0)
            left_out = f" · {crashed(infra)}, left out" if isinstance(infra, int) and infra else ""
            status.update(
                f"{total} failures in {len(self.rows)} clusters, biggest first{left_out} · "
                "Enter: its trials · r rename · space+m merge · S split · z undo · C re-cluster · "
                "b run scope · H tags · V judge names · R reload"
            )
        table.focus()
        self._detail()

    def _columns(self, table: DataTable[Any]) -> dict[str, int]:
        """The columns at this width, from the rows themselves: the numbers never cut, runs and
        tasks as wide as their widest (cut in the middle when the screen is narrow), the name
        takes the rest (cut with "…")."""
        rows = self.rows
        widths = {
            "mark": 1,
            "rank": max([1] + [len(str(r.rank)) for r in rows]),
            "size": max([4] + [len(str(r.size)) for r in rows]),
            "share": 5,
        }
        cells = {r.id: _names_cells(r) for r in rows}
        wants = {
            "runs": min(NAMES_ROOM, max([4] + [len(c[0]) for c in cells.values()])),
            "tasks": min(NAMES_ROOM, max([5] + [len(c[1]) for c in cells.values()])),
        }
        shared = share_room(table_room(self.size.width or 120, widths), wants, NAME_MIN)
        widths.update(name=shared["free"], runs=shared["runs"], tasks=shared["tasks"])
        table.clear(columns=True)
        for key, label in (
            ("mark", " "),
            ("rank", Text("#", justify="right")),
            ("size", Text("size", justify="right")),
            ("share", Text("share", justify="right")),
            ("name", "name"),
            ("runs", "runs"),
            ("tasks", "tasks"),
        ):
            table.add_column(label, key=key, width=widths[key])
        return widths

    def _fill(self, table: DataTable[Any]) -> None:
        from reviewer.text import distinct_elisions

        widths = self._columns(table)
        cells = {r.id: _names_cells(r) for r in self.rows}
        runs = distinct_elisions(sorted({c[0] for c in cells.values()}), widths["runs"])
        for r in self.rows:
            run_cell, task_cell, one_task = cells[r.id]
            # one task is a name, cut in the middle; a summary keeps its count, cut at its end
            task_text = (
                elide_middle(task_cell, widths["tasks"])
                if one_task
                else cut_end(Text(task_cell), widths["tasks"]).plain
            )
            table.add_row(
                Text("✓" if r.id in self.marked else " ", style="bold green"),
                Text(str(r.rank), justify="right"),
                Text(str(r.size), justify="right"),
                Text(f"{r.size / r.total:.0%}" if r.total else "-", justify="right"),
                cut_end(
                    safe_text(r.name, "bold" if r.renamed else "", single_line=True, limit=400),
                    widths["name"],
                ),
                Text(runs[run_cell], no_wrap=True),
                Text(task_text, no_wrap=True),
                key=r.id,
            )

    def on_resize(self) -> None:
        if self.rows:
            table = self.query_one("#clusters", DataTable)
            keep = table.cursor_row
            self._fill(table)
            table.move_cursor(row=min(max(keep, 0), len(self.rows) - 1))

    def _title(self) -> None:
        scope = self.scope
        where = "every run" if scope in (None, EVERY_RUN) else f"run {scope}"
        self.query_one("#failures-title", Static).update(
            safe_text(f"Failure clusters — {where}", single_line=True)
        )

    def _score(self) -> None:
        """The scorecard line (and with H each tag's best cluster) when any failure is tagged."""
        from reviewer.workflows.clusters import summary_line, tag_line

        widget = self.query_one("#cluster-score", Static)
        card = self.score.card if self.score is not None else None
        widget.display = card is not None and card.tagged > 0
        if card is None or not card.tagged:
            return
        text = Text("tags vs clusters: ", style="bold")
        text.append_text(safe_text(summary_line(card), single_line=True))
        if self.show_tags:
            for b in card.per_tag:
                text.append("\n  ")
                text.append_text(safe_text(tag_line(b), single_line=True))
        else:
            text.append("  (H: each tag's best cluster)", style="dim")
        widget.update(text)

    def action_score(self) -> None:
        card = self.score.card if self.score is not None else None
        if card is None or not card.tagged:
            self.notify(
                "No tagged failures in this clustering's scope: tag fails while labeling "
                "(K on the label screen, or a rubric's categories).",
                severity="warning",
            )
            return
        self.show_tags = not self.show_tags
        self._score()

    def action_scope(self) -> None:
        """Cluster the failures of the next scope: every run, then each run in turn."""
        scopes = [EVERY_RUN, *self.runs]
        if len(scopes) < 2:
            return
        now = self.scope if self.scope in scopes else EVERY_RUN
        self.scope = scopes[(scopes.index(now) + 1) % len(scopes)]
        self._title()
        self.action_recluster()

    def _current(self) -> ClusterRow | None:
        table = self.query_one("#clusters", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((r for r in self.rows if r.id == key), None)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail()

    def _detail(self) -> None:
        r = self._current()
        detail = self.query_one("#cluster-detail", Static)
        if r is None:
            detail.update("")
            return
        text = Text()
        text.append(f"{r.share}: ", style="bold")
        text.append_text(safe_text(r.name, single_line=True))
        text.append("\nsignature: ", style="dim")
        text.append_text(safe_text(r.signature or "(no error evidence)", single_line=True))
        text.append("\nterms: ", style="dim")
        text.append_text(safe_text(", ".join(r.terms), single_line=True))
        text.append("\ntasks: ", style="dim")
        text.append_text(safe_text(tasks_summary(r.tasks), single_line=True))
        if r.renamed:
            text.append("\ngenerated name: ", style="dim")
            text.append_text(safe_text(r.generated_name, single_line=True))
        detail.update(text)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        r = self._current()
        if r is not None:
            self.app.push_screen(
                TrialsScreen(TrialFilter(cluster_id=r.id), title=f"Cluster: {r.name}")
            )

    def action_export_tasks(self) -> None:
        """The cluster under the cursor, as regression tasks."""
        r = self._current()
        self.start_export(None if r is None else ExportScope(f"cluster {r.name}", cluster=r.id))

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_mark(self) -> None:
        r = self._current()
        if r is None:
            return
        if r.id in self.marked:
            self.marked.remove(r.id)
        else:
            self.marked.append(r.id)
        self.query_one("#clusters", DataTable).update_cell(
            r.id, "mark", Text("✓" if r.id in self.marked else " ", style="bold green")
        )

    def action_rename(self) -> None:
        r = self._current()
        if r is None:
            return

        def done(name: str | None) -> None:
            if name is not None:
                self.edit("rename", r.id, name)

        self.app.push_screen(RenameModal(r.name), done)

    def action_merge(self) -> None:
        if len(self.marked) < 2:
            self.notify(
                "Mark two or more clusters with space, then press m to merge them.",
                severity="warning",
            )
            return
        self.edit("merge", self.marked[0], list(self.marked))
        self.marked = []

    def action_split(self) -> None:
        r = self._current()
        if r is None:
            return
        if r.size < 2:
            self.notify("A cluster of one trial cannot be split.", severity="warning")
            return

        def done(into: int | None) -> None:
            if into != 0:
                self.edit("split", r.id, into)

        self.app.push_screen(SplitModal(r.size), done)

    def action_reload(self) -> None:
        self.load()

    def action_undo(self) -> None:
        self.edit("undo", "", None)

    @work(thread=True, exclusive=True, exit_on_error=False, group="clusters-edit")
    def edit(self, kind: str, cluster_id: str, arg: object) -> None:
        """Rename, merge or split through the same cluster jobs as `reviewer cluster rename|merge|split`."""
        from reviewer.workflows import clusters as jobs

        try:
            with self.store() as db:
                if kind == "rename":
                    jobs.rename(db, cluster_id, str(arg).strip() or None)
                elif kind == "merge" and isinstance(arg, list):
                    self._focus_after = jobs.merge(db, [str(a) for a in arg]).id
                elif kind == "split":
                    jobs.split(db, cluster_id, into=arg if isinstance(arg, int) else None)
                elif kind == "undo":
                    undone, back = jobs.undo(db)
                    if back:
                        self._focus_after = back[0].id
                    self.app.call_from_thread(
                        self.notify, f"Undid the last {undone}.", markup=False
                    )
        except jobs.ClusterJobError as e:
            self.app.call_from_thread(self.notify, str(e), severity="warning", markup=False)
        self.load()

    def action_judge_clusters(self) -> None:
        """The judge names the clusters and proposes merges (`reviewer cluster --with-judge`)."""
        from reviewer.tui.screens.cluster_judge import ClusterJudgeScreen

        if not self.rows:
            self.notify("No clusters yet — press C to cluster the failures first.")
            return
        self.app.push_screen(ClusterJudgeScreen())

    def action_recluster(self) -> None:
        bar = self.query_one("#cluster-progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        self.query_one("#clusters-status", Static).update("clustering… (X cancels)")
        self.recluster()

    def action_cancel(self) -> None:
        for w in self.workers:
            if w.group == "clusters-recluster" and w.is_running:
                w.cancel()
                self.notify("Clustering cancelled; the stored clusters are unchanged.")

    @work(thread=True, exclusive=True, exit_on_error=False, group="clusters-recluster")
    def recluster(self) -> None:
        from reviewer.workflows.clusters import ClusterJobError, cluster, current, embedder_of

        worker = get_current_worker()

        def progress(stage: str, done: int, total: int | None) -> None:
            self.post_message(ClusterProgress(stage, done, total))

        try:
            with self.store() as db:
                # the same embedding as the stored clustering (`reviewer cluster --embedder`), over
                # the screen's scope (`reviewer cluster --run`)
                cluster(
                    db,
                    None if self.scope in (None, EVERY_RUN) else self.scope,
                    progress=progress,
                    cancelled=lambda: worker.is_cancelled,
                    embedder=embedder_of(current(db)),
                )
        except InterruptedError:
            pass
        except ClusterJobError as e:
            self.app.call_from_thread(self.notify, str(e), severity="warning", markup=False)
        finally:
            self.post_message(ClusterProgress("done", 1, 1))
        self.load()

    def on_cluster_progress(self, message: ClusterProgress) -> None:
        bar = self.query_one("#cluster-progress", ProgressBar)
        if message.stage == "done":
            bar.display = False
            return
        bar.update(total=message.total, progress=message.done)
        self.query_one("#clusters-status", Static).update(f"{message.stage}… (X cancels)")
