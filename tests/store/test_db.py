"""Opening the database: many openers of a new file at once migrate it once, and all of them work."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import reviewer.store.db as db_module
from reviewer.store.db import (
    WAIT_NOTICE_S,
    Store,
    StoreBusy,
    StoreError,
    describe_error,
    migrations,
    open_store,
)
from tests.conftest import (
    SAMPLE_RUNS,
    foreign_sqlite,
    native_trial,
    on_postgres,
    run_cli,
    sample_copy,
    write_jsonl,
)
from tests.support.writer_lock import hold_write_lock


def test_many_openers_of_a_new_file_migrate_it_once(tmp_path: Path) -> None:
    for attempt in range(5):
        path = tmp_path / f"new-{attempt}.db"
        start = threading.Barrier(8)
        errors: list[BaseException] = []

        def opener(
            path: Path = path,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            start.wait()
            try:
                with open_store(path) as db:
                    db.execute("SELECT COUNT(*) FROM trials").fetchone()
            except BaseException as e:  # collected for the assertion below
                errors.append(e)

        threads = [threading.Thread(target=opener) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        names = _applied(path)
        assert sorted(names) == sorted(m.name for m in migrations._migrations)
        assert len(names) == len(set(names))


def _applied(path: Path) -> list[str]:
    """The migrations the database records as applied, one row each (SQLite: sqlite-utils'
    table; PostgreSQL: reviewer's own)."""
    with open_store(path) as db:
        table = "_reviewer_migrations" if db.dialect == "postgres" else "_sqlite_migrations"
        return [str(r[0]) for r in db.execute(f"SELECT name FROM {table}")]


def test_many_processes_create_a_new_database_at_once(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from reviewer.store.db import open_store\n"
        "with open_store(sys.argv[1]) as db:\n"
        "    db.execute('SELECT COUNT(*) FROM trials').fetchone()\n"
    )
    for attempt in range(3):
        path = tmp_path / f"new-{attempt}.db"
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", code, str(path)], stderr=subprocess.PIPE, text=True
            )
            for _ in range(6)
        ]
        problems = [p.communicate()[1] for p in procs if p.wait() != 0]
        assert problems == []
        names = _applied(path)
        assert sorted(names) == sorted(m.name for m in migrations._migrations)


def test_second_writer_waits_for_the_lock_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    open_store(path).close()
    other = hold_write_lock(path)
    threading.Timer(WAIT_NOTICE_S + 0.5, other.release).start()
    said: list[str] = []
    with open_store(path, on_wait=said.append) as db, db.transaction():
        db.execute("INSERT INTO runs (name) VALUES ('r')")
    other.release()
    assert len(said) == 1 and said[0].startswith("waiting for the database")
    with open_store(path) as db:
        assert db.execute("SELECT name FROM runs").fetchall() == [("r",)]


def test_writer_gives_up_after_the_lock_timeout_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_LOCK_TIMEOUT", "0.3")
    path = tmp_path / "r.db"
    open_store(path).close()
    other = hold_write_lock(path)
    try:
        with open_store(path) as db, pytest.raises(StoreBusy) as caught, db.transaction():
            db.execute("INSERT INTO runs (name) VALUES ('r')")
    finally:
        other.release()
    message = str(caught.value)
    assert "\n" not in message and "another process is writing" in message


