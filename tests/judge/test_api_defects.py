"""Defects found in the judge's own Messages API client (reviewer.judge.api) and in storing what it
brings back, each checked against what the anthropic SDK's client does where it applies."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sqlite_utils
from click.testing import CliRunner

from reviewer.judge import api
from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.runner import Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import Reply, StandIn, error_reply, tool_reply
from reviewer.store.judging import select_trials


async def _no_sleep(seconds: float) -> None:
    return None


def _judge(db: sqlite_utils.Database, n: int) -> Any:
    settings = JudgeSettings(concurrency=2, max_retries=1, timeout_s=10.0)
    ids = select_trials(db, ["support-v1"])[:n]
    runner = Runner(db, settings, sleep=_no_sleep)
    return runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))


def _rationales(db: sqlite_utils.Database) -> list[str]:
    rows = db.execute("SELECT rationale FROM verdicts WHERE source = 'judge' ORDER BY id")
    return [r[0] for r in rows.fetchall()]


# --- a lone surrogate in a reply ------------------------------------------------------------------


def test_a_reply_with_a_lone_surrogate_is_stored_not_lost_on_every_run(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    """A lone surrogate is valid JSON (``"\\ud800"``) but not UTF-8: the paid reply failed its
    write (UnicodeEncodeError), was counted as failed, and the next run paid for it again."""
    standin.policy = lambda p: tool_reply(
        p, "record_verdict", {"verdict": "fail", "rationale": "echoed \ud800 from the transcript"}
    )
    stats = _judge(db, 2)
    assert stats.failed == 0 and stats.done == 2
    assert _rationales(db) == ["echoed \ufffd from the transcript"] * 2
    sent = standin.message_requests
    _judge(db, 2)
    assert standin.message_requests == sent  # cached: not paid for twice


def test_a_refusal_whose_message_has_a_lone_surrogate_is_stored(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.policy = lambda p: error_reply(400, "invalid_request_error", "bad \udfff input")
    stats = _judge(db, 1)
    assert stats.failed == 0 and stats.errors == 1
    (rationale,) = _rationales(db)
    assert "bad \ufffd input" in rationale


def test_a_text_reply_with_a_lone_surrogate_is_an_error_verdict_stored(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    raw = json.dumps({"content": [{"type": "text", "text": "no tool \ud83d"}]}).encode()
    standin.policy = lambda p: Reply(raw=raw, headers={"content-type": "application/json"})
    stats = _judge(db, 1)
    assert stats.failed == 0 and stats.errors == 1
    assert _rationales(db)[0].endswith("no tool \ufffd")


def test_a_reply_nested_too_deep_is_an_error_verdict_stored_not_retried_for_ever(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    """A reply of 3,000 nested arrays raised RecursionError out of the parser: counted as failed
    ("RecursionError: maximum recursion depth exceeded ..."), and every run paid for it again
    (found by an attack)."""
    deep = '{"verdict": "pass", "rationale": ' + "[" * 3000 + "]" * 3000 + "}"
    raw = (
        '{"content": [{"type": "tool_use", "id": "t1", "name": "record_verdict", "input": '
        + deep
        + '}], "usage": {"input_tokens": 5, "output_tokens": 5}}'
    ).encode()
    standin.policy = lambda p: Reply(raw=raw, headers={"content-type": "application/json"})
    stats = _judge(db, 1)
    assert stats.failed == 0 and stats.errors == 1
    assert _rationales(db) == ["malformed reply: the reply's JSON is nested too deep to read"]
    # an API error whose body is nested as deep is that error, not a crash of its own
    standin.policy = lambda p: Reply(status=500, raw=("[" * 3000 + "]" * 3000).encode())
    ids = select_trials(db, ["support-v1"])[1:2]
    settings = JudgeSettings(concurrency=1, max_retries=0, timeout_s=10.0)
    runner = Runner(db, settings, sleep=_no_sleep)
    stats = runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), 1)
    assert stats.failed == 1 and "RecursionError" not in " ".join(stats.failures)


# --- redirects ------------------------------------------------------------------------------------


def _client(handler: Any, **kw: Any) -> api.MessagesClient:
    kw.setdefault("api_key", "k-123")
    kw.setdefault("base_url", "http://judge.invalid/old")
    return api.MessagesClient(transport=httpx2.MockTransport(handler), **kw)


def _send(client: api.MessagesClient) -> httpx2.Response:
    async def go() -> httpx2.Response:
        try:
            raw = await client.messages.with_raw_response.create(model="m", max_tokens=5)
            return raw.http_response
        finally:
            await client.close()

    return asyncio.run(go())


def test_a_redirected_endpoint_is_followed_as_the_sdk_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK's client follows redirects; this one returned the 308 itself, which the runner
    stored (and cached) as a malformed reply."""
    monkeypatch.delenv("ANTHROPIC_CUSTOM_HEADERS", raising=False)
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if request.url.path == "/old/v1/messages":
            return httpx2.Response(308, headers={"location": "/new/v1/messages"})
        return httpx2.Response(200, json={"id": "msg_1", "content": []})

    response = _send(_client(handler))
    assert response.status_code == 200 and response.json()["id"] == "msg_1"
    assert [r.url.path for r in seen] == ["/old/v1/messages", "/new/v1/messages"]
    assert seen[1].method == "POST" and json.loads(seen[1].content) == {
        "model": "m",
        "max_tokens": 5,
    }
    assert seen[1].headers["x-api-key"] == "k-123"  # the same origin keeps the key


