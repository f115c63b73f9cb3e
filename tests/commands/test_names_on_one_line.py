"""A run name, labeler or note holding a line break is printed on one line (the break shown as ⏎) by
the commands that named it raw in a line of their own: `plan`'s and `monitor`'s first line and
`baseline set`/`show`/`history`. A name 'x\\nFAIL ...' printed a line of its own that passed for
the command's."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli

NAME = "zz\nFORGED\rCR"


def _db(tmp_path: Path) -> Path:
    src = tmp_path / "runs.jsonl"
    with src.open("w", encoding="utf-8") as f:
        for t in range(4):
            rec = {
                "run": NAME,
                "task_id": "t",
                "trial": t + 1,
                "outcome": {"passed": t % 2 == 0},
                "messages": [{"role": "user", "content": "hi"}],
                "metadata": {"started_at": f"2026-01-0{t + 1}T00:00:00Z"},
            }
            f.write(json.dumps(rec) + "\n")
    db = tmp_path / "r.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "import", str(src)])
    assert result.exit_code == 0, result.output
    return db


def _forged(output: str) -> list[str]:
    return [line for line in output.split("\n") if line.startswith(("FORGED", "CR"))]


def test_plan_monitor_and_baseline_name_a_run_on_one_line(tmp_path: Path) -> None:
    db = _db(tmp_path)
    for args in (
        ["plan", "--run", NAME],
        ["monitor"],
        ["baseline", "set", NAME, "--note", "note\nFORGED"],
        ["baseline", "show"],
        ["baseline", "history"],
    ):
        result = CliRunner().invoke(cli, ["--db", str(db), *args])
        assert result.exit_code == 0, (args, result.output)
        assert "zz ⏎ FORGED ⏎ CR" in result.output, (args, result.output)
        assert _forged(result.output) == [], (args, result.output)
