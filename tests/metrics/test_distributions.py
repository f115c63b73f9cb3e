"""Distributions: percentile against numpy, summaries with missing values, per-run and per-task stats."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.metrics.distributions import (
    Summary,
    TrialStats,
    percentile,
    run_distributions,
    task_distributions,
)
from reviewer.models import Message, ToolCall, Trial, Usage

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)


@settings(max_examples=500)
@given(st.lists(finite, min_size=1, max_size=60), st.floats(min_value=0, max_value=100))
def test_percentile_matches_numpy(values: list[float], q: float) -> None:
    # Same interpolation, same float operations: equal, not just close.
    assert percentile(values, q) == float(np.percentile(np.array(values), q))


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=40))
def test_percentile_of_ints_matches_numpy_for_report_quantiles(values: list[int]) -> None:
    for q in (0, 5, 25, 50, 95, 99, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), abs=1e-9)


def test_percentile_edges() -> None:
    assert percentile([3.0], 95) == 3.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10, 20], 95) == pytest.approx(19.5)
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_summary_leaves_out_and_counts_missing() -> None:
    s = Summary.of([1.0, None, 3.0, float("nan"), 2.0])
    assert (s.n, s.missing, s.min, s.max, s.mean, s.p50, s.total) == (3, 2, 1.0, 3.0, 2.0, 2.0, 6.0)
    assert s.p95 == pytest.approx(float(np.percentile([1, 2, 3], 95)))
    empty = Summary.of([None, None])
    assert (empty.n, empty.missing, empty.mean, empty.p95) == (0, 2, None, None)
    assert empty.to_dict()["missing"] == 2


def ts(
    task: str,
    ok: bool = True,
    steps: int = 4,
    cost: float | None = 0.01,
    latency: float | None = 10.0,
    calls: int = 2,
    errors: int = 0,
    violations: frozenset[str] = frozenset(),
) -> TrialStats:
    return TrialStats(task, ok, steps, cost, latency, calls, errors, violations)


def test_run_distributions() -> None:
    stats = [
        # task a: two trials, costs 0.01 and 0.03 -> 0.02 per attempt
        ts("a", steps=2, cost=0.01, latency=1.0, calls=2, errors=1, violations=frozenset({"r1"})),
        ts("a", ok=False, steps=6, cost=0.03, latency=3.0, calls=4, errors=0),
        # task b: four trials, cost 0.10 each, one unknown
        ts("b", steps=4, cost=0.10, latency=None, calls=2),
        ts("b", steps=4, cost=0.10, latency=2.0, calls=2, violations=frozenset({"r1", "x"})),
        ts("b", steps=4, cost=0.10, latency=4.0, calls=0),
        ts("b", steps=10, cost=None, latency=5.0, calls=2, errors=2),
    ]
    d = run_distributions(stats, rule_ids=["r1", "never"])
    assert (d.n_trials, d.n_tasks, d.successes) == (6, 2, 5)
    assert d.steps.mean == pytest.approx(30 / 6)
    assert d.steps.p95 == pytest.approx(float(np.percentile([2, 6, 4, 4, 4, 10], 95)))
    assert d.cost_per_trial.n == 5 and d.cost_per_trial.missing == 1
    assert d.cost_per_trial.mean == pytest.approx(0.34 / 5)
    # cost / task: each task's mean attempt cost (0.02, 0.10), averaged over tasks.
    assert d.cost_per_task.mean == pytest.approx(0.06)
    assert d.latency.n == 5 and d.latency.missing == 1 and d.latency.max == 5.0
    assert d.latency.p50 == pytest.approx(3.0)
    assert d.tool_error_rate == pytest.approx(3 / 12)
    assert d.violation_rate == {"r1": pytest.approx(2 / 6), "never": 0.0, "x": pytest.approx(1 / 6)}
    js = d.to_dict()
    assert js["violation_rate"]["never"] == 0.0 and js["latency_s"]["missing"] == 1


def test_task_distributions() -> None:
    stats = [ts("a", cost=0.01), ts("b", cost=None, calls=0), ts("a", cost=0.03, errors=1)]
    per = task_distributions(stats, ["r"])
    assert list(per) == ["a", "b"]
    assert per["a"].n_trials == 2 and per["a"].cost_per_task.mean == pytest.approx(0.02)
    assert per["a"].tool_error_rate == pytest.approx(1 / 4)
    assert per["b"].cost_per_task.n == 0 and per["b"].cost_per_task.missing == 1
    assert per["b"].tool_error_rate is None
    assert per["b"].violation_rate == {"r": 0.0}


def test_empty_run() -> None:
    d = run_distributions([])
    assert d.n_trials == 0 and d.steps.mean is None and d.success_rate is None
    assert d.tool_error_rate is None


def test_from_trial() -> None:
    t = Trial(
        task_id="t",
        messages=[
            Message("user", "hi"),
            Message("assistant", "", [ToolCall("a", {}, "1"), ToolCall("b", {}, "2")]),
            Message("tool", "boom", tool_call_id="1", is_error=True),
            Message("tool", "ok", tool_call_id="2"),
            Message("assistant", "done"),
        ],
        reward=1.0,
        usage=Usage(cost_usd=0.02),
        latency_s=3.5,
    )
    s = TrialStats.from_trial(t, {"r1"})
    assert s == TrialStats("t", True, 4, 0.02, 3.5, 2, 1, frozenset({"r1"}), "pass")
