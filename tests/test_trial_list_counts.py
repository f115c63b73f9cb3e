"""Counts of the trials list on run, task and outcome are summed from the per-task counts the importer
keeps (O(tasks)); they must equal counting the trials themselves, for every such filter."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from reviewer.store import open_store
from reviewer.store.trial_list import TrialFilter, clear_cache, count, page
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl


def _outcome(i: int) -> dict[str, Any] | None:
    return [
        {"passed": True},
        {"passed": False},
        {"passed": False, "infra_error": True},
        None,
        {"passed": False},
    ][i % 5]


def test_counts_by_run_task_and_outcome_equal_counting_the_trials(tmp_path: Path) -> None:
    for part in range(2):  # two files, so the per-task counts are added to, not only created
        records = []
        for i in range(60):
            rec = native_trial(f"task{i % 7}", trial=part * 100 + i // 7 + 1)
            rec["run"] = f"run{i % 3}"
            rec["outcome"] = _outcome(i * 3 + part)
            records.append(rec)
        write_jsonl(tmp_path / f"part{part}.jsonl", records)
        with open_store(tmp_path / "x.db") as db:
            import_paths(db, [str(tmp_path / f"part{part}.jsonl")])
    with open_store(tmp_path / "x.db") as db:
        everything = page(db, TrialFilter(), limit=10_000).rows
        assert len(everything) == 120
        outcomes = {r.outcome for r in everything}
        assert outcomes == {"pass", "fail", "infra", "unscored"}
        runs = [None, "run0", "run1", "run2", "nope"]
        tasks = [None, "task0", "task6", "nope"]
        kinds = [None, "pass", "fail", "infra", "unscored"]
        for run, task, outcome in itertools.product(runs, tasks, kinds):
            f = TrialFilter(run=run, task_id=task, outcome=outcome)  # type: ignore[arg-type]
            expected = sum(
                1
                for r in everything
                if (run is None or r.run == run)
                and (task is None or r.task_id == task)
                and (outcome is None or r.outcome == outcome)
            )
            clear_cache()
            assert count(db, f, cached=False) == expected, f
            assert count(db, f) == expected, f
            assert page(db, f, limit=10_000).total == expected, f
