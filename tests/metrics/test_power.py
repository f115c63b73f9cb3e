"""Power planning: the planned drop is detected about as often as planned (seeded simulation), and
the counts it asks for are the smallest that do."""

from __future__ import annotations

import random

import pytest

from reviewer.metrics.compare import compare_runs
from reviewer.metrics.distributions import TrialStats
from reviewer.metrics.power import detectable_drop, plan_run


def run(rates: list[float], n: int, rng: random.Random) -> list[TrialStats]:
    return [
        TrialStats(f"t{i}", rng.random() < p, 3, 0.01, 1.0, 1, 0)
        for i, p in enumerate(rates)
        for _ in range(n)
    ]


@pytest.mark.parametrize("tasks, trials, k", [(20, 4, 2), (12, 8, 4)])
def test_a_drop_of_the_planned_size_is_called_worse_about_80_percent_of_the_time(
    tasks: int, trials: int, k: int
) -> None:
    rng = random.Random(tasks * trials)
    rates = [rng.uniform(0.6, 0.95) for _ in range(tasks)]
    d1 = detectable_drop(rates, trials, 1, 0.8, tasks)
    dk = detectable_drop(rates, trials, k, 0.8, tasks)
    assert d1 is not None and dk is not None
    sims = 250
    hit1 = hitk = 0
    for _ in range(sims):
        old = run(rates, trials, rng)
        new1 = run([p - d1 for p in rates], trials, rng)
        newk = run([max(0.0, p**k - dk) ** (1 / k) for p in rates], trials, rng)
        seed = rng.randrange(1 << 30)
        hit1 += (
            compare_runs(old, new1, k, {}, seed=seed, n_boot=300).row("pass_at_1").direction
            == "worse"
        )
        hitk += (
            compare_runs(old, newk, k, {}, seed=seed, n_boot=300).row("pass_hat_k").direction
            == "worse"
        )
    assert 0.7 <= hit1 / sims <= 0.9, hit1 / sims
    assert 0.7 <= hitk / sims <= 0.9, hitk / sims


def test_half_the_planned_drop_is_mostly_missed() -> None:
    rng = random.Random(5)
    rates = [rng.uniform(0.6, 0.95) for _ in range(20)]
    d1 = detectable_drop(rates, 4, 1, 0.8, 20)
    assert d1 is not None
    hits = sum(
        compare_runs(
            run(rates, 4, rng), run([p - d1 / 2 for p in rates], 4, rng), 1, {}, n_boot=300
        )
        .row("pass_at_1")
        .direction
        == "worse"
        for _ in range(150)
    )
    assert hits / 150 < 0.5


def test_tasks_and_trials_needed_are_the_smallest_that_reach_the_drop() -> None:
    counts = [(f"t{i}", 4, c) for i, c in enumerate([4, 3, 3, 2, 4, 1, 3, 4, 2, 3, 4, 3])]
    plan = plan_run("r", counts, k=2, delta=0.1)
    rates = [(c + 0.5) / 5 for _, _, c in counts]
    p1 = plan.metrics[0]
    assert p1.metric == "pass_at_1" and p1.tasks_needed is not None and p1.trials_needed is not None
    drop = detectable_drop(rates, 4, 1, 0.8, p1.tasks_needed)
    fewer = detectable_drop(rates, 4, 1, 0.8, p1.tasks_needed - 1)
    assert drop is not None and drop <= 0.1 and (fewer is None or fewer > 0.1)
    drop = detectable_drop(rates, p1.trials_needed, 1, 0.8, 12)
    fewer = detectable_drop(rates, p1.trials_needed - 1, 1, 0.8, 12)
    assert drop is not None and drop <= 0.1 and fewer is not None and fewer > 0.1
    # more tasks or more trials never make the detectable drop larger
    more, base = detectable_drop(rates, 4, 1, 0.8, 40), detectable_drop(rates, 4, 1, 0.8, 20)
    assert more is not None and base is not None and more < base


def test_bad_settings_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="--power must be between 0 and 1"):
        plan_run("r", [("a", 2, 1)], power=1.5)
    with pytest.raises(ValueError, match=r"--delta must be in \(0, 1\]"):
        plan_run("r", [("a", 2, 1)], delta=0)


def test_few_tasks_say_compare_cannot_decide() -> None:
    plan = plan_run("r", [("a", 4, 3), ("b", 4, 2)], k=2, delta=0.1)
    text = plan.render()
    assert (
        "`reviewer compare` decides nothing on 2 tasks (it needs 10); the drops assume 10" in text
    )
    assert "no number of trials on 2 tasks (compare needs 10)" in text
    assert plan.metrics[0].trials_needed is None and plan.metrics[0].tasks_needed is not None
