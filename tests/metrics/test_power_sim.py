"""The power simulation behind `reviewer plan`: its call is compare's, its counts are binomial, and
both shapes of drop carry the same average drop."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy.stats import binom

from reviewer.metrics import power_sim as ps
from reviewer.metrics.noise import RatioSpec, task_intervals


def world(tasks: int, trials: int, k: int, seed: int) -> ps.World:
    rng = random.Random(seed)
    rates = sorted((c + 0.5) / (trials + 1) for c in (rng.randint(0, trials) for _ in range(tasks)))
    return ps.World(rates, trials, k, tasks)


def simulated_runs(w: ps.World, drop: float, shape: str) -> tuple[np.ndarray, np.ndarray]:
    new_values = ps.dropped(w.values, drop, shape, w.order)
    new = w.estimates[ps._counts(w.table, np.power(new_values, 1 / w.k), w.u_new)]
    return w.old, new


@pytest.mark.parametrize("tasks, trials, k", [(12, 4, 1), (50, 8, 4)])
@pytest.mark.parametrize("shape", ps.SHAPES)
def test_the_t_call_is_the_bootstrap_call_of_compare(
    tasks: int, trials: int, k: int, shape: str
) -> None:
    # On the same simulated pairs of runs, the t form of the interval and compare's own expanded
    # bootstrap (noise.task_intervals, 2000 resamples) call "worse" alike: they differ only on
    # pairs at the edge, about as often as the bootstrap differs from itself under another seed.
    w = world(tasks, trials, k, seed=tasks)
    old, new = simulated_runs(w, 0.1, shape)
    t_calls = ps.t_call_worse(new - old)
    sets = 200
    same = boot_worse = 0
    for i in range(sets):
        spec = RatioSpec(old[i], [1.0] * tasks, new[i], [1.0] * tasks)
        (ci,) = task_intervals([spec], tasks, seed=i, n_boot=2000)
        called = ci is not None and ci[1] < 0
        boot_worse += called
        same += called == bool(t_calls[i])
    assert same / sets >= 0.96
    assert abs(boot_worse / sets - t_calls[:sets].mean()) <= 0.03
    assert 0.05 < boot_worse / sets < 0.95  # the sets hold both calls: a real test of agreement


def test_counts_are_binomial() -> None:
    rng = np.random.default_rng(1)
    for trials in (1, 4, 8, 30):
        table = ps._table(trials)
        for rate in (0.0, 0.13, 0.5, 0.905, 1.0):
            u = rng.integers(0, ps._DRAWS, 200_000)
            c = ps._counts(table, np.full(u.shape, rate), u)
            seen = np.bincount(c, minlength=trials + 1) / len(c)
            assert np.abs(seen - binom.pmf(np.arange(trials + 1), trials, rate)).max() < 0.006


@pytest.mark.parametrize("shape", ps.SHAPES)
def test_both_shapes_carry_the_same_average_drop(shape: str) -> None:
    values = np.array([0.0, 0.05, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])
    order = np.array([np.random.default_rng(i).permutation(10) for i in range(30)])
    for drop in (0.01, 0.1, 0.3, values.mean()):
        new = np.atleast_2d(ps.dropped(values, drop, shape, order))
        assert np.allclose((values - new).mean(axis=1), drop)
        assert (new >= 0).all() and (new <= values + 1e-12).all()
    # a drop that needs more than every task falling to 0 leaves them all at 0
    assert (ps.dropped(values, 0.99, shape, order) == 0).all()


def test_an_even_drop_lowers_every_task_alike_until_it_reaches_0() -> None:
    values = np.array([0.02, 0.3, 0.5, 0.9])
    new = ps.dropped(values, 0.1, "uniform", None)
    # 0.02 stops at 0; the other three fall by (0.4 - 0.02) / 3 each
    assert new[0] == 0 and np.allclose(values[1:] - new[1:], 0.38 / 3)


def test_a_concentrated_drop_falls_on_a_fifth_of_the_tasks_first() -> None:
    values = np.full(10, 0.5)
    order = np.array([[3, 7, 0, 1, 2, 4, 5, 6, 8, 9]])
    small = ps.dropped(values, 0.05, "concentrated", order)[0]
    assert np.allclose(values - small, [0, 0, 0, 0.25, 0, 0, 0, 0.25, 0, 0])
    # 0.15 x 10 = 1.5: the two carriers fall to 0 (1.0), the rest share 0.5
    big = ps.dropped(values, 0.15, "concentrated", order)[0]
    assert big[3] == big[7] == 0 and np.allclose(np.delete(values - big, [3, 7]), 0.5 / 8)


def test_a_larger_drop_is_never_called_worse_less_often() -> None:
    w = world(20, 4, 2, seed=3)
    for shape in ps.SHAPES:
        rates = [w.call_rate(d, shape) for d in np.linspace(0, w.values.mean(), 25)]
        assert all(a <= b for a, b in zip(rates, rates[1:], strict=False))
        assert rates[0] <= 0.05 and rates[-1] > 0.9


def test_the_normal_approximation_is_close_to_the_simulation() -> None:
    # beyond the simulation's limits the plan uses it; at a size both can do they agree
    rng = random.Random(8)
    rates = tuple(sorted(rng.uniform(0.3, 0.95) for _ in range(40)))
    for shape in ps.SHAPES:
        sim = ps._world(rates, 6, 1, 40).call_rate(0.1, shape)
        approx = ps.analytic_power(ps.moments(rates, 6, 1, 0.1, shape), 0.1, 40)
        assert abs(sim - approx) < 0.06, (shape, sim, approx)
