"""^C in `reviewer judge`: nothing more is sent, and the replies already on their way are stored."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store


def test_ctrl_c_stores_the_replies_in_flight(db_path: Path, tmp_path: Path, api_key: str) -> None:
    with StandIn(delay=1.0) as server:
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": api_key}
        cmd = [sys.executable, "-m", "reviewer", "--db", str(db_path), "judge"]
        proc = subprocess.Popen(
            [*cmd, "--concurrency", "3"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # ^C as a terminal delivers it, even when this suite runs in a background job (which
            # starts with SIGINT ignored, a disposition children inherit)
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        deadline = time.monotonic() + 30
        while server.message_requests < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted: storing the 3 replies on their way" in err
        assert server.message_requests == 3
    with open_store(db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM judge_cache").fetchone()[0] == 3
        assert db.execute("SELECT COUNT(*) FROM verdicts WHERE source = 'judge'").fetchone()[0] == 3
        assert db.execute("SELECT COUNT(*) FROM judge_claims").fetchone()[0] == 0
