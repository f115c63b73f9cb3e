"""The trust interval of kappa keeps its coverage at calibration sizes (a small seeded simulation;
bench/kappa_coverage.py runs the full grid)."""

from __future__ import annotations

import numpy as np
import pytest

from reviewer.calibration.agreement import Pair, judge_agreement
from reviewer.calibration.kappa import kappa_ci_adjusted, kappa_se_fce

Z = 1.959963984540054


def cell_probs(kappa: float, p: float) -> list[float]:
    pe = p * p + (1 - p) * (1 - p)
    both = (kappa * (1 - pe) + pe - (1 - 2 * p)) / 2
    return [both, p - both, p - both, 1 - 2 * p + both]


def simulate(
    n: int, kappa: float, p: float, draws: int, seed: int
) -> dict[str, tuple[float, float]]:
    rng = np.random.default_rng(seed)
    tables, counts = np.unique(
        rng.multinomial(n, cell_probs(kappa, p), size=draws), axis=0, return_counts=True
    )
    hit = {"analytic": 0, "adjusted": 0}
    high = {"analytic": 0, "adjusted": 0}
    for row, m in zip(tables, counts, strict=True):
        t = [[int(row[0]), int(row[1])], [int(row[2]), int(row[3])]]
        se = kappa_se_fce(t)
        ci_adj = kappa_ci_adjusted(t)
        n_ = sum(map(sum, t))
        po = (t[0][0] + t[1][1]) / n_
        r, c = (t[0][0] + t[0][1]) / n_, (t[0][0] + t[1][0]) / n_
        pe = r * c + (1 - r) * (1 - c)
        k = None if pe == 1 else (po - pe) / (1 - pe)
        ci_an = None if se is None or k is None else (k - Z * se, k + Z * se)
        for name, ci in (("analytic", ci_an), ("adjusted", ci_adj)):
            if ci is not None:
                hit[name] += int(m) * (ci[0] <= kappa <= ci[1])
                high[name] += int(m) * (ci[0] > kappa)
    return {k: (hit[k] / draws, high[k] / draws) for k in hit}


@pytest.mark.parametrize("kappa, share", [(0.4, 0.8), (0.6, 0.7), (0.8, 0.5), (0.8, 0.8)])
def test_the_trust_interval_covers_at_n_50(kappa: float, share: float) -> None:
    res = simulate(50, kappa, share, draws=4000, seed=int(kappa * 100 + share * 10))
    coverage, too_high = res["adjusted"]
    assert coverage >= 0.945, res
    # the error that matters for trust: a lower bound above the true kappa
    assert too_high <= 0.025, res
    # the analytic interval alone did not hold (the defect the adjusted one fixes)
    assert res["analytic"][0] < coverage


def test_a_judge_at_the_threshold_is_trusted_at_most_2_5_percent_of_the_time() -> None:
    rng = np.random.default_rng(60)
    probs = cell_probs(0.6, 0.7)
    trusted = 0
    draws = 400
    keys = [("pass", "pass"), ("pass", "fail"), ("fail", "pass"), ("fail", "fail")]
    for table in rng.multinomial(50, probs, size=draws):
        pairs = [
            Pair(f"t{i}", h, j) for (h, j), m in zip(keys, table, strict=True) for i in range(m)
        ]
        trusted += judge_agreement(pairs, trust_threshold=0.6, n_boot=50).trusted
    assert trusted / draws <= 0.025