def test_second_import_waits_for_the_first_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    open_store(path).close()
    runs = tmp_path / "runs.jsonl"
    write_jsonl(runs, [native_trial("t1"), native_trial("t2", passed=False)])
    other = hold_write_lock(path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer", "--db", str(path), "import", str(runs)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        line = ""
        assert proc.stderr is not None
        while "waiting for the database" not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
    finally:
        other.release()
    out, err = proc.communicate(timeout=120)
    assert "waiting for the database" in line, line + err
    assert proc.returncode == 0, err
    with open_store(path) as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 2


def test_a_folder_given_as_the_database_is_named(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a folder"):
        open_store(tmp_path)


def test_a_file_that_is_not_sqlite_is_named(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("hello, this is not a database\n" * 100)
    with pytest.raises(StoreError, match="not a reviewer database"):
        open_store(path)


def test_a_missing_folder_is_named_not_made(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="the folder .* does not exist; create it first"):
        open_store(tmp_path / "nope" / "r.db")
    assert not (tmp_path / "nope").exists()


@pytest.mark.sqlite_only  # the file asked for by name is a SQLite file
@pytest.mark.parametrize(
    "location", ["postgres:reviews", "postgresql:/reviews", "PostgreSQL://h/d"]
)
def test_a_mistyped_postgresql_url_is_named_not_made_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        open_store(location)
    assert list(work.iterdir()) == []
    with open_store("./postgres:reviews"):  # a file of that name, asked for as one
        pass
    assert (work / "postgres:reviews").is_file()


@pytest.mark.sqlite_only  # the file asked for by name is a SQLite file
@pytest.mark.parametrize(
    ("location", "said"),
    [
        ("postgresql+psycopg://u:secret@h/d", "not a PostgreSQL URL"),
        ("postgresq://u:secret@h/d", "not a database reviewer opens"),
        ("sqlite:///reviews.db", "a SQLite database a file path"),
    ],
)
def test_another_url_is_named_with_the_forms_reviewer_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str, said: str
) -> None:
    """A URL reviewer does not open (a driver in the scheme, a typo, SQLAlchemy's SQLite form)
    is told apart from a missing folder, its password hidden, and makes no file."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with pytest.raises(StoreError, match=said) as refused:
        open_store(location)
    assert "secret" not in str(refused.value) and "folder" not in str(refused.value)
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_path_that_is_not_a_regular_file_is_named(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    else:
        path = Path(os.devnull)
    with pytest.raises(StoreError, match="not a regular file"):
        open_store(path)


# about the SQLite file: a file that cannot be written is opened read-only (immutable) instead
def _unwritable(monkeypatch: pytest.MonkeyPatch, why: str) -> None:
    """Every writable open of a SQLite file refused with ``why`` (a read-only file system, a full
    disk); the read-only open works."""
    from reviewer.store import db as store_db

    real_open = store_db._open

    def no_writable_open(path: Path, **kw: Any) -> Store:
        if not kw.get("read_only"):
            try:
                raise sqlite3.OperationalError(why)
            except sqlite3.OperationalError as e:
                raise StoreError(describe_error(path, e)) from e
        return real_open(path, **kw)

    monkeypatch.setattr(store_db, "_open", no_writable_open)


@pytest.mark.sqlite_only
def test_a_database_that_cannot_be_written_is_still_read_and_a_write_names_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A read-only file system or a full disk: reports work, an import says why it cannot write."""
    from reviewer import cli

    path = tmp_path / "r.db"
    runs = write_jsonl(tmp_path / "runs.jsonl", [native_trial("t1"), native_trial("t2")])
    assert cli_exit(cli.main, ["--db", str(path), "import", str(runs)]) == 0
    _unwritable(monkeypatch, "unable to open database file")
    capsys.readouterr()
    assert cli_exit(cli.main, ["--db", str(path), "report", "--json"]) == 0
    assert '"t1"' in capsys.readouterr().out
    more = write_jsonl(tmp_path / "more.jsonl", [native_trial("t3")])
    assert cli_exit(cli.main, ["--db", str(path), "import", str(more)]) == 1
    err = capsys.readouterr().err
    assert "cannot be written" in err and "nothing was written" in err
    assert "internal error" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.sqlite_only
def test_a_database_of_the_version_before_m021_is_read_where_it_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """m021 only indexes text again: a file the version before wrote, on a read-only or full file
    system, gave "cannot open the database file" where that version printed the report (found by
    a review); a migration a read needs still refuses."""
    from reviewer import cli

    path = tmp_path / "r.db"
    runs = write_jsonl(tmp_path / "runs.jsonl", [native_trial("t1"), native_trial("t2")])
    assert cli_exit(cli.main, ["--db", str(path), "import", str(runs)]) == 0
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm021_fts_arguments_as_written'")
    conn.commit()
    conn.close()
    _unwritable(monkeypatch, "attempt to write a readonly database")
    capsys.readouterr()
    assert cli_exit(cli.main, ["--db", str(path), "report", "--json"]) == 0
    assert '"t1"' in capsys.readouterr().out
    conn = sqlite3.connect(path)  # a migration reads need: refused as before
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm020_queue_leases'")
    conn.commit()
    conn.close()
    assert cli_exit(cli.main, ["--db", str(path), "report", "--json"]) == 1


def cli_exit(main: Any, args: list[str]) -> int:
    try:
        main(args)
    except SystemExit as e:
        return int(e.code or 0)
    return 0


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (sqlite3.OperationalError("database or disk is full"), "the disk is full"),
        (sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
        (OSError(errno.ENOSPC, "No space left on device"), "the disk is full"),
        (OSError(errno.EROFS, "Read-only file system"), "read-only"),
        (sqlite3.DatabaseError("file is not a database"), "not a reviewer database"),
    ],
)
def test_each_database_failure_is_named_for_what_it_is(
    tmp_path: Path, error: BaseException, named: str
) -> None:
    assert named in describe_error(tmp_path / "r.db", error)


def test_a_read_only_database_refuses_an_import_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from reviewer import cli
    from reviewer.store import db as store_db

    path = tmp_path / "r.db"
    open_store(path).close()
    runs = write_jsonl(tmp_path / "runs.jsonl", [native_trial("t1")])
    real_open = store_db.open_store

    def read_only(*args: Any, **kw: Any) -> Store:
        db = real_open(*args, **kw)
        # the database refuses writes as it does for a read-only file (a read-only server)
        if db.dialect == "postgres":
            db.execute("SET default_transaction_read_only = on")
        else:
            db.execute("PRAGMA query_only=ON")
        return db

    monkeypatch.setattr(store_db, "open_store", read_only)
    with pytest.raises(SystemExit) as exited:
        cli.main(["--db", str(path), "import", str(runs)])
    err = capsys.readouterr().err
    assert exited.value.code == 1
    assert "read-only" in err and "internal error" not in err
    assert len(err.strip().splitlines()) == 1


# Folded in from tests/test_store_damage.py:
# A damaged database is neither read nor written (a damaged runs page made `report` print
# `run None: 0 tasks` with exit 0), and a database a newer reviewer wrote is refused, both in one line.


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


@pytest.mark.sqlite_only  # damages a page of the SQLite file's bytes
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


def _raw(path: Path, sql: str) -> list[Any]:
    """SQL run on the database at PATH past every check of reviewer's (sqlite3 on the file; under
    --backend postgres, psycopg on the server's database standing for it); its rows, committed."""
    if on_postgres():
        import psycopg

        from reviewer.store import postgres

        server = os.environ[postgres.TEST_SERVER_VAR]
        url = postgres.make_test_database(server, postgres.test_database(path))
        with psycopg.connect(url, autocommit=True) as pg:
            cur = pg.execute(sql)
            return cur.fetchall() if cur.description else []
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(sql).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def test_a_database_a_newer_reviewer_wrote_is_refused(sample: Path) -> None:
    if on_postgres():
        _raw(
            sample,
            "INSERT INTO _reviewer_migrations (name, applied_at) "
            "VALUES ('m999_from_the_future', '2030-01-01')",
        )
    else:
        _raw(
            sample,
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('reviewer', 'm999_from_the_future', '2030-01-01')",
        )
    trials = _raw(sample, "SELECT COUNT(*) FROM trials")[0][0]
    code, out, err = run_cli("--db", "s.db", "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 1 and out == ""
    assert err.strip() == (
        "reviewer: s.db: written by a newer reviewer (its schema has m999_from_the_future, which "
        "this version does not know); upgrade reviewer to open it (nothing was read or written)"
    )
    with pytest.raises(StoreError, match="written by a newer reviewer"):
        open_store(sample)
    assert _raw(sample, "SELECT COUNT(*) FROM trials")[0][0] == trials


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
        "only its own files: name another database"
    )
    tables = sqlite3.connect(other).execute("SELECT name FROM sqlite_master").fetchall()
    assert tables == [("users",)]


def test_a_database_of_something_else_keeps_its_journal_mode_and_bytes(tmp_path: Path) -> None:
    """The refusal came after reviewer had set WAL, which SQLite writes into the file's header: the
    other program's rollback-journal database was turned to WAL (and left a -wal and a -shm beside
    it) by a command that said it reads and writes only its own files."""
    other = foreign_sqlite(tmp_path / "app.db")
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


@pytest.mark.sqlite_only  # the limit is on the SQLite file's size
def test_a_file_size_limit_reached_by_an_import_is_named(tmp_path: Path) -> None:
    """An import under `ulimit -f` whose database log reached the limit said only 'database
    error (disk I/O error)': SQLite reports the write's EFBIG as that, and the log is gone by the
    time the error is told. The one line now names the limit; the trials stored before stay
    (found by an attacker)."""
    import resource

    path = tmp_path / "r.db"
    write_jsonl(tmp_path / "first.jsonl", [native_trial("t1")])
    assert run_cli("--db", str(path), "import", str(tmp_path / "first.jsonl"))[0] == 0
    big = [native_trial(f"t{i}", note="x" * 20_000) for i in range(400)]  # ~8 MB to write
    write_jsonl(tmp_path / "big.jsonl", big)
    limit = 4 << 20

    def limited() -> None:
        resource.setrlimit(
            resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1])
        )

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reviewer",
            "--db",
            str(path),
            "import",
            str(tmp_path / "big.jsonl"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limited,
    )
    assert done.returncode == 1
    assert f"{path}: database error (disk I/O error): a write failed, and this process may " in (
        done.stderr
    )
    assert f"files of {limit:,} bytes at most (ulimit -f)" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    with open_store(path) as db:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1