def test_a_redirect_to_another_origin_gets_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx drops ``authorization`` on a redirect to another origin, not ``x-api-key``: the key
    (and the custom headers, which may hold a gateway's key) never leave the endpoint's origin."""
    monkeypatch.setenv("ANTHROPIC_CUSTOM_HEADERS", "x-gateway-key: g-456")
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if request.url.host == "judge.invalid":
            return httpx2.Response(
                307, headers={"location": "http://elsewhere.invalid/v1/messages"}
            )
        return httpx2.Response(200, json={"content": []})

    assert _send(_client(handler)).status_code == 200
    first, second = seen
    assert first.headers["x-gateway-key"] == "g-456" and first.headers["x-api-key"] == "k-123"
    assert second.url.host == "elsewhere.invalid"
    for name in ("x-api-key", "authorization", "x-gateway-key"):
        assert name not in second.headers


@pytest.mark.parametrize("status", [204, 300, 304])
def test_an_answer_outside_2xx_raises_as_the_sdk_does(status: int) -> None:
    """A 3xx that is not followed (no location) is no reply: the runner stored and cached it as a
    malformed reply; the SDK raises APIStatusError for every answer outside 2xx."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, content=b"")

    if status == 204:
        assert _send(_client(handler)).status_code == 204  # 2xx: a reply, as for the SDK
        return
    with pytest.raises(api.APIStatusError) as err:
        _send(_client(handler))
    assert err.value.status_code == status


def test_a_redirect_without_a_location_is_an_uncached_error(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.policy = lambda p: Reply(status=300, raw=b"<html>choose</html>")
    stats = _judge(db, 1)
    assert stats.errors == 1
    assert "the API refused the request (300)" in _rationales(db)[0]
    assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 0


# --- ANTHROPIC_CUSTOM_HEADERS ---------------------------------------------------------------------


def test_custom_headers_from_the_environment_are_sent_as_the_sdk_sends_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK sends ``ANTHROPIC_CUSTOM_HEADERS`` (a gateway's own key, a beta flag) on every
    request; this client left them out, so a run through such a gateway stopped at 401."""
    monkeypatch.setenv(
        "ANTHROPIC_CUSTOM_HEADERS", "cf-aig-authorization: Bearer gw\nnot a header\nX-Team :  a:b "
    )
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"content": []})

    _send(_client(handler))
    (request,) = seen
    assert request.headers["cf-aig-authorization"] == "Bearer gw"
    assert request.headers["x-team"] == "a:b"
    assert api.custom_headers("a: 1\nb:2\nnone") == {"a": "1", "b": "2"}
    sdk = pytest.importorskip("anthropic")
    client = sdk.Anthropic(api_key="k")
    for name, value in api.custom_headers(
        "cf-aig-authorization: Bearer gw\nnot a header\nX-Team :  a:b "
    ).items():
        assert client.default_headers[name] == value


# --- an endpoint no request can reach -------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "problem"),
    [
        ("https://", "has no host"),
        ("http:/judge.invalid", "has no host"),
        ("http://judge.invalid ", "has spaces or control characters"),
        ("http://[::1", "is not a URL"),
    ],
)
def test_an_endpoint_without_a_host_stops_the_run_in_one_line(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, problem: str
) -> None:
    """These passed the scheme check and every request failed, each retried with backoff."""
    from reviewer.cli import cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", base)
    result = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "1"])
    assert result.exit_code != 0
    assert f"ANTHROPIC_BASE_URL {base!r} {problem}" in result.output
    assert "Traceback" not in result.output


# --- a reply that cannot be decoded ---------------------------------------------------------------


def test_a_reply_body_that_cannot_be_decoded_is_a_connection_error_retried() -> None:
    """A body sent as gzip that is not gzip raised httpx2.DecodingError through the runner (counted
    as failed at once, never retried); the SDK makes it an APIConnectionError, which is retried."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-encoding": "gzip"}, content=b"\x1b]0;not gzip\x07"
        )

    with pytest.raises(api.APIConnectionError) as err:
        _send(_client(handler))
    assert api.connection_error(err.value)
    assert "DecodingError" in err.value.message


# --- a key that cannot be sent ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "line"),
    [
        ({"ANTHROPIC_API_KEY": "sk-test\r"}, "ANTHROPIC_API_KEY has spaces or control characters"),
        ({"ANTHROPIC_API_KEY": " sk-test"}, "ANTHROPIC_API_KEY has spaces or control characters"),
        ({"ANTHROPIC_API_KEY": "sk-tést"}, "ANTHROPIC_API_KEY is not ASCII"),
        (
            {"ANTHROPIC_API_KEY": "", "ANTHROPIC_AUTH_TOKEN": "tok\n"},
            "ANTHROPIC_AUTH_TOKEN has spaces or control characters",
        ),
        (
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_CUSTOM_HEADERS": "x-gw: ké"},
            "ANTHROPIC_CUSTOM_HEADERS 'x-gw' is not ASCII",
        ),
    ],
)
def test_a_key_pasted_with_its_line_end_stops_the_run_in_one_line(
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    standin: StandIn,
    env: dict[str, str],
    line: str,
) -> None:
    """Every request failed (an illegal header value, or UnicodeEncodeError for a key outside
    ASCII), each retried with backoff, and the run ended with every trial failed."""
    from reviewer.cli import cli

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    result = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "2"])
    assert result.exit_code != 0
    assert line in result.output
    assert "Traceback" not in result.output
    assert standin.message_requests == 0


