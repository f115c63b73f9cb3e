"""The monitor's alert rule: is this window's rate worse than its baseline windows beyond the way
the rate wobbles from window to window?

Per rate and window: the baseline is up to ``baseline_windows`` earlier windows (the ones right
before, or the same weekday / hour of earlier weeks / days), leaving out the windows that alerted
on that rate or were already suspect (p < ALPHA_TWO), so an incident does not become the new normal
and a rise is not half-absorbed into its own baseline. The window is tested one-sided by
``window_p``: the larger of

- the wobble-adjusted test (``metrics.dispersion``): how much the rate wobbles between windows is
  estimated from up to DISPERSION_WINDOWS earlier windows of the same kind (Cochran's Q; phi floored
  at 1), and the p-value averages over that estimate's uncertainty, so a few windows give a t-like
  test, not a z-test that believes its own noise estimate; each window's own sampling variance is
  binomial for a rate of conversations and cluster-robust over conversations for tool errors per
  call (errors cluster within a conversation);
- Fisher's exact test of the counts against the pooled baseline (the old rule): exact for small
  counts such as the judged sample, so the result is never less careful than binomial sampling.

The rates tested in the same window are tested together: their p-values are Holm-adjusted (the
chance that any of them alarms falsely stays at the level). A window alerts on a rate when its
adjusted p < ALPHA_ONE, or adjusted p < ALPHA_TWO in it and in the window before it in time (two
in a row; with a same-weekday or same-hour baseline too, the day or hour before, each tested
against its own baseline).

Chosen by seeded simulation (``bench/monitor_alarms.py``; 30-day streams at 800 a day, 8%, 15%
day-to-day wobble, six rates tested together). Against the alternatives tried while designing it
(100 streams each): the wobble estimated from the 7 baseline windows alone (df 6) caught a doubling
among six rates within two windows in 42% of streams; from 14 windows, 77%; from 28, 83-86%, with
3-7% of no-change streams alerting. Over the wobble, a Jeffreys prior (1/phi, phi >= 1) caught the
judged fail rate's 15% -> 50% (25 a day) in 36% of streams, the half-normal prior on the relative
wobble in ``metrics.dispersion`` in 70%, at the same false-alarm rate (and 12-15% of streams
alerting when the true wobble is 50%, against 4-10%). A plugged-in phi (Laney's p'-chart, a
quasi-binomial z) was not tried: it treats the estimate from a few windows as known.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from reviewer.metrics.dispersion import (
    Baseline,
    baseline,
    binomial_variance,
    ratio_variance,
    wobble_tail,
)
from reviewer.metrics.fisher import fisher_one_sided
from reviewer.metrics.multiple import holm

ALPHA_ONE = 0.001
ALPHA_TWO = 0.01
MIN_BASELINE_WINDOWS = 3
DEFAULT_BASELINE_WINDOWS = 7
#: How far back the wobble is estimated from: up to this many earlier windows of the same kind
#: (28 days; the baseline's own 7 give too few degrees of freedom to catch a doubling in time).
DISPERSION_WINDOWS = 28
#: Which earlier windows a window is compared with, and the step back in windows of each size.
BASELINES = ("recent", "same-weekday", "same-hour")
LAGS = {
    ("recent", "day"): 1,
    ("recent", "hour"): 1,
    ("same-weekday", "day"): 7,
    ("same-weekday", "hour"): 168,
    ("same-hour", "hour"): 24,
}


@dataclass(frozen=True)
class Count:
    """One rate in one window: ``bad`` of ``n``. A ratio over conversations (tool errors per call)
    also carries ``cluster``: (conversations, sum of errors^2, sum of calls^2, sum of errors*calls),
    so its variance counts the conversation as the unit."""

    bad: int
    n: int
    cluster: tuple[int, float, float, float] | None = None

    def variance(self, mean: float) -> float:
        if self.cluster is None:
            return binomial_variance(mean, self.n)
        units, bad_sq, n_sq, cross = self.cluster
        return ratio_variance(mean, self.bad, self.n, units, bad_sq, n_sq, cross)


@dataclass(frozen=True)
class Test:
    """One rate tested in one window: the p-values, the baseline, and the family it was tested in."""

    index: int
    p: float  # one-sided, the larger of the dispersion test and Fisher's
    p_holm: float  # Holm-adjusted over the rates tested in this window
    family: int  # how many rates were tested in this window
    base_bad: int
    base_n: int
    base_windows: int
    phi: float | None  # the over-dispersion (1 = binomial); None when p >= ALPHA_TWO
    wobble: float | None  # the between-window wobble as a share of the rate (idem)
    exact: bool  # the p-value is Fisher's (the larger of the two)
    alert: bool = False


def window_p(
    cur: Count, base: Sequence[Count], spread: Sequence[Count] = ()
) -> tuple[float, float, Baseline | None]:
    """The one-sided p-value that ``cur`` is worse than the ``base`` windows, their wobble
    estimated from the ``spread`` windows (default: ``base``), with Fisher's p and the baseline.
    See the module docstring. When Fisher's p is ALPHA_TWO or more, the p-value is Fisher's and
    the baseline None: the wobble-adjusted p is larger still, and no decision depends on it."""
    bb, bn = sum(c.bad for c in base), sum(c.n for c in base)
    fisher = fisher_one_sided(bn - bb, bn, cur.n - cur.bad, cur.n)
    if fisher >= ALPHA_TWO:
        return fisher, fisher, None
    b = _baseline(base, spread)
    wobble = wobble_tail(b, cur.bad / cur.n, cur.variance(b.mean))
    return max(fisher, wobble), fisher, b


def _baseline(base: Sequence[Count], spread: Sequence[Count] = ()) -> Baseline:
    def columns(cs: Sequence[Count]) -> tuple[list[float], list[float], list[float]]:
        pooled = sum(c.bad for c in cs) / sum(c.n for c in cs)
        return [c.bad / c.n for c in cs], [c.n for c in cs], [c.variance(pooled) for c in cs]

    return baseline(*columns(base), spread=columns(spread) if len(spread) > len(base) else None)


def lag_of(baseline_kind: str, size: str) -> int:
    """The step back, in windows, from a window to its baseline windows; ValueError when the
    baseline does not apply to the window size."""
    lag = LAGS.get((baseline_kind, size))
    if lag is None:
        raise ValueError(f"the {baseline_kind} baseline needs hour windows, not {size} windows")
    return lag


def baseline_windows_of(
    position: int,
    at: Mapping[int, int],
    counts: Sequence[Count],
    excluded: set[int],
    *,
    lag: int,
    windows: int,
    dispersion_windows: int = DISPERSION_WINDOWS,
) -> tuple[list[int], list[int]]:
    """The indices of the baseline windows of the window at ``position`` (up to ``windows`` steps
    of ``lag`` back; ``at`` maps a window's position to its index) and of the windows its wobble is
    estimated from (up to ``dispersion_windows`` steps back, the baseline's among them): those with
    conversations that are not ``excluded``."""
    spread, base = [], []
    most = max(windows, dispersion_windows)
    steps: Iterable[int] = range(1, most + 1)
    if most > len(at):  # more steps back than windows: walk the windows there are instead
        steps = sorted(
            d // lag for p in at if (d := position - p) > 0 and d % lag == 0 and d // lag <= most
        )
    for t in steps:
        j = at.get(position - t * lag)
        if j is not None and j not in excluded and counts[j].n:
            spread.append(j)
            if t <= windows:
                base.append(j)
    return base, spread


def alert_table(
    series: Mapping[str, Sequence[Count]],
    *,
    baseline_windows: int = DEFAULT_BASELINE_WINDOWS,
    lag: int = 1,
    positions: Sequence[int] | None = None,
    min_baseline: int = MIN_BASELINE_WINDOWS,
) -> dict[str, list[Test]]:
    """Every test of every rate (``series``: metric -> its Count per window, in time order) under
    the alert rule; each metric's tests in window order, ``alert`` set on the ones that alert.
    ``positions`` are the windows' numbers in time (default 0, 1, 2, ...: consecutive)."""
    metrics = list(series)
    length = len(next(iter(series.values()), []))
    pos = list(positions) if positions is not None else list(range(length))
    at = {p: i for i, p in enumerate(pos)}
    excluded: dict[str, set[int]] = {m: set() for m in metrics}
    low: dict[str, set[int]] = {m: set() for m in metrics}  # adjusted p < ALPHA_TWO
    out: dict[str, list[Test]] = {m: [] for m in metrics}
    for i in range(length):
        found: dict[str, tuple[float, float, Baseline | None, list[int]]] = {}
        for m in metrics:
            counts = series[m]
            if counts[i].n == 0:
                continue
            base, spread = baseline_windows_of(
                pos[i], at, counts, excluded[m], lag=lag, windows=baseline_windows
            )
            if len(base) < min_baseline:
                continue
            p, fisher, b = window_p(
                counts[i], [counts[j] for j in base], [counts[j] for j in spread]
            )
            found[m] = (p, fisher, b, base)
        adjusted = holm([f[0] for f in found.values()])
        for (m, (p, fisher, b, base)), adj in zip(found.items(), adjusted, strict=True):
            counts = series[m]
            # two in a row: this window and the one before it in time (the day before, with
            # a same-weekday baseline too; the same weekday a week earlier is no row)
            before = at.get(pos[i] - 1)
            alert = adj < ALPHA_ONE or (adj < ALPHA_TWO and before in low[m])
            if adj < ALPHA_TWO:
                low[m].add(i)
            if alert or p < ALPHA_TWO:  # suspect: kept out of later baselines
                excluded[m].add(i)
            out[m].append(
                Test(
                    index=i,
                    p=p,
                    p_holm=adj,
                    family=len(found),
                    base_bad=sum(counts[j].bad for j in base),
                    base_n=sum(counts[j].n for j in base),
                    base_windows=len(base),
                    phi=b.phi if b else None,
                    wobble=b.wobble if b else None,
                    exact=p == fisher,
                    alert=alert,
                )
            )
    return out


def alert_series(
    counts: Sequence[Count | tuple[int, int]],
    baseline_windows: int = DEFAULT_BASELINE_WINDOWS,
    min_baseline: int = MIN_BASELINE_WINDOWS,
    lag: int = 1,
) -> list[Test]:
    """The alerts of one rate tested alone (``counts``: (bad, n) or Count per window)."""
    series = [c if isinstance(c, Count) else Count(*c) for c in counts]
    tests = alert_table(
        {"rate": series}, baseline_windows=baseline_windows, lag=lag, min_baseline=min_baseline
    )
    return [t for t in tests["rate"] if t.alert]


@dataclass(frozen=True)
class Detectable:
    """What the next window of a rate has to show to alert: from the baseline's rate, a window of
    the baseline's typical size alerts alone at ``alone`` or more, two in a row at ``twice``."""

    base_rate: float
    base_windows: int
    n: int  # the typical window's size (the baseline windows' mean n)
    phi: float
    wobble: float | None  # the between-window wobble as a share of the rate
    family: int  # the rates tested together (Holm)
    alone: float | None  # None: no count in a window of n reaches it
    twice: float | None

    def to_dict(self) -> dict[str, object]:
        return {
            "base_rate": self.base_rate,
            "base_windows": self.base_windows,
            "n": self.n,
            "phi": self.phi,
            "wobble": self.wobble,
            "tested_together": self.family,
            "alerts_alone_at": self.alone,
            "alerts_twice_at": self.twice,
        }


def detectable(
    counts: Sequence[Count],
    tests: Sequence[Test],
    next_position: int,
    positions: Sequence[int],
    *,
    family: int,
    baseline_windows: int = DEFAULT_BASELINE_WINDOWS,
    lag: int = 1,
    min_baseline: int = MIN_BASELINE_WINDOWS,
) -> Detectable | None:
    """The smallest rates the window at ``next_position`` would alert at, after ``tests`` (this
    rate's tests from ``alert_table``), with ``family`` rates tested together (Holm's first step:
    alpha / family); None without enough baseline windows."""
    at = {p: i for i, p in enumerate(positions)}
    excluded = {t.index for t in tests if t.alert or t.p < ALPHA_TWO}
    base_idx, spread = baseline_windows_of(
        next_position, at, counts, excluded, lag=lag, windows=baseline_windows
    )
    if len(base_idx) < min_baseline:
        return None
    base = [counts[j] for j in base_idx]
    b = _baseline(base, [counts[j] for j in spread])
    n = round(sum(c.n for c in base) / len(base))
    # the typical window's variance relative to binomial (the design effect of a clustered ratio)
    deff = sum(c.variance(b.mean) / binomial_variance(b.mean, c.n) for c in base) / len(base)
    bb, bn = sum(c.bad for c in base), sum(c.n for c in base)

    def p_at(x: int) -> float:
        fisher = fisher_one_sided(bn - bb, bn, n - x, n)
        if fisher >= ALPHA_TWO:
            return fisher
        return max(fisher, wobble_tail(b, x / n, deff * binomial_variance(b.mean, n)))

    def threshold(alpha: float) -> float | None:
        lo, hi = int(b.mean * n), n  # p(lo) is large; the first x with p(x) < alpha
        if p_at(hi) >= alpha:
            return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if p_at(mid) < alpha:
                hi = mid
            else:
                lo = mid
        return hi / n

    family = max(1, family)
    return Detectable(
        b.mean,
        len(base),
        n,
        b.phi,
        b.wobble,
        family,
        threshold(ALPHA_ONE / family),
        threshold(ALPHA_TWO / family),
    )
