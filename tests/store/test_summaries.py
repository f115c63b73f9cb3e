"""Issue 21 (a million trials): the summaries migration m016 keeps by triggers (the latest verdict
per trial and its counts, per-run totals, the covering index of per-trial numbers) equal the slow
computations they replace, on awkward data: unscored trials, infrastructure errors, graded rewards,
appended imports, re-imports, several verdicts per trial (ties, re-grades, deletions), labels, a
rebuilt task_stats, and a database filled before the migration."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from reviewer.metrics.flakiness import TaskFlakiness, attribute
from reviewer.store.db import Store, migrations, open_store
from reviewer.store.flakiness import task_sources, trial_sources
from reviewer.store.judging import VerdictWrite, write_verdict
from reviewer.store.queries import count_groups, judged_task_counts, list_runs, task_counts
from reviewer.store.summaries import take_in_verdicts, verdicts_ready
from reviewer.store.trial_list import TrialFilter, clear_cache, count
from reviewer.store.writer import rebuild_task_stats
from reviewer.workflows.imports import import_paths
from reviewer.workflows.labels import give_label
from tests.conftest import FIXTURES, native_trial, on_postgres, write_jsonl


def assert_flakiness_matches(db: Store, run: str) -> list[TaskFlakiness]:
    """The report's per-task counts (``task_sources``) are attribution's of the trials one by one:
    every source of a flaky task, the counts of every task; in the pass^k table's order (the
    first trial of each task, ``task_counts``); attribution's."""
    slow = sorted(attribute(trial_sources(db, run)), key=lambda t: t.task_id)
    counted = [TaskFlakiness(*row) for row in task_sources(db, run)]
    assert [t.task_id for t in counted] == [
        task for task, _, _ in task_counts(db, run) if task in {t.task_id for t in slow}
    ]
    counted.sort(key=lambda t: t.task_id)
    assert [t for t in counted if t.flaky] == [t for t in slow if t.flaky], run
    assert [(t.task_id, t.trials, t.passed, t.infra) for t in counted] == [
        (t.task_id, t.trials, t.passed, t.infra) for t in slow
    ], run
    assert not [t for t in counted if not t.flaky and t.judge + t.rule + t.agent], run
    return slow


CRASHED = FIXTURES / "tau_bench" / "deepseek-v3-crashed.json"

# --- the slow computations, as they were before m016 (the reference) ------------------------------

SLOW_LATEST = (
    "SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at "
    "FROM latest_trial_verdicts v JOIN trials t ON t.id = v.trial_id ORDER BY t.seq"
)
SLOW_RUNS = """
    SELECT r.name, COUNT(s.task_id), COALESCE(SUM(s.n), 0), COALESCE(SUM(s.c), 0),
           CASE WHEN SUM(s.cost_n) > 0 THEN SUM(s.cost_sum) END,
           COALESCE(SUM(s.infra), 0), COALESCE(SUM(s.unscored), 0)
    FROM runs r LEFT JOIN task_counts s ON s.run = r.name
    GROUP BY r.name ORDER BY r.imported_at, r.name
"""
SLOW_GROUPS = "SELECT n, c, COUNT(*) FROM task_counts WHERE run = ? GROUP BY n, c ORDER BY n, c"
SLOW_SOURCES = """
    SELECT t.id, t.task_id, t.outcome,
           (SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id
            AND v.verdict IN ('pass', 'fail')),
           (SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id
            AND l.verdict IN ('pass', 'fail'))
    FROM trials t WHERE t.run = ? ORDER BY t.seq
"""
SLOW_JUDGED = """
    SELECT task_id, SUM(o IN ('pass', 'fail') OR (o = 'infra' AND ? = 1)), SUM(o = 'pass') FROM (
        SELECT t.task_id, t.seq,
               CASE WHEN t.outcome = 'infra' THEN 'infra'
                    ELSE COALESCE((SELECT v.verdict FROM latest_trial_verdicts v
                                   WHERE v.trial_id = t.id AND v.verdict IN ('pass', 'fail')),
                                  t.outcome) END AS o
        FROM trials t WHERE t.run = ?)
    GROUP BY task_id ORDER BY MIN(seq)
"""


