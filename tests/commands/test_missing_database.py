"""A command that reads what was imported, given a database file that does not exist (a mistyped
``--db``), says so in one line and leaves no file behind: it used to make an empty database and
answer from it ("no pass/fail labels yet", exit 0) as if the real one held nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli

LINE = "reviewer: no database tpyo.db; import some first: reviewer import PATH"

# the command, and its exit code for a data error (2 where its help says so)
COMMANDS = [
    (["agreement"], 1),
    (["bias"], 1),
    (["queues"], 1),
    (["queues", "q", "--next"], 1),
    (["rules"], 1),
    (["labels", "export", "-"], 1),
    (["baseline", "show"], 1),
    (["baseline", "history"], 1),
    (["baseline", "set", "r1"], 1),
    (["judge", "--estimate"], 1),
    (["plan"], 1),
    (["gate", "r2"], 2),
    (["cluster", "rename", "1", "x"], 1),
    (["report"], 1),
    (["trials"], 1),
]


@pytest.mark.sqlite_only  # under the PostgreSQL switch a file name stands for a server's database
@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_read_on_a_missing_database_is_one_line_and_makes_nothing(
    tmp_path: Path, args: list[str], code: int
) -> None:
    r = CliRunner().invoke(cli, ["--db", "tpyo.db", *args])
    assert (r.exit_code, r.stderr.strip()) == (code, LINE)
    assert not Path("tpyo.db").exists() and not list(Path().glob("tpyo.db*"))


@pytest.mark.sqlite_only
def test_the_json_form_says_it_in_json(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["--db", "tpyo.db", "agreement", "--json"])
    assert r.exit_code == 1
    assert json.loads(r.stdout) == {"error": LINE.removeprefix("reviewer: ")}
    assert not Path("tpyo.db").exists()


# a --db written as a URL reviewer does not open (SQLAlchemy's SQLite form, another server, a
# PostgreSQL URL missing a slash) is no missing file: the read says what is wrong with it, as an
# import and the app do, instead of "import some first" (which then refused the same URL)
URLS = [
    ("sqlite:///reviews.db", "sqlite:///reviews.db: not a database reviewer opens"),
    ("mysql://me@db/evals", "mysql://me@db/evals: not a database reviewer opens"),
    ("postgresql:/evals", "postgresql:/evals: not a PostgreSQL URL"),
]


@pytest.mark.parametrize(("url", "said"), URLS, ids=[u for u, _ in URLS])
@pytest.mark.parametrize("args", [["report"], ["queues"], ["labels", "export", "-"]])
def test_a_read_on_a_url_reviewer_does_not_open_names_the_url(
    tmp_path: Path, url: str, said: str, args: list[str]
) -> None:
    before = sorted(Path().rglob("*"))
    r = CliRunner().invoke(cli, ["--db", url, *args])
    assert r.exit_code == 1 and r.stderr.startswith(f"reviewer: {said}"), r.stderr
    assert len(r.stderr.splitlines()) == 1 and sorted(Path().rglob("*")) == before
    imported = CliRunner().invoke(cli, ["--db", url, "import", str(tmp_path / "none")])
    assert imported.stderr == r.stderr  # the same line as the import's


@pytest.mark.parametrize("blank", ["", " "])
@pytest.mark.parametrize(
    "args", [["report"], ["queues"], ["labels", "export", "-"], ["import", "x"]]
)
def test_a_blank_db_is_told_so(tmp_path: Path, blank: str, args: list[str]) -> None:
    """--db '' (an unset --db "$DB") said ".: is a folder, not a database file", and --db ' '
    "no database  ; import some first": either is now named as blank, in one line, nothing made."""
    before = sorted(Path().rglob("*"))
    r = CliRunner().invoke(cli, ["--db", blank, *args])
    line = f"reviewer: {blank!r}: a blank database name; name a SQLite file (reviewer.db) or a "
    assert r.exit_code == 1 and r.stderr.startswith(line), r.stderr
    assert len(r.stderr.splitlines()) == 1 and sorted(Path().rglob("*")) == before


@pytest.mark.parametrize("which", ["src", "dst"])
def test_a_blank_copy_source_or_destination_is_told_so(tmp_path: Path, which: str) -> None:
    """reviewer copy '' r.db said 'reviewer: : no such database file'."""
    args = ["", str(tmp_path / "new.db")] if which == "src" else [str(tmp_path / "old.db"), ""]
    r = CliRunner().invoke(cli, ["copy", *args])
    assert r.exit_code == 1 and r.stderr.startswith("reviewer: '': a blank database name"), r.stderr
    assert not (tmp_path / "new.db").exists()
