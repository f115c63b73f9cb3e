"""Power planning: what a comparison of two runs like this one could detect, and what it would take.

From a run's own per-task pass rates (each estimated as (c + 0.5) / (n + 1), so a task that passed
every one of a few trials still counts as able to fail), the noise of the per-task difference of two
independent runs with the same agent is 2 Var(estimate) per task: p (1 - p) / n for pass@1, and the
exact binomial variance of the unbiased estimator C(c, k) / C(n, k) for pass^k. ``reviewer compare``
calls a drop "worse" when its 95% task-bootstrap interval excludes zero (``noise.py``), so a drop D is
detected with the wanted power when D >= (c_T + z_power) * SD, with SD the standard deviation of the
mean difference over T tasks and c_T the critical value compare uses (t with T - 1 degrees of freedom,
expanded by sqrt(T / (T - 1))). ``tests/metrics/test_power.py`` checks by simulation that runs
differing by the planned drop are called worse about as often as planned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from math import comb
from typing import Any

from reviewer.metrics.noise import MIN_TASKS

#: No search goes past these: the plan says "more than" instead.
MAX_TRIALS = 1000
MAX_TASKS = 1_000_000


@dataclass
class MetricPlan:
    """The plan for one metric (pass@1 or pass^k)."""

    metric: str
    label: str
    value: float  # the run's average today
    detectable_drop: float | None  # the smallest drop detected with the wanted power
    #: with the run's trials per task, how many tasks would detect a drop of ``delta``
    tasks_needed: int | None = None
    #: with the run's tasks, how many trials per task would detect a drop of ``delta``
    trials_needed: int | None = None
    #: why ``detectable_drop`` is None although the run has tasks: a drop can never exceed today's
    #: value, so a drop at least as large as it is no drop of this metric at all
    reason: str | None = None
    #: why ``tasks_needed`` and ``trials_needed`` are None: ``delta`` exceeds today's value
    delta_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Plan:
    run: str
    n_tasks: int
    trials: int  # trials per task assumed (the run's median)
    k: int
    power: float
    delta: float | None
    metrics: list[MetricPlan] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "n_tasks": self.n_tasks,
            "trials_per_task": self.trials,
            "k": self.k,
            "power": self.power,
            "alpha": 0.05,
            "delta": self.delta,
            "metrics": [m.to_dict() for m in self.metrics],
            "notes": list(self.notes),
        }

    def render(self) -> str:
        """The plan as text that fits 80 columns (run names aside)."""
        lines = [
            f"plan for {self.run}: {self.n_tasks} task{'' if self.n_tasks == 1 else 's'},"
            f" {self.trials} trial{'' if self.trials == 1 else 's'} per task (median)",
            *(f"note: {n}" for n in self.notes),
            "",
            f"smallest drop that `reviewer compare` of two such runs calls worse"
            f" {self.power:.0%} of the time:",
        ]
        for m in self.metrics:
            if m.reason is not None:
                lines.append(f"  {m.label:<8} {m.reason}")
                continue
            drop = "none" if m.detectable_drop is None else f"{m.detectable_drop:.3f}"
            lines.append(f"  {m.label:<8} today {m.value:.3f}   drop {drop}")
        if self.delta is not None:
            lines.append("")
            lines.append(f"to detect a drop of {self.delta:g} {self.power:.0%} of the time:")
            for m in self.metrics:
                if m.delta_reason is not None:
                    lines.append(f"  {m.label:<8} {m.delta_reason}")
                    continue
                tasks = _count(m.tasks_needed, MAX_TASKS, "tasks")
                lines.append(f"  {m.label:<8} {tasks} at {self.trials} trials each, or")
                if self.n_tasks < MIN_TASKS:
                    more = (
                        f"no number of trials on {self.n_tasks} tasks (compare needs {MIN_TASKS})"
                    )
                else:
                    more = _count(m.trials_needed, MAX_TRIALS, "trials per task")
                    more += f" on these {self.n_tasks} tasks"
                lines.append(f"  {'':<8} {more}")
        lines.append("")
        lines.append("A real drop smaller than these usually reads as 'within noise' in")
        lines.append("`reviewer compare`: to see smaller drops, add tasks or trials.")
        return "\n".join(lines)


def _count(v: int | None, cap: int, what: str) -> str:
    return f"more than {cap:,} {what}" if v is None else f"{v:,} {what}"


def critical(m: int) -> float:
    """The z-equivalent threshold of compare's expanded 95% interval over ``m`` tasks."""
    from scipy.special import stdtrit

    if m < 2:
        return math.inf
    return math.sqrt(m / (m - 1)) * float(stdtrit(m - 1, 0.975))


def _z(power: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(power))


@lru_cache(maxsize=65536)
def _var_hat(n: int, p: float, k: int) -> float:
    """Exact variance of C(c, k) / C(n, k) for c ~ Binomial(n, p)."""
    if k == 1:
        return p * (1 - p) / n
    total = comb(n, k)
    second = math.fsum(
        comb(n, c) * p**c * (1 - p) ** (n - c) * (comb(c, k) / total) ** 2 for c in range(k, n + 1)
    )
    return max(0.0, second - p ** (2 * k))


