"""Kappa of the judge's verdict mix: the labels re-weighted so each judge verdict counts as often as
the judge gives it, with an interval that knows how the labels were chosen.

A calibration queue balances judge-pass and judge-fail trials (an active queue allocates them
adaptively), so the labeled table over-represents the judge's rarer verdict, and Cohen's kappa of
that table is not the kappa of the trials the judge grades: in bench/active_labeling.py a judge of
kappa 0.5 that passes 90% of trials where the human passes 80% measures 0.73 on a balanced queue.
Within each judge verdict the labeled trials are a random sample of that verdict's trials, so the
human's pass share per verdict is estimated without bias whatever the allocation; weighted by the
judge's shares over the N trials it graded (post-stratification) they give the judge's own table.

Its standard error is the delta method over the three estimated shares: the human's pass share
among judge-pass labels and among judge-fail labels (binomial over each one's labels, half a count
added to each side) and the judge's pass share (binomial over its N verdicts: when the judge graded
only the labeled trials this puts back the sampling of the mix). The interval is built like the
trust interval (``kappa.kappa_ci_adjusted``): Student's t with n - 1 degrees of freedom, at most 4
per trial of the smallest margin of the labels, and the union of the plain interval and the one on
Fisher's atanh scale; it is then joined with the trust interval of the re-weighted table, which
holds where a share near 0 or 1 makes the delta method short on one side.
``bench/kappa_coverage.py`` and ``bench/active_labeling.py`` check it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reviewer.calibration.kappa import DF_PER_MINORITY, kappa_ci_adjusted_many

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "MIX_KEYS",
    "mix_interval",
    "mix_intervals",
    "mix_kappa",
    "mix_se",
    "mix_shares",
]

#: The judge verdicts of a mix, in the order of the table's columns.
MIX_KEYS = ("pass", "fail")
_STEP = 1e-6
#: Counts added to each side of a judge verdict's human pass share where the standard error is
#: taken (Agresti and Coull's z^2 / 2 is 1.92): the delta method at a share near 0 or 1 is too short.
SMOOTH = 0.5


def mix_shares(mix: Mapping[str, int] | None) -> tuple[float, float] | None:
    """(pass share, fail share) of the judge's verdicts; ``None`` for no mix or no verdicts."""
    if not mix:
        return None
    counts = [max(0, int(mix.get(k, 0))) for k in MIX_KEYS]
    total = sum(counts)
    return None if total == 0 else (counts[0] / total, counts[1] / total)


def _kappa(w: np.ndarray, h_pass: np.ndarray, h_fail: np.ndarray) -> np.ndarray:
    """Kappa of the table with judge pass share ``w`` and human pass shares among judge-pass and
    judge-fail trials ``h_pass`` and ``h_fail``; NaN where undefined."""
    import numpy as np

    rows = w * h_pass + (1 - w) * h_fail  # human pass share
    agree = w * h_pass + (1 - w) * (1 - h_fail)
    chance = rows * w + (1 - rows) * (1 - w)
    den = 1 - chance
    ok = den > 1e-12
    return np.where(ok, (agree - chance) / np.where(ok, den, 1.0), np.nan)


