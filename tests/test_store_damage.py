"""A damaged database is neither read nor written (a damaged runs page made `report` print
`run None: 0 tasks` with exit 0), and a database a newer reviewer wrote is refused, both in one line."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import reviewer.store.db as db_module
from reviewer.store import open_store
from reviewer.store.db import StoreError
from tests.conftest import SAMPLE_RUNS, run_cli, sample_copy


def _damage_runs_page(db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").fetchone()[0]
    conn.close()
    data = bytearray(db.read_bytes())
    start = (root - 1) * size
    data[start + size - 200 : start + size - 100] = bytes(100)
    db.write_bytes(bytes(data))


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return sample_copy(tmp_path / "s.db")


def test_a_damaged_page_is_one_line_and_nothing_is_printed_or_written(sample: Path) -> None:
    _damage_runs_page(sample)
    db_module._checked.clear()  # a new process: each command of the CLI is one
    before = sample.read_bytes()
    for args in (
        ["report"],
        ["import", str(SAMPLE_RUNS / "support-v1.jsonl")],
        ["compare", "a", "b"],
    ):
        code, out, err = run_cli("--db", "s.db", *args)
        assert code == 1 and out == ""
        assert err.startswith("reviewer: s.db: the database is damaged (quick_check: ")
        assert "restore a backup" in err and len(err.strip().splitlines()) == 1
    assert sample.read_bytes() == before


def test_a_database_a_newer_reviewer_wrote_is_refused(sample: Path) -> None:
    conn = sqlite3.connect(sample)
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
        "VALUES ('reviewer', 'm999_from_the_future', '2030-01-01')"
    )
    conn.commit()
    conn.close()
    trials = sqlite3.connect(sample).execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    code, out, err = run_cli("--db", "s.db", "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 1 and out == ""
    assert err.strip() == (
        "reviewer: s.db: written by a newer reviewer (its schema has m999_from_the_future, which "
        "this version does not know); upgrade reviewer to open it (nothing was read or written)"
    )
    with pytest.raises(StoreError, match="written by a newer reviewer"):
        open_store(sample)
    assert sqlite3.connect(sample).execute("SELECT COUNT(*) FROM trials").fetchone()[0] == trials


def test_a_sound_database_opens_as_before(sample: Path) -> None:
    with open_store(sample) as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 88


def test_a_database_of_something_else_is_never_written(tmp_path: Path) -> None:
    """Pointing --db at another program's SQLite file created reviewer's tables inside it."""
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    conn.commit()
    conn.close()
    code, out, err = run_cli("--db", str(other), "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 1 and out == ""
    assert err.strip().endswith(
        "app.db: a SQLite database of something else (tables: users); reviewer reads and writes "
        "only its own files: give another --db"
    )
    tables = sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("users",)]


def test_a_database_of_something_else_keeps_its_journal_mode_and_bytes(tmp_path: Path) -> None:
    """The refusal came after reviewer had set WAL, which SQLite writes into the file's header: the
    other program's rollback-journal database was turned to WAL (and left a -wal and a -shm beside
    it) by a command that said it reads and writes only its own files."""
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    conn.execute("INSERT INTO users VALUES (1, 'ana')")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    code, _, err = run_cli("--db", str(other), "report")
    assert code == 1 and "a SQLite database of something else" in err
    assert other.read_bytes() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("app.db-")]
    mode = sqlite3.connect(other).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "delete"


def test_another_programs_database_with_sqlite_utils_migrations_is_refused(tmp_path: Path) -> None:
    """A program that migrates its schema with sqlite-utils keeps a _sqlite_migrations table of its
    own migration set: that table alone passed for reviewer's, and reviewer's tables were created
    in the other program's file."""
    other = tmp_path / "app.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE users (id INTEGER, name TEXT)")
    conn.execute(
        "CREATE TABLE _sqlite_migrations (migration_set TEXT, name TEXT, applied_at TEXT, "
        "PRIMARY KEY (migration_set, name))"
    )
    conn.execute("INSERT INTO _sqlite_migrations VALUES ('someapp', 'm001_users', '2025-01-01')")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    code, out, err = run_cli("--db", str(other), "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 1 and out == ""
    assert "a SQLite database of something else (tables: _sqlite_migrations, users)" in err
    assert other.read_bytes() == before


def test_the_wal_file_vanishing_while_the_check_looks_is_not_an_error(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another connection closing removes the -wal file between any look and the stat that follows
    (seen in CI as "cannot open (No such file or directory)" on the tasks screen): the integrity
    check treats a vanished -wal as empty."""
    db_module._checked.clear()
    real_stat = Path.stat
    looks = 0

    def stat(self: Path, **kwargs: object) -> object:
        nonlocal looks
        if self.name.endswith("-wal"):
            looks += 1
            if looks > 1:  # there at the first look, gone at the next
                raise FileNotFoundError(2, "No such file or directory", str(self))
            return real_stat(sample, **kwargs)  # type: ignore[arg-type]
        return real_stat(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", stat)
    with open_store(sample) as store:
        assert store.execute("SELECT COUNT(*) FROM trials").fetchone()[0] > 0
