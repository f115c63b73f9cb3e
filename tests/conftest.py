"""Shared fixtures: every test runs on an isolated machine (config, data dirs, no API key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CORPORA = REPO.parent / "shared" / "corpora"
#: The small sample data set many tests pin numbers of (88 trials; see its SOURCE.md).
SAMPLE_RUNS = FIXTURES / "sample_small"
#: The real sample_runs/ folder the README tours and its generator writes.
REAL_SAMPLE_RUNS = REPO / "sample_runs"


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    """The sample runs imported by `reviewer import` into a fresh database (a test file may define
    its own ``sample_db`` for another set-up)."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    path = tmp_path / "s.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(SAMPLE_RUNS)])
    assert result.exit_code == 0, result.stderr
    return path


@pytest.fixture(autouse=True)
def isolated_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for var in (
        "REVIEWER_DB",
        "REVIEWER_LABELER",
        "REVIEWER_CONFIG",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_AUTH_TOKEN",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)


def real_data(fixture: Path, *corpus_parts: str) -> list[Any]:
    """Test parameters: the attributed subset in tests/fixtures, plus the full corpus file when
    ../shared/corpora is beside the checkout. A fresh clone runs the subset and skips nothing."""
    params = [pytest.param(fixture, id="fixture")]
    full = CORPORA.joinpath(*corpus_parts)
    if full.exists():
        params.append(pytest.param(full, id="corpus"))
    return params


def native_trial(task_id: str = "t1", passed: bool = True, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "run": "r1",
        "task_id": task_id,
        "outcome": {"passed": passed},
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "Refund order #W5521 please"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "name": "get_order", "arguments": {"order_id": "W5521"}}
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "name": "get_order",
                "content": '{"status": "delivered"}',
            },
            {"role": "assistant", "content": "Done, refunded."},
        ],
    }
    rec.update(extra)
    return rec


def write_jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run_cli(*args: str) -> tuple[int, str, str]:
    """`reviewer ARGS` in-process: (exit code, stdout, stderr)."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def stored(db_path: str = "x.db", table: str = "trials") -> int:
    """How many rows TABLE of the database holds."""
    from reviewer.store import open_store

    with open_store(db_path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def inspect_sample(i: int, **extra: Any) -> dict[str, Any]:
    """A minimal Inspect AI sample (one user message, score C), with EXTRA fields over it."""
    return {
        "id": i,
        "epoch": 1,
        "messages": [{"role": "user", "content": "hi"}],
        "scores": {"s": {"value": "C"}},
        **extra,
    }