def slow_count(db: Store, run: str | None, outcome: str | None, verdict: str) -> int:
    where, params = ["1"], []
    if run is not None:
        where.append("t.run = ?")
        params.append(run)
    if outcome is not None:
        where.append("t.outcome = ?")
        params.append(outcome)
    if verdict == "none":
        where.append("NOT EXISTS (SELECT 1 FROM latest_trial_verdicts v WHERE v.trial_id = t.id)")
    else:
        where.append("(SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id) = ?")
        params.append(verdict)
    sql = f"SELECT COUNT(*) FROM trials t WHERE {' AND '.join(where)}"
    return int(db.execute(sql, params).fetchone()[0])


# --- awkward data -----------------------------------------------------------------------------------


def _trial(task: str, trial: int, kind: str, run: str = "r1") -> dict[str, Any]:
    """A native trial: pass, fail, a graded reward, or no outcome at all (unscored)."""
    rec = native_trial(task, run=run, trial=trial)
    rec["usage"] = {"input_tokens": 100 + trial, "cost_usd": 0.1 * trial + 0.01}
    rec["latency_s"] = 1.5 * trial
    if kind == "pass":
        rec["judge"] = {"verdict": "fail", "model": "m"}  # the judge disagrees
    elif kind == "fail":
        rec["outcome"] = {"passed": False}
        rec["judge"] = {"verdict": "pass", "model": "m"}
    elif kind == "graded":
        rec["outcome"] = {"reward": 0.5 if trial % 2 else 1.0}
    else:
        rec["outcome"] = None
        if trial % 2:
            rec["judge"] = {"verdict": "error", "model": "m"}
    return rec


def _tau(task: int, trial: int, crash: bool) -> dict[str, Any]:
    if crash:
        return {**json.loads(CRASHED.read_text())[0], "task_id": task, "trial": trial}
    return {
        "task_id": task,
        "trial": trial,
        "reward": 1.0 if trial % 2 else 0.0,
        "info": {"reward_info": {"reward": 1.0, "info": {}}},
        "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "done"}],
    }


def _verdict(db: Store, trial_id: str, judge: str, verdict: str) -> None:
    with db.transaction():
        write_verdict(
            db,
            VerdictWrite(
                trial_id, judge, verdict, "why", "m", "r@1", 1, 1, 0.001, "{}", "judge", "k", 0.2
            ),
        )


