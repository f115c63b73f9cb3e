"""The live judge's own Messages API client (reviewer.judge.api): what it sends, what it raises, and
that `reviewer judge` reaches its first request without importing the anthropic SDK."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from reviewer.judge import api
from reviewer.judge.retry import RetryPolicy, api_message, retry_after, retryable

REPO = Path(__file__).resolve().parents[2]


def _client(handler: Any, **kw: Any) -> api.MessagesClient:
    kw.setdefault("api_key", "k-123")
    kw.setdefault("base_url", "http://judge.invalid")
    return api.MessagesClient(transport=httpx2.MockTransport(handler), **kw)


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


def _raised(handler: Any, body: dict[str, Any] | None = None) -> Exception:
    """What one request (``body``) raises when the API's side is ``handler``."""

    async def go() -> Exception:
        client = _client(handler)
        try:
            await client.create(body or {"model": "m"})
        except api.APIError as e:
            return e
        finally:
            await client.close()
        raise AssertionError("no error raised")

    return _run(go())


def test_it_posts_the_fields_as_they_are_with_the_key_and_version() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, json={"id": "msg_1", "content": []})

    async def go() -> str:
        client = _client(handler, base_url="http://judge.invalid/proxy/")
        raw = await client.messages.with_raw_response.create(
            model="m",
            max_tokens=5,
            messages=[{"role": "user", "content": "hé \ud800"}],
            extra_body={"temperature": 0.0},
        )
        await client.close()
        return str(raw.http_response.text)

    text = _run(go())
    assert json.loads(text)["id"] == "msg_1"
    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == "http://judge.invalid/proxy/v1/messages"
    assert request.headers["x-api-key"] == "k-123"
    assert request.headers["authorization"] == "Bearer k-123"
    assert request.headers["anthropic-version"] == api.API_VERSION
    body = json.loads(request.content)
    assert body == {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "hé \ud800"}],
        "temperature": 0.0,
    }


def test_the_version_is_the_one_the_installed_sdk_sends() -> None:
    """Through the SDK's public client (its request as it goes out), not its private constants."""
    anthropic = pytest.importorskip("anthropic")
    sent: list[str | None] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(request.headers.get("anthropic-version"))
        return httpx2.Response(
            200,
            json={
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [{"type": "text", "text": "ok"}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            },
        )

    client = anthropic.Anthropic(
        api_key="k",
        base_url="http://stand.in",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
        max_retries=0,
    )
    client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}])
    assert sent == [api.API_VERSION]


def test_an_auth_token_goes_as_a_bearer_token_and_the_environment_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://env.invalid")
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(200, text="{}")

    async def go() -> None:
        client = api.MessagesClient(transport=httpx2.MockTransport(handler))
        await client.create({"model": "m"})
        await client.close()

    _run(go())
    assert str(seen[0].url) == "http://env.invalid/v1/messages"
    assert seen[0].headers["authorization"] == "Bearer tok"
    assert "x-api-key" not in seen[0].headers


def test_an_error_status_raises_with_what_the_retry_rules_read() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            429,
            headers={"retry-after": "7"},
            json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}},
        )

    e = _raised(handler)
    assert isinstance(e, api.APIStatusError)
    assert e.status_code == 429
    assert api.status_error(e) and not api.connection_error(e)
    assert api_message(e) == "slow down"
    assert retry_after(e.response.headers) == 7.0
    assert retryable(e)
    assert RetryPolicy(retries=3).decide(e, 0).wait_s == 7.0


def test_a_body_that_is_not_json_is_kept_as_text() -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, text="<html>bad gateway</html>")

    e = _raised(handler)
    assert isinstance(e, api.APIStatusError)
    assert e.status_code == 500 and e.body == "<html>bad gateway</html>"
    assert retryable(e)
    assert "bad gateway" in api_message(e)


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        (httpx2.ConnectError("refused"), api.APIConnectionError),
        (httpx2.ReadTimeout("slow"), api.APITimeoutError),
    ],
)
def test_no_answer_raises_a_connection_error(raised: Exception, kind: type) -> None:
    def handler(request: httpx2.Request) -> httpx2.Response:
        raise raised

    e = _raised(handler)
    assert type(e) is kind
    assert api.connection_error(e) and not api.status_error(e)
    assert retryable(e)


