"""Regression test: audit reported a copy group among the generated production stream's unscored
conversations, whose copies change no figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REAL_SAMPLE_RUNS, run_cli


def test_audit_unscored_production_copies_are_no_finding(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(REAL_SAMPLE_RUNS / "generate.py"), "--production", "prod"], check=True
    )
    code, _, err = run_cli("import", "prod")
    assert code == 0, err
    assert "copy group" not in err and "audit: no finding in 1 run" in err
    code, out, err = run_cli("audit", "--run", "production", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["findings"] == [] and run["counts"]["copy"] == 0
