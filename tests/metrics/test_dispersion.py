"""The statistics behind the monitor's alerts, against independent references: Cochran's Q of
binomial windows is Pearson's chi-square of their table (scipy), the cluster-robust variance of a
ratio is the textbook linearisation (numpy on the conversations), and the wobble-adjusted tail is
the posterior integral computed by scipy's quad."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from reviewer.metrics.alerts import ALPHA_ONE, ALPHA_TWO, Count, alert_table, detectable, window_p
from reviewer.metrics.dispersion import (
    PRIOR_CV,
    baseline,
    binomial_variance,
    dispersion,
    ratio_variance,
    wobble_tail,
)


def test_cochran_q_of_binomial_windows_is_pearsons_chi_square() -> None:
    bad, n = [40, 55, 61, 48, 70], [500, 520, 480, 510, 530]
    pooled = sum(bad) / sum(n)
    q, df, _ = dispersion(
        [b / m for b, m in zip(bad, n, strict=True)], n, [binomial_variance(pooled, m) for m in n]
    )
    table = [[b, m - b] for b, m in zip(bad, n, strict=True)]
    chi2, _, dof, _ = stats.chi2_contingency(table, correction=False)
    assert q == pytest.approx(chi2, rel=1e-12) and df == dof == 4


def test_ratio_variance_is_the_cluster_robust_linearisation() -> None:
    rng = np.random.default_rng(3)
    calls = 1 + rng.poisson(4, size=300)
    errors = rng.binomial(calls, rng.beta(0.5, 6, size=300))
    r = errors.sum() / calls.sum()
    g = len(calls)
    by_hand = ((errors - r * calls) ** 2).sum() / calls.sum() ** 2 * g / (g - 1)
    got = ratio_variance(
        r,
        int(errors.sum()),
        int(calls.sum()),
        g,
        float((errors**2).sum()),
        float((calls**2).sum()),
        float((errors * calls).sum()),
    )
    assert got == pytest.approx(by_hand, rel=1e-12)
    assert got > binomial_variance(r, int(calls.sum()))  # clustered errors: wider than binomial
    # every conversation with one error in two calls: no spread at all, yet never below binomial
    assert ratio_variance(0.5, 100, 200, 100, 100, 400, 200) == binomial_variance(0.5, 200)


def _quad_tail(base_rates: list[float], sizes: list[int], rate: float, n: int) -> float:
    """The posterior-averaged tail written out and integrated by scipy (over cv, linear scale)."""
    pooled = sum(y * m for y, m in zip(base_rates, sizes, strict=True)) / sum(sizes)
    vs = [pooled * (1 - pooled) / m for m in sizes]
    ws = [m / sum(sizes) for m in sizes]
    q = sum((y - pooled) ** 2 / v for y, v in zip(base_rates, vs, strict=True))
    df = len(sizes) - 1
    v_bar = len(vs) / sum(1 / v for v in vs)
    v_now = pooled * (1 - pooled) / n

    def weight(cv: float) -> float:
        phi = 1 + (cv * pooled) ** 2 / v_bar
        return math.exp(-(cv**2) / (2 * PRIOR_CV**2) - df / 2 * math.log(phi) - q / (2 * phi))

    def tail(cv: float) -> float:
        tau2 = (cv * pooled) ** 2
        mv = sum(w * w * (v + tau2) for w, v in zip(ws, vs, strict=True))
        return float(stats.norm.sf((rate - pooled) / math.sqrt(v_now + tau2 + mv)))

    top = 12 * PRIOR_CV
    num = integrate.quad(lambda c: weight(c) * tail(c), 0, top, limit=400, epsrel=1e-10)[0]
    den = integrate.quad(weight, 0, top, limit=400, epsrel=1e-10)[0]
    return num / den


@pytest.mark.parametrize(
    ("rates", "now"),
    [
        ([0.080, 0.071, 0.093, 0.085, 0.066, 0.090, 0.079], 0.12),  # a wobbling week
        ([0.080, 0.071, 0.093, 0.085, 0.066, 0.090, 0.079], 0.16),
        ([0.080, 0.081, 0.079, 0.080], 0.11),  # binomial-quiet: close to the z-test
        ([0.02, 0.05, 0.01, 0.06, 0.03], 0.09),  # wild
    ],
)
def test_wobble_tail_matches_the_integral_by_quad(rates: list[float], now: float) -> None:
    sizes = [800] * len(rates)
    pooled = sum(rates) / len(rates)
    b = baseline(rates, sizes, [binomial_variance(pooled, m) for m in sizes])
    got = wobble_tail(b, now, binomial_variance(b.mean, 800))
    assert got == pytest.approx(_quad_tail(rates, sizes, now, 800), rel=2e-3)


def test_wobble_tail_sits_between_the_binomial_z_test_and_a_fat_tail() -> None:
    rates = [0.080, 0.071, 0.093, 0.085, 0.066, 0.090, 0.079]
    sizes = [800] * 7
    b = baseline(rates, sizes, [binomial_variance(0.08, 800)] * 7)
    v = binomial_variance(b.mean, 800)
    z_binomial = (0.13 - b.mean) / math.sqrt(v + b.mean_variance(0.0))
    p = wobble_tail(b, 0.13, v)
    assert p > stats.norm.sf(z_binomial)  # the wobble makes a high window less surprising
    assert p < 0.05


def test_a_baseline_that_wobbles_makes_the_same_window_less_alarming() -> None:
    steady = [Count(64, 800)] * 7
    wobbly = [Count(c, 800) for c in (50, 80, 58, 74, 52, 78, 56)]  # the same 8% on average
    now = Count(96, 800)  # 12%
    p_steady, fisher_steady, _ = window_p(now, steady)
    p_wobbly, fisher_wobbly, _ = window_p(now, wobbly)
    assert fisher_steady == pytest.approx(fisher_wobbly)  # Fisher sees only the pooled counts
    assert p_wobbly > 5 * p_steady


def test_small_counts_keep_fishers_exact_p_as_a_floor() -> None:
    base = [Count(4, 25), Count(3, 25), Count(5, 25), Count(4, 25)]
    p, fisher, _ = window_p(Count(11, 25), base)
    assert p >= fisher and fisher < ALPHA_TWO


def test_holm_over_the_rates_of_a_window() -> None:
    steady = [Count(40, 500)] * 8
    spike = [*[Count(40, 500)] * 7, Count(75, 500)]
    one = alert_table({"a": spike})["a"][-1]
    three = alert_table({"a": spike, "b": steady, "c": steady})["a"][-1]
    assert one.family == 1 and three.family == 3
    assert one.p == three.p and one.p_holm == one.p
    assert three.p_holm == pytest.approx(3 * three.p)


def test_minimum_detectable_change_is_the_threshold_of_the_rule() -> None:
    counts = [Count(c, 800) for c in (60, 70, 58, 66, 72, 61, 63, 69, 64, 59)]
    tests = alert_table({"r": counts})["r"]
    d = detectable(counts, tests, 10, list(range(10)), family=1)
    assert d is not None and d.n == 800 and d.alone is not None and d.twice is not None
    assert d.base_rate < d.twice < d.alone
    base = counts[3:10]
    spread = counts
    at_alone = round(d.alone * 800)
    assert window_p(Count(at_alone, 800), base, spread)[0] < ALPHA_ONE
    assert window_p(Count(at_alone - 1, 800), base, spread)[0] >= ALPHA_ONE
    # with more rates tested together, a bigger rise is needed
    d6 = detectable(counts, tests, 10, list(range(10)), family=6)
    assert d6 is not None and d6.alone is not None and d6.alone > d.alone
