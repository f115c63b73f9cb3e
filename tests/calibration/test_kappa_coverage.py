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
    res = simulate(50, kappa, share, draws=4000, seed=int(kappa * 100 + share * 10), n_boot=0)
    trust = res["trust"]
    assert trust.coverage() >= 0.945, trust
    # the error that matters for trust: a lower bound above the true kappa
    assert trust.too_high() <= 0.025, trust
    # the analytic interval alone did not hold (the defect the adjusted one fixes)
    assert res["analytic"].coverage() < trust.coverage()


@pytest.mark.parametrize("kappa", [0.6, 0.7, 0.9])
def test_at_n_20_with_a_rare_fail_the_trust_interval_still_covers(kappa: float) -> None:
    # pass share 0.9: about 2 fails in 20 labels. The analytic interval is [1, 1] whenever they
    # agree on them (28% coverage at kappa 0.9); the trust interval's t quantile took n - 1 = 19
    # degrees of freedom and covered 92.5% at kappa 0.7, now at most 4 per trial of the rarer side
    res = simulate(20, kappa, 0.9, draws=4000, seed=int(kappa * 100), n_boot=0)
    assert res["trust"].coverage() >= 0.945, res["trust"]
    assert res["analytic"].coverage() < 0.70


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


def test_cell_probs_have_the_asked_kappa_and_margins() -> None:
    from reviewer.calibration.kappa import kappa_from_confusion

    a, b, c, d = cell_probs(0.5, 0.7, 0.8)
    assert a + b == pytest.approx(0.7) and a + c == pytest.approx(0.8)
    assert kappa_from_confusion([[a, b], [c, d]]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        cell_probs(0.9, 0.5, 0.9)  # margins this far apart cannot agree that much
