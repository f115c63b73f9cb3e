"""`reviewer copy SRC DST` (store/copy.py, workflows/copy.py): a whole database moved between
SQLite and PostgreSQL, either way, verified by counts and content hashes, and the copy answering
every question as the original does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.store.db import open_store
from reviewer.store.postgres import TEST_SERVER_VAR
from tests.conftest import SAMPLE_RUNS, foreign_sqlite, run_cli
from tests.support.pg_server import drop_connections

# What a user would compare after a move: the numbers, the trials list, search, labels, queues.
_QUESTIONS = (
    ("report",),
    ("compare", "support-v1", "support-v2"),
    ("trials", "--limit", "200"),
    ("trials", "--search", "refund", "--limit", "200"),
    ("labels", "export", "-"),
    ("queues",),
    ("clusters",),
)


def _answers(db: str) -> list[str]:
    out = []
    for question in _QUESTIONS:
        code, stdout, stderr = run_cli("--db", db, *question)
        out.append(f"{code}\n{stdout}\n{stderr.replace(db, 'DB')}")
    return out


@pytest.fixture
def rich_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real SQLite file (even under --backend postgres): the sample runs imported, clustered,
    sampled into a queue and one trial labeled (markup in its note)."""
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    path = tmp_path / "src.db"
    for args in (
        ("import", str(SAMPLE_RUNS)),
        ("cluster",),
        ("sample", "--size", "10", "--name", "q1"),
    ):
        code, _, err = run_cli("--db", str(path), *args)
        assert code == 0, err
    label = ("labels", "give", _first_trial(path), "fail", "--note", "wrong <b>refund</b>")
    code, _, err = run_cli("--db", str(path), *label)
    assert code == 0, err
    return path


def _first_trial(path: Path) -> str:
    with open_store(path) as db:
        return str(db.execute("SELECT id FROM trials ORDER BY seq LIMIT 1").fetchone()[0])


