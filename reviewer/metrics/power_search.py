"""The searches behind `reviewer plan`: the smallest drop, tasks and trials that reach a power,
over the simulated powers of ``power_sim`` (the lower of the two shapes of drop), started from the
normal approximation so that few simulations are needed."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from reviewer.metrics import power_sim
from reviewer.metrics.noise import MIN_TASKS
from reviewer.metrics.power_sim import SHAPES

#: No search goes past these: the plan says "more than" instead.
MAX_TRIALS = 1000
MAX_TASKS = 1_000_000


def trials_can_reach(rates: tuple[float, ...], k: int, tasks: int, delta: float) -> bool:
    """Whether endless trials would see a drop of ``delta`` on ``tasks`` tasks: with no trial
    noise left, the interval's width is the spread of a concentrated drop between the tasks."""
    from scipy.special import stdtrit

    spread = max(power_sim.drop_spread(rates, k, delta, s) for s in SHAPES)
    return delta > float(stdtrit(tasks - 1, 0.975)) * math.sqrt(spread / tasks)


@lru_cache(maxsize=1024)
def lower_power(rates: tuple[float, ...], trials: int, k: int, tasks: int, drop: float) -> float:
    """The lower of the two shapes' powers for a drop of ``drop`` (rates sorted, as a tuple)."""
    return min(power_sim.power(rates, trials, k, tasks, drop, s) for s in SHAPES)


@lru_cache(maxsize=64)
def detectable_drops(
    rates: tuple[float, ...], trials: int, k: int, tasks: int, power: float
) -> dict[str, float | None]:
    """Per shape, the smallest average drop called worse with ``power`` (to 1/2000); None when not
    even every task falling to 0 is."""
    most = float((power_sim.tiled(rates, tasks) ** k).mean())
    out: dict[str, float | None] = {}
    for shape in SHAPES:

        def ok(d: float, s: str = shape) -> bool:
            return power_sim.power(rates, trials, k, tasks, d, s) >= power

        start = _analytic_drop(rates, trials, k, tasks, power, shape, most)
        out[shape] = _bisect(ok, most, start)
    return out


def _analytic_drop(
    rates: tuple[float, ...], trials: int, k: int, tasks: int, power: float, shape: str, most: float
) -> float:
    """The normal approximation's detectable drop: where the search starts."""

    def ok(d: float) -> bool:
        moments = power_sim.moments(rates, trials, k, round(d, 4), shape)
        return power_sim.analytic_power(moments, d, tasks) >= power

    lo, hi = 0.0, most
    for _ in range(12):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def analytic_tasks(
    rates: tuple[float, ...], trials: int, k: int, delta: float, power: float
) -> int:
    """The normal approximation's tasks for a drop of ``delta`` (the lower of the shapes)."""
    moments = [power_sim.moments(rates, trials, k, delta, s) for s in SHAPES]

    def ok(t: int) -> bool:
        return min(power_sim.analytic_power(m, delta, t) for m in moments) >= power

    found = smallest(ok, MIN_TASKS, MAX_TASKS, MIN_TASKS)
    return MAX_TASKS if found is None else found


def _bisect(ok: Callable[[float], bool], most: float, start: float) -> float | None:
    """The smallest d in (0, most] with ok(d) (ok monotone), to 1/2000; None when ok(most) fails.
    The bracket is found around ``start`` first."""
    if most <= 0 or not ok(most):
        return None
    start = min(max(start, 1e-3), most)
    if ok(start):
        hi, lo = start, start * 0.85
        while lo > 1e-4 and ok(lo):
            hi, lo = lo, lo * 0.85
        lo = max(lo, 0.0) if lo > 1e-4 else 0.0
    else:
        lo, hi = start, min(most, start * 1.15)
        while not ok(hi):
            lo, hi = hi, min(most, hi * 1.15)
    while hi - lo > 5e-4:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def smallest(ok: Callable[[int], bool], lo: int, cap: int, start: int) -> int | None:
    """The smallest x in [lo, cap] with ok(x) (ok monotone), searched from ``start``; None when
    none."""
    start = min(max(start, lo), cap)
    if ok(start):
        hi = start
        bad = lo - 1
        step = start
        while step > lo:
            step = max(lo, int(step / 1.3))
            if not ok(step):
                bad = step
                break
            hi = step
        if bad < lo:
            return hi
    else:
        bad, hi = start, start
        while True:
            if hi >= cap:
                return None
            hi = min(cap, max(hi + 1, int(hi * 1.3)))
            if ok(hi):
                break
            bad = hi
    while hi - bad > 1:
        mid = (bad + hi) // 2
        bad, hi = (bad, mid) if ok(mid) else (mid, hi)
    return hi
