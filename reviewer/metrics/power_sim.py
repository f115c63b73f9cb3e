"""How often `reviewer compare` calls a real drop worse: a seeded simulation from a run's own rates.

A drop of D is the average over tasks of pass@1 (or of pass^k) falling by D, absolute (0.75 -> 0.65
for D = 0.1). Each simulated comparison draws an old run from the per-task rates and a new run from
the same rates after the drop, each task tried ``trials`` times, and makes compare's call on them.
Two shapes of drop carry the same D:

- ``uniform``: every task's value falls by the same amount (a task at 0 stays there, so the others
  fall a little more);
- ``concentrated``: the drop is carried by a fifth of the tasks (a regression that breaks a few
  kinds of task), chosen at random in each simulated comparison; those fall to 0 first (evenly, the
  lowest reaching 0 first) and only what they cannot carry falls on the others.

Compare calls a drop worse when the expanded percentile interval of its paired task bootstrap
excludes zero (``noise.py``). For a mean over tasks that interval is, to the bootstrap's normal
approximation, the t interval mean +- t_{m-1, 0.975} s / sqrt(m) (Hesterberg's expansion is built
to be), so the simulation uses that call; ``tests/metrics/test_power_sim.py`` shows it makes the same
call as the bootstrap on the same data. Old and new runs use common random numbers (each task's
pass count is a quantile of one uniform draw), so the new run's counts only fall as the drop grows,
the call rate grows smoothly with it, and the search for the detectable drop is a clean bisection.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import TYPE_CHECKING, Any

from reviewer.metrics.noise import MIN_TASKS

if TYPE_CHECKING:
    import numpy as np

SHAPES = ("uniform", "concentrated")
#: the share of tasks that carries a concentrated drop
CONCENTRATED_SHARE = 0.2
#: simulated comparisons per power figure (fewer for very large runs: see :func:`_sims`)
SIMS = 1000
SEED = 26
#: rates are taken on this grid (a step of 1/2000), and each uniform draw on one of 1/2048, so one
#: table of binomial quantiles serves every count drawn (its probabilities off by < 1/2048)
_GRID = 2000
_DRAWS = 2048
#: the simulation's size limits: beyond them the normal approximation (:func:`analytic_power`),
#: which is accurate there, is used
SIM_TASKS = 2000
SIM_TRIALS = 200


@dataclass(frozen=True)
class _Table:
    """For ``trials`` trials: the binomial quantile function on a grid of rates and of uniform
    draws (row g: rate g / grid; column i: the draw (i + 0.5) / draws)."""

    quantile: Any  # (grid + 1, draws) pass counts
    trials: int


@lru_cache(maxsize=4)
def _table(trials: int) -> _Table:
    import numpy as np
    from scipy.special import gammaln, xlog1py, xlogy

    p = np.arange(_GRID + 1)[:, None] / _GRID
    c = np.arange(trials + 1)[None, :]
    log_choose = gammaln(trials + 1) - gammaln(c + 1) - gammaln(trials - c + 1)
    cdf = np.cumsum(np.exp(log_choose + xlogy(c, p) + xlog1py(trials - c, -p)), axis=1)
    cdf[:, -1] = 1.0
    # The count at draw i is how many CDF values lie below (i + 0.5) / draws: each CDF value
    # counts from the first draw above it on, so a cumulative sum of where they start gives it.
    start = (np.floor(cdf * _DRAWS - 0.5) + 1).clip(0, _DRAWS).astype(np.intp)
    rows = np.arange(_GRID + 1)[:, None] * (_DRAWS + 1)
    begins = np.bincount((rows + start).ravel(), minlength=(_GRID + 1) * (_DRAWS + 1))
    quantile = np.cumsum(begins.reshape(_GRID + 1, _DRAWS + 1)[:, :_DRAWS], axis=1)
    return _Table(quantile.astype(np.int16), trials)


@lru_cache(maxsize=64)
def _values(trials: int, k: int) -> Any:
    """Each pass count's value of the estimator: c / n for k = 1, C(c, k) / C(n, k) else."""
    import numpy as np

    return np.array([comb(c, k) / comb(trials, k) for c in range(trials + 1)])


