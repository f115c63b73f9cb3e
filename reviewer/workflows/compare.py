"""Compare two stored runs: the one path behind `reviewer compare`, the app's Compare screen and the
gate. It reads both runs' trials (the outcome from the harness, the human labels or the judge), the
active rules' severities and the runs' pass rules, and returns the comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from reviewer.metrics.compare import comparison_lines as comparison_lines
from reviewer.metrics.compare import format_value as format_value
from reviewer.metrics.compare_types import Comparison
from reviewer.metrics.plot import plot_passk as plot_passk
from reviewer.models import TrialStats
from reviewer.store.db import Store

# re-exported for the faces (they import workflows only)
from reviewer.store.trials import OUTCOME_SOURCES as OUTCOME_SOURCES


class CompareError(Exception):
    """The runs cannot be compared as asked (stored rules that no longer load): one line."""


def compare_stored(
    db: Store,
    old: str,
    new: str,
    *,
    k: int | None = None,
    seed: int = 0,
    outcome: str = "harness",
    scaled: Mapping[str, float] | None = None,
    stats: tuple[Sequence[TrialStats], Sequence[TrialStats]] | None = None,
) -> Comparison:
    """``new`` against ``old`` with compare's statistics; ``outcome`` is where each trial's outcome
    comes from (``store.trials.OUTCOME_SOURCES``), ``scaled`` as in ``compare_runs``; ``stats`` the
    runs' trials when the caller has read them already (with the same ``outcome``)."""
    from reviewer.metrics.active_rules import active_rules
    from reviewer.metrics.compare import compare_runs
    from reviewer.metrics.report import pass_rules
    from reviewer.metrics.rules import RuleError, severities
    from reviewer.store.trials import trial_stats

    try:
        active = active_rules(db)
    except RuleError as e:
        raise CompareError(f"stored rules no longer load: {e}") from e
    old_stats, new_stats = stats or (trial_stats(db, old, outcome), trial_stats(db, new, outcome))
    cmp = compare_runs(
        old_stats,
        new_stats,
        k=k,
        rules_severity=severities(active.rules) if active else {},
        seed=seed,
        old_name=old,
        new_name=new,
        scaled=scaled,
    )
    cmp.pass_rules = pass_rules(db, old, new)  # a warning line / field when they differ
    cmp.outcome_source = outcome
    if outcome != "harness":
        from reviewer.store.trials import outcome_coverage

        cmp.outcome_coverage = {
            "old": outcome_coverage(db, old, outcome),
            "new": outcome_coverage(db, new, outcome),
        }
    return cmp


@dataclass
class ComparisonView:
    """What both faces show of a comparison: the comparison, each run's pass^k-vs-k curve and the
    independence audit's warnings about either run."""

    comparison: Comparison
    curves: dict[str, list[tuple[int, float]]]
    audit_warnings: list[str] = field(default_factory=list)

    def render(self, *, color: bool = False) -> str:
        from reviewer.metrics.compare import render_comparison

        return render_comparison(self.comparison, color=color)


def view_comparison(
    db: Store,
    old: str,
    new: str,
    *,
    k: int | None = None,
    seed: int = 0,
    outcome: str = "harness",
) -> ComparisonView:
    """`reviewer compare` and the Compare screen: the comparison (``compare_stored``), the curves
    and the audit's warnings in one call; CompareError (one line) when the runs cannot be compared."""
    from reviewer.metrics.plot import passk_curve
    from reviewer.store.queries import task_counts
    from reviewer.workflows.audit import audit_warnings

    cmp = compare_stored(db, old, new, k=k, seed=seed, outcome=outcome)
    curves = {r: passk_curve([(n, c) for _, n, c in task_counts(db, r)]) for r in (old, new)}
    return ComparisonView(cmp, curves, audit_warnings(db, [old, new]))


def comparable_pair(db: Store) -> tuple[str, str] | None:
    """The two runs worth comparing by default (the app's palette offers them): the newest run
    with scored trials, against the newest earlier one that holds at least half the tasks of
    the smaller of the two; None when no earlier run does. Two evals of other tasks imported
    together share a task id by chance ("1"), and their comparison read 1.00 → 1.00."""
    from reviewer.store.queries import list_runs, run_tasks

    of = run_tasks(db)
    scored = sorted(
        (r.name for r in list_runs(db) if r.trials > 0 and r.name in of), key=lambda r: of[r][0]
    )
    if len(scored) < 2:
        return None
    new = scored[-1]
    mine = of[new][1]
    for old in reversed(scored[:-1]):
        theirs = of[old][1]
        if mine and theirs and 2 * len(mine & theirs) >= min(len(mine), len(theirs)):
            return old, new
    return None
