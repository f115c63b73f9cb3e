"""Distributions per run and per task: steps, cost, latency, tool error rate, rule violation rates.

Everything is computed from :class:`TrialStats`, a few numbers per trial, so the store can hand them over
without loading transcripts. Missing cost or latency values are left out of their summary and counted in
its ``missing``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

from reviewer.models import TrialStats


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0..100), same as ``numpy.percentile``'s default linear interpolation."""
    xs = sorted(values)
    if not xs:
        raise ValueError("percentile of no values")
    return _percentile_sorted(xs, q)


def _percentile_sorted(xs: Sequence[float], q: float) -> float:
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q!r}")
    n = len(xs)
    h = (n - 1) * (q / 100)
    if h >= n - 1:
        return float(xs[-1])
    lo = math.floor(h)
    t = h - lo
    a, b = float(xs[lo]), float(xs[lo + 1])
    d = b - a
    # numpy interpolates from the nearer end, which keeps results exact at the endpoints.
    return b - d * (1 - t) if t >= 0.5 else a + d * t


def finite_sum(values: Iterable[float]) -> float | None:
    """The exact sum of finite numbers, or None when it overflows a float (never OverflowError:
    a database written before the import's bounds may hold costs near 1e308)."""
    try:
        total = math.fsum(values)
    except (OverflowError, ValueError):  # ValueError: inf + -inf among the values
        return None
    return total if math.isfinite(total) else None


def _mean(values: Sequence[float]) -> float | None:
    try:  # the exact sum is finite only when every value is: then none needs checking alone
        total = math.fsum(values)
    except (OverflowError, ValueError):
        total = math.nan
    if math.isfinite(total):
        return total / len(values) if values else None
    known = [v for v in values if math.isfinite(v)]
    exact = finite_sum(known) if known else None
    return None if exact is None else exact / len(known)


@dataclass(frozen=True)
class Summary:
    """A distribution in a few numbers; all None when no value was known. ``missing`` counts unknowns."""

    n: int
    mean: float | None
    p50: float | None
    p95: float | None
    max: float | None
    min: float | None
    missing: int = 0
    total: float | None = None

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Summary:
        given = values if isinstance(values, list) else list(values)
        known = [float(v) for v in given if v is not None]
        known.sort()
        # the exact sum (of the sorted values) is finite only when every value is: then no value
        # needs checking alone
        try:
            total: float | None = math.fsum(known)
        except (OverflowError, ValueError):
            total = None
        if total is None or not math.isfinite(total):
            # NaN and ±Infinity (from a database written by an older version) count as unknown
            known = [float(v) for v in given if v is not None and math.isfinite(v)]
            known.sort()
            total = finite_sum(known)
        missing = len(given) - len(known)
        if not known:
            return cls(0, None, None, None, None, None, missing, None)
        return cls(
            n=len(known),
            mean=None if total is None else total / len(known),
            p50=_percentile_sorted(known, 50),
            p95=_percentile_sorted(known, 95),
            max=known[-1],
            min=known[0],
            missing=missing,
            total=total,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "p50": self.p50,
            "p95": self.p95,
            "max": self.max,
            "min": self.min,
            "missing": self.missing,
            "total": self.total,
        }


@dataclass
class Distributions:
    """Distributions over a group of trials (a run or one task).

    - ``steps``, ``cost_per_trial``, ``latency``: over trials.
    - ``cost_per_task``: over tasks, each task's value being the mean cost of one attempt at it (the mean of
      its trials' known costs). Its mean is therefore a macro-average in which every task weighs the same,
      whatever its number of trials; tasks with no known cost count as missing.
    - ``tool_error_rate``: tool errors / tool calls (None without tool calls).
    - ``violation_rate[rule]``: share of trials with at least one violation of that rule.

    All but ``n_trials``, ``infra`` and ``unscored`` leave out the trials the harness crashed
    (``measured`` counts the others): a crash measured no agent, and a task all of whose trials
    crashed has no row, so ALL is over the trials the task rows show."""

    n_trials: int
    n_tasks: int
    successes: int
    steps: Summary
    cost_per_trial: Summary
    cost_per_task: Summary
    latency: Summary
    tool_calls: int
    tool_errors: int
    violation_trials: dict[str, int] = field(default_factory=dict)
    infra: int = 0  # trials ended by infrastructure errors (in n_trials, not in success_rate)
    unscored: int = 0  # trials with no outcome (in n_trials, not in success_rate)

    @property
    def scored(self) -> int:
        return self.n_trials - self.infra - self.unscored

    @property
    def measured(self) -> int:
        """Trials the harness did not crash: what steps, cost, latency, tool errors and rule
        violations are over."""
        return self.n_trials - self.infra

    @property
    def success_rate(self) -> float | None:
        """Passes over scored trials: infrastructure errors and unscored trials are left out."""
        return self.successes / self.scored if self.scored else None

    @property
    def tool_error_rate(self) -> float | None:
        return self.tool_errors / self.tool_calls if self.tool_calls else None

    @property
    def violation_rate(self) -> dict[str, float | None]:
        return {
            r: (c / self.measured if self.measured else None)
            for r, c in self.violation_trials.items()
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_trials": self.n_trials,
            "measured": self.measured,
            "n_tasks": self.n_tasks,
            "success_rate": self.success_rate,
            "infra": self.infra,
            "unscored": self.unscored,
            "steps": self.steps.to_dict(),
            "cost_per_trial": self.cost_per_trial.to_dict(),
            "cost_per_task": self.cost_per_task.to_dict(),
            "latency_s": self.latency.to_dict(),
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "tool_error_rate": self.tool_error_rate,
            "violation_trials": dict(self.violation_trials),
            "violation_rate": self.violation_rate,
        }


