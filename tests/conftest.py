"""Shared fixtures: every test runs on an isolated machine (config, data dirs, no API key)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterator

    from reviewer.judge.standin import StandIn

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
CORPORA = REPO.parent / "shared" / "corpora"
#: The small sample data set many tests pin numbers of (88 trials; see its SOURCE.md).
SAMPLE_RUNS = FIXTURES / "sample_small"
#: The real sample_runs/ folder the README tours and its generator writes.
REAL_SAMPLE_RUNS = REPO / "sample_runs"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="the database every test's store lives in: SQLite files (the default), or a "
        "throwaway PostgreSQL server this run starts (REVIEWER_TEST_POSTGRES gives one instead)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite file itself (skipped with --backend postgres)"
    )
    if config.getoption("--backend") != "postgres":
        return
    from reviewer.store.postgres import TEST_SERVER_VAR
    from tests.support import pg_server

    if not os.environ.get(TEST_SERVER_VAR):
        server = pg_server.start()
        config.add_cleanup(server.stop)
        os.environ[TEST_SERVER_VAR] = server.url  # subprocesses the tests start inherit it


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--backend") != "postgres":
        return
    skip = pytest.mark.skip(reason="about the SQLite file itself")
    for item in items:
        if "sqlite_only" in item.keywords:
            item.add_marker(skip)


def on_postgres() -> bool:
    """Whether this run keeps every test's store on PostgreSQL (`pytest --backend postgres`)."""
    from reviewer.store.postgres import TEST_SERVER_VAR

    return bool(os.environ.get(TEST_SERVER_VAR))


_SERVER: list[str] = []


@pytest.fixture(scope="session")
def pg_server_url(request: pytest.FixtureRequest) -> str:
    """A PostgreSQL server's URL: the --backend postgres run's, else one started for the session
    (skipped when PostgreSQL is not installed)."""
    from reviewer.store.postgres import TEST_SERVER_VAR
    from tests.support import pg_server

    if os.environ.get(TEST_SERVER_VAR):
        return os.environ[TEST_SERVER_VAR]
    if not _SERVER:
        if not pg_server.available():
            pytest.skip("PostgreSQL (initdb, pg_ctl) is not installed")
        server = pg_server.start()
        request.config.add_cleanup(server.stop)
        _SERVER.append(server.url)
    return _SERVER[0]


@pytest.fixture
def pg_url(pg_server_url: str) -> str:
    """The URL of a new, empty database on the PostgreSQL server."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return pg_server_url.rsplit("/", 1)[0] + "/" + name


ISOLATED_VARS = (
    "REVIEWER_DB",
    "REVIEWER_LABELER",
    "REVIEWER_CONFIG",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
)


def isolate(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """HOME, the config and data dirs under ROOT; no database, labeler, config or API key set."""
    home = root / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for var in ISOLATED_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(root)


@dataclass(frozen=True)
class Imported:
    """A folder imported once per session by `reviewer import` (on an isolated machine): the
    database file (its -wal checkpointed into it) and what the command printed."""

    path: Path
    stdout: str
    stderr: str

    def copy(self, dest: Path | str) -> Path:
        """A private copy of the database at DEST (a test may write to it freely)."""
        dest = Path(dest)
        if on_postgres():  # the database standing for the file, made from this one
            from reviewer.store import postgres

            postgres.make_test_database(
                os.environ[postgres.TEST_SERVER_VAR],
                postgres.test_database(dest),
                template=postgres.test_database(self.path),
            )
            return dest
        shutil.copyfile(self.path, dest)
        return dest


_FACTORY: list[pytest.TempPathFactory] = []
_IMPORTED: dict[tuple[Path, tuple[str, ...]], Imported] = {}


@pytest.fixture(scope="session", autouse=True)
def _session_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Where ``imported`` keeps its databases for the session (nothing is imported until asked)."""
    _FACTORY[:] = [tmp_path_factory]


