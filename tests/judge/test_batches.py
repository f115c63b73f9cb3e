"""Message Batches that go wrong: a batch the API forgot, a 5xx while collecting, batches too large
in bytes, and requests that errored for a passing reason or expired."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge import batch
from reviewer.judge.standin import StandIn, error_reply
from reviewer.store.db import Store, open_store
from reviewer.workflows.judge import JudgeRequest, judge_trials

JUDGE = "claude-sonnet-4-5/v1/task-success@builtin-1"


def invoke(db_path: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db_path), "judge", *args])


def _collect(db: Store) -> list[str]:
    notes: list[str] = []
    judge_trials(db, JudgeRequest(collect_only=True), on_note=notes.append)
    return notes


def _verdicts(db: Store) -> list[tuple[str, str]]:
    rows = db.execute(
        "SELECT verdict, rationale FROM verdicts WHERE judge = ? ORDER BY trial_id", [JUDGE]
    )
    return [(r[0], r[1]) for r in rows.fetchall()]


def test_a_batch_the_api_no_longer_knows_is_marked_and_its_requests_sent_again(
    db_path: Path, standin: StandIn
) -> None:
    assert invoke(db_path, "--limit", "4", "--batch").exit_code == 0
    standin.batches.clear()  # the API forgot it (expired from its records)
    r = invoke(db_path, "--collect")
    assert r.exit_code == 0, r.output
    assert "batch msgbatch_0001: the API no longer knows it (the Batches API answered 404" in (
        r.stderr
    )
    assert "its 4 requests will be sent again by the next run" in r.stderr
    r = invoke(db_path, "--limit", "4", "--json")
    assert r.exit_code == 0, r.output  # not exit 1 on every later run
    assert standin.message_requests == 4
    with open_store(db_path) as db:
        status = db.execute("SELECT status FROM judge_batches").fetchone()[0]
        assert status == "unknown"
        assert len(_verdicts(db)) == 4


def test_a_5xx_while_collecting_leaves_the_batch_for_later(db_path: Path, standin: StandIn) -> None:
    assert invoke(db_path, "--limit", "3", "--batch").exit_code == 0
    boom = error_reply(500, "api_error", "boom", {"retry-after-ms": "1"})
    standin.batch_script = [boom] * 5  # every try of one request (1 + max_retries 4)
    r = invoke(db_path, "--collect")
    assert r.exit_code == 0, r.output
    assert "batch msgbatch_0001: the Batches API answered 500: boom; collect later" in r.stderr
    # a direct run meanwhile does not pay again for the requests waiting in the batch
    standin.batch_script = [boom] * 5
    r = invoke(db_path, "--limit", "5")
    assert r.exit_code == 3 and standin.message_requests == 2
    assert "3 wait in a submitted batch" in r.stderr
    r = invoke(db_path, "--collect", "--json")
    assert r.exit_code == 0 and "collected 3 results" in r.stderr
    with open_store(db_path) as db:
        assert len(_verdicts(db)) == 5


def test_batches_are_split_by_bytes_too(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.settings import JudgeSettings
    from reviewer.store.judging import select_trials

    ids = select_trials(db)[:6]
    jobs = list(verdict_jobs(db, ids, BUILTIN_RUBRIC, JudgeSettings()))

    def size(params: dict[str, Any]) -> int:
        return len(json.dumps({"custom_id": "r000000", "params": params}).encode()) + 1

    limit = 2 * max(size(j.params) for j in jobs) + 1  # room for two requests, never three
    monkeypatch.setattr(batch, "MAX_BATCH_BYTES", limit)
    result = judge_trials(db, JudgeRequest(limit=6, batch=True))
    sent = [q["body"]["requests"] for q in standin.requests if q["path"] == "/v1/messages/batches"]
    assert result.submitted is not None and result.submitted.requests == 6
    assert len(sent) == len(result.submitted.batch_ids) == 3
    assert all(sum(size(r["params"]) for r in reqs) <= limit for reqs in sent)
    assert len(_collect(db)) == 3 and len(_verdicts(db)) == 6


def test_passing_batch_errors_are_resubmitted_twice_then_recorded(
    db: Store, standin: StandIn
) -> None:
    overloaded = {
        "type": "errored",
        "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    }
    standin.batch_result = lambda req: overloaded
    judge_trials(db, JudgeRequest(limit=2, batch=True))
    notes = _collect(db)
    assert notes == [
        "batch msgbatch_0001: collected 0 results (0 errors, 2 resubmitted in batch msgbatch_0002)"
    ]
    notes = _collect(db)
    assert notes == [
        "batch msgbatch_0002: collected 0 results (0 errors, 2 resubmitted in batch msgbatch_0003)"
    ]
    notes = _collect(db)
    assert notes == ["batch msgbatch_0003: collected 2 results (2 errors)"]
    assert (
        _verdicts(db)
        == [("error", "the batch request failed 3 times: overloaded_error: Overloaded")] * 2
    )
    assert _collect(db) == ["no batches await collection"]


def test_expired_batch_requests_are_resubmitted(db: Store, standin: StandIn) -> None:
    calls = [0]

    def expire_first_two(req: dict[str, Any]) -> dict[str, Any] | None:
        calls[0] += 1
        return {"type": "expired"} if calls[0] <= 2 else None

    standin.batch_result = expire_first_two
    judge_trials(db, JudgeRequest(limit=3, batch=True))
    assert _collect(db) == [
        "batch msgbatch_0001: collected 1 results (0 errors, 2 resubmitted in batch msgbatch_0002)"
    ]
    assert _collect(db) == ["batch msgbatch_0002: collected 2 results (0 errors)"]
    assert {v for v, _ in _verdicts(db)} <= {"pass", "fail"} and len(_verdicts(db)) == 3
