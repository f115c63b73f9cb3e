"""Wilson intervals of the judge's TPR and TNR, against Newcombe (1998), Table I, method 3."""

from __future__ import annotations

import pytest

from reviewer.calibration.wilson import wilson_interval


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_newcombes_examples(k: int, n: int, low: float, high: float) -> None:
    ci = wilson_interval(k, n)
    assert ci is not None
    assert ci == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_all_successes_mirror_none() -> None:
    lo, hi = wilson_interval(20, 20) or (None, None)
    assert hi == 1.0 and lo == pytest.approx(1 - 0.1611, abs=5e-5)


def test_no_trials_has_no_interval_and_bad_counts_are_refused() -> None:
    assert wilson_interval(0, 0) is None
    for k, n in ((3, 2), (-1, 5)):
        with pytest.raises(ValueError):
            wilson_interval(k, n)