def imported(folder: Path = SAMPLE_RUNS, *then: str) -> Imported:
    """FOLDER imported by `reviewer import` once per session, on a machine isolated like every
    test's, then each command of THEN (e.g. "cluster") run on it; its -wal checkpointed so that a
    copy of the file is the whole database."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    key = (folder, then)
    if key in _IMPORTED:
        return _IMPORTED[key]
    root = _FACTORY[0].mktemp(folder.name)
    path = root / "imported.db"
    with pytest.MonkeyPatch.context() as mp:
        isolate(mp, root)
        result = CliRunner().invoke(cli, ["--db", str(path), "import", str(folder)])
        assert result.exit_code == 0, result.stderr
        for command in then:
            more = CliRunner().invoke(cli, ["--db", str(path), command])
            assert more.exit_code == 0, more.stderr
    if not on_postgres():
        db = sqlite3.connect(path)  # every page into the main file: copying it copies them all
        try:
            busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        finally:
            db.close()
        assert busy == 0, "the -wal file could not be checkpointed"
    _IMPORTED[key] = Imported(path, result.stdout, result.stderr)
    return _IMPORTED[key]


def sample_copy(dest: Path | str, folder: Path = SAMPLE_RUNS, *then: str) -> Path:
    """A private copy, at DEST, of FOLDER (the sample runs) imported once per session."""
    return imported(folder, *then).copy(dest)


@pytest.fixture
def sample_import() -> Imported:
    """SAMPLE_RUNS imported once per session (what `reviewer import` printed included)."""
    return imported(SAMPLE_RUNS)


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    """The sample runs imported by `reviewer import` into a fresh database: a copy of the
    session's import (a test file may define its own ``sample_db`` for another set-up)."""
    return sample_copy(tmp_path / "s.db")


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """The judge stand-in running, the judge's environment pointed at it (tests/support/standin.py)."""
    from tests.support.standin import serving

    with serving(monkeypatch) as server:
        yield server


@pytest.fixture(scope="module", autouse=True)
def _module_databases() -> Iterator[None]:
    """Under --backend postgres: the databases a test module's wider fixtures made, dropped when
    the module is done (each test drops its own: ``isolated_machine``)."""
    before = _test_databases() if on_postgres() else set()
    yield
    if on_postgres():
        _drop_test_databases(before)


@pytest.fixture(autouse=True)
def isolated_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    isolate(monkeypatch, tmp_path)
    # made before the test (by a module's or the session's fixtures, set up first): kept for them
    before = _test_databases() if on_postgres() else set()
    yield
    if on_postgres():
        _drop_test_databases(before)


def _test_databases() -> set[str]:
    """Under --backend postgres: the databases standing for test files, by name."""
    import psycopg

    from reviewer.store import postgres

    with psycopg.connect(os.environ[postgres.TEST_SERVER_VAR], autocommit=True) as admin:
        rows = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'f\\_%'"
        ).fetchall()
    return {str(r[0]) for r in rows}


def _drop_test_databases(keep: set[str]) -> None:
    """Under --backend postgres: the databases the test made, dropped (KEEP, those made before it
    by wider fixtures, and the session's imports kept), so the server's disk holds a few at a time."""
    import psycopg

    from reviewer.store import postgres

    keep = keep | {postgres.test_database(i.path) for i in _IMPORTED.values()}
    names = _test_databases() - keep
    with psycopg.connect(os.environ[postgres.TEST_SERVER_VAR], autocommit=True) as admin:
        for name in sorted(names):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


def foreign_sqlite(path: Path, table: str = "users") -> Path:
    """A SQLite file of another program's at PATH: TABLE, holding a row (a rollback journal)."""
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute(f"CREATE TABLE {table} (id INTEGER, name TEXT)")
    conn.execute(f"INSERT INTO {table} VALUES (1, 'ana')")
    conn.commit()
    conn.close()
    return path


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
