"""Kappa, Fleiss, Krippendorff and the bootstrap against published and hand-computed values."""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.calibration.kappa import (
    bootstrap_kappa_ci,
    bootstrap_kappa_samples,
    cohen_kappa,
    confusion_matrix,
    fleiss_kappa,
    kappa_from_confusion,
    kappa_se_fce,
    krippendorff_alpha,
    landis_koch,
)

# PandaLM's labels, copied whole (37 KB, labels only) into tests/fixtures/pandalm; see SOURCE.md there
PANDALM = Path(__file__).resolve().parents[1] / "fixtures" / "pandalm"

# 50 items, rows = rater A (yes, no), columns = rater B (yes, no)
EXAMPLE = [[20, 5], [10, 15]]


def expand(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [i] * count
            b += [j] * count
    return a, b


def pandalm_annotators() -> list[list[str]]:
    path = PANDALM / "pandalm_labels.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    return [[r[f"annotator{i}"] for r in rows] for i in (1, 2, 3)]


def test_two_by_two_example_kappa_and_fce_standard_error() -> None:
    a, b = expand(EXAMPLE)
    assert len(a) == 50
    assert sum(x == y for x, y in zip(a, b, strict=True)) / 50 == pytest.approx(0.70)
    assert kappa_from_confusion(EXAMPLE) == pytest.approx(0.40)
    assert cohen_kappa(a, b) == pytest.approx(0.40)
    se = kappa_se_fce(EXAMPLE)
    assert se is not None and round(se, 3) == 0.127
    assert round(0.40 - 1.96 * se, 3) == 0.151
    assert round(0.40 + 1.96 * se, 3) == 0.649


def test_confusion_matrix_orders_labels_and_drops_unlisted() -> None:
    m, order = confusion_matrix(["b", "a", "a"], ["a", "a", "c"])
    assert order == ["a", "b", "c"]
    assert m == [[1, 0, 1], [1, 0, 0], [0, 0, 0]]
    m, order = confusion_matrix(["b", "a", "a"], ["a", "a", "c"], labels=["a", "b"])
    assert m == [[1, 0], [1, 0]]
    with pytest.raises(ValueError):
        confusion_matrix(["a"], ["a", "b"])


def test_undefined_kappa_is_none_not_nan() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa(["pass"] * 5, ["pass"] * 5) is None
    assert kappa_se_fce([[5, 0], [0, 0]]) is None
    assert cohen_kappa(["pass"] * 5, ["fail"] * 5) == 0.0
    assert cohen_kappa(["pass", "fail", "pass"], ["pass"] * 3) == 0.0


def test_perfect_agreement_has_zero_standard_error() -> None:
    assert kappa_from_confusion([[7, 0], [0, 3]]) == 1.0
    assert kappa_se_fce([[7, 0], [0, 3]]) == 0.0


def test_pandalm_annotators_match_the_published_kappas() -> None:
    a1, a2, a3 = pandalm_annotators()
    assert len(a1) == 999
    pairwise = [cohen_kappa(a1, a2), cohen_kappa(a1, a3), cohen_kappa(a2, a3)]
    assert [round(k, 3) for k in pairwise if k is not None] == [0.852, 0.879, 0.862]
    items = [list(t) for t in zip(a1, a2, a3, strict=True)]
    fleiss = fleiss_kappa(items)
    assert fleiss is not None and round(fleiss, 3) == 0.864
    assert fleiss == pytest.approx(0.864175, abs=1e-6)
    # with complete data alpha differs from Fleiss' kappa only by its small-sample correction
    alpha = krippendorff_alpha(items)
    assert alpha == pytest.approx(fleiss, abs=1e-3)


def test_fleiss_textbook_example_from_a_count_table() -> None:
    # Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories -> 0.210
    table = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    k = fleiss_kappa(table, counts=True)
    assert k is not None and round(k, 3) == 0.210


def test_fleiss_degenerate_and_invalid() -> None:
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([["a", "a"], ["a", "a"]]) is None
    with pytest.raises(ValueError):
        fleiss_kappa([["a", "b"], ["a", "b", "a"]])
    with pytest.raises(ValueError):
        fleiss_kappa([["a"], ["b"]])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from("xyz"), min_size=3, max_size=3), min_size=1, max_size=30))
