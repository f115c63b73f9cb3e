"""How far a window's rate may wobble: the test of one window against baseline windows when the
true rate itself varies from window to window (day-to-day wobble) and events cluster within
conversations.

Model: window j's observed rate y_j = mu + u_j + e_j, where e_j is the sampling noise of its own
conversations (variance v_j: binomial, or cluster-robust over conversations for a ratio such as
tool errors per call) and u_j the window's wobble (variance tau^2, the same for every window, so a
large window is not assumed steadier than the days themselves are). The wobble is estimated from
the baseline windows by Cochran's Q = sum (y_j - mu)^2 / v_j, whose ratio to its degrees of
freedom, phi = Q / (k - 1), is the over-dispersion (1 = binomial); tau^2 = (phi - 1) * v_bar.

With a handful of baseline windows Q is itself noisy, so the wobble is not plugged in as known:
the p-value averages the normal tail over the wobble's posterior given Q (Q ~ phi chi2(k - 1)) and a
weakly informative prior on its size relative to the rate. Many wobbling windows make it Student's
t-like (the quasi-binomial test); windows that look binomial make it close to the binomial z-test,
yet still allow for a wobble they cannot rule out. phi is never below 1 (tau^2 >= 0): the test is
never less careful than binomial sampling.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Baseline:
    """What the baseline windows say: their pooled rate, its binomial-weights variance, the typical
    window's sampling variance and Cochran's Q with its degrees of freedom."""

    mean: float
    q: float
    df: int
    v_bar: float  # harmonic mean of the windows' sampling variances
    weights: tuple[float, ...]  # each window's share of the pooled rate (n_j / sum n)
    variances: tuple[float, ...]  # each window's sampling variance v_j

    @property
    def phi(self) -> float:
        """The point estimate of the over-dispersion, floored at 1 (binomial)."""
        return max(1.0, self.q / self.df) if self.df > 0 else 1.0

    def mean_variance(self, tau2: float) -> float:
        """The pooled rate's variance when each window wobbles by ``tau2``."""
        return sum(w * w * (v + tau2) for w, v in zip(self.weights, self.variances, strict=True))

    def tau2(self, phi: float) -> float:
        return max(0.0, phi - 1.0) * self.v_bar

    @property
    def wobble(self) -> float | None:
        """The window-to-window wobble as a share of the rate (sd of u_j / mean), at phi's
        point estimate; None when the mean is 0."""
        return math.sqrt(self.tau2(self.phi)) / self.mean if self.mean > 0 else None


def baseline(
    rates: Sequence[float],
    sizes: Sequence[float],
    variances: Sequence[float],
    spread: tuple[Sequence[float], Sequence[float], Sequence[float]] | None = None,
) -> Baseline:
    """The baseline of windows with observed ``rates``, sizes (the pooled rate's weights: n_j) and
    sampling ``variances`` (each > 0). ``spread`` (rates, sizes, variances of more windows) is
    where the wobble is estimated from, when not from these windows themselves."""
    total = sum(sizes)
    weights = tuple(s / total for s in sizes)
    mean = sum(w * y for w, y in zip(weights, rates, strict=True))
    q, df, v_bar = dispersion(*(spread or (rates, sizes, variances)))
    return Baseline(mean, q, df, v_bar, weights, tuple(variances))


def dispersion(
    rates: Sequence[float], sizes: Sequence[float], variances: Sequence[float]
) -> tuple[float, int, float]:
    """Cochran's Q of windows about their pooled rate, its degrees of freedom and the windows'
    typical (harmonic mean) sampling variance."""
    total = sum(sizes)
    mean = sum(s * y for s, y in zip(sizes, rates, strict=True)) / total
    q = sum((y - mean) ** 2 / v for y, v in zip(rates, variances, strict=True))
    v_bar = len(variances) / sum(1 / v for v in variances)
    return q, len(rates) - 1, v_bar


#: The prior on the wobble: its size relative to the rate, cv = tau / mean, is half-normal with
#: this scale (median 34%, 95% below 98%): wide enough for the 10-15% day-to-day wobble seen in
#: production and for much more, but it tells a window of 25 judged conversations that phi = 3
#: (a 70% wobble) is unlikely, which the windows alone cannot (bench/monitor_alarms.py).
PRIOR_CV = 0.5
#: The grid of the posterior integral: cv from CV_LOW to CV_HIGH times PRIOR_CV, log-spaced.
GRID = 1500
CV_LOW, CV_HIGH = 1e-4, 50.0


def wobble_tail(base: Baseline, rate: float, variance: float) -> float:
    """P(a window at least this far above the baseline) when nothing changed: one-sided, the
    normal tail averaged over the wobble's posterior given the baseline windows' Q (see the module
    docstring). ``variance`` is this window's own sampling variance under the baseline's rate."""
    import numpy as np
    from scipy.special import log_ndtr, logsumexp

    d = rate - base.mean
    mu = max(base.mean, 1e-6)
    cv = PRIOR_CV * np.geomspace(CV_LOW, CV_HIGH, GRID)
    tau2 = (cv * mu) ** 2
    phi = 1 + tau2 / base.v_bar
    # Q ~ phi chi2(df): its likelihood; the half-normal prior; d(cv) on a log grid is cv d(log cv)
    log_w = -(cv**2) / (2 * PRIOR_CV**2) + np.log(cv)
    if base.df > 0:
        log_w = log_w - base.df / 2 * np.log(phi) - base.q / (2 * phi)
    mean_var = sum(w * w * (v + tau2) for w, v in zip(base.weights, base.variances, strict=True))
    log_tail = log_ndtr(-d / np.sqrt(variance + tau2 + mean_var))
    return float(min(1.0, np.exp(logsumexp(log_w + log_tail) - logsumexp(log_w))))


def binomial_variance(mean: float, n: float) -> float:
    """A conversation-level rate's sampling variance at ``mean`` (kept off 0 and 1)."""
    return _clip(mean) * (1 - _clip(mean)) / n


def ratio_variance(
    mean: float, bad: float, n: float, units: int, bad_sq: float, n_sq: float, cross: float
) -> float:
    """A ratio's (bad per n, e.g. tool errors per call) sampling variance with the conversation as
    the unit: the cluster-robust (linearisation) variance sum_c (e_c - mean * n_c)^2 / n^2 with the
    small-sample factor units / (units - 1), never below the binomial variance (so clustering can
    only make the test more careful)."""
    floor = binomial_variance(mean, n)
    if units < 2:
        return floor
    m = _clip(mean)
    spread = bad_sq - 2 * m * cross + m * m * n_sq
    return max(floor, spread / (n * n) * units / (units - 1))


def _clip(mean: float) -> float:
    return min(max(mean, 1e-6), 1 - 1e-6)
