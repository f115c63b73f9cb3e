"""A --db (or copy's SRC / DST, or labels export's FILE) whose name the system refuses to look at (a
name past 255 bytes, a path past 4,096, a symlink loop) stopped every command with an internal error
(OSError: [Errno 36] File name too long, exit 70): Path.exists() and is_dir() raise OSError for such
a name instead of answering. It is one line naming the file and the problem now."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviewer.store.db import name_problem
from tests.conftest import native_trial, run_cli, write_jsonl

LONG = "y" * 300


def test_name_problem() -> None:
    assert name_problem("reviewer.db") is None
    assert name_problem("no/such/folder/x.db") is None
    assert name_problem(LONG) == (
        "the name is too long for a file (the system takes 255 bytes a name, 4,096 a path)"
    )
    assert name_problem("d/" * 3000 + "x.db") is not None


@pytest.mark.parametrize(
    "args",
    [["report"], ["trials"], ["queues"], ["import", "IMPORT"]],
    ids=["report", "trials", "queues", "import"],
)
def test_a_db_name_too_long_is_one_line(tmp_path: Path, args: list[str]) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", [native_trial("t", trial=1)])
    db = str(tmp_path / LONG)
    code, out, err = run_cli("--db", db, *[str(src) if a == "IMPORT" else a for a in args])
    assert code in (1, 2), err
    assert (
        err
        == f"reviewer: {db}: the name is too long for a file (the system takes 255 bytes a name, 4,096 a path)\n"
    )


def test_a_symlink_loop_as_db_is_one_line(tmp_path: Path) -> None:
    os.symlink(tmp_path / "b.db", tmp_path / "a.db")
    os.symlink(tmp_path / "a.db", tmp_path / "b.db")
    code, out, err = run_cli("--db", str(tmp_path / "a.db"), "report")
    assert code == 1
    assert err.startswith(f"reviewer: {tmp_path / 'a.db'}: cannot look at it: ")
    assert "internal error" not in err


def test_copy_and_labels_export_with_a_name_too_long_are_one_line(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", [native_trial("t", trial=1)])
    db = str(tmp_path / "x.db")
    assert run_cli("--db", db, "import", str(src))[0] == 0
    long = str(tmp_path / LONG)
    for args in (["copy", db, long], ["copy", long, str(tmp_path / "y.db")]):
        code, out, err = run_cli(*args)
        assert code == 1, err
        assert (
            err
            == f"reviewer: {long}: the name is too long for a file (the system takes 255 bytes a name, 4,096 a path)\n"
        )
    assert not (tmp_path / "y.db").exists()
    code, out, err = run_cli("--db", db, "labels", "export", long)
    assert code in (1, 2) and "internal error" not in err, err
    assert err.startswith(f"reviewer: {long}: cannot write: ")


def test_a_configured_rubric_name_too_long_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reviewer rubric` with reviewer.toml's rubric = a name past the limit: internal error
    (OSError from Path.exists()), now the read's own one line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reviewer.toml").write_text(f'rubric = "{LONG}"\n')
    code, out, err = run_cli("--db", str(tmp_path / "x.db"), "rubric")
    assert code == 1, err
    assert err == f"reviewer: {tmp_path / LONG}: cannot read: File name too long\n"
