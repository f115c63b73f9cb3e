"""The trust interval of kappa keeps its coverage at calibration sizes (a small seeded simulation;
bench/kappa_coverage.py runs the full grid)."""

from __future__ import annotations

import numpy as np
import pytest

from bench.kappa_coverage import cell_probs
from bench.kappa_coverage import coverage as simulate
from reviewer.calibration.agreement import Pair, judge_agreement


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
