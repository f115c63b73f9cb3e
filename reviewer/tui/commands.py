"""Command palette (ctrl+p): jump to a run, task, cluster or trial; compare; re-cluster."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Matcher, Provider
from textual.content import Content

from reviewer.tui.safe import clean
from reviewer.tui.screens.base import store_of


@dataclass
class _Entry:
    title: str
    help: str
    action: Callable[[], Any]


class ReviewerCommands(Provider):
    """Everything worth jumping to, loaded once per palette opening in a thread."""

    async def startup(self) -> None:
        # a blind screen (labeling) offers no jumps: each could show a judge verdict or a label
        self.blind = bool(getattr(self.screen, "blind", False))
        self.entries: list[_Entry] = [] if self.blind else await asyncio.to_thread(self._load)

    def _load(self) -> list[_Entry]:
        from reviewer.workflows.compare import comparable_pair
        from reviewer.workflows.trials import list_runs, task_table

        entries: list[_Entry] = []
        with store_of(self.app) as db:
            listed = list_runs(db)
            runs = [r.name for r in listed]
            for run in runs:
                entries.append(
                    _Entry(
                        f"run: {clean(run, single_line=True)}",
                        "open the run's tasks",
                        partial(self._run, run),
                    )
                )
                entries.append(
                    _Entry(
                        f"plan: {clean(run, single_line=True)}",
                        "power plan: the smallest drop a comparison of two such runs detects",
                        partial(self._plan, run),
                    )
                )
                for t in task_table(db, run):
                    entries.append(
                        _Entry(
                            f"task: {clean(t.task_id, single_line=True)} ({clean(run, single_line=True)})",
                            f"{t.c}/{t.n} passed — open its trials",
                            partial(self._task, run, t.task_id),
                        )
                    )
            for cid, name, size in _clusters(db):
                entries.append(
                    _Entry(
                        # its id too, as the filter line and `reviewer cluster` show it
                        f"cluster: {clean(name, single_line=True)} · {clean(cid, single_line=True)}",
                        f"{size} failure{'' if size == 1 else 's'} — open its trials",
                        partial(self._cluster, cid, name),
                    )
                )
            # compare and gate the newest runs with scored trials: an unscored run (production
            # traffic imported for the monitor) compares as n/a on every row
            scored = [r.name for r in listed if r.trials > 0] or runs
            if pair := comparable_pair(db):
                old, new = pair
                entries.append(
                    _Entry(
                        f"compare {clean(old, single_line=True)} → {clean(new, single_line=True)}",
                        "the newest run with scored trials against the newest before it with "
                        "the same tasks",
                        partial(self._compare, old, new),
                    )
                )
        if runs:
            entries.append(
                _Entry(
                    f"gate {clean(scored[-1], single_line=True)} against the baseline",
                    "reviewer gate: pass^k, RED FLAGs, [gate] budgets; B makes it the baseline",
                    partial(self._gate, scored[-1]),
                )
            )
        entries.append(
            _Entry(
                "monitor production",
                "reviewer monitor: windows, check rates, judge fail rate, alerts",
                self._monitor,
            )
        )
        entries.append(
            _Entry("re-cluster failures", "cluster every failed trial again", self._recluster)
        )
        entries.append(_Entry("failures", "the ranked failure clusters", self._failures))
        entries.append(
            _Entry("position bias", "does the judge's winner change with the order?", self._bias)
        )
        tid = getattr(self.screen, "trial_id", None)
        entries.append(
            _Entry(
                "judge this trial" if isinstance(tid, str) else "judge every unjudged trial",
                "run the LLM judge (ANTHROPIC_API_KEY); progress, cost, Esc cancels",
                partial(self._judge, [tid] if isinstance(tid, str) else None),
            )
        )
        entries.append(
            _Entry(
                "judge agreement",
                "judge vs human: kappa, interval, confusion, disagreements",
                self._agreement,
            )
        )
        entries.append(
            _Entry(
                "audit",
                "are the trials independent? leaked state, copies, hollow passes, order effects",
                self._audit,
            )
        )
        if hasattr(self.screen, "action_export_tasks"):
            entries.append(
                _Entry(
                    "export as regression tasks",
                    "the trial, cluster or list on screen, appended to regression/tasks.jsonl",
                    self._export,
                )
            )
        entries.append(
            _Entry(
                "all trials", "every trial, filterable and searchable", partial(self._trials, None)
            )
        )
        entries.append(
            _Entry("pass^k: choose k", "the k of pass^k on the runs and tasks screens", self._k)
        )
        if hasattr(self.screen, "action_rescore"):
            entries.append(
                _Entry(
                    "pass threshold",
                    "the highlighted run's graded rewards judged again (reviewer rescore)",
                    self.screen.action_rescore,
                )
            )
        entries.append(_Entry("import", "import a file or folder", self._import))
        return entries

    def _k(self) -> None:
        from reviewer.tui.screens.choose_k import choose_k

        choose_k(self.app)

    def _judge(self, trial_ids: list[str] | None) -> None:
        from reviewer.tui.screens.judging import JudgeScreen

        self.app.push_screen(JudgeScreen(trial_ids))

    async def discover(self) -> Hits:
        for e in self.entries[:40]:
            yield DiscoveryHit(Content(e.title), e.action, text=e.title, help=_plain_help(e.help))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for e in self.entries:
            score = matcher.match(e.title)
            if score > 0:
                yield Hit(
                    score,
                    _highlight(matcher, e.title),
                    e.action,
                    text=e.title,
                    help=_plain_help(e.help),
                )
        q = query.strip()
        if not self.blind and len(q) >= 6 and all(ch in "0123456789abcdef" for ch in q.lower()):
            for tid, label in await asyncio.to_thread(self._trials_by_prefix, q.lower()):
                title = f"trial {tid} {clean(label, single_line=True)}"
                yield Hit(
                    1.0,
                    Content(title),
                    partial(self._trial, tid),
                    text=title,
                    help="open the transcript",
                )

    def _trials_by_prefix(self, prefix: str) -> list[tuple[str, str]]:
        from reviewer.workflows.trials import trials_by_id_prefix

        with store_of(self.app) as db:
            rows = trials_by_id_prefix(db, prefix)
        return [(tid, f"{run} / {task} #{trial}") for tid, run, task, trial in rows]

    def _run(self, run: str) -> None:
        from reviewer.tui.screens.tasks import TasksScreen

        self.app.push_screen(TasksScreen(run))

    def _task(self, run: str, task: str) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        self.app.push_screen(
            TrialsScreen(TrialFilter(run=run, task_id=task), title=f"Trials of {task} ({run})")
        )

    def _cluster(self, cluster_id: str, name: str) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        self.app.push_screen(
            TrialsScreen(TrialFilter(cluster_id=cluster_id), title=f"Cluster: {name}")
        )

    def _trial(self, trial_id: str) -> None:
        from reviewer.tui.screens.transcript import TranscriptScreen

        self.app.push_screen(TranscriptScreen(trial_id))

    def _compare(self, old: str, new: str) -> None:
        from reviewer.tui.screens.compare import CompareScreen

        self.app.push_screen(CompareScreen(old, new))

    def _gate(self, run: str) -> None:
        from reviewer.tui.screens.gate import GateScreen

        self.app.push_screen(GateScreen(run))

    def _monitor(self) -> None:
        from reviewer.tui.screens.monitor import MonitorScreen

        self.app.push_screen(MonitorScreen())

    def _import(self) -> None:
        from reviewer.tui.screens.importing import ImportModal
        from reviewer.tui.screens.runs import RunsScreen

        def done(imported: bool | None) -> None:
            for screen in self.app.screen_stack:
                if imported and isinstance(screen, RunsScreen):
                    screen.action_reload()

        self.app.push_screen(ImportModal(), done)

    def _export(self) -> None:
        screen: Any = self.screen
        screen.action_export_tasks()

    def _audit(self) -> None:
        from reviewer.tui.screens.audit import AuditScreen

        self.app.push_screen(AuditScreen())

    def _plan(self, run: str) -> None:
        from reviewer.tui.screens.plan import PlanScreen

        self.app.push_screen(PlanScreen(run))

    def _agreement(self) -> None:
        from reviewer.tui.screens.agreement import AgreementScreen

        self.app.push_screen(AgreementScreen())

    def _bias(self) -> None:
        from reviewer.tui.screens.bias import BiasScreen

        self.app.push_screen(BiasScreen())

    def _failures(self) -> None:
        from reviewer.tui.screens.failures import FailuresScreen

        self.app.push_screen(FailuresScreen())

    def _recluster(self) -> None:
        from reviewer.tui.screens.failures import FailuresScreen

        self.app.push_screen(FailuresScreen(recluster=True))

    def _trials(self, run: str | None) -> None:
        from reviewer.tui.screens.trials import TrialsScreen
        from reviewer.workflows.trials import TrialFilter

        self.app.push_screen(TrialsScreen(TrialFilter(run=run)))


def _highlight(matcher: Matcher, title: str) -> Content:
    """``matcher.highlight`` without its markup parsing: the title (names from the data, already
    made visible by ``clean``) is plain text, with the matched letters styled."""
    content = Content(title)
    _, offsets = matcher.fuzzy_search.match(matcher.query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


def _plain_help(text: str) -> str:
    """The palette parses a hit's help as markup: escape it (ours, but it may quote data one day)."""
    from textual.markup import escape

    return escape(clean(text, single_line=True))


def _clusters(db: Any) -> list[tuple[str, str, int]]:
    from reviewer.workflows.clusters import latest_clusters

    return [(c.id, c.name, c.size) for c in latest_clusters(db)]
