"""A whole database copied into another, SQLite or PostgreSQL either way (`reviewer copy`).

Every table that holds data is copied row for row, in one transaction on the destination; what is
worked out from that data (the full-text index, the latest verdict of each trial and its counts,
each run's totals) is made again on the destination by the code that keeps it on import. Then
each table is counted and hashed on both sides: a copy is verified when every count and every
hash agree.

The hash of a table is the sum, modulo 2**256, of the SHA-256 of each row (its values in column
order, each spelled the same way whatever database it came from), so it does not depend on the
order the rows come back in, and a row missing, doubled or changed changes it.
"""

from __future__ import annotations

import hashlib
import math
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.store.db import Store, StoreError, describe_error
from reviewer.store.postgres import NUL_SHOWN

#: The tables that hold data, parents before children (foreign keys), each with the columns
#: that order it. The rest of the schema is worked out from them (DERIVED).
TABLES: tuple[tuple[str, str], ...] = (
    ("runs", "name"),
    ("trials", "seq"),
    ("verdicts", "id"),
    ("labels", "id"),
    ("pairs", "pair_id, judge"),
    ("clusterings", "id"),
    ("clusters", "clustering_id, id"),
    ("cluster_members", "clustering_id, trial_id"),
    ("cluster_names", "cluster_id"),
    ("cluster_judge_names", "cluster_id"),
    ("cluster_edits", "id"),
    ("violations", "trial_id, rule_id, message_index, severity, detail"),
    ("rule_sets", "id"),
    ("judge_cache", "key"),
    ("judge_claims", "key"),
    ("judge_batches", "id"),
    ("judge_batch_items", "batch_id, custom_id"),
    ("imports", "id"),
    ("queues", "name"),
    ("queue_items", "queue, position"),
    ("queue_leases", "queue, trial_id, labeler"),
    ("rubrics", "ref"),
    ("task_stats", "run, task_id"),
    ("audit_runs", "run"),
    ("audit_findings", "id"),
    ("audit_fingerprints", "seq"),
    ("baselines", "id"),
    ("monitor_trials", "trial_id"),
)
#: Worked out from TABLES on the destination: the full-text index from the records, run totals
#: by task_stats' triggers, the latest verdicts by ``summaries.take_in_verdicts``.
DERIVED = ("trials_fts", "run_totals", "run_groups", "trial_verdicts", "verdict_counts")

BATCH = 2000


@dataclass
class TableCopy:
    table: str
    rows: int
    source_hash: str
    dest_rows: int = 0
    dest_hash: str = ""

    @property
    def same(self) -> bool:
        return self.rows == self.dest_rows and self.source_hash == self.dest_hash

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "rows": self.rows,
            "dest_rows": self.dest_rows,
            "hash": self.source_hash,
            "dest_hash": self.dest_hash,
            "same": self.same,
        }


@dataclass
class CopyResult:
    source: str
    dest: str
    tables: list[TableCopy] = field(default_factory=list)
    #: False when the copy differed and was rolled back (the destination as it was)
    kept: bool = True

    @property
    def verified(self) -> bool:
        return all(t.same for t in self.tables)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "dest": self.dest,
            "verified": self.verified,
            "kept": self.kept,
            "rows": self.rows,
            "tables": [t.to_dict() for t in self.tables],
        }


def _spelled(value: Any) -> bytes:
    """One value, spelled the same from either database: a whole float as its integer (SQLite
    keeps 5 in a REAL column as 5.0, PostgreSQL's double precision too, SQLite's untyped results
    as 5), other floats by repr, NULL apart from every string, a NUL character in text as the U+2400
    PostgreSQL stores for it."""
    if value is None:
        return b"\x00N"
    if isinstance(value, bool):
        value = int(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return b"\x00I" + str(int(value)).encode()
        return b"\x00F" + repr(value).encode()
    if isinstance(value, int):
        return b"\x00I" + str(value).encode()
    if isinstance(value, (bytes, memoryview)):
        return b"\x00B" + bytes(value)
    # PostgreSQL text holds no NUL: it stores U+2400 in its place (store/postgres.py), the same
    # text in both databases' terms
    return b"\x00S" + str(value).replace("\x00", NUL_SHOWN).encode("utf-8", "surrogatepass")


def _row_hash(row: Sequence[Any]) -> int:
    h = hashlib.sha256()
    for value in row:
        h.update(_spelled(value))
    return int.from_bytes(h.digest(), "big")


def holds_schema(db: Store) -> bool:
    """Whether DB (opened without migrations) holds a reviewer database: a new, empty file or
    database holds none, and copying from it would make one there and copy nothing."""
    try:
        with db.read_snapshot():
            db.execute("SELECT 1 FROM runs LIMIT 0")
    except sqlite3.Error:
        return False
    return True


def sqlite_without_tables(path: str) -> bool:
    """Whether the SQLite file PATH, read without a write, holds no tables at all (False when it
    cannot be read so, or holds another program's tables: opening it as a store then says why)."""
    from pathlib import Path

    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            return (
                conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                ).fetchone()
                is None
            )
        finally:
            conn.close()
    except sqlite3.Error:
        return False


def columns(db: Store, table: str) -> list[str]:
    """TABLE's columns in DB, those both databases have (PostgreSQL adds ``rowid`` to two)."""
    cur = db.execute(f"SELECT * FROM {table} LIMIT 0")
    return [d[0] for d in cur.description if d[0] != "rowid"]


