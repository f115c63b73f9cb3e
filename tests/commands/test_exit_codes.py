"""Regression tests: gate, monitor and audit exit 2 (not 1, their "regressed / alert" code) when the
database is locked or read-only, and usage errors of other commands exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer import cli
from tests.commands.test_monitor import stream
from tests.conftest import native_trial, run_cli, write_jsonl
from tests.store.test_db import cli_exit
from tests.support.writer_lock import hold_write_lock


def test_gate_monitor_audit_locked_database_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "r.db")
    base = [native_trial(f"t{i}", True, run="base", trial=j) for i in range(3) for j in (1, 2)]
    new = [native_trial(f"t{i}", True, run="new", trial=j) for i in range(3) for j in (1, 2)]
    write_jsonl(tmp_path / "b.jsonl", base)
    write_jsonl(tmp_path / "n.jsonl", new)
    assert cli_exit(cli.main, ["--db", db, "import", str(tmp_path / "b.jsonl")]) == 0
    assert cli_exit(cli.main, ["--db", db, "baseline", "set", "base"]) == 0
    folder = stream(tmp_path, days=2, per_day=3)
    monkeypatch.setenv("REVIEWER_LOCK_TIMEOUT", "0.2")
    other = hold_write_lock(Path(db))
    try:
        capsys.readouterr()
        args = ["--db", db, "gate", "--import", str(tmp_path / "n.jsonl")]
        assert cli_exit(cli.main, args) == 2
        args = ["--db", db, "monitor", "--no-judge", "--import", str(folder)]
        assert cli_exit(cli.main, args) == 2
        assert cli_exit(cli.main, ["--db", db, "audit"]) == 2
    finally:
        other.release()
    err = capsys.readouterr().err
    assert "internal error" not in err and "another process is writing" in err


def test_usage_errors_exit_2_not_1(tmp_path: Path) -> None:
    runs = write_jsonl(
        tmp_path / "r.jsonl", [native_trial("t1", trial=1), native_trial("t1", trial=2)]
    )
    for args in (
        ["import", "--pass-threshold", "nan", str(runs)],
        ["import", "--success-field", "", str(runs)],
    ):
        code, _, err = run_cli(*args)
        assert code == 2, (args, err)
    assert run_cli("import", str(runs))[0] == 0
    for args in (
        ["plan", "--delta", "0"],
        ["plan", "--power", "1"],
        ["audit", "--run", "nosuch"],
        ["cluster", "--run", "nosuch"],
        ["sample", "--run", "nosuch"],
    ):
        code, _, err = run_cli(*args)
        assert code == 2, (args, err)
        assert "Traceback" not in err


def test_sigterm_leaves_nothing_to_resume() -> None:
    """SIGTERM unwinds the command and puts SIGCONT back to its default: timeout(1) sends SIGCONT
    right after SIGTERM, and the app's own handler of it raised "no running event loop" while
    the app was closing (an internal error instead of "stopped by SIGTERM")."""
    import signal

    from reviewer.commands.common import Terminated, _raise_terminated

    called: list[int] = []
    before = signal.signal(signal.SIGCONT, lambda signum, frame: called.append(signum))
    try:
        with pytest.raises(Terminated):
            _raise_terminated(signal.SIGTERM, None)
        assert signal.getsignal(signal.SIGCONT) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGCONT, before)