def test_a_sqlite_copy_is_verified_and_answers_as_the_original(
    rich_sqlite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    dest = tmp_path / "dest.db"
    code, out, err = run_cli("copy", str(rich_sqlite), str(dest), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["verified"] is True
    counts = {t["table"]: t["rows"] for t in result["tables"]}
    assert counts["trials"] == 88 and counts["labels"] == 1 and counts["cluster_members"] > 0
    assert counts["queue_items"] == 10
    assert _answers(str(dest)) == _answers(str(rich_sqlite))


def test_sqlite_to_postgres_and_back_answers_the_same(
    rich_sqlite: Path, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    code, out, err = run_cli("copy", str(rich_sqlite), pg_url)
    assert code == 0, err
    assert out.splitlines()[-1].endswith("every count and content hash the same")
    back = tmp_path / "back.db"
    code, out, err = run_cli("copy", pg_url, str(back), "--json")
    assert code == 0, err
    assert json.loads(out)["verified"] is True
    original = _answers(str(rich_sqlite))
    assert _answers(pg_url) == original
    assert _answers(str(back)) == original
    # the copy on PostgreSQL takes new rows after the copied ones (ids carry on)
    code, _, err = run_cli("--db", pg_url, "labels", "give", _first_trial(back), "pass")
    assert code == 0, err
    with open_store(pg_url) as db:
        ids = [r[0] for r in db.execute("SELECT id FROM labels ORDER BY id").fetchall()]
    assert len(ids) == 2 and ids[1] > ids[0]


def test_a_destination_holding_data_is_refused_and_left_as_it_was(
    rich_sqlite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    other = tmp_path / "other.db"
    assert run_cli("--db", str(other), "import", str(SAMPLE_RUNS))[0] == 0
    before = other.read_bytes()
    code, out, err = run_cli("copy", str(rich_sqlite), str(other))
    assert code == 1 and out == ""
    assert err.startswith(f"reviewer: {other}: already holds data (2 runs, 88 trials, 88 verdicts")
    assert len(err.splitlines()) == 1
    with open_store(other) as db:
        assert db.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 0
    assert other.read_bytes()[:100] == before[:100]


@pytest.mark.parametrize("which", ["same", "missing"])
def test_a_copy_onto_itself_or_from_nothing_is_one_line(
    rich_sqlite: Path, tmp_path: Path, which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    src = str(rich_sqlite) if which == "same" else str(tmp_path / "nothing.db")
    code, out, err = run_cli("copy", src, str(rich_sqlite))
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert ("the same database" if which == "same" else "no such database file") in err
    assert not (tmp_path / "nothing.db").exists()


def test_an_unreachable_server_is_one_line(rich_sqlite: Path) -> None:
    code, out, err = run_cli("copy", str(rich_sqlite), "postgresql://nobody@127.0.0.1:1/none")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert "cannot connect to the PostgreSQL server" in err
    # libpq's two lines, the reason and its question, read as two sentences of the one line
    assert "Connection refused; Is the server running" in err, err


def test_text_with_a_nul_copies_to_postgresql_verified(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL stores U+2400 for a NUL (it holds none in text): the copy's hash spells both
    alike, so such a database copies verified, and its reports read the same."""
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    src = tmp_path / "nul.db"
    line = {
        "run": "r",
        "task_id": "t",
        "trial": 1,
        "outcome": {"passed": False, "reason": "rea\u0000son"},
        "messages": [{"role": "user", "content": "a\u0000b"}],
    }
    (tmp_path / "nul.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert run_cli("--db", str(src), "import", str(tmp_path / "nul.jsonl"))[0] == 0
    code, out, err = run_cli("copy", str(src), pg_url)
    assert code == 0, out + err
    assert _answers(pg_url)[:3] == _answers(str(src))[:3]


def test_a_copy_that_differs_is_rolled_back_and_said(
    rich_sqlite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.store.copy as store_copy

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    real = store_copy.table_digest

    def lying(db: object, table: str, cols: object) -> tuple[int, str]:
        n, digest = real(db, table, cols)  # type: ignore[arg-type]
        return (n, "0" * 64) if table == "labels" and "dest" in str(db.path) else (n, digest)  # type: ignore[attr-defined]

    monkeypatch.setattr(store_copy, "table_digest", lying)
    dest = tmp_path / "dest.db"
    code, out, _ = run_cli("copy", str(rich_sqlite), str(dest))
    assert code == 1
    assert out.splitlines()[-1].startswith("NOT VERIFIED: labels differ")
    assert out.splitlines()[-1].endswith("the copy was rolled back, " + f"{dest} is as it was")
    assert not dest.exists()  # a new file: "as it was" is no file at all


@pytest.mark.parametrize("source", ["sqlite", "postgres"])
def test_a_write_to_the_source_during_the_copy_is_not_half_copied(
    rich_sqlite: Path,
    tmp_path: Path,
    source: str,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """A teammate's label (here: a write by another connection as the copy reads the trials)
    made the copy "NOT VERIFIED: labels differ", rolled back: the source was read twice, with the
    write between. It is now read as one state of it, the one when the copy began."""
    from reviewer.store.copy import copy_database

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    src = str(rich_sqlite)
    if source == "postgres":
        pg = str(request.getfixturevalue("pg_url"))
        code, _, err = run_cli("copy", src, pg)
        assert code == 0, err
        src = pg
    trial = _first_trial(rich_sqlite)
    wrote: list[bool] = []

    def teammate(table: str, n: int) -> None:
        if table == "trials" and not wrote:
            code, _, err = run_cli("--db", src, "--labeler", "zed", "labels", "give", trial, "pass")
            assert code == 0, err
            wrote.append(True)

    with open_store(src) as source_db, open_store(tmp_path / "dest.db") as dest:
        result = copy_database(source_db, dest, progress=teammate)
    assert wrote and result.verified and result.kept, [t.to_dict() for t in result.tables]
    labels = {t.table: t.rows for t in result.tables}["labels"]
    assert labels == 1  # as the source was when the copy began; the teammate's label is not in
    with open_store(src) as after:
        assert after.execute("SELECT COUNT(*) FROM labels").fetchone()[0] == 2


@pytest.mark.parametrize("which", ["empty file", "empty sqlite", "empty postgresql"])
def test_a_copy_from_an_empty_database_is_one_line_and_makes_nothing(
    tmp_path: Path, which: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty source (a 0-byte file, a SQLite file of no tables, a new PostgreSQL database)
    was given reviewer's tables and 'copied 0 rows', exit 0; it is refused in one line now, the
    source left as it was and no destination made."""
    import sqlite3

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    if which == "empty postgresql":
        src = str(request.getfixturevalue("pg_url"))
    else:
        path = tmp_path / "empty.db"
        path.touch()
        if which == "empty sqlite":
            sqlite3.connect(path).execute("PRAGMA user_version = 0").connection.close()
            sqlite3.connect(path).execute("VACUUM").connection.close()
        src = str(path)
    before = None if which == "empty postgresql" else (tmp_path / "empty.db").read_bytes()
    dst = tmp_path / "out.db"
    code, out, err = run_cli("copy", src, str(dst))
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert "not a reviewer" in err  # "an empty database, not a reviewer one" or "database yet"
    assert not dst.exists()
    if which != "empty postgresql":  # byte for byte: opened as a store, it was put in WAL mode
        assert (tmp_path / "empty.db").read_bytes() == before
        assert not (tmp_path / "empty.db-wal").exists()
    if which == "empty file":
        assert (tmp_path / "empty.db").stat().st_size == 0
    elif which == "empty postgresql":
        import psycopg

        with psycopg.connect(src) as conn:
            tables = conn.execute(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'"
            ).fetchone()
        assert tables is not None and tables[0] == 0  # nothing made there


def test_a_copy_from_another_programs_sqlite_file_says_so_and_leaves_it(tmp_path: Path) -> None:
    """A SQLite file of another program's tables (holding rows) was called 'an empty database, not
    a reviewer one' (the check looked for reviewer's runs table only); it is named as what it is,
    with its tables, as every other command names it, and left byte for byte."""
    src = foreign_sqlite(tmp_path / "other.db", "trials")
    before = src.read_bytes()
    dst = tmp_path / "out.db"
    code, out, err = run_cli("copy", str(src), str(dst))
    assert code == 1 and out == "" and len(err.splitlines()) == 1, err
    assert "a SQLite database of something else (tables: trials)" in err
    assert "empty" not in err
    assert src.read_bytes() == before and not (tmp_path / "other.db-wal").exists()
    assert not dst.exists()


def _peak_rss_mb(*args: str) -> tuple[int, float]:
    """(exit code, peak resident MB) of `reviewer ARGS` in a process of its own."""
    import subprocess
    import sys

    measure = (
        "import resource, subprocess, sys; "
        "code = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "reviewer", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    code, mb = done.stdout.split()
    return int(code), float(mb)


def test_a_copy_from_postgresql_holds_no_table_whole_in_memory(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reviewer copy postgresql://… backup.db` read each table with psycopg's own cursor, which
    takes a whole result at once: a table of 120 MB added 120 MB to the copy's memory, twice
    over (copied, then hashed), so backing up a team's database needed its size in memory. It is
    read through a cursor of the server's, a batch at a time (found by an attacker)."""
    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    with open_store(pg_url) as db:
        db.execute("SELECT 1").fetchone()  # the schema made
    code, small = _peak_rss_mb("copy", pg_url, str(tmp_path / "small.db"))
    assert code == 0
    with open_store(pg_url) as db, db.transaction():  # 30,000 cached replies of 4 KB: 120 MB
        db.execute(
            "INSERT INTO judge_cache (key, model, request, response, created_at) "
            "SELECT 'k' || g, 'm', 'r', repeat(md5(g::text), 128), 't' "
            "FROM generate_series(1, 30000) AS g"
        )
    code, big = _peak_rss_mb("copy", pg_url, str(tmp_path / "big.db"))
    assert code == 0
    assert big - small < 60, (small, big)


def test_names_one_on_postgresql_are_said_for_what_they_are(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SQLite file holding runs named 'x' + NUL and 'x␀' (both stored as they were given) failed
    its copy to PostgreSQL with 'database error (duplicate key value violates unique constraint
    "runs_pkey" …)': PostgreSQL stores ␀ for NUL, so the two are one name there. The line now
    says so; nothing is written (found by an attacker)."""
    from tests.conftest import native_trial, write_jsonl

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    src = tmp_path / "src.db"
    runs = write_jsonl(
        tmp_path / "runs.jsonl",
        [{**native_trial("t1"), "run": "x\x00"}, {**native_trial("t1"), "run": "x\u2400"}],
    )
    assert run_cli("--db", str(src), "import", str(runs))[0] == 0
    code, out, err = run_cli("copy", str(src), pg_url)
    assert code == 1 and out == ""
    assert err.startswith(
        f"reviewer: {pg_url}: runs: the source holds two names that differ only by a NUL "
        "character and ␀ (U+2400), which PostgreSQL stores for NUL, so they are one name there ("
    )
    assert err.endswith(
        "this database cannot be copied to PostgreSQL as it is (nothing was written)\n"
    )
    with open_store(pg_url) as db:
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_a_source_server_gone_during_the_copy_is_named_as_the_source(
    rich_sqlite: Path, tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A PostgreSQL source whose server restarted during a copy to a file was said of the file
    ('backup.db: lost the connection to the PostgreSQL server'): the source's columns were read
    outside the reads that name the source. The source is named; the new file is removed (found
    by an attacker)."""

    from reviewer.store.db import Store, StoreError
    from reviewer.workflows.copy import copy_databases

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    assert run_cli("copy", str(rich_sqlite), pg_url)[0] == 0
    from reviewer.store import copy as copy_module

    dest = tmp_path / "backup.db"
    real_columns = copy_module.columns
    looks: list[object] = []

    def columns(db: Store, table: str) -> list[str]:
        if db.dialect == "postgres":
            looks.append(table)
        if len(looks) == 2 and db.dialect == "postgres":  # the server goes between two tables
            drop_connections(pg_url)
        return real_columns(db, table)

    monkeypatch.setattr(copy_module, "columns", columns)
    with pytest.raises(StoreError) as e:
        copy_databases(pg_url, str(dest))
    assert str(e.value).startswith(f"{pg_url}: lost the connection to the PostgreSQL server (")
    assert not dest.exists()
