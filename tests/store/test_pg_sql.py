"""store/pg_sql.py: the store's SQLite SQL as PostgreSQL runs it, token by token (strings, quoted
names and comments untouched), and the PostgreSQL schema kept in step with SQLite's migrations."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from reviewer.store import postgres
from reviewer.store.db import migrations
from reviewer.store.pg_sql import REPLACED_KEYS, bulk_insert, to_postgres


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        ("SELECT a FROM t WHERE x = ?", "SELECT a FROM t WHERE x = %s"),
        ("SELECT '?', \"?\" FROM t -- ?\n", "SELECT '?', \"?\" FROM t -- ?\n"),
        (
            "SELECT a FROM t WHERE y LIKE '%a' AND z = ?",
            "SELECT a FROM t WHERE y ILIKE '%%a' AND z = %s",
        ),
        (
            "INSERT OR IGNORE INTO runs (a) VALUES (?)",
            "INSERT INTO runs (a) VALUES (%s) ON CONFLICT DO NOTHING",
        ),
        (
            "INSERT OR REPLACE INTO pairs (pair_id, judge, human) VALUES (?, ?, ?)",
            "INSERT INTO pairs (pair_id, judge, human) VALUES (%s, %s, %s) "
            "ON CONFLICT (pair_id, judge) DO UPDATE SET human = excluded.human",
        ),
        ("SELECT MAX(a), MAX(a, b), MIN(f(x, y))", "SELECT MAX(a), GREATEST(a, b), MIN(f(x, y))"),
        (
            "SELECT IFNULL(x, 1), group_concat(r, char(31))",
            "SELECT COALESCE(x, 1), group_concat(r, chr(31))",
        ),
        ("SELECT CAST(x AS REAL) / n", "SELECT CAST(x AS double precision) / n"),
        (
            "DELETE FROM q WHERE a IS ? AND b IS NOT ?",
            "DELETE FROM q WHERE a IS NOT DISTINCT FROM %s AND b IS DISTINCT FROM  %s",
        ),
        ("SELECT COUNT(*) FROM t WHERE 1", "SELECT COUNT(*) FROM t WHERE TRUE"),
        ("SELECT 1 FROM t WHERE 1 AND x = 1", "SELECT 1 FROM t WHERE TRUE AND x = 1"),
        ("SELECT CASE x WHEN 1 THEN 0 END FROM t", "SELECT CASE x WHEN 1 THEN 0 END FROM t"),
        (
            "UPDATE t SET c = 9e999, d = -1e999, e = 1e5",
            "UPDATE t SET c = 'Infinity'::float8, d = -'Infinity'::float8, e = 1e5",
        ),
        (
            "SELECT a FROM (SELECT x FROM (SELECT 1) y) WHERE n = 1",
            "SELECT a FROM (SELECT x FROM (SELECT 1) y) AS _q1 WHERE n = 1",
        ),
        (
            "SELECT a FROM t ORDER BY a, b DESC, c NULLS LAST LIMIT ?",
            "SELECT a FROM t ORDER BY a NULLS FIRST, b DESC NULLS LAST, c NULLS LAST LIMIT %s",
        ),
        # keys never NULL keep no NULLS clause: an index gives their order
        ("SELECT a FROM t ORDER BY t.seq DESC, id", "SELECT a FROM t ORDER BY t.seq DESC, id"),
        (
            "SELECT row_number() OVER (PARTITION BY a ORDER BY b) FROM t",
            "SELECT row_number() OVER (PARTITION BY a ORDER BY b NULLS FIRST) FROM t",
        ),
    ],
)
def test_sqlite_spellings_become_postgresql_ones(sqlite: str, postgresql: str) -> None:
    assert to_postgres(sqlite) == postgresql


def test_an_insert_or_replace_into_a_table_of_unknown_key_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="INSERT OR REPLACE INTO mystery"):
        to_postgres("INSERT OR REPLACE INTO mystery (a) VALUES (?)")


def test_only_rows_of_parameters_go_by_copy() -> None:
    plain = bulk_insert("INSERT INTO trials (seq, id) VALUES (?, ?)")
    assert plain is not None and plain.direct and plain.columns == ("seq", "id")
    fts = bulk_insert("INSERT INTO t (rowid, text) VALUES (?, reviewer_tsvector(?))")
    assert fts is not None and not fts.direct and fts.functions == (None, "reviewer_tsvector")
    ignore = bulk_insert("INSERT OR IGNORE INTO t (a) VALUES (?)")
    assert ignore is not None and ignore.ignore and not ignore.direct
    assert bulk_insert("INSERT INTO t (a) VALUES (?) ON CONFLICT DO NOTHING") is None
    assert bulk_insert("INSERT INTO t (a, b) VALUES (?, f(?, 1))") is None
    assert bulk_insert("INSERT INTO t (a, b) VALUES (?, 'x')") is None
    assert bulk_insert("INSERT INTO t (a) SELECT ?") is None


def _schema() -> str:
    return resources.files("reviewer.store").joinpath("schema_postgres.sql").read_text("utf-8")


def test_each_replaced_table_has_that_key_in_the_postgresql_schema() -> None:
    schema = _schema()
    for table, key in REPLACED_KEYS.items():
        body = re.search(rf"CREATE TABLE {table} \((.*?)\n\s*\)", schema, re.S)
        assert body is not None, table
        text = " ".join(body.group(1).split())
        if len(key) == 1:
            assert re.search(rf"\b{key[0]} [^,]*PRIMARY KEY", text), table
        else:
            assert f"PRIMARY KEY ({', '.join(key)})" in text, table


def test_the_postgresql_schema_holds_every_migration() -> None:
    names = [m.name for m in migrations._migrations]
    later = names[names.index(postgres.BASELINE) + 1 :]
    assert later == list(postgres.MIGRATIONS), (
        "a migration was added to store/db.py: write its PostgreSQL form (in schema_postgres.sql, "
        "moving BASELINE, or in postgres.MIGRATIONS) so a PostgreSQL database gets it too"
    )