# --- an error answer that is not JSON -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "<html>413 Request Entity Too Large</html>\n",
            "<html>413 Request Entity Too Large</html>",
        ),
        ("", "Error code: 413"),
        ("  \n", "Error code: 413"),
    ],
)
def test_an_error_answer_that_is_not_json_keeps_its_text(text: str, message: str) -> None:
    """The refusal stored for a 413 from a proxy read "Error code: 413 - <html>..." (and
    "Error code: 413 - None" for an empty body): the message is the text itself, or the status when
    there is no text, and the body is the text (never None)."""
    response = httpx2.Response(
        413, content=text.encode(), request=httpx2.Request("POST", "http://judge.invalid")
    )
    error = api.APIStatusError(response)
    assert (error.message, error.body, error.status_code) == (message, text.strip(), 413)
    assert "None" not in str(error)


def test_an_error_answer_in_json_keeps_its_body() -> None:
    """A JSON error body is parsed: the body is the object and the message names the status."""
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    response = httpx2.Response(
        529, json=body, request=httpx2.Request("POST", "http://judge.invalid")
    )
    error = api.APIStatusError(response)
    assert error.body == body
    assert error.status_code == 529
    assert error.message.startswith("Error code: 529 - ")
    assert "overloaded_error" in error.message


# --- a timeout, and the stand-in when the judge hangs up ------------------------------------------


def test_a_timeout_says_which_one() -> None:
    """httpx's ReadTimeout has no text: the failure line read "Request timed out: " and stopped."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("", request=request)

    with pytest.raises(api.APITimeoutError) as err:
        _send(_client(handler))
    assert err.value.message == "Request timed out (ReadTimeout)"
    assert api.connection_error(err.value)


def test_the_stand_in_prints_no_traceback_when_the_judge_hangs_up(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A judge that timed out (or was stopped) closes its connection before the stand-in's reply:
    the stand-in printed a BrokenPipeError traceback on its terminal for each."""
    with StandIn() as server:
        for exc in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")):
            try:
                raise exc
            except ConnectionError:
                server._server.handle_error(None, ("127.0.0.1", 1))
        assert capsys.readouterr().err == ""
        try:
            raise ValueError("a real fault of the stand-in")
        except ValueError:
            server._server.handle_error(None, ("127.0.0.1", 1))
    assert "ValueError: a real fault of the stand-in" in capsys.readouterr().err


# --- an impossible token count ---------------------------------------------------------------------


def test_a_negative_token_count_is_counted_as_zero_never_a_negative_cost(
    db: sqlite_utils.Database, standin: StandIn
) -> None:
    """A reply whose usage said input_tokens -500000 was stored with a cost of -$1.50 (and lowered
    the run's total): the count is taken as 0, the run says so once, and no cost is negative."""
    notes: list[str] = []

    def policy(params: dict[str, Any]) -> Reply:
        reply = tool_reply(params, "record_verdict", {"verdict": "pass", "rationale": "fine"})
        assert isinstance(reply.body, dict)
        reply.body["usage"] = {"input_tokens": -500_000, "output_tokens": 40}
        return reply

    standin.policy = policy
    settings = JudgeSettings(concurrency=2, max_retries=1, timeout_s=10.0)
    ids = select_trials(db, ["support-v1"])[:3]
    stats = Runner(db, settings, sleep=_no_sleep, on_note=notes.append).run(
        verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids)
    )
    assert stats.done == 3 and stats.cost_usd >= 0
    rows = db.execute(
        "SELECT input_tokens, output_tokens, cost_usd FROM verdicts WHERE source = 'judge'"
    ).fetchall()
    assert len(rows) == 3
    assert all(r[0] == 0 and r[1] == 40 and r[2] >= 0 for r in rows), rows
    warned = [n for n in notes if "impossible token count" in n]
    assert warned == [
        "warning: a reply's usage has an impossible token count (input_tokens -500000): counted as 0"
    ]
