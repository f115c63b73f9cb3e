"""Judge replies that cannot be stored (a full disk, a database another process keeps locked) are
paid for: they count against the cap, stop the run within a few requests with one line, and are
kept in a side file that the next run stores before it sends anything."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge import sinks
from reviewer.judge.pending import load, pending_path, room_path, shown_path
from reviewer.judge.standin import StandIn
from reviewer.store.db import Store, open_store
from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials
from tests.support.writer_lock import HeldWriteLock, hold_write_lock

JUDGE = "claude-sonnet-4-5/v1/task-success@builtin-1"


def _judged(db: Store) -> int:
    return db.execute("SELECT COUNT(*) FROM verdicts WHERE judge = ?", [JUDGE]).fetchone()[0]


def _full_disk(*args: Any, **kw: Any) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def test_replies_on_a_full_disk_are_counted_kept_and_stored_by_the_next_run(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as mp, pytest.raises(JudgeFailed) as err:
        mp.setattr(sinks, "write_verdict", _full_disk)
        judge_trials(db, JudgeRequest(overrides={"concurrency": 4, "max_cost": 0.25}))
    line = str(err.value)
    assert line.startswith("cannot store judge replies: disk full (database or disk is full)")
    sent = standin.message_requests
    assert 1 <= sent <= 8  # stopped within a few requests, not all 40
    kept_in = shown_path(pending_path(db))  # type: ignore[arg-type]
    assert "\n" not in line and f"{sent} replies kept in {kept_in}" in line
    kept, bad = load(pending_path(db))  # type: ignore[arg-type]
    assert len(kept) == sent and bad == 0
    spent = sum(o.cost_usd or 0 for o in kept)
    assert spent > 0 and f"${spent:.4f} spent this run" in line
    assert _judged(db) == 0
    notes: list[str] = []
    result = judge_trials(db, JudgeRequest(), on_note=notes.append)
    assert notes[0] == f"stored {sent} judge replies an earlier run kept in {kept_in}"
    assert standin.message_requests == 40  # the kept replies were not paid for twice
    assert result.stats is not None and result.stats.cached == sent
    assert _judged(db) == 40
    assert not pending_path(db).exists()  # type: ignore[union-attr]


def test_the_cost_cap_counts_replies_that_could_not_be_stored(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.runner import JudgeAbort, Runner
    from reviewer.judge.settings import JudgeSettings
    from reviewer.store.judging import select_trials

    async def no_sleep(s: float) -> None:
        return None

    monkeypatch.setattr(sinks, "write_verdict", _full_disk)
    settings = JudgeSettings(concurrency=2, max_cost=0.25)
    runner = Runner(db, settings, sleep=no_sleep)
    ids = select_trials(db, ["support-v1"])
    with pytest.raises(JudgeAbort):
        runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
    kept, _ = load(pending_path(db))  # type: ignore[arg-type]
    assert runner.stats.cost_usd == pytest.approx(sum(o.cost_usd or 0 for o in kept))
    assert runner.stats.cost_usd > 0 and runner.stats.unstored == len(kept)


def test_a_database_locked_by_another_process_stops_the_run_and_keeps_the_replies(
    db_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_LOCK_TIMEOUT", "0.1")  # a writer waits this long for the lock
    db = open_store(db_path)
    if db.dialect == "sqlite":  # a statement waits 50 ms for another connection's lock
        db.execute("PRAGMA busy_timeout=50")
    held: list[HeldWriteLock] = []

    def lock_after_two(stats: Any, outcome: Any) -> None:
        if stats.done == 2 and not held:
            held.append(hold_write_lock(db_path))  # another writer holds the lock from now on

    try:
        with pytest.raises(JudgeFailed) as err:
            judge_trials(db, JudgeRequest(overrides={"concurrency": 3}), on_progress=lock_after_two)
    finally:
        for other in held:
            other.release()
    line = str(err.value)
    assert line.startswith("cannot store judge replies: the database is locked by another process")
    sent = standin.message_requests
    assert 3 <= sent <= 6
    # replies arriving together are stored in one transaction: the lock came after the second
    # was stored, so at least two and not every one sent
    stored = _judged(db)
    assert 2 <= stored < sent
    kept, _ = load(pending_path(db))  # type: ignore[arg-type]
    assert len(kept) == sent - stored
    db.close()
    # the lock is gone: the next run stores the kept replies first and pays only for the rest
    r = CliRunner().invoke(cli, ["--db", str(db_path), "judge"])
    assert r.exit_code == 0, r.output
    assert f"stored {sent - stored} judge replies an earlier run kept" in r.stderr
    assert standin.message_requests == 40
    with open_store(db_path) as again:
        assert _judged(again) == 40


def test_kept_replies_that_still_cannot_be_stored_are_one_line(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sinks, "write_verdict", _full_disk)
    with pytest.raises(JudgeFailed):
        judge_trials(db, JudgeRequest(limit=2))
    sent = standin.message_requests
    with pytest.raises(JudgeFailed) as err:
        judge_trials(db, JudgeRequest(limit=2))
    assert str(err.value) == (
        "cannot store judge replies: disk full (database or disk is full); the replies of an "
        f"earlier run still wait in {shown_path(pending_path(db))}"  # type: ignore[arg-type]
    )
    assert standin.message_requests == sent  # nothing sent while replies wait


def test_room_is_set_aside_for_kept_replies_while_requests_are_out(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = room_path(db)
    assert room is not None
    seen: list[int] = []

    def watch(stats: Any, outcome: Any) -> None:
        seen.append(room.stat().st_size if room.exists() else 0)

    judge_trials(db, JudgeRequest(limit=3), on_progress=watch)
    assert seen and all(size > 0 for size in seen)  # disk the side file can use on a full disk
    assert not room.exists()
    with monkeypatch.context() as mp, pytest.raises(JudgeFailed):
        mp.setattr(sinks, "write_verdict", _full_disk)
        judge_trials(db, JudgeRequest(limit=6))
    assert not room.exists() and pending_path(db).exists()  # type: ignore[union-attr]


def test_a_long_retry_after_is_one_line_in_the_cli(db_path: Path, standin: StandIn) -> None:
    from reviewer.judge.standin import error_reply

    standin.policy = lambda p: error_reply(429, "rate_limit_error", "slow", {"retry-after": "3600"})
    r = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--max-wait", "30"])
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1] == (
        "reviewer: the API asks to wait 3600 s before the next request (429), longer than the "
        "30 s allowed (--max-wait / [judge] max_wait_s); stopped, run again later"
    )
