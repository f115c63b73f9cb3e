"""A 95% interval for a report's average over tasks (pass@1, pass@k, pass^k), and what the average
could be with the tasks it leaves out.

The task is the unit, so the trial noise within a task and the spread between tasks both enter; the
interval is for the mean over the population of tasks the run's tasks stand for, under the run's
conditions. The per-task values lie in [0, 1], and near 0 or 1 a t interval over them is too short on
the open side, so the interval is Korn and Graubard's (1998) for a proportion from clustered data: a
Clopper-Pearson interval over the effective number of tasks, m p (1 - p) / s^2 (the tasks' variance
against a proportion's), shrunk by (z / t_{m-1})^2 for the few tasks the variance comes from. No interval's lower end is
above the all-at-1 bound below (nor its upper end under the all-at-0 one): near-perfect data must not
look surer than perfect data, which a variance near 0 would otherwise make it. When
every task has the same value there is no variance to go by and the m tasks count as m proportions:
for every task at 1 that gives [0.025^(1/m), 1], exact whatever the tasks are like (a value in
[0, 1] averaging mu is 1 with probability at most mu, so all m at 1 has probability at most mu^m).
``bench/report_intervals.py`` measures the coverage.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

_Z = 1.959963984540054
_TAIL = 0.025


def mean_interval(groups: Iterable[tuple[float, int]]) -> tuple[float, float] | None:
    """The 95% interval of the mean of values in [0, 1] given as (value, how many tasks have it);
    None with fewer than two tasks."""
    from scipy.special import stdtrit

    pairs = [(min(1.0, max(0.0, float(v))), int(t)) for v, t in groups if t > 0]
    m = sum(t for _, t in pairs)
    if m < 2:
        return None
    mean = math.fsum(v * t for v, t in pairs) / m
    var = math.fsum(t * (v - mean) ** 2 for v, t in pairs) / (m - 1)
    if var <= 1e-15 or mean <= 0.0 or mean >= 1.0:
        n = float(m)  # no spread to go by: each task one proportion
    else:
        n = m * mean * (1 - mean) / var * (_Z / float(stdtrit(m - 1, 1 - _TAIL))) ** 2
    low, high = _clopper_pearson(mean * n, n)
    # no run is surer at an edge than one whose every task is at that edge: the exact bound of m
    # tasks all at 1 (or 0) is the most any m tasks can show
    edge = _TAIL ** (1 / m)
    return min(low, edge), max(high, 1 - edge)


def _clopper_pearson(x: float, n: float) -> tuple[float, float]:
    """The exact binomial interval of x successes in n trials, for real-valued x and n."""
    from scipy.special import betaincinv

    low = 0.0 if x <= 0 else float(betaincinv(x, n - x + 1, _TAIL))
    high = 1.0 if x >= n else float(betaincinv(x + 1, n - x, 1 - _TAIL))
    return low, high


def left_out_bounds(average: float | None, kept: int, left_out: int) -> tuple[float, float] | None:
    """The average over every task if each of the ``left_out`` tasks (too few trials for k) had the
    value 0, and if each had 1: hard bounds, whatever those tasks are like. None with no task."""
    total = kept + left_out
    if not total:
        return None
    base = (average or 0.0) * kept
    return base / total, (base + left_out) / total