def table_digest(db: Store, table: str, cols: Sequence[str]) -> tuple[int, str]:
    """(rows, hash) of TABLE over COLS."""
    total = 0
    n = 0
    for rows in db.batches(f"SELECT {', '.join(cols)} FROM {table}", size=BATCH):
        for row in rows:
            total = (total + _row_hash(row)) % (1 << 256)
        n += len(rows)
    return n, f"{total:064x}"


def _rows(db: Store, table: str, cols: Sequence[str], order: str) -> Iterable[list[Any]]:
    yield from db.batches(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}", size=BATCH)


def _empty(dst: Store) -> None:
    """StoreError unless every table the copy fills is empty in DST (nothing written then)."""
    held = []
    for table, _ in TABLES:
        n = dst.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        if n:
            held.append(f"{n:,} {table}")
    if held:
        shown = ", ".join(held[:4]) + (" …" if len(held) > 4 else "")
        raise StoreError(
            f"{dst.path}: already holds data ({shown}); copy into a new, empty database "
            "(nothing was written)"
        )


def _rebuild(dst: Store) -> None:
    """The derived tables made again from the copied data, inside the copy's transaction."""
    from reviewer.record import decode
    from reviewer.store.summaries import take_in_verdicts
    from reviewer.store.writer import FTS_SQL, fts_row

    sql = FTS_SQL
    read = "SELECT seq, run, task_id, trial, record FROM trials ORDER BY seq"
    for batch in dst.batches(read, size=500):
        out = []
        for seq, run, task_id, trial_no, record in batch:
            try:
                trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            except ValueError:
                continue  # a record this version cannot read stays out of search, as on import
            out.append(fts_row(dst, seq, trial))
        if out:
            dst.conn.executemany(sql, out)
    take_in_verdicts(dst)
    dst.after_copy()


def copy_database(
    src: Store, dst: Store, *, progress: Callable[[str, int], None] | None = None
) -> CopyResult:
    """Every table of SRC into DST (a new, empty reviewer database), then counted and hashed on
    both sides, SRC as it was when the copy began (writes to it meanwhile are not copied).
    StoreError when DST holds data already; nothing is written then."""
    result = CopyResult(str(src.path), str(dst.path))
    try:
        # the source read as one state of it, the verification's reads too: a label given or a
        # run imported by a teammate meanwhile is not half copied (it made the copy "DIFFERENT")
        with src.read_snapshot(), dst.transaction():
            _empty(dst)
            for table, order in TABLES:
                cols = _shared_columns(src, dst, table)
                insert = (
                    f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
                )
                n = 0
                for rows in _source(src, _rows(src, table, cols, order)):
                    try:
                        dst.conn.executemany(insert, rows)
                    except sqlite3.IntegrityError as e:
                        if dst.dialect == "postgres" and NUL_SHOWN in str(e):
                            raise StoreError(_one_on_postgres(dst, table, e)) from e
                        raise
                    n += len(rows)
                    if progress is not None:
                        progress(table, n)
            _rebuild(dst)
            # verified before it is kept: a copy that differs is rolled back whole
            for table, _ in TABLES:
                cols = _shared_columns(src, dst, table)
                n, digest = _source_digest(src, table, cols)
                copied = TableCopy(table, n, digest)
                copied.dest_rows, copied.dest_hash = table_digest(dst, table, cols)
                result.tables.append(copied)
            if not result.verified:
                raise _NotVerified
    except _NotVerified:
        result.kept = False
    return result


def _one_on_postgres(dst: Store, table: str, e: Exception) -> str:
    """Why rows of the source collide on PostgreSQL: names that differ only by a NUL character
    and the ␀ PostgreSQL stores for it are one name there."""
    return (
        f"{dst.path}: {table}: the source holds two names that differ only by a NUL character and "
        f"{NUL_SHOWN} (U+2400), which PostgreSQL stores for NUL, so they are one name there ({e}); "
        "this database cannot be copied to PostgreSQL as it is (nothing was written)"
    )


class _NotVerified(Exception):
    """Raised inside the copy's transaction to roll it back."""


def _source(src: Store, batches: Iterable[list[Any]]) -> Iterable[list[Any]]:
    """BATCHES read from SRC, a failure to read named as SRC's (not the destination's)."""
    try:
        yield from batches
    except sqlite3.Error as e:
        raise StoreError(describe_error(src.path, e)) from e


def _shared_columns(src: Store, dst: Store, table: str) -> list[str]:
    """The columns of TABLE both databases have, in the source's order."""
    held = set(columns(dst, table))
    return [c for c in _source_columns(src, table) if c in held]


def _source_columns(src: Store, table: str) -> list[str]:
    """:func:`columns` of SRC, a failure named as SRC's (a server that went away during the copy
    was said of the destination file)."""
    try:
        return columns(src, table)
    except sqlite3.Error as e:
        raise StoreError(describe_error(src.path, e)) from e


def _source_digest(src: Store, table: str, cols: Sequence[str]) -> tuple[int, str]:
    try:
        return table_digest(src, table, cols)
    except sqlite3.Error as e:
        raise StoreError(describe_error(src.path, e)) from e