def run_distributions(stats: Iterable[TrialStats], rule_ids: Iterable[str] = ()) -> Distributions:
    """Distributions over all of a run's trials (steps, cost and latency over those the harness did
    not crash: a crash measured no agent).

    ``rule_ids`` are the configured rules, listed with a rate of 0 when no trial broke them; ids seen in
    violations but not configured are listed too.
    """
    rows = list(stats)
    costs: dict[str, list[float]] = {}
    for s in rows:
        known = costs.setdefault(s.task_id, [])
        if s.cost_usd is not None and s.outcome != "infra":
            known.append(s.cost_usd)
    per_task_cost = [_mean(v) for v in costs.values()]
    return _distributions(rows, len(costs), Summary.of(per_task_cost), rule_ids)


def run_distributions_of_rows(
    rows: Sequence[tuple[str, int, int, float | None, float | None, int, int, str]],
    broken: dict[str, int],
    rule_ids: Iterable[str] = (),
) -> Distributions:
    """:func:`run_distributions` from ``store.trials.run_metric_rows`` (a tuple per trial and the
    trials per rule broken) instead of a :class:`TrialStats` per trial: the same numbers, for a
    report of a million trials."""
    counts: dict[str, int] = dict.fromkeys(rule_ids, 0)
    counts.update(broken)
    if not rows:
        none = Summary.of([])
        return Distributions(0, 0, 0, none, none, none, none, 0, 0, counts)
    # column by column, in C where it can be: a million trials' worth of tuples
    task_ids, success, n_steps, cost, latency, calls, errors, outcomes = zip(*rows, strict=True)
    tally = Counter(outcomes)
    measured = [o != "infra" for o in outcomes]  # a crashed harness measured no agent
    scored = [o in _SCORED for o in outcomes]
    per_task: dict[str, list[float]] = {t: [] for t in task_ids}
    for task_id, c in zip(compress(task_ids, measured), compress(cost, measured), strict=True):
        if c is not None:
            per_task[task_id].append(c)
    return Distributions(
        n_trials=len(rows),
        n_tasks=len(per_task),
        successes=sum(map(bool, compress(success, scored))),
        steps=Summary.of(list(compress(n_steps, measured))),
        cost_per_trial=Summary.of(list(compress(cost, measured))),
        cost_per_task=Summary.of([_mean(v) for v in per_task.values()]),
        latency=Summary.of(list(compress(latency, measured))),
        tool_calls=sum(compress(calls, measured)),
        tool_errors=sum(compress(errors, measured)),
        violation_trials=counts,
        infra=tally["infra"],
        unscored=tally["unscored"],
    )


def task_distributions(
    stats: Iterable[TrialStats], rule_ids: Iterable[str] = ()
) -> dict[str, Distributions]:
    """Distributions per task, in order of first appearance."""
    groups: dict[str, list[TrialStats]] = {}
    for s in stats:
        if (
            s.outcome != "infra"
        ):  # a crashed harness measured no agent; a task it all crashed is left out
            groups.setdefault(s.task_id, []).append(s)
    ids = list(rule_ids)
    out: dict[str, Distributions] = {}
    for task_id, rows in groups.items():
        known = [s.cost_usd for s in rows if s.cost_usd is not None and s.outcome != "infra"]
        cost = Summary.of([_mean(known)])
        out[task_id] = _distributions(rows, 1, cost, ids)
    return out


_SCORED = ("", "pass", "fail")  # TrialStats.scored: "" reads as pass or fail by ``success``


def _distributions(
    rows: Sequence[TrialStats], n_tasks: int, cost_per_task: Summary, rule_ids: Iterable[str]
) -> Distributions:
    counts: dict[str, int] = dict.fromkeys(rule_ids, 0)
    successes = tool_calls = tool_errors = infra = unscored = 0
    steps: list[float | None] = []
    costs: list[float | None] = []
    latencies: list[float | None] = []
    for s in rows:
        outcome = s.outcome
        if outcome == "infra":
            infra += 1
        else:  # a crashed harness measured no agent
            steps.append(s.steps)
            costs.append(s.cost_usd)
            latencies.append(s.latency_s)
            if outcome == "unscored":
                unscored += 1
            elif s.success and outcome in _SCORED:
                successes += 1
            tool_calls += s.tool_calls
            tool_errors += s.tool_errors
            for r in s.violations or ():
                counts[r] = counts.get(r, 0) + 1
    return Distributions(
        n_trials=len(rows),
        n_tasks=n_tasks,
        successes=successes,
        steps=Summary.of(steps),
        cost_per_trial=Summary.of(costs),
        cost_per_task=cost_per_task,
        latency=Summary.of(latencies),
        tool_calls=tool_calls,
        tool_errors=tool_errors,
        violation_trials=counts,
        infra=infra,
        unscored=unscored,
    )
