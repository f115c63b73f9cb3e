"""Regression tests for small CLI defects: a stale hint, empty names silently ignored, audit's
progress lines in piped output."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import native_trial, run_cli, write_jsonl


def test_queues_empty_db_suggests_sample_size() -> None:
    code, _, err = run_cli("--db", "x.db", "queues")
    assert code == 0 and "reviewer sample --size 50" in err and "--n 50" not in err


def test_empty_queue_and_sample_name_are_refused(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2", False)])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    code, _, err = run_cli("--db", "x.db", "sample", "--name", "")
    assert code == 2 and err.startswith("reviewer: --name must not be empty")
    code, _, err = run_cli("--db", "x.db", "monitor", "--no-judge", "--queue", " ")
    assert code == 2 and err == "reviewer: --queue must not be empty\n"
    code, out, err = run_cli("--db", "x.db", "queues")
    assert "no queues yet" in err  # nothing was made


def test_audit_progress_lines_not_in_piped_output(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2", False)])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    code, out, err = run_cli("--db", "x.db", "audit")
    assert code == 0 and "auditing" not in err and out.startswith("r1: no finding")
