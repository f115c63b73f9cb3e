"""Retries of the judge runner: one budget per request, retry-after honoured up to a cap, the
x-should-retry header, jittered backoff, and the refusals that stop a run (402, 401). A fake sleep
records every wait; nothing really sleeps."""

from __future__ import annotations

import asyncio
import email.utils
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.retry import RetryPolicy, retry_after
from reviewer.judge.runner import JudgeAbort, Runner, make_client
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import Reply, StandIn, error_reply, tool_reply
from reviewer.store.db import Store
from reviewer.store.judging import select_trials


class FakeSleep:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _runner(db: Store, sleep: FakeSleep, notes: list[str] | None = None, **kw: Any) -> Runner:
    base: dict[str, Any] = {"concurrency": 1, "max_retries": 4, "timeout_s": 10.0}
    settings = JudgeSettings(**{**base, **kw})
    return Runner(
        db,
        settings,
        sleep=sleep,
        rand=lambda: 1.0,
        on_note=(notes.append if notes is not None else None),
    )


def _go(runner: Runner, db: Store, n: int) -> Any:
    ids = select_trials(db, ["support-v1"])[:n]
    return runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, runner.settings), len(ids))


def _verdicts(db: Store) -> list[str]:
    rows = db.execute("SELECT verdict FROM verdicts WHERE source LIKE 'judge%'").fetchall()
    return [r[0] for r in rows]


def test_a_long_retry_after_stops_the_run_instead_of_sleeping_an_hour(
    db: Store, standin: StandIn
) -> None:
    standin.policy = lambda p: error_reply(429, "rate_limit_error", "slow", {"retry-after": "3600"})
    sleep = FakeSleep()
    with pytest.raises(JudgeAbort) as err:
        _go(_runner(db, sleep), db, 3)
    assert "asks to wait 3600 s" in str(err.value) and "60 s allowed" in str(err.value)
    assert sleep.waits == [] and standin.message_requests == 1


def test_retry_after_under_the_cap_is_honoured_and_said(db: Store, standin: StandIn) -> None:
    standin.script = [error_reply(429, "rate_limit_error", "slow", {"retry-after": "20"})]
    sleep, notes = FakeSleep(), []
    stats = _go(_runner(db, sleep, notes), db, 1)
    assert stats.done == 1 and sleep.waits == [20.0]
    assert notes == ["the API answered 429; waiting 20 s before trying again"]


def test_max_wait_is_a_setting(db: Store, standin: StandIn) -> None:
    standin.script = [error_reply(429, "rate_limit_error", "slow", {"retry-after": "90"})]
    sleep = FakeSleep()
    stats = _go(_runner(db, sleep, max_wait_s=120.0), db, 1)
    assert stats.done == 1 and sleep.waits == [90.0]


def test_retry_after_as_an_http_date() -> None:
    now = 1_800_000_000.0
    date = email.utils.formatdate(now + 42, usegmt=True)
    assert retry_after({"retry-after": date}, now=lambda: now) == pytest.approx(42)
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after": "soon"}) is None


