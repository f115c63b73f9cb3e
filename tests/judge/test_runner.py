"""The judge runner against the local stand-in of the Messages API, through the real SDK client."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlite_utils

from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.reply import parse_reply
from reviewer.judge.runner import JudgeAbort, Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import (
    Reply,
    StandIn,
    error_reply,
    text_reply,
    tool_reply,
)
from reviewer.store.judging import select_trials


def _settings(**kw: Any) -> JudgeSettings:
    base: dict[str, Any] = {"concurrency": 4, "max_retries": 2, "timeout_s": 10.0}
    return JudgeSettings(**{**base, **kw})


async def _no_sleep(seconds: float) -> None:
    return None


def _run(db: sqlite_utils.Database, n: int | None = None, **kw: Any) -> Any:
    settings = _settings(**kw)
    ids = select_trials(db, ["support-v1"])[:n]
    runner = Runner(db, settings, sleep=_no_sleep)
    return runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))


def _verdicts(db: sqlite_utils.Database) -> list[tuple[Any, ...]]:
    return db.execute(
        "SELECT trial_id, judge, verdict, rationale, input_tokens, output_tokens, cost_usd, raw, "
        "source FROM verdicts WHERE source LIKE 'judge%' ORDER BY trial_id"
    ).fetchall()


def test_request_shape_forces_the_verdict_tool(db: sqlite_utils.Database, standin: StandIn) -> None:
    stats = _run(db, 3, model="claude-haiku-4-5", max_tokens=333)
    assert stats.done == 3 and standin.message_requests == 3
    body = standin.requests[0]["body"]
    assert body["model"] == "claude-haiku-4-5"
    assert body["max_tokens"] == 333
    assert [t["name"] for t in body["tools"]] == ["record_verdict"]
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert set(body["tools"][0]["input_schema"]["properties"]) == {"verdict", "rationale"}
    assert "temperature" not in body  # API version 2026-10-21 refuses sampling parameters
    user = body["messages"][0]["content"]
    assert "Rubric task-success@builtin-1" in user and "<transcript>" in user
    headers = standin.headers[0]
    assert "never-stored" in (headers.get("x-api-key", "") + headers.get("authorization", ""))


def test_temperature_is_sent_in_the_body_only_when_configured(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    _run(db, 1, temperature=0.0)
    assert standin.requests[0]["body"]["temperature"] == 0.0


def test_verdicts_are_parsed_and_stored_with_judge_id_tokens_and_cost(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.policy = lambda p: tool_reply(
        p, "record_verdict", {"verdict": "fail", "rationale": "  refund was wrong  "}
    )
    _run(db, 2)
    rows = _verdicts(db)
    assert len(rows) == 2
    _, judge, verdict, rationale, tin, tout, cost, raw, source = rows[0]
    assert judge == "claude-sonnet-4-5/v1/task-success@builtin-1"
    assert (verdict, rationale, source) == ("fail", "refund was wrong", "judge")
    assert tin > 100 and tout == 60
    assert cost == pytest.approx((tin * 3.0 + tout * 15.0) / 1e6)
    assert json.loads(raw)["content"][0]["name"] == "record_verdict"


def test_second_run_makes_zero_requests(db: sqlite_utils.Database, standin: StandIn) -> None:
    first = _run(db, 5)
    assert first.requests == 5 and standin.message_requests == 5
    before = _verdicts(db)
    second = _run(db, 5)
    assert standin.message_requests == 5  # nothing new reached the API
    assert (second.cached, second.requests, second.cost_usd) == (5, 0, 0.0)
    assert [r[2] for r in _verdicts(db)] == [r[2] for r in before]


def test_a_changed_prompt_is_a_cache_miss(db: sqlite_utils.Database, standin: StandIn) -> None:
    _run(db, 2)
    _run(db, 2, instructions="Be strict about refunds.")
    assert standin.message_requests == 4
    assert "Be strict about refunds." in standin.requests[-1]["body"]["system"]
    # a new version label on the same prompt is a new judge id, answered from the cache
    _run(db, 2, prompt_version="v2")
    assert standin.message_requests == 4
    judges = {r[1] for r in _verdicts(db)}
    assert len(judges) == 3
    assert "claude-sonnet-4-5/v2/task-success@builtin-1" in judges


@pytest.mark.parametrize(
    "first",
    [
        error_reply(429, "rate_limit_error", "slow down", {"retry-after-ms": "10"}),
        error_reply(500, "api_error", "boom", {"retry-after-ms": "10"}),
        error_reply(529, "overloaded_error", "overloaded", {"retry-after-ms": "10"}),
    ],
    ids=["429", "500", "529"],
)
def test_transient_errors_are_retried(
    db: sqlite_utils.Database, standin: StandIn, first: Reply
) -> None:
    standin.script = [first, first]
    stats = _run(db, 1, concurrency=1)
    assert standin.message_requests == 3
    assert (stats.done, stats.failed) == (1, 0)
    assert _verdicts(db)[0][2] in ("pass", "fail")


def test_a_request_failing_after_every_retry_is_not_stored_and_goes_again(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    boom = error_reply(500, "api_error", "down", {"retry-after-ms": "1"})
    standin.script = [boom] * 3  # one budget: 1 try + max_retries (2)
    stats = _run(db, 1, concurrency=1)
    assert (stats.done, stats.failed) == (0, 1)
    assert "gave up after 3 tries" in stats.failures[0]
    assert _verdicts(db) == []
    again = _run(db, 1, concurrency=1)
    assert again.done == 1 and again.requests == 1


def test_a_reply_without_the_tool_is_an_error_verdict_with_the_raw_reply(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.script = [text_reply({}, "I think it passes.")]
    stats = _run(db, 3, concurrency=1)
    assert stats.done == 3 and stats.errors == 1
    errors = [r for r in _verdicts(db) if r[2] == "error"]
    assert len(errors) == 1
    assert "no record_verdict tool call" in errors[0][3]
    assert "I think it passes." in errors[0][7]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (
            lambda p: tool_reply(p, "record_verdict", {"verdict": "maybe", "rationale": "x"}),
            "must be pass or fail",
        ),
        (
            lambda p: tool_reply(p, "record_verdict", {"verdict": "pass"}),
            "rationale must be a string",
        ),
        (
            lambda p: tool_reply(p, "record_verdict", {"verdict": "pass", "rationale": 3}),
            "rationale must be a string",
        ),
        (
            lambda p: tool_reply(p, "other_tool", {"verdict": "pass", "rationale": "x"}),
            "no record_verdict",
        ),
        (lambda p: Reply(raw=b"<html>not json</html>"), "not JSON"),
        (lambda p: Reply(body=[1, 2]), "not a JSON object"),
    ],
    ids=[
        "bad-verdict",
        "no-rationale",
        "rationale-not-str",
        "wrong-tool",
        "not-json",
        "not-object",
    ],
)
def test_malformed_replies_never_crash_the_run(
    db: sqlite_utils.Database, standin: StandIn, reply: Any, problem: str
) -> None:
    standin.policy = reply
    stats = _run(db, 2)
    assert stats.done == 2 and stats.errors == 2
    rows = _verdicts(db)
    assert {r[2] for r in rows} == {"error"}
    assert problem in rows[0][3]
    assert rows[0][7]  # the raw reply is kept


def test_a_refused_request_is_an_uncached_error_verdict(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.script = [error_reply(400, "invalid_request_error", "prompt is too long")]
    stats = _run(db, 1, concurrency=1)
    assert stats.errors == 1
    assert "prompt is too long" in _verdicts(db)[0][3]
    assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 0


def test_a_refused_key_stops_the_run(db: sqlite_utils.Database, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(401, "authentication_error", "invalid x-api-key")
    with pytest.raises(JudgeAbort, match="refused the key"):
        _run(db, 4)
    assert _verdicts(db) == []


def test_the_cost_cap_is_a_hard_stop(db: sqlite_utils.Database, standin: StandIn) -> None:
    settings = _settings(concurrency=2)
    ids = select_trials(db, ["support-v1"])
    runner = Runner(db, settings)
    one = runner.estimate(next(verdict_jobs(db, ids[:1], BUILTIN_RUBRIC, settings)))
    cap = one * 3.5
    stats = _run(db, None, concurrency=2, max_cost=cap)
    assert stats.stopped_at_cap
    assert 3 <= standin.message_requests < len(ids)
    assert stats.cost_usd <= cap
    assert stats.skipped_for_cost == len(ids) - stats.done
    spent = db.execute("SELECT SUM(cost_usd) FROM verdicts WHERE source = 'judge'").fetchone()[0]
    assert spent == pytest.approx(stats.cost_usd)


def test_a_cost_cap_needs_a_price(db: sqlite_utils.Database, standin: StandIn) -> None:
    with pytest.raises(JudgeAbort, match="no price known"):
        _run(db, 1, model="my-local-model", max_cost=1.0)


def test_cancel_stops_sending(db: sqlite_utils.Database, standin: StandIn) -> None:
    import threading

    standin.delay = 0.05
    settings = _settings(concurrency=1)
    ids = select_trials(db, ["support-v1"])
    cancel = threading.Event()

    def progress(stats: Any, outcome: Any) -> None:
        if stats.done == 2:
            cancel.set()

    runner = Runner(db, settings, cancel=cancel, on_progress=progress)
    stats = runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
    assert 2 <= stats.done <= 3
    assert stats.cancelled == len(ids) - stats.done
    assert standin.message_requests <= 3


def test_concurrency_is_bounded(db: sqlite_utils.Database) -> None:
    import threading
    import time

    lock = threading.Lock()
    live = [0, 0]

    def policy(p: dict[str, Any]) -> Reply:
        with lock:
            live[0] += 1
            live[1] = max(live[1], live[0])
        time.sleep(0.05)
        with lock:
            live[0] -= 1
        return tool_reply(p, "record_verdict", {"verdict": "pass", "rationale": "ok"})

    with StandIn(policy) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_BASE_URL", server.url)
        mp.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        _run(db, 12, concurrency=3)
    assert live[1] == 3


def test_parse_reply_accepts_case_variants() -> None:
    body = json.dumps(
        {
            "content": [
                {
                    "type": "tool_use",
                    "name": "record_verdict",
                    "input": {"verdict": " PASS", "rationale": "ok"},
                }
            ]
        }
    )
    assert parse_reply("verdict", body).value == "pass"
    pref = json.dumps(
        {
            "content": [
                {
                    "type": "tool_use",
                    "name": "record_preference",
                    "input": {"winner": "b", "rationale": ""},
                }
            ]
        }
    )
    assert parse_reply("preference", pref).value == "B"