def test_fleiss_labels_and_count_table_agree(items: list[list[str]]) -> None:
    counts = [[item.count(c) for c in "xyz"] for item in items]
    k1, k2 = fleiss_kappa(items), fleiss_kappa(counts, counts=True)
    assert (k1 is None) == (k2 is None)
    if k1 is not None and k2 is not None:
        assert k1 == pytest.approx(k2)


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers,
# 12 units, missing values. Published: nominal 0.743, ordinal 0.815, interval 0.849, ratio 0.797.
K_A = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
K_B = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
K_C = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
K_D = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
K_UNITS = [list(u) for u in zip(K_A, K_B, K_C, K_D, strict=True)]


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_2011_example_with_missing_data(level: str, expected: float) -> None:
    alpha = krippendorff_alpha(K_UNITS, level=level)
    assert alpha is not None and round(alpha, 3) == expected


def test_krippendorff_accepts_units_of_different_sizes() -> None:
    ragged = [[v for v in u if v is not None] for u in K_UNITS]
    assert len({len(u) for u in ragged}) > 1
    assert krippendorff_alpha(ragged) == pytest.approx(krippendorff_alpha(K_UNITS))


def test_krippendorff_degenerate_and_invalid() -> None:
    assert krippendorff_alpha([]) is None
    assert krippendorff_alpha([[1, None], [2]]) is None  # nothing pairable
    assert krippendorff_alpha([[1, 1], [1, 1, 1]]) is None  # one value only
    assert krippendorff_alpha([[1, 1], [2, 2]]) == 1.0
    with pytest.raises(ValueError):
        krippendorff_alpha(K_UNITS, level="cardinal")


labels = st.sampled_from(["pass", "fail", "skip"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(labels, labels), min_size=1, max_size=60))
def test_cohen_kappa_matches_sklearn(pairs: list[tuple[str, str]]) -> None:
    from sklearn.metrics import cohen_kappa_score

    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = float(cohen_kappa_score(a, b))
    ours = cohen_kappa(a, b)
    if math.isnan(expected):
        assert ours is None
    else:
        assert ours == pytest.approx(expected, abs=1e-9)


def test_cohen_kappa_with_labels_matches_sklearn() -> None:
    from sklearn.metrics import cohen_kappa_score

    a = ["pass", "fail", "skip", "pass", "fail", "pass"]
    b = ["pass", "pass", "fail", "skip", "fail", "fail"]
    keep = ["pass", "fail"]
    assert cohen_kappa(a, b, labels=keep) == pytest.approx(cohen_kappa_score(a, b, labels=keep))


def test_bootstrap_is_reproducible_under_a_seed() -> None:
    a, b = expand(EXAMPLE)
    first = bootstrap_kappa_ci(a, b, seed=7)
    assert first == bootstrap_kappa_ci(a, b, seed=7)
    assert first != bootstrap_kappa_ci(a, b, seed=8)
    assert first is not None and first[0] < 0.40 < first[1]
    # close to the analytic interval 0.151 .. 0.649 on this sample size
    assert first[0] == pytest.approx(0.151, abs=0.06)
    assert first[1] == pytest.approx(0.649, abs=0.06)
    samples = bootstrap_kappa_samples(a, b, seed=7, n_boot=500)
    assert samples.shape == (500,)
    assert ((samples >= -1) & (samples <= 1)).all()


def test_bootstrap_samples_match_cohen_kappa_on_each_resample() -> None:
    import numpy as np

    a, b = expand(EXAMPLE)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(a), size=(5, len(a)))
    expected = [cohen_kappa([a[i] for i in row], [b[i] for i in row]) for row in idx]
    assert bootstrap_kappa_samples(a, b, seed=3, n_boot=5).tolist() == pytest.approx(expected)


def test_bootstrap_degenerate_and_invalid() -> None:
    assert bootstrap_kappa_ci([], [], seed=0) is None
    assert bootstrap_kappa_ci(["pass"] * 4, ["pass"] * 4, seed=0) is None
    with pytest.raises(ValueError):
        bootstrap_kappa_ci(["pass", "fail"], ["pass", "fail"], seed=0, n_boot=0)
    with pytest.raises(ValueError):
        bootstrap_kappa_ci(["pass", "fail"], ["pass", "fail"], seed=0, level=1.0)


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (-0.01, "poor"),
        (0.0, "slight"),
        (0.20, "slight"),
        (0.21, "fair"),
        (0.1 + 0.3, "fair"),
        (0.41, "moderate"),
        (0.60, "moderate"),
        (0.61, "substantial"),
        (0.80, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
    ],
)
def test_landis_koch_bands(kappa: float, band: str) -> None:
    assert landis_koch(kappa) == band