def test_one_retry_budget_per_request(db: Store, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(500, "api_error", "down")
    sleep = FakeSleep()
    stats = _go(_runner(db, sleep, max_retries=4), db, 1)
    assert standin.message_requests == 5  # 1 try + 4 retries, not SDK retries × runner rounds
    assert (stats.failed, stats.done) == (0 + 1, 0)
    assert "gave up after 5 tries" in stats.failures[0]
    # jittered exponential backoff (rand fixed at 1.0 here: the top of the jitter range)
    assert sleep.waits == [1.0, 2.0, 4.0, 8.0]
    client = make_client(JudgeSettings())
    assert client.max_retries == 0


def test_backoff_jitter_range() -> None:
    low = RetryPolicy(base_s=1.0, rand=lambda: 0.0)
    high = RetryPolicy(base_s=1.0, rand=lambda: 1.0)
    assert [low.backoff(n) for n in range(3)] == [0.5, 1.0, 2.0]
    assert [high.backoff(n) for n in range(3)] == [1.0, 2.0, 4.0]
    assert high.backoff(20) == 30.0  # capped


def test_x_should_retry_false_is_obeyed(db: Store, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(503, "api_error", "down", {"x-should-retry": "false"})
    sleep = FakeSleep()
    stats = _go(_runner(db, sleep), db, 1)
    assert standin.message_requests == 1 and sleep.waits == []
    assert stats.failed == 1 and "said not to retry" in stats.failures[0]


def test_x_should_retry_true_retries_a_4xx(db: Store, standin: StandIn) -> None:
    standin.script = [
        error_reply(400, "invalid_request_error", "flaky", {"x-should-retry": "true"})
    ]
    stats = _go(_runner(db, FakeSleep()), db, 1)
    assert standin.message_requests == 2 and stats.done == 1 and stats.errors == 0


def test_a_402_stops_the_run_with_one_line(db_path: Path, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(402, "billing_error", "credit balance is too low")
    r = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--concurrency", "2"])
    assert r.exit_code == 1
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("reviewer: the API refused to bill the request (402)")
    assert "credit balance is too low" in lines[-1]
    assert standin.message_requests <= 2  # not one error verdict per trial
    with Store_of(db_path) as db:
        assert _verdicts(db) == []


def Store_of(path: Path) -> Store:
    from reviewer.store.db import open_store

    return open_store(path)


def test_a_refused_key_keeps_the_replies_already_on_their_way(db: Store, standin: StandIn) -> None:
    served_401 = threading.Event()
    lock = threading.Lock()
    calls = [0]

    def policy(p: dict[str, Any]) -> Reply:
        with lock:
            calls[0] += 1
            n = calls[0]
        if n == 1:
            served_401.wait(5)
            time.sleep(0.5)  # let the client read the 401 before this reply arrives
            return tool_reply(p, "record_verdict", {"verdict": "pass", "rationale": "ok"})
        served_401.set()
        return error_reply(401, "authentication_error", "key revoked")

    standin.policy = policy
    with pytest.raises(JudgeAbort, match="refused the key"):
        _go(_runner(db, FakeSleep(), concurrency=2), db, 6)
    assert standin.message_requests == 2
    assert _verdicts(db) == ["pass"]  # the reply in flight was stored, not thrown away


def test_an_interrupt_keeps_the_replies_already_on_their_way(db: Store, standin: StandIn) -> None:
    release = threading.Event()

    def policy(p: dict[str, Any]) -> Reply:
        release.wait(5)
        return tool_reply(p, "record_verdict", {"verdict": "fail", "rationale": "no"})

    standin.policy = policy
    notes: list[str] = []
    runner = _runner(db, FakeSleep(), notes, concurrency=3)
    ids = select_trials(db, ["support-v1"])[:8]

    async def main() -> None:
        task = asyncio.create_task(
            runner.run_async(verdict_jobs(db, ids, BUILTIN_RUBRIC, runner.settings), len(ids))
        )
        for _ in range(500):  # until three requests are in flight
            if standin.message_requests == 3:
                break
            await asyncio.sleep(0.01)
        task.cancel()  # what ^C does to asyncio.run's main task
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert standin.message_requests == 3
    assert _verdicts(db) == ["fail"] * 3
    assert notes == [
        "interrupted: storing the 3 replies on their way (interrupt again to stop at once)"
    ]


def test_prompt_cache_tokens_are_counted_at_their_prices(db: Store, standin: StandIn) -> None:
    def policy(p: dict[str, Any]) -> Reply:
        reply = tool_reply(p, "record_verdict", {"verdict": "pass", "rationale": "ok"})
        reply.body["usage"] = {
            "input_tokens": 100,
            "output_tokens": 50,
            "cache_creation_input_tokens": 2000,
            "cache_read_input_tokens": 10000,
        }
        return reply

    standin.policy = policy
    stats = _go(_runner(db, FakeSleep(), model="claude-sonnet-4-5"), db, 1)
    want = (100 * 3.0 + 2000 * 3.0 * 1.25 + 10000 * 3.0 * 0.1 + 50 * 15.0) / 1e6
    assert stats.cost_usd == pytest.approx(want)
    row = db.execute(
        "SELECT cost_usd, input_tokens, cache_write_tokens, cache_read_tokens FROM verdicts "
        "WHERE source = 'judge'"
    ).fetchone()
    assert row[0] == pytest.approx(want) and tuple(row[1:]) == (100, 2000, 10000)
    assert (
        json.loads(db.execute("SELECT raw FROM verdicts WHERE source = 'judge'").fetchone()[0])[
            "usage"
        ]["cache_read_input_tokens"]
        == 10000
    )
