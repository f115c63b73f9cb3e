"""Defects found in the m016 summaries (reviewer.store.summaries and their readers), each against the
computation from scratch it replaces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.store.db import Store, migrations, open_store
from reviewer.store.queries import list_runs
from reviewer.store.trial_list import TrialFilter, clear_cache, count
from reviewer.store.writer import rebuild_task_stats
from reviewer.workflows.imports import import_paths


def _native(trial: int, task: str = "t1", cost: float = 1.0) -> str:
    return json.dumps(
        {
            "schema": "reviewer/v1",
            "run": "r",
            "task_id": task,
            "trial": trial,
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": "a"},
            ],
            "outcome": {"passed": trial % 2 == 1},
            "usage": {"cost_usd": cost},
        }
    )


def _write(path: Path, *lines: str) -> str:
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _slow_totals(db: Store) -> list[tuple[Any, ...]]:
    return db.execute(
        "SELECT run, COUNT(*), TOTAL(cost_sum), SUM(cost_n) FROM task_stats GROUP BY run"
    ).fetchall()


def _fast_totals(db: Store) -> list[tuple[Any, ...]]:
    return db.execute("SELECT run, tasks, cost_sum, cost_n FROM run_totals ORDER BY run").fetchall()


def _old_database_with_infinite_costs(tmp_path: Path, *, stop_before: str) -> Path:
    """A database filled before m016, whose costs (as an older version let them in, before costs
    over 1e12 were refused) sum to infinity in task t1."""
    path = tmp_path / "old.db"
    with open_store(path, migrate=False) as db:
        with db.transaction():
            migrations.apply(db, stop_before=stop_before)
        import_paths(db, [_write(tmp_path / "a.jsonl", _native(1), _native(2), _native(3, "t2"))])
        with db.transaction():
            db.execute("UPDATE trials SET cost_usd = 1e308")
        rebuild_task_stats(db)
        sums = dict(db.execute("SELECT task_id, cost_sum FROM task_stats").fetchall())
        assert sums == {"t1": float("inf"), "t2": 1e308}
    return path


def test_an_append_into_a_run_whose_cost_sum_is_infinite_is_not_refused(tmp_path: Path) -> None:
    """Infinity less infinity is NULL in SQLite: m016's trigger failed the append (``NOT NULL
    constraint failed: run_totals.cost_sum``) on every later import into the run."""
    path = _old_database_with_infinite_costs(tmp_path, stop_before="m016_summaries")
    with open_store(path) as db:  # migrates
        result = import_paths(db, [_write(tmp_path / "b.jsonl", _native(4), _native(5, "t3"))])
        assert not result.errors and result.files[0].added == 2
        assert _fast_totals(db) == _slow_totals(db) == [("r", 3, float("inf"), 5)]
        (run,) = list_runs(db)
        assert (run.trials, run.cost_usd) == (5, None)  # a sum beyond a float is unknown
        rebuild_task_stats(db)  # every row deleted and inserted again: the delete path
        assert _fast_totals(db) == _slow_totals(db)


def test_a_run_total_back_under_infinity_is_summed_again(tmp_path: Path) -> None:
    """Two finite task sums of 1e308 overflow the run's total; once one task is gone the total
    is finite again (infinity less 1e308 would have stayed infinite)."""
    path = _old_database_with_infinite_costs(tmp_path, stop_before="m016_summaries")
    with open_store(path) as db:
        with db.transaction():
            db.execute("UPDATE trials SET cost_usd = 1.0 WHERE task_id = 't1'")
            db.execute("DELETE FROM task_stats WHERE task_id = 't1'")
        assert _fast_totals(db) == _slow_totals(db) == [("r", 1, 1e308, 1)]


def test_a_database_migrated_by_the_first_m016_gets_the_fixed_triggers(tmp_path: Path) -> None:
    path = _old_database_with_infinite_costs(tmp_path, stop_before="m017_summary_costs")
    with open_store(path, migrate=False) as db, db.transaction():
        # the first m016's trigger: a plain subtraction
        db.execute("DROP TRIGGER task_stats_totals_update")
        db.execute(
            "CREATE TRIGGER task_stats_totals_update AFTER UPDATE ON task_stats BEGIN "
            "UPDATE run_totals SET cost_sum = cost_sum - OLD.cost_sum + NEW.cost_sum "
            "WHERE run = OLD.run; END"
        )
    with open_store(path) as db:  # m017
        sql = db.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'task_stats_totals_update'"
        ).fetchone()[0]
        assert "9e999" in sql
        result = import_paths(db, [_write(tmp_path / "b.jsonl", _native(4))])
        assert not result.errors and result.files[0].added == 1
        assert _fast_totals(db) == _slow_totals(db)


def test_a_count_of_unjudged_trials_never_straddles_another_process_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "no verdict" count was two statements (everyone, then the judged): another process's
    import of judged trials committed between them counted its trials judged but not there, and
    the trials list showed a count no state of the database ever had (here below zero)."""
    path = tmp_path / "x.db"
    with open_store(path) as db:
        import_paths(db, [_write(tmp_path / "a.jsonl", _native(1), _native(2))])
    judged = [json.loads(_native(10 + i, task="u")) for i in range(5)]
    for rec in judged:
        rec["run"] = "r2"
        rec["judge"] = {"verdict": "pass", "model": "m"}
    other_file = _write(tmp_path / "b.jsonl", *(json.dumps(r) for r in judged))
    with open_store(path) as db:
        before = count(db, TrialFilter(verdict="none"), cached=False)
        assert before == 2
        real = db.execute
        wrote: list[bool] = []

        def execute(sql: str, *args: Any) -> Any:
            cursor = real(sql, *args)
            if "run_totals" in sql and not wrote:  # the other process commits here
                wrote.append(True)
                with open_store(path) as other:
                    import_paths(other, [other_file])
            return cursor

        monkeypatch.setattr(db, "execute", execute)
        clear_cache()
        during = count(db, TrialFilter(verdict="none"), cached=False)
        assert wrote
        monkeypatch.undo()
        after = count(db, TrialFilter(verdict="none"), cached=False)
        assert after == 2
        assert during in (before, after)


def test_the_runs_screen_cost_is_the_same_cent_as_the_sum_taken_afresh(tmp_path: Path) -> None:
    """The run's total kept by adding and taking away each task's cost sum drifts from the sum
    taken afresh by a few 1e-16: at a half cent the runs screen printed $0.90 for $0.91."""
    path = tmp_path / "x.db"
    with open_store(path) as db:
        first = _write(
            tmp_path / "a.jsonl",
            _native(1, "t1", 0.1),
            _native(2, "t2", 0.1),
            _native(3, "t3", 0.7),
        )
        import_paths(db, [first])
        import_paths(db, [_write(tmp_path / "b.jsonl", _native(4, "t1", 0.005))])  # appended
        kept = db.execute("SELECT cost_sum FROM run_totals WHERE run = 'r'").fetchone()[0]
        afresh = db.execute("SELECT SUM(cost_sum) FROM task_counts WHERE run = 'r'").fetchone()[0]
        assert f"${kept:,.2f}" != f"${afresh:,.2f}"  # the drift is there
        (run,) = list_runs(db)
        assert run.cost_usd is not None
        assert f"${run.cost_usd:,.2f}" == f"${afresh:,.2f}" == "$0.91"
