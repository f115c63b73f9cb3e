"""The active queue's choice: the judge verdict whose next label tightens kappa over the judge's
verdict mix most, never named on the labeling screen."""

from __future__ import annotations

import numpy as np
import pytest

from bench.kappa_coverage import cell_probs
from reviewer.calibration.active import BLIND_REASON, choose_stratum, se_after
from reviewer.calibration.mix import mix_kappa

MIX = {"pass": 700, "fail": 300}


def test_a_verdict_with_no_label_comes_first_then_fail_on_a_tie() -> None:
    first = choose_stratum([[0, 0], [0, 0]], MIX, {"pass": 5, "fail": 5})
    assert first is not None and first.stratum == "fail" and first.first
    assert "no judge-fail trial is labeled yet" in first.reason()
    second = choose_stratum([[0, 1], [0, 0]], MIX, {"pass": 5, "fail": 5})
    assert second is not None and second.stratum == "pass" and second.first


def test_only_a_verdict_with_trials_left_is_chosen() -> None:
    c = choose_stratum([[10, 2], [3, 5]], MIX, {"pass": 3})
    assert c is not None and c.stratum == "pass" and not c.other_left
    assert c.reason().startswith("next: a judge-pass trial: only judge-pass trials are left")
    assert choose_stratum([[10, 2], [3, 5]], MIX, {}) is None


def test_the_label_goes_where_the_standard_error_shrinks_most() -> None:
    m = [[30, 2], [3, 3]]
    c = choose_stratum(m, MIX, {"pass": 9, "fail": 9})
    assert c is not None and c.se_now is not None and c.se_next is not None
    after = {s: se_after(m, MIX, s) for s in ("pass", "fail")}
    assert c.se_next == min(v for v in after.values() if v is not None) < c.se_now
    assert c.se_other == after["pass" if c.stratum == "fail" else "fail"]
    assert f"(expected SE of kappa {c.se_now:.3f} -> {c.se_next:.3f})" in c.reason()


def test_the_neutral_reason_never_names_the_judges_verdict() -> None:
    for m in ([[0, 0], [0, 0]], [[10, 2], [3, 5]], [[30, 2], [3, 3]]):
        for left in ({"pass": 3, "fail": 3}, {"pass": 3}, {"fail": 3}):
            c = choose_stratum(m, MIX, left)
            assert c is not None and c.neutral().startswith(BLIND_REASON)
            assert "pass" not in c.neutral() and "fail" not in c.neutral()
            assert f"judge-{c.stratum}" in c.reason()


def test_labeling_as_it_chooses_keeps_kappa_on_the_truth() -> None:
    # the rule that chose by the width of the labels' own interval moved kappa 0.4 to about 0.18
    probs = cell_probs(0.4, 0.8, 0.8)
    w = probs[0] + probs[2]
    share = [probs[0] / w, probs[1] / (1 - w)]
    mix = {"pass": round(w * 1e6), "fail": round((1 - w) * 1e6)}
    rng = np.random.default_rng(4)
    kappas, fails = [], []
    for _ in range(60):
        m = [[0, 0], [0, 0]]
        for _label in range(50):
            c = choose_stratum(m, mix, {"pass": 50, "fail": 50})
            assert c is not None
            j = 0 if c.stratum == "pass" else 1
            m[0 if rng.random() < share[j] else 1][j] += 1
        k = mix_kappa(m, mix)
        assert k is not None
        kappas.append(k)
        fails.append(m[0][1] + m[1][1])
    assert float(np.mean(kappas)) == pytest.approx(0.4, abs=0.05)
    assert 10 < float(np.mean(fails)) < 40  # neither side starved nor flooded