def _counts(table: _Table, rates: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Each cell's pass count: the quantile at draw ``u`` (an index into the draw grid) of
    Binomial(trials, rate), the rate taken on the grid."""
    import numpy as np

    g = np.rint(np.clip(rates, 0.0, 1.0) * _GRID).astype(np.intp)
    result: np.ndarray = table.quantile[g, u]
    return result


def tiled(rates: Sequence[float], tasks: int) -> np.ndarray:
    """``tasks`` tasks like the run's: its rates in order, each taken as often as ``tasks`` allows
    (every rate once at the run's own size, twice at double it, an even spread at fewer)."""
    import numpy as np

    r = np.sort(np.asarray(rates, float))
    idx = ((np.arange(tasks) + 0.5) * len(r) / tasks).astype(int)
    return r[np.minimum(idx, len(r) - 1)]


def level(sorted_values: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row of ``sorted_values`` (ascending): the cut d with sum(min(v, d)) = target; inf where
    the row sums to less than target."""
    import numpy as np

    s = sorted_values.shape[1]
    cum = np.cumsum(sorted_values, axis=1)
    reach = cum + sorted_values * (s - 1 - np.arange(s))  # the sum at d = each value
    j = (reach < target[:, None] - 1e-12).sum(axis=1)
    j_safe = np.minimum(j, s - 1)
    before = np.where(j_safe > 0, np.take_along_axis(cum, (j_safe - 1)[:, None], 1)[:, 0], 0.0)
    cut = (target - before) / np.maximum(s - j_safe, 1)
    return np.where(j >= s, np.inf, cut)


def dropped(values: np.ndarray, drop: float, shape: str, order: np.ndarray | None) -> np.ndarray:
    """The values after an average drop of ``drop`` of the given shape; ``values`` (tasks,), the
    result (tasks,) for ``uniform`` and (comparisons, tasks) for ``concentrated``, whose ``order``
    (comparisons, tasks) ranks the tasks at random in each comparison (the first fifth carry it)."""
    import numpy as np

    m = len(values)
    total = drop * m
    if shape == "uniform":
        cut = level(np.sort(values)[None, :], np.array([total]))[0]
        return np.maximum(values - cut, 0.0)
    assert order is not None
    few = max(1, math.ceil(CONCENTRATED_SHARE * m))
    sims = order.shape[0]
    v = values[order]  # (sims, m), the carriers first
    carriers, rest = v[:, :few], v[:, few:]
    cut = level(np.sort(carriers, axis=1), np.full(sims, total))
    out_c = np.maximum(carriers - cut[:, None], 0.0)
    spill = np.maximum(total - carriers.sum(axis=1), 0.0)
    out_r = rest
    if rest.shape[1] and np.any(spill > 0):
        cut_r = level(np.sort(rest, axis=1), spill)
        cut_r = np.where(spill > 0, cut_r, 0.0)
        out_r = np.maximum(rest - cut_r[:, None], 0.0)
    new = np.empty_like(v)
    np.put_along_axis(new, order, np.concatenate([out_c, out_r], axis=1), axis=1)
    return new


def t_call_worse(diff: np.ndarray) -> np.ndarray:
    """Compare's call on each row of per-task differences (new - old): worse when the expanded
    bootstrap interval, here its t form, lies below zero."""
    from scipy.special import stdtrit

    m = diff.shape[-1]
    mean = diff.mean(axis=-1)
    sd = diff.std(axis=-1, ddof=1)
    crit = float(stdtrit(m - 1, 0.975))
    result: np.ndarray = (mean + crit * sd / math.sqrt(m) < 0) & (mean < -1e-12)
    return result


def _sims(tasks: int) -> int:
    return max(400, min(SIMS, 400_000 // max(1, tasks)))


class World:
    """Simulated comparisons of ``tasks`` tasks like the run's, ``trials`` trials each, for the
    metric with this ``k`` (1: pass@1): the old runs drawn once, the new runs' draws fixed, so the
    call rate is a function of the drop alone."""

    def __init__(
        self, rates: Sequence[float], trials: int, k: int, tasks: int, seed: int = SEED
    ) -> None:
        import numpy as np

        self.k, self.tasks = k, tasks
        self.p = tiled(rates, tasks)
        self.values = self.p**k
        self.table = _table(trials)
        self.estimates = _values(trials, k)
        sims = _sims(tasks)
        rng = np.random.default_rng([seed, trials, k, tasks])
        u_old = rng.integers(0, _DRAWS, (sims, tasks))
        self.u_new = rng.integers(0, _DRAWS, (sims, tasks))
        self.order = np.argsort(rng.random((sims, tasks)), axis=1)
        self.old = self.estimates[_counts(self.table, self.p[None, :], u_old)]

    def call_rate(self, drop: float, shape: str) -> float:
        """The share of simulated comparisons called worse after an average drop of ``drop``."""
        import numpy as np

        new_values = dropped(self.values, drop, shape, self.order)
        new_p = np.power(np.maximum(new_values, 0.0), 1 / self.k)
        new = self.estimates[_counts(self.table, new_p, self.u_new)]
        return float(t_call_worse(new - self.old).mean())


@lru_cache(maxsize=8)
def _world(rates: tuple[float, ...], trials: int, k: int, tasks: int) -> World:
    return World(rates, trials, k, tasks)


def simulated(trials: int, tasks: int) -> bool:
    """Whether :func:`power` simulates at this size (else the normal approximation)."""
    return tasks <= SIM_TASKS and trials <= SIM_TRIALS


def power(
    rates: Sequence[float], trials: int, k: int, tasks: int, drop: float, shape: str
) -> float:
    """The share of comparisons of two runs of ``tasks`` tasks like ``rates`` (``trials`` each)
    that compare calls worse after an average drop of ``drop`` in the metric of ``k`` shaped so:
    simulated within the size limits, the normal approximation beyond them."""
    if tasks < MIN_TASKS:
        return 0.0  # compare decides nothing
    if simulated(trials, tasks):
        return _world(tuple(rates), trials, k, tasks).call_rate(drop, shape)
    return analytic_power(moments(tuple(rates), trials, k, drop, shape), drop, tasks)


@lru_cache(maxsize=256)
def moments(
    rates: tuple[float, ...], trials: int, k: int, drop: float, shape: str
) -> tuple[float, float]:
    """Per task, on average: the trial noise of the estimator in both runs (old + new variance)
    and the spread of the drop between tasks (0 when uniform), for the normal approximation."""
    import numpy as np

    p = np.asarray(rates, float)
    values, new_values = _shaped(rates, k, drop, shape)
    old = _variance(p, trials, k).mean()
    new = _variance(np.power(new_values, 1 / k), trials, k).mean(axis=-1)
    return float(old + new.mean()), drop_spread(rates, k, drop, shape)


def drop_spread(rates: tuple[float, ...], k: int, drop: float, shape: str) -> float:
    """The variance between tasks of their drops in the metric of ``k`` (0 when uniform and no
    task reaches 0): what no number of trials takes away."""
    values, new_values = _shaped(rates, k, drop, shape)
    return float((values[None, :] - new_values).var(axis=1).mean())


def _shaped(rates: tuple[float, ...], k: int, drop: float, shape: str) -> tuple[Any, Any]:
    """The tasks' values and, in rows, their values after the drop (20 random fifths when
    concentrated)."""
    import numpy as np

    values = np.asarray(rates, float) ** k
    if shape == "uniform":
        return values, dropped(values, drop, shape, None)[None, :]
    rng = np.random.default_rng([SEED, len(values)])
    order = np.argsort(rng.random((20, len(values))), axis=1)
    return values, dropped(values, drop, shape, order)


def _variance(p: np.ndarray, trials: int, k: int) -> np.ndarray:
    """The variance of the estimator C(c, k) / C(n, k) for c ~ Binomial(trials, p), elementwise
    (p taken on the rate grid)."""
    import numpy as np

    g = np.rint(np.clip(p, 0.0, 1.0) * _GRID).astype(np.intp)
    result: np.ndarray = _grid_variance(trials, k)[g]
    return result


@lru_cache(maxsize=16)
def _grid_variance(trials: int, k: int) -> Any:
    """The estimator's variance at every rate of the grid."""
    import numpy as np
    from scipy.special import gammaln, xlog1py, xlogy

    p = np.arange(_GRID + 1)[:, None] / _GRID
    c = np.arange(trials + 1)[None, :]
    log_choose = gammaln(trials + 1) - gammaln(c + 1) - gammaln(trials - c + 1)
    pmf = np.exp(log_choose + xlogy(c, p) + xlog1py(trials - c, -p))
    values = _values(trials, k)
    mean = pmf @ values
    return np.maximum(pmf @ values**2 - mean**2, 0.0)


def analytic_power(noise_spread: tuple[float, float], drop: float, tasks: int) -> float:
    """The normal approximation of the call rate: the mean difference is normal with the trial
    noise of both runs; the interval's width also carries the spread of the drop between tasks,
    which is what makes a concentrated drop harder to call."""
    from scipy.special import ndtr, stdtrit

    noise, spread = noise_spread
    if tasks < MIN_TASKS:
        return 0.0
    width = float(stdtrit(tasks - 1, 0.975)) * math.sqrt((noise + spread) / tasks)
    sd = math.sqrt(noise / tasks)
    if sd == 0:
        return 1.0 if drop > width else 0.0
    return float(ndtr((drop - width) / sd))
