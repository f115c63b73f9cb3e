"""Full-text search in tool calls' arguments past ASCII: indexed as written (``Zürich``, not JSON's
``Z\\u00fcrich``), and migration m021 indexes again a database written before, on both backends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reviewer.record import decode
from reviewer.store import open_store
from reviewer.store.search_text import arguments_text, search_text
from reviewer.store.trial_list import TrialFilter, count
from reviewer.store.writer import (
    FTS_SQL,
    Pending,
    replace_trial,
    search_texts,
    tsvector_literal,
)
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl

M021 = "m021_fts_arguments_as_written"
NOW = "2026-01-01T00:00:00+00:00"


def _trials() -> list[dict[str, Any]]:
    out = []
    for i, args in enumerate(
        [
            {"city": "Zürich", "note": "naïve café"},  # flat: written directly
            {"to": {"city": "東京"}, "n": [1.5, "Ærø"]},  # nested: the encoder's
            "plain text İstanbul",  # text: as it is, always
            {"city": "Paris"},  # ASCII only: the same either way
            '{"city": "Kraków"}',  # text holding JSON (OpenAI's form): read as the object
        ]
    ):
        rec = native_trial(f"t{i}", passed=True, trial=1)
        if i == 3:  # text past ASCII in a message only: its entry is the same either way
            rec["messages"].append({"role": "assistant", "content": "Grüße aus Paris"})
        rec["messages"] += [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "name": "book", "arguments": args}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
        out.append(rec)
    return out


SEARCHES = {
    "Zürich": 1,
    "zurich": 1,
    "cafe": 1,
    "naïve": 1,
    "東京": 1,
    "aerø": 0,
    "ærø": 1,
    "krakow": 1,
    "istanbul": 1,
    "grüße": 1,
}


def _found(db: Any) -> dict[str, int]:
    return {q: count(db, TrialFilter(search=q)) for q in SEARCHES}


def test_arguments_text_keeps_text_past_ascii_and_escapes_what_utf8_cannot_hold() -> None:
    assert arguments_text({"city": "Zürich"}) == '{"city": "Zürich"}'
    assert arguments_text({"a": {"b": "東京"}}) == json.dumps(
        {"a": {"b": "東京"}}, ensure_ascii=False
    )
    assert arguments_text({"city": "Zürich"}, ascii_only=True) == json.dumps({"city": "Zürich"})
    assert arguments_text("İstanbul") == "İstanbul"
    # a lone surrogate cannot be stored as UTF-8: that value is escaped, as before
    assert arguments_text({"x": "a\ud800"}) == '{"x": "a\\ud800"}'
    assert arguments_text({"x": ["\ud800"]}) == '{"x": ["\\ud800"]}'


def test_search_finds_arguments_past_ascii(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", _trials())
    with open_store(tmp_path / "x.db") as db:
        assert import_paths(db, [str(path)]).added == 5
        assert _found(db) == SEARCHES
        assert count(db, TrialFilter(search="u00fcrich")) == 0  # the escape is not a word
        # the import's fast loop and the plain function index the same text
        for run, task_id, trial_no, record in db.execute(
            "SELECT run, task_id, trial, record FROM trials"
        ).fetchall():
            trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            assert search_texts(trial)[0] == search_text(trial)


def _as_before_m021(db: Any) -> None:
    """DB's index as versions before m021 made it (arguments escaped to ASCII), m021 not applied."""
    rows = db.execute("SELECT seq, run, task_id, trial, record FROM trials").fetchall()
    with db.transaction():
        for seq, run, task_id, trial_no, record in rows:
            trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            text, system = search_texts(trial)
            old, _ = search_texts(trial, ascii_arguments=True)
            if db.dialect == "sqlite":
                db.conn.execute(
                    "INSERT INTO trials_fts (trials_fts, rowid, text, system) "
                    "VALUES ('delete', ?, ?, ?)",
                    [seq, text, system],
                )
                db.conn.execute(FTS_SQL, [seq, old, system])
                db.conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", [M021])
            else:
                db.conn.execute(
                    "UPDATE trials_fts SET text = CAST(? AS tsvector) WHERE rowid = ?",
                    [tsvector_literal(old), seq],
                )
                db.conn.execute("DELETE FROM _reviewer_migrations WHERE name = ?", [M021])


def test_migration_indexes_again_a_database_written_before_it(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", _trials())
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [str(path)])
        _as_before_m021(db)
        before = _found(db)
        assert before["zurich"] == 0 and before["東京"] == 0  # what users saw: nothing found
        assert count(db, TrialFilter(search="u00fcrich")) == 1
    with open_store(tmp_path / "x.db") as db:  # migrates
        assert _found(db) == SEARCHES
        assert count(db, TrialFilter(search="u00fcrich")) == 0
        assert count(db, TrialFilter(search="paris")) == 1  # an unchanged entry stays
        if db.dialect == "sqlite":  # the contentless index took out exactly what it held
            db.execute("INSERT INTO trials_fts (trials_fts) VALUES ('integrity-check')")
        # a newer version of a migrated trial (a session read again) replaces its entry cleanly
        tid, run, task_id, trial_no, record = db.execute(
            "SELECT id, run, task_id, trial, record FROM trials WHERE task_id = 't0'"
        ).fetchone()
        newer = decode(record, run=run, task_id=task_id, trial=trial_no)
        newer.messages[-2].tool_calls[0].arguments = {"city": "Genève"}
        with db.transaction():
            replace_trial(db, Pending(tid, run, trial_no, newer), "v2.jsonl", NOW)
        assert count(db, TrialFilter(search="zurich")) == 0
        assert count(db, TrialFilter(search="geneve")) == 1
        if db.dialect == "sqlite":
            db.execute("INSERT INTO trials_fts (trials_fts) VALUES ('integrity-check')")


def test_a_database_lacking_the_migration_opens_without_migrating_when_asked(
    tmp_path: Path,
) -> None:
    path = write_jsonl(tmp_path / "r.jsonl", _trials())
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [str(path)])
        _as_before_m021(db)
    with open_store(tmp_path / "x.db", migrate=False) as db:
        assert count(db, TrialFilter(search="zurich")) == 0  # read as it is, nothing written
