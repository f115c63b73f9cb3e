"""Regression tests for small CLI defects: a stale hint, empty names silently ignored, audit's
progress lines in piped output."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from reviewer.commands.common import SafeStream, progress_console, safe_output
from tests.conftest import native_trial, run_cli, sample_copy, write_jsonl


def test_queues_empty_db_suggests_sample_size(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1")])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
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


def test_a_queue_name_has_a_length_and_a_message_cuts_long_ones(tmp_path: Path) -> None:
    """A queue of a 100,000-character name was made, and every 'no queue named …; queues: …'
    after it was 100,000 characters long, --json too (found by an attack): a name given is at
    most 200 characters, and a message lists the queues as it lists runs (a name past 200 cut in
    the middle, 8 names and how many more)."""
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2", False)])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    code, _, err = run_cli("--db", "x.db", "sample", "--size", "1", "--name", "n" * 100_000)
    assert code == 2 and err == "reviewer: a queue name is at most 200 characters, got 100,000\n"
    code, _, err = run_cli("--db", "x.db", "monitor", "--no-judge", "--queue", "n" * 201)
    assert (
        code == 2 and err == "reviewer: --queue: a queue name is at most 200 characters, got 201\n"
    )
    long = "q" * 200
    assert run_cli("--db", "x.db", "sample", "--size", "1", "--name", long)[0] == 0
    code, _, err = run_cli("--db", "x.db", "labels", "give", "t1", "fail", "--queue", "nosuch")
    assert code == 2 and err.startswith("reviewer: no queue named 'nosuch'; queues: 'qqq")
    assert long in err and len(err) < 300
    code, out, err = run_cli("--db", "x.db", "queues", "nosuch", "--json")
    assert code == 2 and json.loads(out)["error"] == err.removeprefix("reviewer: ").strip()


def test_audit_progress_lines_not_in_piped_output(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2", False)])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    code, out, err = run_cli("--db", "x.db", "audit")
    assert code == 0 and "auditing" not in err and out.startswith("r1: no finding")


# Folded in from tests/test_progress_bars.py:
# Our own progress bars on a terminal: rich's escapes reach the terminal as escapes (a bar that
# redraws in place), while the command's other output still goes through the SafeStream.


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_console_writes_to_the_real_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    raw = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", SafeStream(raw))
    console = progress_console()
    assert console.file is raw and console.is_terminal


def test_import_progress_bar_redraws_with_real_escapes_and_data_stays_visible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: the bar's own colour codes and carriage returns were shown as ␛[..m stand-ins,
    a screenful of them, because rich's stderr redirect routed the bar back through the SafeStream."""
    from reviewer.commands.imports import run_import
    from reviewer.store import open_store

    name = "evil\x1b]52;c;aGk=\x07[red]x.jsonl"
    write_jsonl(tmp_path / name, [native_trial("t", True, trial=i) for i in range(3)])
    out, err = FakeTerminal(), FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with safe_output(), open_store(tmp_path / "x.db") as db:
        run_import(db, [str(tmp_path)], run=None, check=False)
    written = err.getvalue()
    assert "imported 3 trials" in written
    assert "\x1b[" in written or "\r" in written  # the bar itself drew on the terminal
    assert "␛[" not in written  # ... and none of its escapes was turned into a stand-in
    assert "\x1b]52" not in written and "\x07" not in written  # the file name never drives it