def fill(tmp_path: Path, db: Store, labels: bool = True) -> None:
    """Several runs, appended and re-imported files, verdicts of several judges, labels (a
    database stopped before a migration that the label writer needs takes none)."""
    kinds = ["pass", "fail", "graded", "unscored"]
    first = [_trial(f"t{i % 5}", i // 5 + 1, kinds[i % 4]) for i in range(20)]
    import_paths(db, [str(write_jsonl(tmp_path / "a.jsonl", first))])
    # appended: the same tasks get more trials (task_stats rows updated, not inserted)
    more = [_trial(f"t{i % 5}", 10 + i, kinds[(i + 1) % 4]) for i in range(12)]
    import_paths(db, [str(write_jsonl(tmp_path / "b.jsonl", more))])
    import_paths(db, [str(tmp_path / "a.jsonl")])  # re-imported: nothing new
    other = [_trial(f"u{i % 3}", i + 1, kinds[i % 4], run="r2") for i in range(9)]
    import_paths(db, [str(write_jsonl(tmp_path / "c.jsonl", other))])
    tau = [_tau(t, i, crash=(t + i) % 3 == 0) for t in range(3) for i in range(3)]
    (tmp_path / "tau.json").write_text(json.dumps(tau))
    import_paths(db, [str(tmp_path / "tau.json")], run="r3")
    ids = [r[0] for r in db.execute("SELECT id FROM trials ORDER BY seq").fetchall()]
    for i, tid in enumerate(ids):
        if i % 3 == 0:
            _verdict(db, tid, "judge-a", "pass" if i % 2 else "fail")
        if i % 4 == 0:
            _verdict(db, tid, "judge-b", "error" if i % 8 else "pass")
    for tid in ids[::5]:  # re-graded in place: the UPDATE path
        _verdict(db, tid, "judge-a", "fail")
    with db.transaction():
        # two verdicts at the same time on one trial: the greater id is the latest (as they
        # arrive, and when the trial's latest is worked out again after a deletion)
        for tid in (ids[1], ids[6]):
            for judge, verdict, at in (
                ("tie-1", "pass", "2999-01-01T00:00:00"),
                ("tie-2", "fail", "2999-01-01T00:00:00"),
                ("older", "pass", "2998-01-01T00:00:00"),
                ("newest", "error", "3000-01-01T00:00:00"),
            ):
                if judge == "newest" and tid == ids[1]:
                    continue
                db.execute(
                    "INSERT INTO verdicts (trial_id, judge, verdict, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    [tid, judge, verdict, at],
                )
        take_in_verdicts(db)  # as every writer of verdicts does
    with db.transaction():
        db.execute("DELETE FROM verdicts WHERE trial_id = ? AND judge = 'newest'", [ids[6]])
        take_in_verdicts(db)
    if "trial_verdicts" in db.table_names():  # (not in a database filled before m016)
        latest = "SELECT seq, verdict_id, verdict FROM trial_verdicts ORDER BY seq"
        slow = [r[:1] + r[3:5] for r in db.execute(SLOW_LATEST).fetchall()]
        assert db.execute(latest).fetchall() == slow
    with db.transaction():
        # deleted: the trial falls back to its earlier verdict, or to none
        db.execute("DELETE FROM verdicts WHERE trial_id = ? AND judge = 'judge-b'", [ids[4]])
        db.execute("DELETE FROM verdicts WHERE trial_id = ?", [ids[8]])
        # moved to another trial
        db.execute(
            "UPDATE verdicts SET trial_id = ? WHERE trial_id = ? AND judge = 'judge-a'",
            [ids[2], ids[3]],
        )
        take_in_verdicts(db)
    for i, tid in enumerate(ids[:12] if labels else []):
        give_label(db, tid, "ann", ["pass", "fail", "skip"][i % 3])


def assert_summaries_true(db: Store) -> None:
    assert verdicts_ready(db)
    fast = db.execute(
        "SELECT seq, run, outcome, verdict_id, verdict, created_at FROM trial_verdicts ORDER BY seq"
    ).fetchall()
    assert fast == db.execute(SLOW_LATEST).fetchall()
    counts = db.execute(
        "SELECT run, outcome, verdict, n FROM verdict_counts WHERE n > 0 ORDER BY 1, 2, 3"
    ).fetchall()
    assert (
        counts
        == db.execute(
            "SELECT t.run, t.outcome, v.verdict, COUNT(*) FROM latest_trial_verdicts v "
            "JOIN trials t ON t.id = v.trial_id GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        ).fetchall()
    )
    slow_runs = db.execute(SLOW_RUNS).fetchall()
    runs = list_runs(db)
    assert [(r.name, r.tasks, r.trials, r.passed, r.infra, r.unscored) for r in runs] == [
        (name, tasks, n, c, infra, unscored) for name, tasks, n, c, _, infra, unscored in slow_runs
    ]
    for r, slow in zip(runs, slow_runs, strict=True):
        # a sum kept by adding each task's sum as it changes: equal to the cent, within 1e-9
        assert (r.cost_usd is None) == (slow[4] is None)
        if r.cost_usd is not None:
            assert f"${r.cost_usd:,.2f}" == f"${slow[4]:,.2f}"
            assert math.isclose(r.cost_usd, slow[4], rel_tol=1e-9, abs_tol=1e-12)
        assert count_groups(db, r.name) == [
            tuple(g) for g in db.execute(SLOW_GROUPS, [r.name]).fetchall()
        ]
        sources = [
            (str(row[1]), str(row[2]), row[3], row[4])
            for row in db.execute(SLOW_SOURCES, [r.name]).fetchall()
        ]
        assert [(t, o, j, h) for t, o, _, j, h in trial_sources(db, r.name)] == sources
        # the report's one-pass counts are what attribution makes of the trials one by one
        assert_flakiness_matches(db, r.name)
        for infra in (False, True):
            slow = [
                (str(a), int(b or 0), int(c or 0))
                for a, b, c in db.execute(SLOW_JUDGED, [int(infra), r.name]).fetchall()
            ]
            assert judged_task_counts(db, r.name, "judge", infra) == slow
    clear_cache()
    for run in (None, *(r.name for r in runs)):
        for outcome in (None, "pass", "fail", "infra", "unscored"):
            for verdict in ("pass", "fail", "error", "none"):
                f = TrialFilter(run=run, outcome=outcome, verdict=verdict)  # type: ignore[arg-type]
                assert count(db, f, cached=False) == slow_count(db, run, outcome, verdict), f
    for outcome in (None, "pass", "fail", "infra", "unscored"):
        f = TrialFilter(outcome=outcome)  # type: ignore[arg-type]
        where = "1" if outcome is None else f"outcome = '{outcome}'"
        n = db.execute(f"SELECT COUNT(*) FROM trials WHERE {where}").fetchone()[0]
        assert count(db, f, cached=False) == n


def test_summaries_equal_the_slow_computations_on_awkward_data(tmp_path: Path) -> None:
    with open_store(tmp_path / "x.db") as db:
        fill(tmp_path, db)
        outcomes = {r[0] for r in db.execute("SELECT outcome FROM trials").fetchall()}
        assert outcomes == {"pass", "fail", "infra", "unscored"}  # the data is as awkward as said
        several = db.execute(
            "SELECT MAX(k) FROM (SELECT COUNT(*) AS k FROM verdicts GROUP BY trial_id)"
        ).fetchone()[0]
        assert several >= 3
        assert_summaries_true(db)
        # flakiness on the fast path sees the judge and the labels as before
        assert any(t.judge for t in attribute(trial_sources(db, "r1")))


def test_summaries_stay_true_after_task_stats_is_rebuilt(tmp_path: Path) -> None:
    with open_store(tmp_path / "x.db") as db:
        fill(tmp_path, db)
        rebuild_task_stats(db)  # every task_stats row deleted and inserted again
        assert_summaries_true(db)


def test_summaries_follow_a_trial_whose_outcome_changes(tmp_path: Path) -> None:
    """Trials are only ever added today; a writer that changes an outcome (and rebuilds the
    per-task counts, as any writer of trials must) leaves the verdict counts true as well."""
    with open_store(tmp_path / "x.db") as db:
        fill(tmp_path, db)
        with db.transaction():
            db.execute(
                "UPDATE trials SET outcome = CASE outcome WHEN 'pass' THEN 'fail' ELSE 'pass' END, "
                "success = 1 - success WHERE seq IN (SELECT seq FROM trial_verdicts) AND seq % 2 = 1"
            )
        rebuild_task_stats(db)
        assert_summaries_true(db)


def test_a_verdict_written_without_take_in_reads_from_the_view_until_taken_in(
    tmp_path: Path,
) -> None:
    with open_store(tmp_path / "x.db") as db:
        fill(tmp_path, db)
        ids = [r[0] for r in db.execute("SELECT id FROM trials ORDER BY seq").fetchall()]
        with db.transaction():  # a writer that does not call take_in_verdicts
            for tid in ids[:7]:
                db.execute(
                    "INSERT INTO verdicts (trial_id, judge, verdict, created_at) "
                    "VALUES (?, 'late', 'error', '3001-01-01T00:00:00')",
                    [tid],
                )
        assert not verdicts_ready(db)
        clear_cache()
        for verdict in ("pass", "fail", "error", "none"):
            f = TrialFilter(verdict=verdict)  # type: ignore[arg-type]
            assert count(db, f, cached=False) == slow_count(db, None, None, verdict)
            f = TrialFilter(run="r1", outcome="fail", verdict=verdict)  # type: ignore[arg-type]
            assert count(db, f, cached=False) == slow_count(db, "r1", "fail", verdict)
        sources = [
            (str(row[1]), str(row[2]), row[3], row[4])
            for row in db.execute(SLOW_SOURCES, ["r1"]).fetchall()
        ]
        assert [(t, o, j, h) for t, o, _, j, h in trial_sources(db, "r1")] == sources
        take_in_verdicts(db)  # outside a transaction: its own savepoint, committed
        assert not db.conn.in_transaction
        assert_summaries_true(db)
        with open_store(tmp_path / "x.db") as other:  # committed: another connection sees it
            assert verdicts_ready(other)


@pytest.mark.sqlite_only  # a SQLite file migrated from before m016 (PostgreSQL's schema is whole)
def test_migration_fills_summaries_from_a_database_written_before_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with open_store(path, migrate=False) as db:
        with db.transaction():
            migrations.apply(db, stop_before="m016_summaries")
        fill(tmp_path, db, labels=False)  # labels now carry m018's tag column
        assert "trial_verdicts" not in db.table_names()
    with open_store(path) as db:  # migrates
        assert "trial_verdicts" in db.table_names()
        assert db.execute("SELECT COUNT(*) FROM trial_verdicts").fetchone()[0] > 0
        assert_summaries_true(db)


@pytest.mark.parametrize("run", ["r1", "r2"])
def test_report_numbers_are_read_from_the_covering_index(tmp_path: Path, run: str) -> None:
    with open_store(tmp_path / "x.db") as db:
        fill(tmp_path, db)
        query = (
            "SELECT id, task_id, success, steps, cost_usd, latency_s, tool_calls, tool_errors, "
            "outcome FROM trials WHERE run = ? ORDER BY seq"
        )
        if on_postgres():
            # a table this small is read whole unless told not to; an index-only scan is one
            # that finds every column in the index
            db.execute("SET enable_seqscan = off")
            plan = " ".join(str(r[0]) for r in db.execute(f"EXPLAIN {query}", [run]).fetchall())
            db.execute("RESET enable_seqscan")
            assert "Index Only Scan using trials_metrics" in plan
            return
        plan = " ".join(
            str(r[-1]) for r in db.execute(f"EXPLAIN QUERY PLAN {query}", [run]).fetchall()
        )
        assert "COVERING INDEX trials_metrics" in plan


# Folded in from tests/test_summaries_defects.py:
# Defects found in the m016 summaries (reviewer.store.summaries and their readers), each against the
# computation from scratch it replaces.


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
    over 1e12 were refused) sum to infinity in task t1. On PostgreSQL (no older schema to migrate
    from: its schema is made whole) a database of today's schema, given the same costs (as
    `reviewer copy` of such a SQLite file brings them)."""
    path = tmp_path / "old.db"
    with open_store(path, migrate=on_postgres()) as db:
        if not on_postgres():
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


@pytest.mark.sqlite_only  # SQLite's m017 replacing a SQLite file's triggers (sqlite_master)
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


def test_flakiness_counted_in_one_pass_matches_attribution_on_the_sample_runs(
    sample_db: Path,
) -> None:
    """On the sample runs (judge verdicts, broken rules), a crashed tau-bench run (infrastructure
    errors) and labels that overrule the judge both ways (skips too), the report's one-pass
    per-task counts are attribution's, source by source."""
    with open_store(sample_db) as db:
        import_paths(db, [str(CRASHED)], run="crashed")
        failed = [
            r[0]
            for r in db.execute(
                "SELECT id FROM trials WHERE outcome = 'fail' ORDER BY seq LIMIT 40"
            ).fetchall()
        ]
        for i, tid in enumerate(failed):
            give_label(db, tid, "ana", ("pass", "fail", "skip")[i % 3])
        seen = {"judge": 0, "rule": 0, "agent": 0, "infra": 0}
        for run in [r.name for r in list_runs(db)]:
            slow = assert_flakiness_matches(db, run)
            for t in slow:
                seen["infra"] += t.infra
                for source in ("judge", "rule", "agent"):
                    seen[source] += getattr(t, source) if t.flaky else 0
    assert all(seen.values()), seen  # every source was there to count (in flaky tasks)


class _CountingConn:
    """A connection that counts the task_stats rows written (``executemany`` of the upsert)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.task_rows = 0

    def executemany(self, sql: str, rows: Any) -> Any:
        rows = list(rows)
        if sql.startswith("INSERT INTO task_stats"):
            self.task_rows += len(rows)
        return self._conn.executemany(sql, rows)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def test_a_file_writes_each_task_s_row_once_however_its_trials_interleave(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A harness writes trial 1 of every task, then trial 2...: each batch of the file holds every
    task. Its task_stats row (and by trigger its run's totals row) is written once for the file,
    not once a batch: on PostgreSQL a row updated thousands of times in one transaction makes
    each further update slower (30,000 such trials imported in 92 s, SQLite 6 s; found by an
    attack on `reviewer import --db postgresql://...`)."""
    from reviewer.workflows import import_files

    monkeypatch.setattr(import_files, "BATCH", 3)
    tasks = [f"t{i}" for i in range(3)]
    records = [
        native_trial(t, passed=(k + i) % 2 == 0, trial=k + 1)
        for k in range(8)
        for i, t in enumerate(tasks)
    ]
    path = write_jsonl(tmp_path / "interleaved.jsonl", records)
    with open_store(tmp_path / "x.db") as db:
        spy = _CountingConn(db.conn)
        monkeypatch.setattr(db, "conn", spy)
        import_paths(db, [path])
        monkeypatch.undo()
        assert spy.task_rows == len(tasks)  # was 24: each of the 8 batches wrote all 3 tasks
        rows = db.execute("SELECT task_id, n, c FROM task_stats ORDER BY task_id").fetchall()
        assert [tuple(r) for r in rows] == [("t0", 8, 4), ("t1", 8, 4), ("t2", 8, 4)]
        assert_summaries_true(db)
