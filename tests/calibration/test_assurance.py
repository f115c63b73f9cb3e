"""Labels to a verdict: the fewest further labels after which the trust verdict is settled with 80%
probability over the agreement the labels so far leave plausible (bench/labels_needed.py checks it
against labels drawn from a known truth)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from reviewer.calibration.assurance import labels_to_verdict, settled_share, trust_intervals
from reviewer.calibration.kappa import kappa_ci_adjusted, trust_df


def test_the_vectorised_trust_interval_is_kappa_ci_adjusted() -> None:
    tables = list(itertools.product(range(7), repeat=4))
    low, high = trust_intervals(np.array(tables))
    for t, lo, hi in zip(tables, low, high, strict=True):
        ci = kappa_ci_adjusted([[t[0], t[1]], [t[2], t[3]]])
        if ci is None:
            assert math.isnan(lo) and math.isnan(hi), t
        else:
            assert (lo, hi) == (pytest.approx(ci[0], abs=1e-12), pytest.approx(ci[1], abs=1e-12))


def test_the_t_quantile_takes_at_most_four_degrees_of_freedom_per_rare_verdict() -> None:
    assert trust_df([[18, 1], [1, 0]]) == 4  # one fail on each side among 20 labels
    assert trust_df([[20, 5], [10, 15]]) == 49  # n - 1 when every margin is large
    assert trust_df([[20, 0], [0, 0]]) == 1


def test_a_settled_verdict_needs_no_more_labels() -> None:
    trusted = labels_to_verdict([[60, 2], [2, 36]], 0.6, 30)
    assert trusted.labels == 0 and trusted.settled == 1.0 and trusted.trusted == 1.0
    assert trusted.phrase() == "verdict settled"


def test_the_answer_is_the_fewest_labels_with_80_percent_and_is_seeded() -> None:
    m = [[30, 4], [6, 10]]
    a = labels_to_verdict(m, 0.6, 30, seed=3)
    assert a == labels_to_verdict(m, 0.6, 30, seed=3)
    assert a.labels is not None and a.labels > 0
    assert settled_share(m, 0.6, a.labels, 30, seed=3)[0] >= 0.8
    assert settled_share(m, 0.6, a.labels - 1, 30, seed=3)[0] < 0.8
    assert a.phrase() == f"~{a.labels} labels to a verdict"


def test_a_judge_sitting_on_the_threshold_gets_no_number_below_the_cap() -> None:
    at = [[300, 100], [100, 300]]  # kappa 0.5 on 800 labels
    a = labels_to_verdict(at, 0.5, 30, max_more=400)
    assert a.labels is None and a.settled < 0.8
    assert a.phrase() == ">400 labels to a verdict"


def test_fewer_labels_than_the_minimum_count_toward_it() -> None:
    a = labels_to_verdict([[5, 0], [0, 5]], 0.6, 30)
    assert a.labels is not None and a.labels >= 20


def test_the_judges_mix_decides_as_the_report_does() -> None:
    # balanced labels of a lenient judge: as they stand kappa 0.80 (settled: trusted at 0.5);
    # over the judge's mix (95% pass) kappa is lower and far less certain
    m = [[48, 4], [2, 46]]
    plain = labels_to_verdict(m, 0.5, 30)
    mixed = labels_to_verdict(m, 0.5, 30, mix={"pass": 9500, "fail": 500})
    assert plain.labels == 0 and plain.trusted == 1.0
    assert mixed.labels is None or mixed.labels > 0


def test_short_of_the_minimum_the_phrase_is_the_floor_not_an_estimate_of_a_few_labels() -> None:
    """After two or three labels the estimate moved by hundreds ("~463", then "~663") while the
    screen had said "30+" a label before (found by a new-user review): until the minimum is
    reached the phrase says how many reach it; --json keeps the estimate."""
    for labels, floor in (([[1, 0], [0, 1]], 28), ([[2, 0], [1, 0]], 27), ([[20, 3], [2, 4]], 1)):
        a = labels_to_verdict(labels, 0.6, 30)
        assert a.floor == floor and a.phrase() == f"{floor}+ labels to a verdict"
        assert a.labels is not None and a.labels >= floor  # the estimate, kept
    at_minimum = labels_to_verdict([[20, 3], [2, 5]], 0.6, 30)
    assert at_minimum.floor == 0 and at_minimum.phrase().startswith("~")
