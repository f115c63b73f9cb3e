"""Two `reviewer judge` processes on one database: a request being sent is claimed, the other
process skips it and says so; a claim whose process died is taken over."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from reviewer.judge.claims import CLAIM_TTL_S
from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.runner import Runner, RunStats
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import StandIn
from reviewer.store.db import Store, open_store
from reviewer.store.judging import select_trials
from reviewer.workflows.judge import summary_line


def _run(db: Store, **kw: Any) -> RunStats:
    settings = JudgeSettings(**{"concurrency": 3, **kw})
    ids = select_trials(db, ["support-v1"])
    return Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))


def _keys(db: Store) -> list[str]:
    settings = JudgeSettings()
    ids = select_trials(db, ["support-v1"])
    return [j.key for j in verdict_jobs(db, ids, BUILTIN_RUBRIC, settings)]


def _plant(db: Store, key: str, owner: str, expires_at: float) -> None:
    db.execute(
        "INSERT INTO judge_claims (key, owner, expires_at) VALUES (?, ?, ?)",
        [key, owner, expires_at],
    )
    db.conn.commit()


def test_two_runners_on_one_database_send_each_request_once(
    db_path: Path, standin: StandIn
) -> None:
    standin.delay = 0.01
    results: list[RunStats] = []
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def worker() -> None:
        try:
            with open_store(db_path) as db:
                start.wait()
                results.append(_run(db))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert standin.message_requests == 40  # not 80: one request per trial
    assert sum(r.requests for r in results) == 40
    with open_store(db_path) as db:
        n = db.execute("SELECT COUNT(DISTINCT trial_id) FROM verdicts WHERE source LIKE 'judge%'")
        assert n.fetchone()[0] == 40
        assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0


def test_a_claimed_request_is_skipped_and_said(db: Store, standin: StandIn) -> None:
    key = _keys(db)[0]
    _plant(db, key, "elsewhere:1:abc", time.time() + CLAIM_TTL_S)
    stats = _run(db)
    assert stats.skipped_claimed == 1 and stats.done == 39
    assert standin.message_requests == 39
    assert "1 skipped: another process is judging them" in summary_line("j", stats)


def test_an_expired_claim_is_taken_over(db: Store, standin: StandIn) -> None:
    key = _keys(db)[0]
    _plant(db, key, "elsewhere:1:abc", time.time() - 1)
    stats = _run(db)
    assert stats.skipped_claimed == 0 and stats.done == 40


def test_a_claim_of_a_killed_process_on_this_host_is_taken_over(
    db: Store, standin: StandIn
) -> None:
    import socket
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = int(proc.stdout)
    key = _keys(db)[0]
    _plant(db, key, f"{socket.gethostname()}:{dead}:abc", time.time() + CLAIM_TTL_S)
    stats = _run(db)
    assert stats.skipped_claimed == 0 and stats.done == 40
