"""The pass@k / pass^k estimators: known values, properties, and brute force over k-subsets."""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reviewer.metrics.passk import (
    default_ks,
    pass_at_k,
    pass_at_k_exact,
    pass_hat_k,
    pass_hat_k_exact,
    run_passk,
)


@st.composite
def n_c_k(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 40))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return n, c, k


def test_known_values_from_the_readme_example() -> None:
    assert pass_hat_k(8, 7, 4) == pytest.approx(0.5)
    assert pass_hat_k(8, 6, 4) == pytest.approx(15 / 70)
    assert pass_at_k(8, 4, 4) == pytest.approx(1 - 1 / 70)
    assert pass_hat_k(8, 4, 4) == pytest.approx(1 / 70)


def test_fewer_trials_than_k_has_no_value() -> None:
    assert pass_at_k(3, 3, 4) is None
    assert pass_hat_k(3, 3, 4) is None


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


@given(n_c_k())
def test_bounds_and_order(args: tuple[int, int, int]) -> None:
    n, c, k = args
    at, hat, p1 = pass_at_k_exact(n, c, k), pass_hat_k_exact(n, c, k), pass_at_k_exact(n, c, 1)
    assert at is not None and hat is not None and p1 is not None
    assert 0 <= hat <= p1 <= at <= 1
    assert p1 == Fraction(c, n) == pass_hat_k_exact(n, c, 1)


@given(n_c_k())
def test_monotone_in_k(args: tuple[int, int, int]) -> None:
    n, c, k = args
    if k < n:
        assert pass_at_k_exact(n, c, k + 1) >= pass_at_k_exact(n, c, k)  # type: ignore[operator]
        assert pass_hat_k_exact(n, c, k + 1) <= pass_hat_k_exact(n, c, k)  # type: ignore[operator]


@given(
    st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))
)
def test_equal_to_brute_force_over_all_k_subsets(args: tuple[int, int, int]) -> None:
    n, c, k = args
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(combinations(outcomes, k))
    any_pass = Fraction(sum(1 for s in subsets if any(s)), len(subsets))
    all_pass = Fraction(sum(1 for s in subsets if all(s)), len(subsets))
    assert pass_at_k_exact(n, c, k) == any_pass
    assert pass_hat_k_exact(n, c, k) == all_pass


def test_average_leaves_out_tasks_with_too_few_trials() -> None:
    rep = run_passk("r", [("a", 4, 4), ("b", 2, 1)], [1, 4])
    assert rep.excluded == {1: 0, 4: 1}
    assert rep.average_hat_k[4] == 1.0
    assert rep.average_at_k[1] == pytest.approx(0.75)


def test_default_ks_is_one_and_the_smallest_n() -> None:
    assert default_ks([8, 8, 6]) == [1, 6]
    assert default_ks([1, 5]) == [1]
    assert default_ks([]) == [1]


@given(
    st.lists(
        st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))),
        min_size=1,
        max_size=30,
    )
)
def test_grouped_averages_equal_the_per_task_averages(counts: list[tuple[int, int]]) -> None:
    from collections import Counter

    from reviewer.metrics.passk import average_passk

    ks = [1, 2, 4]
    rep = run_passk("r", [(f"t{i}", n, c) for i, (n, c) in enumerate(counts)], ks)
    at, hat = average_passk([(n, c, times) for (n, c), times in Counter(counts).items()], ks)
    assert at == rep.average_at_k and hat == rep.average_hat_k


def test_default_ks_ignores_tasks_with_no_scored_trial() -> None:
    # a task whose trials all crashed (n = 0 scored) must not drop the default k to 1
    assert default_ks([4, 0, 4]) == [1, 4]
    assert default_ks([0]) == [1]
