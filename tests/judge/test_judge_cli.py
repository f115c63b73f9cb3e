"""`reviewer judge` end to end: progress, resume after a kill, batches across a restart, no key leaks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.standin import StandIn, error_reply
from reviewer.store.db import open_store

JUDGE = "claude-sonnet-4-5/v1/task-success@builtin-1"


def invoke(db_path: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db_path), "judge", *args])


def judged_count(db_path: Path) -> int:
    db = open_store(db_path)
    try:
        return db.execute(
            "SELECT COUNT(*) FROM verdicts WHERE judge = ? AND verdict != 'error'", [JUDGE]
        ).fetchone()[0]
    finally:
        db.close()


def test_judge_a_run_then_again_for_free(db_path: Path, standin: StandIn) -> None:
    r = invoke(db_path, "--run", "support-v1", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert (data["done"], data["requests"], data["cached"]) == (40, 40, 0)
    assert data["judge"] == JUDGE and data["cost_usd"] > 0
    assert f"judged 40 of 40 with {JUDGE}" in r.stderr
    again = json.loads(invoke(db_path, "--run", "support-v1", "--json").stdout)
    assert (again["requests"], again["cached"], again["cost_usd"]) == (0, 40, 0.0)
    assert standin.message_requests == 40


def test_only_unjudged_and_limit(db_path: Path, standin: StandIn) -> None:
    assert invoke(db_path, "--limit", "5").exit_code == 0
    r = invoke(db_path, "--only-unjudged", "--limit", "7", "--json")
    assert json.loads(r.stdout)["done"] == 7
    assert standin.message_requests == 12
    assert judged_count(db_path) == 12


def test_retry_errors_asks_again(db_path: Path, standin: StandIn) -> None:
    from reviewer.judge.standin import text_reply

    standin.script = [text_reply({}, "no tool")]
    invoke(db_path, "--limit", "3", "--concurrency", "1")
    assert judged_count(db_path) == 2
    r = invoke(db_path, "--retry-errors", "--json")
    assert json.loads(r.stdout)["done"] == 1
    assert judged_count(db_path) == 3


def test_no_api_key_is_one_line(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    r = invoke(db_path, "--limit", "2")
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1].startswith("reviewer: ANTHROPIC_API_KEY is not set")
    assert "Traceback" not in r.output


def test_cached_run_needs_no_key(
    db_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    invoke(db_path, "--limit", "3")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    r = invoke(db_path, "--limit", "3", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["cached"] == 3


def test_refused_key_and_bad_settings_are_one_line(db_path: Path, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(401, "authentication_error", "invalid x-api-key")
    r = invoke(db_path, "--limit", "2")
    assert r.exit_code == 1 and "reviewer: the API refused the key (401)" in r.stderr
    Path("reviewer.toml").write_text('[judge]\nconcurrency = "lots"\n')
    r = invoke(db_path, "--limit", "2")
    assert r.exit_code == 1
    where = Path("reviewer.toml").resolve()
    assert r.stderr.strip() == (
        f"reviewer: {where}:2: [judge] concurrency must be an integer, got 'lots'"
    )


def test_cost_cap_exits_3_and_says_so(db_path: Path, standin: StandIn) -> None:
    r = invoke(db_path, "--max-cost", "0.1", "--json")
    assert r.exit_code == 3, r.output
    data = json.loads(r.stdout)
    assert data["stopped_at_cap"] and data["cost_usd"] <= 0.1
    assert "stopped at the cost cap" in r.stderr
    assert 0 < judged_count(db_path) < 40


def test_failed_requests_exit_3(db_path: Path, standin: StandIn) -> None:
    standin.policy = lambda p: error_reply(503, "api_error", "down", {"retry-after-ms": "1"})
    r = invoke(db_path, "--limit", "1")
    assert r.exit_code == 3
    assert "failed after retries" in r.stderr


def test_resume_after_a_kill(db_path: Path, tmp_path: Path, api_key: str) -> None:
    with StandIn(delay=0.15) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": api_key,
        }
        cmd = [
            sys.executable,
            "-m",
            "reviewer",
            "--db",
            str(db_path),
            "judge",
            "--concurrency",
            "2",
        ]
        proc = subprocess.Popen(
            cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 30
        while server.message_requests < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        db = open_store(db_path)
        kept = db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0]
        db.close()
        assert 4 <= kept < 40
        sent_before = server.message_requests
        server.delay = 0.0
        r = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        # every reply stored before the kill is reused; only the rest is asked again
        assert server.message_requests - sent_before == 40 - kept
    assert judged_count(db_path) == 40


def test_batch_submit_restart_collect(db_path: Path, standin: StandIn) -> None:
    standin.polls_until_ended = 3
    r = invoke(db_path, "--run", "support-v1", "--batch", "--json")
    assert r.exit_code == 0, r.output
    sub = json.loads(r.stdout)["submitted"]
    assert sub["requests"] == 40 and sub["batch_ids"] == ["msgbatch_0001"]
    assert standin.message_requests == 0
    body = next(q["body"] for q in standin.requests if q["path"] == "/v1/messages/batches")
    assert body["requests"][0]["params"]["tool_choice"]["name"] == "record_verdict"
    assert judged_count(db_path) == 0
    # a new process (nothing in memory): the batch is still processing
    r = invoke(db_path, "--collect")
    assert r.exit_code == 0 and "msgbatch_0001: in_progress" in r.stderr
    # submitting again does not send the same requests twice
    r = invoke(db_path, "--run", "support-v1", "--batch", "--json")
    assert json.loads(r.stdout)["submitted"]["already_pending"] == 40
    r = invoke(db_path, "--collect", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["collected"]
    assert got["stored"] == 40
    assert judged_count(db_path) == 40
    db = open_store(db_path)
    sources = {r[0] for r in db.execute("SELECT source FROM verdicts WHERE judge = ?", [JUDGE])}
    db.close()
    assert sources == {"judge-batch"}
    # collected results are cached: judging directly now costs nothing
    r = invoke(db_path, "--run", "support-v1", "--json")
    assert json.loads(r.stdout)["cached"] == 40 and standin.message_requests == 0
    assert "await collection" not in r.stderr


def test_batch_results_are_half_price(db_path: Path, standin: StandIn) -> None:
    invoke(db_path, "--limit", "1")
    db = open_store(db_path)
    direct = db.execute("SELECT cost_usd FROM verdicts WHERE judge = ?", [JUDGE]).fetchone()[0]
    db.execute("DELETE FROM judge_cache")
    db.execute("DELETE FROM verdicts WHERE judge = ?", [JUDGE])
    db.conn.commit()
    db.close()
    invoke(db_path, "--limit", "1", "--batch")
    invoke(db_path, "--collect")
    db = open_store(db_path)
    batch = db.execute("SELECT cost_usd FROM verdicts WHERE judge = ?", [JUDGE]).fetchone()[0]
    db.close()
    assert batch == pytest.approx(direct / 2)


def test_the_api_key_is_never_stored_or_printed(
    db_path: Path, standin: StandIn, tmp_path: Path, api_key: str
) -> None:
    outputs = []
    outputs.append(invoke(db_path, "--limit", "4").output)
    standin.script = [error_reply(400, "invalid_request_error", "bad")]
    outputs.append(invoke(db_path, "--limit", "6", "--only-unjudged").output)
    outputs.append(invoke(db_path, "--retry-errors").output)
    outputs.append(invoke(db_path, "--limit", "8", "--batch").output)
    outputs.append(invoke(db_path, "--collect").output)
    out = tmp_path / "export.jsonl"
    res = CliRunner().invoke(
        cli, ["--db", str(db_path), "export", "--judge-fails", "--out", str(out)]
    )
    outputs.append(res.output)
    assert res.exit_code == 0 and out.stat().st_size > 0, res.output
    secret = api_key.encode()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    assert all(api_key not in o for o in outputs)


def test_judge_of_an_unknown_trial_id_is_refused_not_zero_trials(
    db_path: Path, standin: StandIn
) -> None:
    r = invoke(db_path, "--trial", "no-such-trial")
    assert r.exit_code == 1
    assert "no trial with id 'no-such-trial'" in r.stderr
    assert standin.message_requests == 0


@pytest.mark.parametrize(
    ("args", "toml", "said"),
    [
        (["--max-cost", "nan"], "", "max cost must be a positive number of USD, got nan"),
        (["--max-cost", "inf"], "", "max cost must be a positive number of USD, got inf"),
        ([], "[judge]\nmax_cost = nan\n", "max cost must be a positive number of USD, got nan"),
        (
            ["--max-cost", "0.001"],
            '[judge]\nmodel = "m"\n[judge.prices]\nm = { input = nan, output = 15 }\n',
            "[judge.prices] 'm': prices must be numbers of 0 or more",
        ),
        (
            ["--max-cost", "0.001"],
            '[judge]\nmodel = "m"\n[judge.prices]\nm = { input = -30, output = 15 }\n',
            "[judge.prices] 'm': prices must be numbers of 0 or more",
        ),
        ([], "[judge]\nmax_wait_s = nan\n", "max_wait_s must be a number of 0 or more"),
    ],
)
def test_a_cap_or_price_that_is_no_number_is_refused_before_anything_is_sent(
    db_path: Path, standin: StandIn, args: list[str], toml: str, said: str
) -> None:
    """NaN compares false with everything, so `--max-cost nan` ran with 'cost cap $nan' and sent
    every request; a NaN or negative price made each reply cost NaN or less than nothing, and a
    $0.001 cap let 20 requests through ($nan, $-0.6129 spent)."""
    if toml:
        Path("reviewer.toml").write_text(toml)
    r = invoke(db_path, "--limit", "5", *args)
    assert r.exit_code == 1, r.output
    assert said in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert standin.message_requests == 0


def test_replies_that_do_not_say_their_usage_still_meet_the_cap(
    db_path: Path, standin: StandIn
) -> None:
    """An Anthropic-compatible endpoint that leaves `usage` out of its replies: each reply was
    counted as $0, so a $0.10 cap let all 40 requests through. Such a reply now counts at the
    upper-end estimate it was sent under, and the run says so once."""
    from reviewer.judge.standin import Reply, message

    def no_usage(params: dict[str, Any]) -> Reply:
        call = {"verdict": "pass", "rationale": "ok"}
        block = {"type": "tool_use", "id": "t", "name": "record_verdict", "input": call}
        body = message(params, [block])
        body.pop("usage")
        return Reply(body=body)

    standin.policy = no_usage
    r = invoke(db_path, "--max-cost", "0.1", "--json")
    assert r.exit_code == 3, r.output
    data = json.loads(r.stdout)
    assert data["stopped_at_cap"] and 0 < standin.message_requests < 40
    assert r.stderr.count("does not say how many tokens it used") == 1
