"""Pair sampling for the position-bias re-run: reproducible under a seed, both modes, fair a / b."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from reviewer.judge.pairs import make_pair_id, sample_pairs
from reviewer.store import open_store
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl

TASKS = [f"task{i}" for i in range(6)]


def trial(run: str, task: str, no: int, passed: bool, verdict: str | None = None) -> dict[str, Any]:
    extra: dict[str, Any] = {"run": run, "trial": no}
    if verdict is not None:
        extra["judge"] = {"verdict": verdict, "model": "m"}
    rec = native_trial(task, passed=passed, **extra)
    rec["messages"][-1]["content"] = f"{run} {task} {no}"  # distinct records, distinct ids
    return rec


@pytest.fixture
def db(tmp_path: Path) -> sqlite_utils.Database:
    records = []
    for run in ("old", "new"):
        for task in TASKS:
            for no in range(1, 5):
                records.append(trial(run, task, no, passed=no % 2 == 0))
    # a task whose trials all passed by outcome, but the judge failed one: the verdict decides
    records += [
        trial("old", "judged", 1, passed=True, verdict="pass"),
        trial("old", "judged", 2, passed=True, verdict="fail"),
        trial("old", "judged", 3, passed=True, verdict="error"),  # error: falls back to outcome
    ]
    # a task with passes only: no pass/fail pair
    records += [trial("old", "all-pass", no, passed=True) for no in (1, 2)]
    database = open_store(tmp_path / "s.db")
    summary = import_paths(database, [write_jsonl(tmp_path / "runs.jsonl", records)])
    assert summary.added == len(records)
    return database


def side_of(db: sqlite_utils.Database, trial_id: str) -> tuple[str, str, bool, str | None]:
    row = db.execute(
        "SELECT t.run, t.task_id, t.success, (SELECT verdict FROM verdicts v WHERE v.trial_id = t.id) "
        "FROM trials t WHERE t.id = ?",
        [trial_id],
    ).fetchone()
    return row[0], row[1], bool(row[2]), row[3]


def judged_pass(db: sqlite_utils.Database, trial_id: str) -> bool:
    _, _, success, verdict = side_of(db, trial_id)
    return verdict == "pass" if verdict in ("pass", "fail") else success


def test_same_seed_same_pairs_other_seed_other_pairs(db: sqlite_utils.Database) -> None:
    first = sample_pairs(db, 10, seed=3)
    assert first == sample_pairs(db, 10, seed=3)
    assert first != sample_pairs(db, 10, seed=4)
    # a smaller sample is the start of a larger one
    assert sample_pairs(db, 4, seed=3) == first[:4]


def test_pass_fail_pairs_one_judged_pass_and_one_judged_fail(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 100, seed=1)
    for p in got:
        a_run, a_task, _, _ = side_of(db, p.a_trial)
        _, b_task, _, _ = side_of(db, p.b_trial)
        assert a_task == b_task == p.task_id
        assert {judged_pass(db, p.a_trial), judged_pass(db, p.b_trial)} == {True, False}
    tasks = {p.task_id for p in got}
    assert "all-pass" not in tasks and "judged" in tasks
    judged = [p for p in got if p.task_id == "judged"]
    assert len(judged) == 1  # trial 2 (judged fail) with trial 1 or 3 (pass)
    # every trial in at most one pair; 6 tasks x 8 trials (4 pass, 4 fail) give 4 pairs each
    used = [t for p in got for t in (p.a_trial, p.b_trial)]
    assert len(used) == len(set(used))
    assert len(got) == 6 * 4 + 1


def test_a_is_not_always_the_pass(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 100, seed=0)
    a_passes = sum(judged_pass(db, p.a_trial) for p in got)
    assert 0 < a_passes < len(got)


def test_small_samples_spread_over_tasks(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 7, seed=2)
    assert len({p.task_id for p in got}) == 7  # one per task before a second from any


def test_verdicts_of_one_judge(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 100, seed=0, judge="no-such-judge")
    # without that judge's verdicts every trial falls back to its outcome: "judged" has no fail
    assert "judged" not in {p.task_id for p in got}


def test_runs_mode_pairs_the_same_task_from_two_runs(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 100, seed=5, runs=("old", "new"))
    assert len(got) == 6 * 4
    for p in got:
        runs = {side_of(db, p.a_trial)[0], side_of(db, p.b_trial)[0]}
        assert runs == {"old", "new"}
    assert 0 < sum(side_of(db, p.a_trial)[0] == "old" for p in got) < len(got)
    assert got == sample_pairs(db, 100, seed=5, runs=("old", "new"))


def test_pair_ids_are_stable_and_depend_on_mode_and_order(db: sqlite_utils.Database) -> None:
    got = sample_pairs(db, 100, seed=1)
    assert len({p.pair_id for p in got}) == len(got)
    p = got[0]
    assert p.pair_id == make_pair_id("pass-fail", p.a_trial, p.b_trial)
    assert make_pair_id("runs", p.a_trial, p.b_trial) != p.pair_id
    assert make_pair_id("pass-fail", p.b_trial, p.a_trial) != p.pair_id


def test_edges(db: sqlite_utils.Database) -> None:
    assert sample_pairs(db, 0) == []
    assert sample_pairs(db, 5, runs=("old", "nowhere")) == []
    with pytest.raises(ValueError, match="differ"):
        sample_pairs(db, 5, runs=("old", "old"))
    with pytest.raises(ValueError):
        sample_pairs(db, -1)


def test_sampled_pairs_stored_order_by_order_and_reported(db: sqlite_utils.Database) -> None:
    from reviewer.judge.bias import bias_report
    from reviewer.store.pairs import get_pair, pair_rows, record_order

    got = sample_pairs(db, 3, seed=0)
    winners = [("a", "a"), ("a", "b"), (None, "tie")]
    for p, (ab, ba) in zip(got, winners, strict=True):
        for order, winner in (("ab", ab), ("ba", ba)):
            record_order(
                db,
                pair_id=p.pair_id,
                judge="m/v1/pair",
                order=order,
                winner=winner,
                rationale=f"{order} says {winner}",
                task_id=p.task_id,
                a_trial=p.a_trial,
                b_trial=p.b_trial,
            )
    db.conn.commit()
    stored = get_pair(db, got[1].pair_id, "m/v1/pair")
    assert stored is not None
    assert (stored.order_ab, stored.order_ba, stored.source) == ("a", "b", "judge")
    assert (stored.rationale_ab, stored.rationale_ba) == ("ab says a", "ba says b")
    assert (stored.a_trial, stored.b_trial) == (got[1].a_trial, got[1].b_trial)
    # a re-run of one order replaces that order only
    record_order(
        db,
        pair_id=got[1].pair_id,
        judge="m/v1/pair",
        order="ba",
        winner="a",
        rationale="again",
        task_id=got[1].task_id,
        a_trial=got[1].a_trial,
        b_trial=got[1].b_trial,
    )
    again = get_pair(db, got[1].pair_id, "m/v1/pair")
    assert again is not None and (again.order_ab, again.order_ba) == ("a", "a")
    (j,) = bias_report(pair_rows(db)).judges
    assert j.counts["consistent"] == 2 and j.counts["error"] == 1
    with pytest.raises(ValueError):
        record_order(
            db,
            pair_id="x",
            judge="j",
            order="ab",
            winner="A",
            rationale=None,
            task_id=None,
            a_trial="1",
            b_trial="2",
        )
