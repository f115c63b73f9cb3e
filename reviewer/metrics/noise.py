"""Is a difference between two runs larger than noise? A paired bootstrap over shared tasks.

Every summary row of a comparison is a statistic of the trials of a set of tasks (a mean of per-task
values, a ratio of sums, a percentile). Tasks are the unit: each resample draws the shared tasks with
replacement and recomputes the row in both runs on the same draw, so trial noise within a task and the
spread between tasks both enter the interval. The interval is the *expanded* percentile interval
(Hesterberg 2015, "What teachers should know about the bootstrap"): the percentile interval is too
narrow with few tasks, so its tail share alpha is replaced by 2 Phi(-sqrt(m / (m - 1)) t_{m-1, 0.975}).

A difference counts only when its interval excludes zero; with fewer than :data:`MIN_TASKS` tasks the
interval means little whatever it says, and the row says so. ``tests/metrics/test_compare_noise.py``
checks by seeded simulation that with no real change each row is called worse in at most 5% of
runs (some row of the seven in 13-19% of them: the 5% is per row, not per comparison).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

#: Fewer shared tasks than this and no row is called better or worse (RED FLAG aside).
MIN_TASKS = 10
_CHUNK = 2_000_000  # resamples x tasks per block: bounds memory at a few tens of MB


@dataclass(frozen=True)
class RatioSpec:
    """A row as a ratio of sums over tasks: stat = sum(w * num) / sum(w * den), per run."""

    num_old: Sequence[float]
    den_old: Sequence[float]
    num_new: Sequence[float]
    den_new: Sequence[float]


@dataclass(frozen=True)
class PercentileSpec:
    """A row as the q-th percentile of the trials' values, per run; ``task`` indexes the tasks."""

    q: float
    values_old: Sequence[float]
    task_old: Sequence[int]
    values_new: Sequence[float]
    task_new: Sequence[int]


Spec = RatioSpec | PercentileSpec


def expanded_alpha(m: int, alpha: float = 0.05) -> float:
    """The tail share of Hesterberg's expanded percentile interval for ``m`` units."""
    from scipy.special import ndtr, stdtrit

    if m < 2:
        return alpha
    t = float(stdtrit(m - 1, 1 - alpha / 2))
    return float(2 * ndtr(-math.sqrt(m / (m - 1)) * t))


def task_intervals(
    specs: Sequence[Spec], m: int, seed: int, n_boot: int
) -> list[tuple[float, float] | None]:
    """The 95% expanded percentile interval of new - old of each spec over ``m`` tasks.

    One set of resamples serves every spec (the rows are paired with each other as well), drawn
    from ``numpy.random.default_rng(seed)``. ``None`` for a spec with no value in some resample of
    either run, or when there are fewer than two tasks.
    """
    import numpy as np

    if m < 2 or not specs:
        return [None] * len(specs)
    rng = np.random.default_rng(seed)
    prepared = [_prepare(s, m) for s in specs]
    diffs: list[list[np.ndarray]] = [[] for _ in specs]
    width = max(
        [m]
        + [
            max(len(s.values_old), len(s.values_new))
            for s in specs
            if isinstance(s, PercentileSpec)
        ]
    )
    block = max(1, _CHUNK // width)
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        idx = rng.integers(0, m, size=(b, m))
        counts = np.bincount((np.arange(b)[:, None] * m + idx).ravel(), minlength=b * m)
        w = counts.reshape(b, m).astype(float)
        for i, spec in enumerate(prepared):
            diffs[i].append(_diff(spec, w))
    alpha = expanded_alpha(m)
    out: list[tuple[float, float] | None] = []
    for parts in diffs:
        d = np.concatenate(parts)
        if not np.all(np.isfinite(d)):
            # a resample without a value in a run: the row depends on too few tasks to resample
            d = d[np.isfinite(d)]
            if len(d) < 0.9 * n_boot or not len(d):
                out.append(None)
                continue
        low, high = np.quantile(d, [alpha / 2, 1 - alpha / 2])
        out.append((float(low), float(high)))
    return out


def _prepare(spec: Spec, m: int) -> tuple[Any, ...]:
    """The spec as numpy arrays, sorted once (the resample loop only indexes them)."""
    import numpy as np

    if isinstance(spec, RatioSpec):
        return tuple(
            np.asarray(x, float) for x in (spec.num_old, spec.den_old, spec.num_new, spec.den_new)
        )
    out: list[Any] = [spec.q]
    for values, task in ((spec.values_old, spec.task_old), (spec.values_new, spec.task_new)):
        v = np.asarray(values, float)
        t = np.asarray(task, int)
        order = np.argsort(v, kind="stable")[::-1]  # largest first
        out.append((v[order], t[order], np.bincount(t, minlength=m)))
    return tuple(out)


def _diff(spec: tuple[Any, ...], w: np.ndarray) -> np.ndarray:
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        if len(spec) == 4:
            num_o, den_o, num_n, den_n = spec
            old = (w @ num_o) / (w @ den_o)
            new = (w @ num_n) / (w @ den_n)
        else:
            q, (vo, to, po), (vn, tn, pn) = spec
            old = _weighted_percentile(vo, to, po, w, q)
            new = _weighted_percentile(vn, tn, pn, w, q)
        result: np.ndarray = new - old
    return result


def _weighted_percentile(
    v: np.ndarray, t: np.ndarray, per_task: np.ndarray, w: np.ndarray, q: float
) -> np.ndarray:
    """The q-th percentile (numpy's linear rule) of the trials repeated as often as their task was
    drawn, for each row of ``w`` (resamples x tasks); ``v`` sorted largest first, ``t`` its tasks,
    ``per_task`` the trials of each task.

    For q above 50 only the largest values are scanned (the percentile of a resample lies among
    them); a resample where they do not reach is scanned in full, so the result is exact."""
    import numpy as np

    if not len(v):
        return np.full(len(w), np.nan)
    counts = w.astype(np.int32)
    total = counts @ per_task  # trials in each resample
    # the ascending rank of the percentile and of its upper neighbour, counted from the top
    h = (total - 1) * (q / 100)
    lo = np.floor(h)
    frac = h - lo
    top_lo = (total - 1 - lo).astype(np.int64)
    top_hi = np.maximum(top_lo - 1, 0)
    k = len(v) if q <= 50 else min(len(v), int(len(v) * (1 - q / 100) * 2) + 64)
    out = np.full(len(w), np.nan)
    rows = np.arange(len(w))
    for scan in (k, len(v)):
        if not len(rows):
            break
        cum = np.cumsum(counts[rows][:, t[:scan]], axis=1)
        reach = cum[:, -1] > top_lo[rows]
        done, cum = rows[reach], cum[reach]
        i_lo = np.minimum((cum <= top_lo[done, None]).sum(axis=1), scan - 1)
        i_hi = np.minimum((cum <= top_hi[done, None]).sum(axis=1), scan - 1)
        a, b = v[i_lo], v[i_hi]
        out[done] = a + (b - a) * frac[done]
        rows = rows[~reach]
    out[total <= 0] = np.nan
    return out