def detectable_drop(
    rates: Sequence[float], n: int, k: int, power: float, tasks: int
) -> float | None:
    """The drop in the mean of pass^k (pass@1 for k = 1) that ``tasks`` tasks like ``rates`` with
    ``n`` trials each detect with ``power``; None below MIN_TASKS (compare never decides).

    The noise is that of the old run at ``rates`` plus the new run after the drop (every task's
    pass^k lower by the same amount), found by fixed-point iteration."""
    if tasks < MIN_TASKS or n < k or not rates:
        return None
    factor = critical(tasks) + _z(power)
    old = math.fsum(_var_hat(n, p, k) for p in rates) / len(rates)
    drop = factor * math.sqrt(2 * old / tasks)
    for _ in range(30):
        moved = [max(0.0, p**k - drop) ** (1 / k) for p in rates]
        new = math.fsum(_var_hat(n, round(p, 6), k) for p in moved) / len(rates)
        nxt = factor * math.sqrt((old + new) / tasks)
        if abs(nxt - drop) < 1e-6:
            return nxt
        drop = nxt
    return drop


def plan_run(
    run: str,
    counts: Sequence[tuple[str, int, int]],
    *,
    k: int | None = None,
    delta: float | None = None,
    power: float = 0.8,
) -> Plan:
    """The plan for a run given its (task, n scored, c passed) counts."""
    if not 0 < power < 1:
        raise ValueError(f"--power must be between 0 and 1, got {power:g}")
    if delta is not None and not 0 < delta <= 1:
        raise ValueError(f"--delta must be in (0, 1], got {delta:g}")
    scored = [(t, n, c) for t, n, c in counts if n > 0]
    ns = sorted(n for _, n, _ in scored)
    trials = ns[len(ns) // 2] if ns else 0
    kk = k if k is not None else max(1, trials)
    if kk < 1:
        raise ValueError(f"--k must be at least 1, got {kk}")
    plan = Plan(run, len(scored), trials, kk, power, delta)
    if not scored:
        plan.notes.append("the run has no scored trial: nothing to plan from")
        return plan
    rates = [(c + 0.5) / (n + 1) for _, n, c in scored]
    tasks = len(scored)
    if tasks < MIN_TASKS:
        plan.notes.append(
            f"`reviewer compare` decides nothing on {tasks} tasks (it needs {MIN_TASKS});"
            f" the drops assume {MIN_TASKS}"
        )
    if kk > trials:
        plan.notes.append(
            f"pass^{kk} needs {kk} trials per task; the run has {trials}: its figures assume {kk}"
        )
    for metric, label, kind in (("pass_at_1", "pass@1", 1), ("pass_hat_k", f"pass^{kk}", kk)):
        if kind == 1 and metric == "pass_hat_k":
            continue
        value = math.fsum((c / n) if kind == 1 else _hat(n, c, kind) for _, n, c in scored) / tasks
        n_eff = max(trials, kind)
        mp = MetricPlan(
            metric,
            label,
            value,
            detectable_drop(rates, n_eff, kind, power, max(tasks, MIN_TASKS)),
        )
        if mp.detectable_drop is not None and mp.detectable_drop >= value:
            # The noise model's rates ((c + 0.5) / (n + 1)) can fail where the run never did, so
            # the drop it finds may exceed today's value; a drop that large cannot happen.
            mp.detectable_drop = None
            mp.reason = f"no drop of {label} is detectable: today's value is {value:.3f}"
        if delta is not None and delta > value:
            mp.delta_reason = (
                f"no drop of {delta:g} in {label} is possible: today's value is {value:.3f}"
            )
        elif delta is not None:
            mp.tasks_needed = _search(
                lambda t, ne=n_eff, kd=kind: _ok(detectable_drop(rates, ne, kd, power, t), delta),
                MIN_TASKS,
                MAX_TASKS,
            )
            mp.trials_needed = (
                None
                if tasks < MIN_TASKS
                else _search(
                    lambda m, kd=kind: _ok(
                        detectable_drop(rates, m, kd, power, max(tasks, MIN_TASKS)), delta
                    ),
                    kind,
                    MAX_TRIALS,
                )
            )
        plan.metrics.append(mp)
        if kk == 1:
            break
    return plan


def _hat(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k) if n >= k else 0.0


def _ok(drop: float | None, delta: float) -> bool:
    return drop is not None and drop <= delta


def _search(ok: Any, lo: int, cap: int) -> int | None:
    """The smallest x in [lo, cap] with ok(x), assuming ok is monotone; None when none."""
    if ok(lo):
        return lo
    hi = lo
    while not ok(hi):
        if hi >= cap:
            return None
        hi = min(cap, hi * 2)
    low = hi // 2 if hi // 2 >= lo else lo
    while hi - low > 1:
        mid = (low + hi) // 2
        low, hi = (low, mid) if ok(mid) else (mid, hi)
    return hi
