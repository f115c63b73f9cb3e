"""The stratified exact test of a rise against scipy's Fisher test (one task) and against brute-force
enumeration of every way the bad trials could have fallen (several tasks)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from reviewer.metrics.fisher import stratified_rise


@pytest.mark.parametrize(
    "old_bad, old_n, new_bad, new_n",
    [
        (2, 250, 3, 250),
        (0, 250, 1, 250),
        (0, 250, 5, 250),
        (3, 10, 0, 12),
        (7, 8, 8, 8),
        (1, 4, 4, 4),
    ],
)
def test_one_task_is_fishers_one_sided_test(
    old_bad: int, old_n: int, new_bad: int, new_n: int
) -> None:
    from scipy.stats import fisher_exact

    table = [[new_bad, new_n - new_bad], [old_bad, old_n - old_bad]]
    expected = fisher_exact(table, alternative="greater").pvalue
    assert stratified_rise([(old_bad, old_n, new_bad, new_n)]) == pytest.approx(expected, rel=1e-9)


def brute_force(strata: list[tuple[int, int, int, int]]) -> float:
    """P(sum of new bad >= observed) by enumerating every split of each task's bad trials."""
    per_task = []
    for ob, on, nb, nn in strata:
        bad, total = ob + nb, on + nn
        pmf = {
            x: math.comb(bad, x) * math.comb(total - bad, nn - x) / math.comb(total, nn)
            for x in range(max(0, bad - on), min(bad, nn) + 1)
        }
        per_task.append(pmf)
    observed = sum(s[2] for s in strata)
    tail = 0.0
    for combo in itertools.product(*(list(p.items()) for p in per_task)):
        if sum(x for x, _ in combo) >= observed:
            tail += math.prod(pr for _, pr in combo)
    return tail


def test_several_tasks_match_enumeration() -> None:
    rng = random.Random(5)
    for _ in range(40):
        strata = []
        for _ in range(rng.randint(1, 4)):
            on, nn = rng.randint(1, 8), rng.randint(1, 8)
            strata.append((rng.randint(0, on), on, rng.randint(0, nn), nn))
        assert stratified_rise(strata) == pytest.approx(brute_force(strata), rel=1e-9, abs=1e-12)


def test_tasks_without_a_bad_trial_change_nothing() -> None:
    base = [(1, 5, 3, 5)]
    assert stratified_rise(base + [(0, 5, 0, 5)] * 30) == pytest.approx(stratified_rise(base))
    assert stratified_rise([]) == 1.0
    assert stratified_rise([(0, 5, 0, 5)]) == 1.0


def test_stratifying_stops_a_task_with_more_trials_from_faking_a_rise() -> None:
    """A task breaking the rule half the time, run 2 times in the baseline and 8 times now, carries
    more bad trials into the new run with no change at all: pooled Fisher calls it, the
    stratified test does not."""
    from scipy.stats import fisher_exact

    strata = [(1, 2, 4, 8)] + [(0, 8, 0, 2)] * 9  # 1 of 74 -> 4 of 26 pooled
    pooled = fisher_exact([[4, 22], [1, 73]], alternative="greater").pvalue
    assert pooled < 0.05
    assert stratified_rise(strata) > 0.5


def test_many_tasks_breaking_a_rule_often_take_seconds_not_minutes() -> None:
    """The distribution of the summed counts was carried over every count the sum could take: with
    5,000 tasks breaking a forbidden rule in 30% of their trials, compare spent 36 s in this test
    (1.7 s without it) and 20,000 tasks took minutes. The negligible ends are cut now; the p-value is
    the same as the full convolution's."""
    import time

    import numpy as np

    def full(strata: list[tuple[int, int, int, int]]) -> float:
        dist, observed = np.ones(1), 0
        for ob, on, nb, nn in strata:
            bad, total = ob + nb, on + nn
            if bad == 0:
                continue
            observed += nb
            lo, hi = max(0, bad - on), min(bad, nn)
            pmf = [math.comb(bad, x) * math.comb(total - bad, nn - x) for x in range(lo, hi + 1)]
            dist = np.convolve(np.concatenate([np.zeros(lo), dist]), np.array(pmf) / sum(pmf))
        return float(dist[observed:].sum())

    rng = random.Random(11)

    def strata(tasks: int) -> list[tuple[int, int, int, int]]:
        return [
            (
                sum(rng.random() < 0.3 for _ in range(8)),
                8,
                sum(rng.random() < 0.31 for _ in range(8)),
                8,
            )
            for _ in range(tasks)
        ]

    small = strata(600)
    assert stratified_rise(small) == pytest.approx(full(small), rel=1e-9)
    big = strata(20_000)
    start = time.process_time()
    p = stratified_rise(big)
    assert time.process_time() - start < 20  # minutes before
    assert 0.0 <= p <= 1.0
