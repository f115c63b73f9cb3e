"""Kappa over the judge's verdict mix: the labels re-weighted to the judge's own shares of pass and
fail verdicts, with a standard error and an interval that hold whatever the labels' mix."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from bench.kappa_coverage import cell_probs
from reviewer.calibration.kappa import kappa_from_confusion
from reviewer.calibration.mix import mix_interval, mix_intervals, mix_kappa, mix_se

TABLE = [
    [20, 5],
    [10, 15],
]  # human pass/fail x judge pass/fail: 30 judge-pass, 20 judge-fail labels


def test_the_labels_own_mix_gives_cohens_kappa() -> None:
    assert mix_kappa(TABLE, {"pass": 30, "fail": 20}) == pytest.approx(kappa_from_confusion(TABLE))
    assert mix_kappa(TABLE, {"pass": 3000, "fail": 2000}) == pytest.approx(0.4)


def test_a_lenient_judges_mix_by_hand_and_by_sklearns_weights() -> None:
    # the judge passes 80% of what it grades: human pass share 2/3 among judge passes, 1/4 among
    # judge fails; cells .8*2/3, .2*1/4, .8/3, .2*3/4: observed 0.6833, chance 0.55
    got = mix_kappa(TABLE, {"pass": 800, "fail": 200})
    assert got == pytest.approx((0.8 * 2 / 3 + 0.2 * 0.75 - 0.55) / 0.45)
    human = ["p"] * 20 + ["p"] * 5 + ["f"] * 10 + ["f"] * 15
    judge = ["p"] * 20 + ["f"] * 5 + ["p"] * 10 + ["f"] * 15
    weight = [0.8 / 30 if j == "p" else 0.2 / 20 for j in judge]
    assert got == pytest.approx(cohen_kappa_score(human, judge, sample_weight=weight))


def test_a_verdict_the_judge_gives_with_no_label_leaves_it_undefined() -> None:
    only_pass = [[20, 0], [10, 0]]
    assert mix_kappa(only_pass, {"pass": 80, "fail": 20}) is None
    assert mix_interval(only_pass, {"pass": 80, "fail": 20}) is None
    assert mix_kappa(TABLE, None) is None and mix_kappa(TABLE, {"pass": 0, "fail": 0}) is None


def test_the_standard_error_matches_the_spread_of_a_simulation() -> None:
    # a balanced queue (30 + 30) of a lenient judge: kappa 0.6, human passes 70%, judge 80%
    probs = cell_probs(0.6, 0.7, 0.8)
    w = probs[0] + probs[2]
    share = [probs[0] / w, probs[1] / (1 - w)]
    mix = {"pass": round(w * 1e6), "fail": round((1 - w) * 1e6)}
    rng = np.random.default_rng(7)
    ks = []
    for _ in range(3000):
        x = [int(rng.binomial(30, share[0])), int(rng.binomial(30, share[1]))]
        k = mix_kappa([[x[0], x[1]], [30 - x[0], 30 - x[1]]], mix)
        if k is not None:
            ks.append(k)
    typical = [[round(30 * share[0]), round(30 * share[1])]]
    typical.append([30 - typical[0][0], 30 - typical[0][1]])
    se = mix_se(typical, mix)
    assert se is not None and se == pytest.approx(float(np.std(ks)), rel=0.1)
    assert float(np.mean(ks)) == pytest.approx(0.6, abs=0.03)  # the truth, not the labels' 0.72


def test_the_interval_covers_on_a_balanced_queue_of_a_lenient_judge() -> None:
    probs = cell_probs(0.5, 0.8, 0.9)
    w = probs[0] + probs[2]
    share = [probs[0] / w, probs[1] / (1 - w)]
    mix = {"pass": round(w * 1e6), "fail": round((1 - w) * 1e6)}
    rng = np.random.default_rng(11)
    x_pass, x_fail = rng.binomial(25, share[0], 2000), rng.binomial(25, share[1], 2000)
    tables = np.stack([x_pass, x_fail, 25 - x_pass, 25 - x_fail], axis=-1)
    low, high = mix_intervals(tables, mix)
    ok = ~np.isnan(low)
    assert ok.mean() > 0.99
    assert np.mean((low[ok] <= 0.5) & (0.5 <= high[ok])) >= 0.945
    assert np.mean(low[ok] > 0.5) <= 0.025
    # the labels as they stand measure another kappa (about 0.73): their kappa misses 0.5
    pairs = zip(x_pass.tolist(), x_fail.tolist(), strict=True)
    plain = [kappa_from_confusion([[a, b], [25 - a, 25 - b]]) for a, b in pairs]
    assert np.nanmean([k for k in plain if k is not None]) > 0.65


def test_the_interval_is_the_vectorised_one_and_holds_the_estimate() -> None:
    mix = {"pass": 800, "fail": 200}
    ci = mix_interval(TABLE, mix)
    low, high = mix_intervals(np.array([[20, 5, 10, 15]]), mix)
    assert ci == (pytest.approx(float(low[0])), pytest.approx(float(high[0])))
    k = mix_kappa(TABLE, mix)
    assert ci is not None and k is not None and ci[0] < k < ci[1]
