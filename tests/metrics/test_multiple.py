"""Holm and Benjamini-Hochberg adjustments against values worked by hand and statsmodels' published
examples."""

from __future__ import annotations

import pytest

from reviewer.metrics.multiple import benjamini_hochberg, holm


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.03, 0.04 (m = 4): 0.04, 0.06, 0.06 (running max of 0.06), 0.06
    assert holm([0.03, 0.01, 0.04, 0.02]) == pytest.approx([0.06, 0.04, 0.06, 0.06])


def test_holm_caps_at_one_and_keeps_order() -> None:
    assert holm([0.5, 0.9, 0.001]) == pytest.approx([1.0, 1.0, 0.003])
    assert holm([]) == []
    assert holm([0.2]) == [0.2]


def test_benjamini_hochberg_statsmodels_example() -> None:
    # statsmodels.stats.multitest.multipletests(p, method="fdr_bh")[1] for these p-values
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    assert benjamini_hochberg(p) == pytest.approx([0.025, 0.05, 0.05, 0.025, 0.5])
    assert benjamini_hochberg([]) == []


def test_holm_is_never_below_benjamini_hochberg() -> None:
    p = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216]
    for h, b in zip(holm(p), benjamini_hochberg(p), strict=True):
        assert h >= b - 1e-12
