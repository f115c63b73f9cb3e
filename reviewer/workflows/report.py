"""Reliability of stored runs: the one path behind `reviewer report`, the runs screen and the tasks
screen. The shared k (one k for the runs shown together) is decided here, once."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# how the faces present a report (re-exported: the faces import workflows only)
from reviewer.metrics.flakiness import render_flakiness as render_flakiness
from reviewer.metrics.plot import plot_passk as plot_passk
from reviewer.metrics.report import TASK_ROWS as TASK_ROWS
from reviewer.metrics.report import header_lines as header_lines
from reviewer.metrics.report import left_out_lines as left_out_lines
from reviewer.metrics.report import passk_json as passk_json
from reviewer.metrics.report import render_distributions as render_distributions
from reviewer.metrics.report import render_passk as render_passk
from reviewer.metrics.report import worst_tasks
from reviewer.store.queries import TaskRow as TaskRow

if TYPE_CHECKING:
    from reviewer.metrics.distributions import Distributions
    from reviewer.metrics.flakiness import TaskFlakiness
    from reviewer.metrics.passk import RunPassK
    from reviewer.store.db import Store


class ReportError(Exception):
    """The runs cannot be reported as asked (stored rules that no longer load): one line."""


@dataclass
class RunSummary:
    """One row of the runs screen."""

    name: str
    tasks: int
    trials: int
    pass_at_1: float | None
    k: int
    pass_hat_k: float | None
    cost_usd: float | None
    imported_at: str
    infra: int = 0  # trials ended by infrastructure errors, left out of the rates
    unscored: int = 0  # trials with no outcome, left out of the rates
    model: str | None = None  # the model its trials name (Inspect logs)
    pass_rule: str = ""  # the pass rule in words, when not the default
    short: int = 0  # tasks with fewer than k scored trials, left out of pass^k
    source: str | None = None  # the file the run was first imported from


@dataclass(frozen=True)
class RunsOverview:
    """Every run of the database with pass@1 and pass^k: at the k chosen, else at each run's own k
    (``k`` is then the one k they all have, or None when they differ)."""

    k: int | None
    rows: list[RunSummary]


@dataclass(frozen=True)
class TasksOverview:
    """One run's tasks (the tasks screen): the rows, the pass rule in words ("" when the default;
    the graded-rewards warning when the default rule meets graded rewards), the k and the averages
    line."""

    k: int
    rows: list[TaskRow]
    pass_rule: str
    averages: str
    warning: str = ""  # the graded-rewards warning ("" when none)
    #: each task's mean reward over its scored trials, when some reward of the run is partial
    rewards: dict[str, float] = field(default_factory=dict)
    audit: str = ""  # what the audit found (``audit.audit_note``: copies, replays…; "" when none)


@dataclass
class RunReport:
    """Everything `reviewer report` shows of one run."""

    run: str
    counts: list[tuple[str, int, int]]  # (task_id, n, c) with the chosen outcome source
    outcomes: dict[str, int]  # the harness's outcomes
    chosen_outcomes: dict[str, int]  # the chosen source's outcomes (the harness's for "harness")
    scored: int
    unscored: int
    left_out: dict[str, int]  # the outcomes with infra at 0 when infra is counted
    pass_rule: str | None  # JSON, as stored
    passk: RunPassK
    run_distribution: Distributions
    task_distributions: dict[str, Distributions]
    curve: list[tuple[int, float]]
    flakiness: list[TaskFlakiness]
    audit_warnings: list[str] = field(default_factory=list)
    #: the worst tasks a shortened report lists, worst first (None: every task);
    #: ``task_distributions`` then holds only these
    shown: list[str] | None = None


@dataclass(frozen=True)
class Report:
    """The runs reported together and the k they share (the app's default k)."""

    k: int
    runs: list[RunReport]


def shared_k_of(counts: Iterable[Iterable[tuple[int, int]]]) -> int:
    """The one k for runs shown together, from each run's (n, c) per task."""
    from reviewer.metrics.passk import shared_k

    return shared_k(counts)


def runs_overview(db: Store, k: int | None = None) -> RunsOverview:
    """Every run with pass@1 and pass^k at ``k``, by default each run's own k (``shared_k`` of its
    tasks alone: a run of one trial per task no longer pulls every other run down to pass^1)."""
    from reviewer.metrics.passk import average_passk
    from reviewer.models import PassRule
    from reviewer.store.queries import count_groups, list_runs

    runs = list_runs(db)
    all_groups = {r.name: count_groups(db, r.name) for r in runs}
    own = {
        name: k or shared_k_of([[(n, c) for n, c, times in groups for _ in range(times)]])
        for name, groups in all_groups.items()
    }
    rows = []
    for r in runs:
        groups = all_groups[r.name]
        run_k = own[r.name]
        at, hat = average_passk(groups, [1, run_k])
        rule = PassRule.from_json(r.pass_rule)
        rows.append(
            RunSummary(
                r.name,
                r.tasks,
                r.trials + r.infra + r.unscored,  # every trial; "left out" says which
                at[1],
                run_k,
                hat[run_k],
                r.cost_usd,
                (r.imported_at or "")[:16].replace("T", " "),
                r.infra,
                r.unscored,
                r.model,
                "" if rule.is_default else rule.describe(),
                sum(times for n, _, times in groups if 0 < n < run_k),
                source=r.source,
            )
        )
    ks = set(own.values())
    return RunsOverview(k or (ks.pop() if len(ks) == 1 else None), rows)


def tasks_overview(db: Store, run: str, k: int | None = None) -> TasksOverview:
    """The tasks of ``run`` with the averages line at ``k`` (by default the run's shared k)."""
    from reviewer.metrics.passk import run_passk
    from reviewer.metrics.report import average_summary
    from reviewer.models import PassRule
    from reviewer.store.queries import run_pass_rule, task_rewards, task_table
    from reviewer.workflows.audit import graded_warning

    rows = task_table(db, run)
    rule = PassRule.from_json(run_pass_rule(db, run))
    k = k or shared_k_of([[(r.n, r.c) for r in rows]])
    report = run_passk(run, [(r.task_id, r.n, r.c) for r in rows], [1, k])
    words = "" if rule.is_default else rule.describe()
    # the default rule on graded rewards: only full rewards pass
    warning = graded_warning(db, run, short=True) or ""
    from reviewer.workflows.audit import audit_note

    return TasksOverview(
        k,
        rows,
        words,
        average_summary(report, k),
        warning,
        task_rewards(db, run),
        audit_note(db, run) or "",
    )


def task_rates(n: int, c: int, k: int) -> dict[str, Any]:
    """pass@1, pass@k and pass^k of one task of n scored trials with c passes."""
    from reviewer.metrics.passk import pass_at_k, pass_hat_k

    return {
        "p1": pass_at_k(n, c, 1),
        "pak": pass_at_k(n, c, k),
        "phk": pass_hat_k(n, c, k),
        "flaky": 0 < c < n,
    }


def run_flakiness(db: Store, run: str, include_infra: bool = False) -> list[TaskFlakiness]:
    """Every task of ``run`` with its failures split by source (see ``metrics.flakiness``): the
    report's flakiness table and the tasks screen's line; ``include_infra``: a crashed trial
    counts as a failure, as pass^k counts it then."""
    from reviewer.metrics.flakiness import TaskFlakiness
    from reviewer.store.flakiness import task_sources

    return [TaskFlakiness(*row, include_infra=include_infra) for row in task_sources(db, run)]


def rule_ids(db: Store) -> list[str]:
    """The ids of the active rules; ReportError when the stored rules no longer load."""
    from reviewer.metrics.active_rules import active_rules
    from reviewer.metrics.rules import RuleError

    try:
        active = active_rules(db)
    except RuleError as e:
        raise ReportError(
            f"stored rules no longer load: {e}; set new ones with `reviewer rules FILE`"
        ) from e
    return [] if active is None else [r.id for r in active.rules]


def _in_order(tasks: dict[str, Distributions], shown: list[str] | None) -> dict[str, Distributions]:
    """A shortened report's task distributions in its table's order (worst first)."""
    if shown is None:
        return tasks
    return {t: tasks[t] for t in shown if t in tasks}


def report_runs(
    db: Store,
    runs: Sequence[str],
    ks: Sequence[int] | None = None,
    *,
    source: str = "harness",
    include_infra: bool = False,
    task_rows: int | None = None,
) -> Report:
    """`reviewer report` of ``runs``: per run pass@k / pass^k at ``ks`` (by default 1, the largest
    n every task has and the shared k), distributions, flakiness and the audit's warnings.

    ``task_rows``: a run with more tasks lists only its ``task_rows`` worst (``RunReport.shown``),
    and only their per-task distributions are computed; averages, the ALL row and flakiness
    shares stay over every task."""
    k, each = report_stream(
        db, runs, ks, source=source, include_infra=include_infra, task_rows=task_rows
    )
    return Report(k, list(each))


def report_stream(
    db: Store,
    runs: Sequence[str],
    ks: Sequence[int] | None = None,
    *,
    source: str = "harness",
    include_infra: bool = False,
    task_rows: int | None = None,
) -> tuple[int, Iterator[RunReport]]:
    """:func:`report_runs` a run at a time: the shared k (decided, and the stored rules checked,
    before anything is printed) and each run's report as it is made, for a face that shows the
    first run while the next is computed (a report of a million trials)."""
    from reviewer.store.queries import judged_task_counts, task_counts

    ids = rule_ids(db)
    all_counts = {
        r: task_counts(db, r, include_infra)
        if source == "harness"
        else judged_task_counts(db, r, source, include_infra)
        for r in runs
    }
    # the app's default k (one k for the runs shown together), next to pass@1 and each run's pass^n
    k = shared_k_of([(n, c) for _, n, c in counts] for counts in all_counts.values())
    return k, _each_run(db, runs, ks, all_counts, k, ids, source, include_infra, task_rows)


def _each_run(
    db: Store,
    runs: Sequence[str],
    ks: Sequence[int] | None,
    all_counts: dict[str, list[tuple[str, int, int]]],
    k: int,
    ids: list[str],
    source: str,
    include_infra: bool,
    task_rows: int | None,
) -> Iterator[RunReport]:
    from reviewer.metrics.distributions import (
        run_distributions,
        run_distributions_of_rows,
        task_distributions,
    )
    from reviewer.metrics.passk import default_ks, run_passk
    from reviewer.metrics.plot import passk_curve
    from reviewer.store.queries import run_outcomes, run_pass_rule
    from reviewer.store.trials import run_metric_rows, trial_stats
    from reviewer.workflows.audit import audit_warnings

    for r in runs:
        counts = all_counts[r]
        outcomes = run_outcomes(db, r)
        # trials neither the harness nor (with --outcome) a label or verdict scored
        scored = sum(n for _, n, _ in counts)
        infra_in = outcomes.get("infra", 0) if include_infra else 0
        unscored = max(0, sum(outcomes.values()) - outcomes.get("infra", 0) - (scored - infra_in))
        chosen = outcomes
        if source != "harness":
            # a label or verdict moves a trial between pass, fail and unscored (never out of infra)
            passed = sum(c for _, _, c in counts)
            every = {
                "pass": passed,
                "fail": scored - passed - infra_in,
                "infra": outcomes.get("infra", 0),
                "unscored": unscored,
            }
            chosen = {o: v for o, v in every.items() if v}
        passk = run_passk(r, counts, ks or [*default_ks(n for _, n, _ in counts), k])
        shown = None if task_rows is None else worst_tasks(passk, task_rows)
        if shown is None:
            stats = trial_stats(db, r)
            run_dist = run_distributions(stats, ids)
        else:  # a long run: no object per trial, and the listed tasks' trials alone
            rows, broken = run_metric_rows(db, r)
            run_dist = run_distributions_of_rows(rows, broken, ids)
            stats = trial_stats(db, r, tasks=shown)
        yield RunReport(
            run=r,
            counts=counts,
            outcomes=outcomes,
            chosen_outcomes=chosen,
            scored=scored,
            unscored=unscored,
            left_out=dict(outcomes, infra=0 if include_infra else outcomes.get("infra", 0)),
            pass_rule=run_pass_rule(db, r),
            passk=passk,
            run_distribution=run_dist,
            task_distributions=_in_order(task_distributions(stats, ids), shown),
            curve=passk_curve([(n, c) for _, n, c in counts]),
            flakiness=run_flakiness(db, r, include_infra),
            audit_warnings=audit_warnings(db, [r]),
            shown=shown,
        )
