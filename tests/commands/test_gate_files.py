"""`gate --markdown FILE` / `--junit FILE` never destroy what they should not: the open database (88
trials gone before), a device or pipe, a folder, or a file the gate did not write (without --force).
Each refusal is one line with exit 2 before anything is imported or gated, and the file is untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_RUNS, run_cli, stored


@pytest.fixture
def gated(tmp_path: Path) -> Path:
    for args in (
        ("--db", "g.db", "rules", str(SAMPLE_RUNS / "rules.toml")),
        (
            "--db",
            "g.db",
            "import",
            str(SAMPLE_RUNS / "support-v1.jsonl"),
            str(SAMPLE_RUNS / "support-v2.jsonl"),
        ),
        ("--db", "g.db", "baseline", "set", "support-v1"),
    ):
        code, _, err = run_cli(*args)
        assert code == 0, err
    return tmp_path / "g.db"


def _gate(*args: str) -> tuple[int, str, str]:
    return run_cli("--db", "g.db", "gate", "support-v2", *args)


@pytest.mark.parametrize("name", ["g.db", "g.db-wal", "link-to-db"])
def test_the_open_database_is_never_a_report(gated: Path, name: str) -> None:
    trials = stored("g.db")
    if name == "link-to-db":
        os.symlink("g.db", "link-to-db")
    for flag in ("--markdown", "--junit"):
        code, out, err = _gate(flag, name, "--force")
        assert code == 2 and out == ""
        assert (
            err.strip() == f"reviewer: {name}: is the database reviewer has open; give another file"
        )
    assert stored("g.db") == trials


def test_a_pipe_a_device_and_a_folder_are_refused(gated: Path) -> None:
    os.mkfifo("pipe")
    os.mkdir("folder")
    code, _, err = _gate("--junit", "pipe", "--force")
    assert code == 2 and "pipe: not a regular file (a device, pipe or socket); not written" in err
    code, _, err = _gate("--markdown", "/dev/null", "--force")
    assert code == 2 and "/dev/null: not a regular file" in err
    code, _, err = _gate("--markdown", "folder")
    assert code == 2 and "'folder' is a directory" in err
    code, _, err = _gate("--markdown", "")
    assert code == 2 and "--markdown: give a file name" in err


def test_a_file_the_gate_did_not_write_needs_force(gated: Path) -> None:
    Path("notes.md").write_text("# my notes\nkeep me\n", encoding="utf-8")
    code, out, err = _gate("--markdown", "notes.md")
    assert code == 2 and out == ""
    assert "notes.md: exists and was not written by `reviewer gate`; --force to overwrite it" in err
    assert Path("notes.md").read_text(encoding="utf-8") == "# my notes\nkeep me\n"
    code, _, _ = _gate("--markdown", "notes.md", "--force")
    assert code == 1 and Path("notes.md").read_text(encoding="utf-8").startswith(
        "## reviewer gate: FAIL"
    )


def test_its_own_reports_and_an_empty_step_summary_are_rewritten(gated: Path) -> None:
    Path("summary.md").write_text("", encoding="utf-8")  # $GITHUB_STEP_SUMMARY starts empty
    for _ in range(2):
        code, _, err = _gate("--markdown", "summary.md", "--junit", "gate.xml")
        assert code == 1, err
    assert Path("summary.md").read_text(encoding="utf-8").startswith("## reviewer gate: FAIL")
    assert '<testsuites name="reviewer gate: support-v2 vs support-v1"' in Path(
        "gate.xml"
    ).read_text(encoding="utf-8")
    # a JUnit file is not a Markdown report: the gate's own marks are per kind
    code, _, err = _gate("--markdown", "gate.xml")
    assert code == 2 and "gate.xml: exists and was not written by `reviewer gate`" in err
    code, _, err = _gate("--markdown", "same", "--junit", "same")
    assert code == 2 and "same: given for both --markdown and --junit; give two files" in err


def test_nothing_is_imported_when_a_report_path_is_refused(gated: Path, tmp_path: Path) -> None:
    trials = stored("g.db")
    code, _, err = run_cli(
        "--db", "g.db", "gate", "--import", str(SAMPLE_RUNS / "support-v2.jsonl"), "--junit", "g.db"
    )
    assert code == 2 and "is the database reviewer has open" in err
    assert stored("g.db") == trials