def test_a_line_break_in_a_file_name_cannot_forge_a_line(tmp_path: Path) -> None:
    """A file name holding line breaks made its skip line read as three lines of ours, one a
    forged summary (found by an attack): a diagnostic is one line whatever it quotes."""
    folder = tmp_path / "d"
    folder.mkdir()
    name = "x.jsonl:1: ok\nimported 500 trials (3 runs, 40 tasks) from 9 files; 0 skipped\rz.jsonl"
    (folder / name).write_text('{"task_id": "a", "messages": [], "outcome": {"passed": NaN}}\n')
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    lines = err.splitlines()
    assert code == 1 and len(lines) == 2, err
    assert lines[0].startswith(str(folder)) and " ⏎ imported 500 trials" in lines[0]
    assert lines[0].endswith(
        "outcome.passed: NaN is not a number reviewer stores (finite numbers only)"
    )
    assert lines[1] == "imported 0 trials (0 runs, 0 tasks) from 1 file; 1 skipped"
    code, _, err = run_cli("--db", "x.db", "rules", str(folder / "a\nb.toml"))
    assert code == 1 and err.count("\n") == 1 and "a ⏎ b.toml: cannot read" in err


# Found by an attack: plain options that ended as "internal error" (exit 70) or a raw exception.


@pytest.mark.parametrize(
    "args",
    [
        ["cluster", "--seed", "-1"],
        ["cluster", "--seed", "4294967296", "--json"],
        ["compare", "support-v1", "support-v2", "--seed", "-1"],
        ["gate", "support-v1", "--baseline", "support-v2", "--seed", "-1"],
        ["sample", "--size", "3", "--seed", "99999999999999999999999"],
    ],
    ids=["cluster", "cluster-json", "compare", "gate", "sample"],
)
def test_a_seed_out_of_range_is_a_usage_error(args: list[str]) -> None:
    sample_copy("x.db")
    code, _, err = run_cli("--db", "x.db", *args)
    assert code == 2 and "'--seed': " in err and "is not in the range 0<=x<=4294967295" in err
    assert "internal error" not in err


def test_the_largest_seed_works() -> None:
    sample_copy("x.db")
    code, out, err = run_cli("--db", "x.db", "cluster", "--seed", "4294967295")
    assert code == 0 and "seed 4294967295" in out, err


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://u:secret@[bad/x", "postgresql://u:***@[bad/x: cannot connect"),
        ("postgresql://%ff@127.0.0.1:1/x", "not a PostgreSQL URL it can read"),
    ],
)
def test_a_postgresql_url_that_does_not_parse_is_one_line(url: str, said: str) -> None:
    pytest.importorskip("psycopg")
    code, _, err = run_cli("--db", url, "report")
    assert code == 1 and said in err and err.count("\n") == 1, err
    assert "internal error" not in err and "secret" not in err


def test_output_to_a_full_disk_is_one_line(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    import subprocess

    sample_copy("x.db")
    code = "from reviewer.cli import main; main()"
    for args in (["report"], ["trials", "--json"]):
        with open("/dev/full", "w") as full:
            r = subprocess.run(
                [sys.executable, "-c", code, "--db", "x.db", *args],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
        assert r.returncode == 1
        assert r.stderr == "reviewer: cannot write the output: No space left on device\n"


@pytest.mark.parametrize(
    "args",
    [
        ["import", "--run", "\udcff", "r.jsonl"],
        ["import", "--task", "a\udcff", "r.jsonl"],
        ["sample", "--size", "2", "--name", "\udcff"],
        ["baseline", "set", "r1", "--note", "\udcff"],
        ["--labeler", "ann", "labels", "give", "abcdef\udcff", "pass"],  # was the codec's error
        ["show", "abcdef\udcff"],  # was the codec's error
    ],
    ids=["import-run", "import-task", "sample-name", "baseline-note", "labels-give-trial", "show"],
)
def test_an_option_that_is_not_utf8_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    write_jsonl(Path("r.jsonl"), [native_trial("t1"), native_trial("t2", False)])
    assert run_cli("--db", "x.db", "import", "r.jsonl")[0] == 0
    code, _, err = run_cli("--db", "x.db", *args)
    assert code == 2 and "'<U+DCFF>' is not UTF-8 text: give it as UTF-8" in err.replace(
        "a<", "<"
    ).replace("abcdef<", "<")
    assert "UnicodeEncodeError" not in err and "codec" not in err
