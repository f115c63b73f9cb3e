"""Regression: `reviewer plan` printed drops larger than today's value (a pass^k of 0 "dropping" 0.37)
and asked for tasks to detect a drop of 0.1 in a pass^k that is 0."""

from __future__ import annotations

from reviewer.metrics.power import plan_run

#: 12 tasks, 6 trials each, every task fails at least once: pass^6 is 0 today.
ZERO_PASS_HAT = [(f"t{i}", 6, 3 + i % 3) for i in range(12)]


def test_plan_prints_impossible_drop_larger_than_today() -> None:
    plan = plan_run("r", ZERO_PASS_HAT, k=6, delta=0.1)
    p1, pk = plan.metrics
    assert pk.value == 0.0
    assert pk.detectable_drop is None
    assert pk.reason == "no drop of pass^6 is detectable: today's value is 0.000"
    text = plan.render()
    assert "  pass^6   no drop of pass^6 is detectable: today's value is 0.000" in text
    assert "drop 0.3" not in text.split("pass^6", 1)[1]
    # pass@1 is well above its detectable drop: unchanged
    assert p1.detectable_drop is not None and p1.detectable_drop < p1.value and p1.reason is None
    data = plan.to_dict()["metrics"][1]
    assert data["detectable_drop"] is None and data["reason"] == pk.reason


def test_plan_asks_for_tasks_to_detect_a_delta_above_today() -> None:
    plan = plan_run("r", ZERO_PASS_HAT, k=6, delta=0.1)
    p1, pk = plan.metrics
    assert pk.tasks_needed is None and pk.trials_needed is None
    assert pk.delta_reason == "no drop of 0.1 in pass^6 is possible: today's value is 0.000"
    text = plan.render()
    assert "pass^6   no drop of 0.1 in pass^6 is possible: today's value is 0.000" in text
    assert "tasks at 6 trials each" in text  # pass@1's line is still there
    assert text.count("tasks at 6 trials each") == 1
    assert p1.tasks_needed is not None and p1.delta_reason is None
    data = plan.to_dict()["metrics"][1]
    assert data["tasks_needed"] is None and data["delta_reason"] == pk.delta_reason


def test_no_plan_drop_ever_exceeds_today() -> None:
    for k in range(1, 9):
        for counts in (ZERO_PASS_HAT, [(f"t{i}", 8, 8 - i % 4) for i in range(10)]):
            for m in plan_run("r", counts, k=k).metrics:
                assert m.detectable_drop is None or m.detectable_drop < m.value
