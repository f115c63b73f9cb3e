"""Power planning: the planned drop is called worse by compare itself about as often as planned
(seeded simulation), under both shapes of drop, and the counts it asks for are the smallest that do."""

from __future__ import annotations

import math
import random

import pytest

from reviewer.metrics.compare import compare_runs
from reviewer.metrics.distributions import TrialStats
from reviewer.metrics.power import plan_run
from reviewer.metrics.power_search import detectable_drops, lower_power


def run(rates: list[float], n: int, rng: random.Random) -> list[TrialStats]:
    return [
        TrialStats(f"t{i}", rng.random() < p, 3, 0.01, 1.0, 1, 0)
        for i, p in enumerate(rates)
        for _ in range(n)
    ]


def after(rates: list[float], k: int, drop: float, shape: str, rng: random.Random) -> list[float]:
    """The rates after the average of p^k falls by ``drop``: evenly, or on a random fifth first
    (written here by bisection, apart from the library's closed form)."""
    v = [p**k for p in rates]

    def cut(values: list[float], total: float) -> float:
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if sum(min(x, mid) for x in values) < total else (lo, mid)
        return hi

    total = drop * len(v)
    if shape == "uniform":
        c = cut(v, total)
        new = [max(x - c, 0.0) for x in v]
    else:
        few = set(rng.sample(range(len(v)), math.ceil(0.2 * len(v))))
        c = cut([v[i] for i in few], total)
        new = [max(x - c, 0.0) if i in few else x for i, x in enumerate(v)]
        spill = total - sum(v) + sum(new)  # what the fifth could not carry falls on the rest
        if spill > 1e-9:
            c = cut([x for i, x in enumerate(v) if i not in few], spill)
            new = [0.0 if i in few else max(x - c, 0.0) for i, x in enumerate(v)]
    return [x ** (1 / k) for x in new]


@pytest.mark.parametrize("tasks, trials, k", [(20, 4, 2), (12, 8, 4)])
@pytest.mark.parametrize("shape", ["uniform", "concentrated"])
def test_a_drop_of_the_planned_size_is_called_worse_about_80_percent_of_the_time(
    tasks: int, trials: int, k: int, shape: str
) -> None:
    rng = random.Random(tasks * trials)
    rates = sorted(rng.uniform(0.6, 0.95) for _ in range(tasks))
    drops = {kk: detectable_drops(tuple(rates), trials, kk, tasks, 0.8)[shape] for kk in (1, k)}
    assert None not in drops.values()
    sims = 200
    hit1 = hitk = 0
    for _ in range(sims):
        old = run(rates, trials, rng)
        seed = rng.randrange(1 << 30)
        new1 = run(after(rates, 1, drops[1], shape, rng), trials, rng)  # type: ignore[arg-type]
        newk = run(after(rates, k, drops[k], shape, rng), trials, rng)  # type: ignore[arg-type]
        cmp1 = compare_runs(old, new1, k, {}, seed=seed, n_boot=500)
        cmpk = compare_runs(old, newk, k, {}, seed=seed, n_boot=500)
        hit1 += cmp1.row("pass_at_1").direction == "worse"
        hitk += cmpk.row("pass_hat_k").direction == "worse"
    assert 0.7 <= hit1 / sims <= 0.9, hit1 / sims
    assert 0.7 <= hitk / sims <= 0.9, hitk / sims


def test_half_the_planned_drop_is_mostly_missed() -> None:
    rng = random.Random(5)
    rates = sorted(rng.uniform(0.6, 0.95) for _ in range(20))
    d1 = max(v for v in detectable_drops(tuple(rates), 4, 1, 20, 0.8).values() if v is not None)
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


def test_the_plans_drop_is_the_larger_of_the_shapes_and_a_concentrated_drop_needs_more() -> None:
    counts = [(f"t{i}", 6, c) for i, c in enumerate([6, 5, 5, 4, 6, 3, 5, 6, 4, 5, 6, 5, 2, 6])]
    p1, pk = plan_run("r", counts, k=3).metrics
    for m in (p1, pk):
        by = m.detectable_by_shape
        assert by["uniform"] is not None and by["concentrated"] is not None
        assert m.detectable_drop == max(by["uniform"], by["concentrated"])
    assert p1.detectable_by_shape["concentrated"] > p1.detectable_by_shape["uniform"]  # type: ignore[operator]


