"""A PostgreSQL connection the server drops (a restart, an idle timeout, a failover): a process that
lives long, the app's label screen or ``monitor --follow``, goes on with its next step on a new
connection; a step the drop cut short is not written, and says so, never half or silently."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from reviewer.store.db import open_store
from reviewer.workflows.labels import give_label, standing_by_labeler
from tests.conftest import SAMPLE_RUNS, run_cli
from tests.support.pg_server import drop_connections


@pytest.fixture
def stored(pg_url: str) -> str:
    code, _, err = run_cli("--db", pg_url, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 0, err
    return pg_url


@pytest.fixture
def db(stored: str) -> Iterator[Any]:
    with open_store(stored) as opened:
        yield opened


def _dropped(url: str, db: Any) -> None:
    """The server ends DB's connection, as a restart or an idle timeout does."""
    drop_connections(url, db.conn.raw.info.backend_pid)


def _trial(db: Any) -> str:
    return str(db.execute("SELECT id FROM trials ORDER BY id LIMIT 1").fetchone()[0])


def test_a_label_after_the_server_dropped_the_idle_connection_is_stored_once(
    stored: str, db: Any
) -> None:
    trial = _trial(db)
    _dropped(stored, db)
    give_label(db, trial, "ann", "pass")  # said "the connection is closed" to every later label
    assert standing_by_labeler(db, trial)["ann"].verdict == "pass"
    _dropped(stored, db)
    give_label(db, trial, "ann", "fail")
    rows = db.execute("SELECT COUNT(*) FROM labels WHERE trial_id = ?", [trial]).fetchone()[0]
    assert rows == 2 and standing_by_labeler(db, trial)["ann"].verdict == "fail"


def test_a_read_after_the_server_dropped_the_idle_connection_is_answered(
    stored: str, db: Any
) -> None:
    before = db.execute("SELECT COUNT(*) FROM trials").fetchone()[0]
    _dropped(stored, db)
    assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == before > 0


def test_a_step_the_drop_cut_short_is_not_written_and_the_next_one_is(stored: str, db: Any) -> None:
    trial = _trial(db)
    give_label(db, trial, "ann", "pass")
    with pytest.raises(sqlite3.OperationalError), db.transaction():
        db.execute("DELETE FROM labels")  # a statement of the step, then the drop
        _dropped(stored, db)
        db.execute("SELECT 1")  # never sent again outside the transaction it belongs to
    assert standing_by_labeler(db, trial)["ann"].verdict == "pass"
    # a step whose statements all ran before the drop fails at its commit
    with pytest.raises(sqlite3.OperationalError), db.transaction():
        give_label(db, trial, "bob", "pass")
        _dropped(stored, db)
    # a step that goes on past a failed statement: its commit is refused, never skipped as if the
    # step had been written
    refused = pytest.raises(sqlite3.OperationalError, match="before the commit: nothing")
    with refused, db.transaction():
        give_label(db, trial, "bob", "pass")
        _dropped(stored, db)
        with contextlib.suppress(sqlite3.OperationalError):
            db.execute("SELECT 1")
        with contextlib.suppress(sqlite3.OperationalError):  # never psycopg's own error
            db.execute("SELECT 2")
    assert "bob" not in standing_by_labeler(db, trial)
    give_label(db, trial, "bob", "fail")
    assert standing_by_labeler(db, trial)["bob"].verdict == "fail"


def test_a_server_still_away_is_said_in_one_line_and_a_later_step_connects_again(
    stored: str, db: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.store.postgres as pg

    trial = _trial(db)
    _dropped(stored, db)

    def refused(url: str) -> Any:
        raise sqlite3.OperationalError("connection failed: Connection refused")

    with monkeypatch.context() as away:
        away.setattr(pg, "connect", refused)
        with pytest.raises(
            sqlite3.OperationalError,
            match="lost the connection to the PostgreSQL server, and connecting again failed",
        ):
            give_label(db, trial, "cat", "pass")
    give_label(db, trial, "cat", "pass")
    assert standing_by_labeler(db, trial)["cat"].verdict == "pass"


def test_a_drop_inside_a_nested_step_says_the_drop_not_the_clean_up(stored: str, db: Any) -> None:
    """The savepoint's clean-up on a lost connection said 'the connection is closed' in place of
    the reason the step failed."""
    trial = _trial(db)
    with pytest.raises(sqlite3.OperationalError) as failed, db.transaction():
        give_label(db, trial, "dee", "pass")  # a step within the step: a savepoint
        with db.transaction():
            db.execute("DELETE FROM labels")
            _dropped(stored, db)
            db.execute("SELECT 1")
    assert "terminating connection" in str(failed.value), failed.value
    assert "dee" not in standing_by_labeler(db, trial)