def _parts(tables: np.ndarray, n_mix: float, w: float) -> dict[str, np.ndarray]:
    """Columns, post-stratified kappa and its delta-method standard error of many tables."""
    import numpy as np

    t = np.asarray(tables, dtype=float)
    col_p, col_f = t[..., 0] + t[..., 2], t[..., 1] + t[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        raw_p = np.where(col_p > 0, t[..., 0] / col_p, 0.0)
        raw_f = np.where(col_f > 0, t[..., 1] / col_f, 0.0)
    sm_p = (t[..., 0] + SMOOTH) / (col_p + 2 * SMOOTH)
    sm_f = (t[..., 1] + SMOOTH) / (col_f + 2 * SMOOTH)
    ww = np.full(col_p.shape, w)
    var = np.zeros(col_p.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        for which, n_j, share in ((0, col_p, sm_p), (1, col_f, sm_f)):
            hi = [ww, sm_p, sm_f]
            lo = [ww, sm_p, sm_f]
            hi[which + 1] = share + _STEP
            lo[which + 1] = share - _STEP
            slope = (_kappa(*hi) - _kappa(*lo)) / (2 * _STEP)
            weight = w if which == 0 else 1 - w
            term = np.where(weight > 0, slope**2 * share * (1 - share) / n_j, 0.0)
            var = var + term
        if 0 < w < 1 and n_mix > 0:
            slope = (_kappa(ww + _STEP, sm_p, sm_f) - _kappa(ww - _STEP, sm_p, sm_f)) / (2 * _STEP)
            var = var + slope**2 * w * (1 - w) / n_mix
    # a verdict the judge gives with no label: its share among the labels is unknown
    missing = ((col_p == 0) & (w > 0)) | ((col_f == 0) & (w < 1))
    return {
        "kappa": np.where(missing, np.nan, _kappa(ww, raw_p, raw_f)),
        "smooth": _kappa(ww, sm_p, sm_f),
        "se": np.where(missing, np.nan, np.sqrt(var)),
    }


def mix_intervals(tables: np.ndarray, mix: Mapping[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """The 95% interval of the judge's-mix kappa of many tables at once (shape (..., 4): human
    pass/judge pass, pass/fail, fail/pass, fail/fail); NaN where it is undefined."""
    import numpy as np
    from scipy.special import stdtrit

    shares = mix_shares(mix)
    t = np.asarray(tables, dtype=float)
    if shares is None:
        nan = np.full(t.shape[:-1], np.nan)
        return nan, nan
    n_mix = float(sum(max(0, int(mix.get(k, 0))) for k in MIX_KEYS))
    parts = _parts(t, n_mix, shares[0])
    n = t.sum(axis=-1)
    minority = np.minimum.reduce(
        [t[..., 0] + t[..., 1], t[..., 2] + t[..., 3], t[..., 0] + t[..., 2], t[..., 1] + t[..., 3]]
    )
    q = stdtrit(np.maximum(1.0, np.minimum(n - 1, DF_PER_MINORITY * minority)), 0.975)
    k, se = parts["kappa"], parts["se"]
    ks = np.clip(parts["smooth"], -1 + 1e-9, 1 - 1e-9)
    z, sz = np.arctanh(ks), se / (1 - ks * ks)
    low = np.maximum(-1.0, np.minimum(k - q * se, np.tanh(z - q * sz)))
    high = np.minimum(1.0, np.maximum(k + q * se, np.tanh(z + q * sz)))
    # joined with the trust interval of the re-weighted table: the delta method alone runs short
    # on the side where a share near 0 or 1 skews kappa (bench/active_labeling.py)
    t_low, t_high = kappa_ci_adjusted_many(_reweight(t, shares[0]))
    low = np.fmin(low, t_low)
    high = np.fmax(high, t_high)
    bad = np.isnan(k) | np.isnan(se) | (n < 2)
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def _reweight(t: np.ndarray, w: float) -> np.ndarray:
    """Each column scaled so it holds the judge's share of the labels, the human's split kept."""
    import numpy as np

    n = t.sum(axis=-1)
    col_p, col_f = t[..., 0] + t[..., 2], t[..., 1] + t[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = np.where(col_p > 0, n * w / col_p, 0.0)
        sf = np.where(col_f > 0, n * (1 - w) / col_f, 0.0)
    return np.stack([t[..., 0] * sp, t[..., 1] * sf, t[..., 2] * sp, t[..., 3] * sf], axis=-1)


def _one(confusion: Sequence[Sequence[float]]) -> np.ndarray:
    import numpy as np

    return np.array([float(x) for row in confusion for x in row])


def mix_kappa(confusion: Sequence[Sequence[int]], mix: Mapping[str, int] | None) -> float | None:
    """Kappa of the labels re-weighted to the judge's verdict ``mix`` ({"pass": n, "fail": n} over
    every trial it graded); ``None`` without a mix, or when a verdict it gives has no label."""
    import math

    shares = mix_shares(mix)
    if shares is None or mix is None:
        return None
    k = float(_parts(_one(confusion), float(sum(mix.values())), shares[0])["kappa"])
    return None if math.isnan(k) else k


def mix_se(confusion: Sequence[Sequence[float]], mix: Mapping[str, int] | None) -> float | None:
    """The delta-method standard error of :func:`mix_kappa` (at the smoothed shares)."""
    import math

    shares = mix_shares(mix)
    if shares is None or mix is None:
        return None
    se = float(_parts(_one(confusion), float(sum(mix.values())), shares[0])["se"])
    return None if math.isnan(se) else se


def mix_interval(
    confusion: Sequence[Sequence[int]], mix: Mapping[str, int] | None
) -> tuple[float, float] | None:
    """The 95% interval of :func:`mix_kappa`; ``None`` where that is undefined."""
    import math

    if mix_shares(mix) is None or mix is None:
        return None
    low, high = (float(x) for x in mix_intervals(_one(confusion), mix))
    return None if math.isnan(low) else (low, high)
