"""The tasks screen's steps and cost per task leave out the trials the harness crashed, as the
report's distributions do (a crash measured no agent): a task with a crashed trial reads its own
rows, one without reads the kept sums; both backends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reviewer.metrics.distributions import task_distributions
from reviewer.store.db import open_store
from reviewer.store.queries import task_table
from reviewer.store.trials import trial_stats
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl


def _trial(task: str, trial: int, turns: int, cost: float, crash: bool = False) -> dict[str, Any]:
    messages = [{"role": "user", "content": "hi"}]
    messages += [{"role": "assistant", "content": f"step {i}"} for i in range(turns)]
    outcome = {"infra_error": True} if crash else {"passed": trial % 2 == 0}
    return native_trial(
        task, run="r", trial=trial, messages=messages, outcome=outcome, usage={"cost_usd": cost}
    )


def test_steps_and_cost_per_task_leave_out_crashed_trials(tmp_path: Path) -> None:
    records = [
        _trial("a", 1, 2, 0.10),
        _trial("a", 2, 4, 0.30),
        _trial("a", 3, 40, 9.00, crash=True),  # a crash: no measure of the agent
        _trial("b", 1, 3, 0.20),
        _trial("b", 2, 5, 0.40),
        _trial("c", 1, 7, 1.00, crash=True),  # a task the harness always crashed
    ]
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [str(write_jsonl(tmp_path / "r.jsonl", records))])
        rows = {r.task_id: r for r in task_table(db, "r")}
        report = task_distributions(trial_stats(db, "r"))
    assert (rows["a"].infra, rows["a"].avg_steps) == (1, 3.0)
    assert rows["a"].avg_cost is not None and abs(rows["a"].avg_cost - 0.20) < 1e-12
    assert (rows["b"].infra, rows["b"].avg_steps) == (0, 4.0)
    assert rows["b"].avg_cost is not None and abs(rows["b"].avg_cost - 0.30) < 1e-12
    assert (rows["c"].infra, rows["c"].avg_steps, rows["c"].avg_cost) == (1, None, None)
    # the report's per-task numbers, the same (a task it all crashed is not among them)
    assert set(report) == {"a", "b"}
    for task in report:
        assert report[task].steps.mean == rows[task].avg_steps
        assert abs((report[task].cost_per_task.mean or 0) - (rows[task].avg_cost or 0)) < 1e-12