def test_the_sdk_errors_are_recognised_too() -> None:
    anthropic = pytest.importorskip("anthropic")
    request = httpx2.Request("POST", "http://judge.invalid/v1/messages")
    response = httpx2.Response(503, request=request, json={"error": {"message": "x"}})
    sdk_status = anthropic.InternalServerError("x", response=response, body=None)
    sdk_conn = anthropic.APIConnectionError(request=request)
    assert api.status_error(sdk_status) and not api.connection_error(sdk_status)
    assert api.connection_error(sdk_conn) and not api.status_error(sdk_conn)
    assert retryable(sdk_conn) and retryable(sdk_status)


def test_judge_sends_its_requests_without_importing_the_sdk(
    tmp_path: Path, db_path: Path, standin: Any, api_key: str
) -> None:
    """The whole command against the stand-in, in a fresh process: verdicts stored, and the SDK
    (0.75-1.15 s of start-up) never imported."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('SDK' if 'anthropic' in sys.modules else 'NO SDK'))\n"
        "from reviewer.cli import main\n"
        "main()\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "--db",
            str(db_path),
            "judge",
            "--run",
            "support-v1",
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("NO SDK")
    assert standin.message_requests > 0
    summary = json.loads(done.stdout.strip().rsplit("\n", 1)[0])
    assert summary["requests"] == standin.message_requests


def test_an_endpoint_without_a_scheme_stops_the_run_in_one_line(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from reviewer.cli import cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "localhost:9")
    result = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "1"])
    assert result.exit_code != 0
    assert "ANTHROPIC_BASE_URL 'localhost:9' is not an http:// or https:// address" in result.output
    assert "Traceback" not in result.output


def test_a_reply_declared_longer_than_max_tokens_allows_is_not_read() -> None:
    big = api.REPLY_BASE_BYTES + 10 * api.REPLY_TOKEN_BYTES + 1
    sent: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        sent.append(1)
        return httpx2.Response(200, content=b"x" * big)  # content-length declared

    e = _raised(handler, {"model": "m", "max_tokens": 10})
    assert isinstance(e, api.APIReplyTooLarge)
    assert e.limit == api.REPLY_BASE_BYTES + 10 * api.REPLY_TOKEN_BYTES
    assert "more than max_tokens allows" in str(e)
    assert sent == [1]


def test_an_endless_reply_without_a_length_is_cut_at_the_limit() -> None:
    pieces: list[int] = []

    async def endless() -> Any:
        for _ in range(10_000):
            pieces.append(1)
            yield b"y" * 65536

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=endless())  # streamed, no content-length

    e = _raised(handler, {"model": "m", "max_tokens": 1})
    assert isinstance(e, api.APIReplyTooLarge)
    assert e.size > e.limit
    assert len(pieces) < 30  # stopped near 1 MiB, not after 655 MB


def test_a_compressed_reply_is_decoded_once() -> None:
    import gzip

    payload = json.dumps({"id": "msg_gz", "content": [{"type": "text", "text": "é" * 100}]})

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200,
            headers={"content-encoding": "gzip", "content-type": "application/json"},
            content=gzip.compress(payload.encode()),
        )

    async def go() -> str:
        client = _client(handler)
        try:
            return (await client.create({"model": "m"})).text
        finally:
            await client.close()

    assert _run(go()) == payload


def test_a_huge_reply_is_an_uncached_error_and_the_run_goes_on(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.runner import Runner
    from reviewer.judge.settings import JudgeSettings
    from reviewer.judge.standin import StandIn, default_policy, tool_reply
    from reviewer.store.db import open_store
    from reviewer.store.judging import select_trials

    calls: list[int] = []

    def policy(params: dict[str, Any]) -> Any:
        calls.append(1)
        if len(calls) == 1:  # a broken endpoint's first reply: megabytes of rationale
            return tool_reply(
                params, "record_verdict", {"verdict": "pass", "rationale": "z" * 3_000_000}
            )
        return default_policy(params)

    with StandIn(policy) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        db = open_store(db_path)
        ids = select_trials(db, ["support-v1"])[:3]
        settings = JudgeSettings(concurrency=1, max_tokens=256)
        stats = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), 3)
        assert (stats.done, stats.errors, stats.failed) == (3, 1, 0)
        rows = db.execute(
            "SELECT rationale FROM verdicts WHERE verdict = 'error' AND source LIKE 'judge%'"
        ).fetchall()
        assert len(rows) == 1 and "more than max_tokens allows" in rows[0][0]
        assert max(len(r[0]) for r in db.execute("SELECT response FROM judge_cache")) < 100_000
        db.close()


def test_a_port_outside_the_range_stops_the_run_in_one_line(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: port 99999 reached the connection layer and every trial failed with
    'ExceptionGroup: unhandled errors in a TaskGroup'."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:99999")
    result = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "1"])
    assert result.exit_code != 0
    assert "has port 99999, outside 1-65535" in result.output
    assert "ExceptionGroup" not in result.output


def test_an_endpoint_no_request_reaches_stops_the_run_after_one_requests_tries(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with nothing listening, every trial waited through its own retries (a minute of
    'waiting 6 s before trying again' lines) and the run never named the address."""
    import socket

    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.runner import JudgeAbort, Runner
    from reviewer.judge.settings import JudgeSettings
    from reviewer.store.db import open_store
    from reviewer.store.judging import select_trials

    with socket.socket() as s:  # a port with nothing listening on it
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    db = open_store(db_path)
    ids = select_trials(db, ["support-v1"])[:5]
    settings = JudgeSettings(concurrency=1, max_retries=2)
    runner = Runner(db, settings, sleep=sleep)
    with pytest.raises(JudgeAbort) as stop:
        runner.run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
    assert f"cannot connect to http://127.0.0.1:{port}/v1/messages" in str(stop.value)
    assert len(waits) == 2  # the first request's retries, and no other request's
    assert runner.stats.requests == 3
    db.close()


