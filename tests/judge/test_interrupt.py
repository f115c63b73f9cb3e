"""^C in `reviewer judge`: nothing more is sent, and the replies already on their way are stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store


def _signal_judge_with_3_in_flight(
    server: StandIn, db_path: Path, tmp_path: Path, api_key: str, sig: signal.Signals
) -> tuple[subprocess.Popen[str], str, list[str], dict[str, str]]:
    """Start `reviewer judge --concurrency 3` against ``server``, wait until its 3 requests are
    on their way, deliver ``sig`` and wait for the end: (the process, its stderr, the command,
    its environment)."""
    env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": api_key}
    cmd = [sys.executable, "-m", "reviewer", "--db", str(db_path), "judge"]
    proc = subprocess.Popen(
        [*cmd, "--concurrency", "3"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # the signal as a terminal or a CI runner delivers it, even when this suite runs in a
        # background job (which starts with SIGINT ignored, a disposition children inherit)
        preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, sig)],
    )
    deadline = time.monotonic() + 30
    while server.message_requests < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc, err, cmd, env


def test_ctrl_c_stores_the_replies_in_flight(db_path: Path, tmp_path: Path, api_key: str) -> None:
    with StandIn(delay=1.0) as server:
        proc, err, _, _ = _signal_judge_with_3_in_flight(
            server, db_path, tmp_path, api_key, signal.SIGINT
        )
        assert proc.returncode == 130, err
        assert "interrupted: storing the 3 replies on their way" in err
        assert server.message_requests == 3
    with open_store(db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 3
        assert db.execute("SELECT COUNT(*) FROM verdicts WHERE source = 'judge'").fetchone()[0] == 3
        assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_store_the_replies_in_flight_like_ctrl_c(
    db_path: Path, tmp_path: Path, api_key: str, sig: signal.Signals
) -> None:
    """A CI timeout (SIGTERM), `docker stop` (SIGTERM) or a closed terminal (SIGHUP) killed the run
    at once: the replies on their way were paid for and lost, and the next run bought them again."""
    with StandIn(delay=1.0) as server:
        proc, err, cmd, env = _signal_judge_with_3_in_flight(
            server, db_path, tmp_path, api_key, sig
        )
        assert proc.returncode == 128 + sig, err
        assert f"{sig.name}: sending nothing more; storing the replies on their way" in err
        assert f"reviewer: stopped by {sig.name}; every verdict received is stored" in err
        assert server.message_requests == 3
        with open_store(db_path) as db:
            assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 3
            assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0
        # the next run buys nothing it already has: the 3 stored replies are not asked again
        before = server.message_requests
        done = subprocess.run(
            [*cmd, "--limit", "3"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert server.message_requests == before


def test_sigterm_during_an_import_rolls_back_and_says_so(tmp_path: Path) -> None:
    """Any other command unwinds as ^C does on SIGTERM: one line, exit 143, nothing half-written."""
    big = tmp_path / "big.jsonl"
    line = (
        '{"run": "r", "task_id": "t%d", "outcome": {"passed": true}, "messages": '
        '[{"role": "user", "content": "%s"}]}\n'
    )
    big.write_text("".join(line % (i, "x" * 2000) for i in range(60_000)), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer", "--db", str(tmp_path / "i.db"), "import", str(big)],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL),
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the import finished before the signal")
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "reviewer: stopped by SIGTERM"
    assert "Traceback" not in err
    with open_store(tmp_path / "i.db") as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] in (0, 60_000)