def test_tasks_and_trials_needed_are_the_smallest_that_reach_the_drop() -> None:
    cs = [4, 3, 3, 2, 4, 1, 3, 4, 2, 3, 4, 3, 4, 4, 2, 3, 4, 3, 3, 4, 2, 4, 3, 3, 4]
    counts = [(f"t{i}", 4, c) for i, c in enumerate(cs)]
    plan = plan_run("r", counts, k=2, delta=0.15)
    rates = tuple(sorted((c + 0.5) / 5 for _, _, c in counts))
    for m, kind in zip(plan.metrics, (1, 2), strict=True):
        assert m.tasks_needed is not None and m.trials_needed is not None
        assert lower_power(rates, 4, kind, m.tasks_needed, 0.15) >= 0.8
        assert lower_power(rates, 4, kind, m.tasks_needed - 1, 0.15) < 0.8
        assert lower_power(rates, m.trials_needed, kind, 25, 0.15) >= 0.8
        assert lower_power(rates, m.trials_needed - 1, kind, 25, 0.15) < 0.8
        # today's power is the lower of the two shapes, and too low (else no more would be asked)
        today = m.power_at_delta
        assert today is not None and today["lower"] == min(today["uniform"], today["concentrated"])
        assert today["lower"] < 0.8
    # more tasks never make the detectable drop larger
    more = detectable_drops(rates, 4, 1, 40, 0.8)["concentrated"]
    base = detectable_drops(rates, 4, 1, 20, 0.8)["concentrated"]
    assert more is not None and base is not None and more < base


def test_bad_settings_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="--power must be between 0 and 1"):
        plan_run("r", [("a", 2, 1)], power=1.5)
    with pytest.raises(ValueError, match=r"--delta must be in \(0, 1\]"):
        plan_run("r", [("a", 2, 1)], delta=0)


def test_few_tasks_say_compare_cannot_decide() -> None:
    plan = plan_run("r", [("a", 4, 3), ("b", 4, 2)], k=2, delta=0.1)
    text = plan.render()
    assert "`reviewer compare` decides nothing on 2 tasks (it needs 10); the drops assume 10" in (
        " ".join(text.split())
    )
    assert "no number of trials on 2 tasks (compare needs 10)" in text
    assert plan.metrics[0].trials_needed is None and plan.metrics[0].tasks_needed is not None


def test_the_plan_says_what_a_drop_is() -> None:
    counts = [(f"t{i}", 4, c) for i, c in enumerate([4, 3, 3, 2, 4, 1, 3, 4, 2, 3, 4, 3])]
    plan = plan_run("r", counts, k=2, delta=0.1)
    text = plan.render()
    assert "the average over tasks falling by D, absolute" in text
    assert "pass@1 0.750 -> 0.650 for D = 0.1" in text.replace("\n", " ")
    assert plan.to_dict()["drop_meaning"].startswith("a drop of D is the average over tasks")
    assert all(len(line) <= 80 for line in text.splitlines())


def test_todays_pass_hat_k_leaves_out_tasks_with_fewer_than_k_trials_as_the_report_does() -> None:
    """On the sample run (47 tasks of 8 trials, 3 of 7) the plan's pass^8 read 0.620 where
    `reviewer report --k 8` said 0.66: the plan counted each 7-trial task as 0."""
    from reviewer.metrics.passk import pass_hat_k

    counts = [(f"t{i}", 8, 8 if i % 3 else 6) for i in range(12)] + [("s1", 7, 7), ("s2", 7, 7)]
    plan = plan_run("r", counts, k=8)
    hat = next(m for m in plan.metrics if m.metric == "pass_hat_k")
    want = math.fsum(pass_hat_k(n, c, 8) or 0.0 for _, n, c in counts if n >= 8) / 12
    assert hat.value == pytest.approx(want)
    assert any("averages the 12 tasks with 8 or more trials" in n for n in plan.notes)
    assert "2 with fewer are left out" in " ".join(plan.render().split())


def test_a_k_above_every_tasks_trials_is_planned_at_k_trials_not_read_as_zero() -> None:
    """`--k 10` on runs of 8 trials said `no drop of pass^10 is detectable: today's value is 0.000`
    while its note said its figures assume 10 trials; and a plan's line said `at 8 trials each`
    for tasks it had counted at 10."""
    counts = [(f"t{i}", 8, 8 if i % 4 else 5) for i in range(20)]
    plan = plan_run("r", counts, k=10, delta=0.1)
    hat = next(m for m in plan.metrics if m.metric == "pass_hat_k")
    assert hat.value == pytest.approx(
        math.fsum(((c + 0.5) / (n + 1)) ** 10 for _, n, c in counts) / 20
    )
    assert hat.value > 0.3 and hat.reason is None and hat.delta_reason is None
    text = plan.render()
    assert "no task has 10 trials, so today's pass^10 is estimated" in " ".join(text.split())
    assert f"pass^10  {hat.tasks_needed} tasks at 10 trials each, or" in text


def test_one_task_and_one_trial_are_singular() -> None:
    """'no number of trials on 1 tasks', '303 tasks at 1 trials each', '25 tasks x 1 trials'."""
    from reviewer.metrics.plan_cost import TrialCosts

    one = plan_run("r", [("a", 5, 2)], delta=0.1).render()
    assert "no number of trials on 1 task (compare needs 10)" in one
    single = [(f"t{i}", 1, i % 3 != 0) for i in range(25)]
    costs = TrialCosts(trials=25, agent_known=25, agent_per_trial=0.01)
    text = plan_run("r", single, delta=0.1, costs=costs).render()
    assert " at 1 trial each, or" in text and "25 tasks x 1 trial = $0.25 per run" in text
    assert "1 trials" not in text and "1 tasks" not in one