def test_a_lost_connection_after_the_endpoint_answered_is_retried_and_the_run_goes_on(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.runner import Runner
    from reviewer.judge.settings import JudgeSettings
    from reviewer.judge.standin import default_policy
    from reviewer.store.db import open_store
    from reviewer.store.judging import select_trials

    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        if len(calls) >= 2:  # the endpoint answered once, then went away
            raise httpx2.ConnectError("refused")
        body = default_policy(json.loads(request.content)).body
        return httpx2.Response(200, json=body)

    async def sleep(seconds: float) -> None:
        return None

    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    db = open_store(db_path)
    ids = select_trials(db, ["support-v1"])[:3]
    settings = JudgeSettings(concurrency=1, max_retries=1)

    def factory(s: JudgeSettings) -> api.MessagesClient:
        return _client(handler)

    stats = Runner(db, settings, sleep=sleep, client_factory=factory).run(
        verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), 3
    )
    assert (stats.done, stats.failed) == (1, 2)  # counted, not a stop: the endpoint was there
    db.close()


def test_a_base_url_ending_in_v1_is_named_on_the_404(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
    from reviewer.judge.runner import JudgeAbort, Runner
    from reviewer.judge.settings import JudgeSettings
    from reviewer.judge.standin import StandIn
    from reviewer.store.db import open_store
    from reviewer.store.judging import select_trials

    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url + "/v1")
        db = open_store(db_path)
        ids = select_trials(db, ["support-v1"])[:1]
        settings = JudgeSettings(concurrency=1)
        with pytest.raises(JudgeAbort) as stop:
            Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), 1)
        db.close()
    assert "check ANTHROPIC_BASE_URL (it ends in /v1" in str(stop.value)
