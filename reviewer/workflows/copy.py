"""`reviewer copy SRC DST`: a whole database moved between SQLite and PostgreSQL, either way, and
verified (``store.copy``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from reviewer.store.copy import CopyResult, copy_database, holds_schema, sqlite_without_tables
from reviewer.store.db import BLANK_NAME, StoreError, name_problem, open_store
from reviewer.store.postgres import database_exists, is_url, shown_url


def _same(src: str, dst: str) -> bool:
    if is_url(src) or is_url(dst):
        return src == dst
    try:
        return Path(src).resolve() == Path(dst).resolve()
    except OSError:
        return False


def copy_databases(
    src: str,
    dst: str,
    *,
    progress: Callable[[str, int], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> CopyResult:
    """SRC (a SQLite file or a postgresql:// URL) copied into DST (a new file, or an empty
    database), in one transaction on DST, then counted and hashed on both sides. StoreError in
    one line when SRC is not a reviewer database, DST holds data, or they are the same."""
    for location in (src, dst):
        if not location.strip():
            raise StoreError(f"{location!r}: {BLANK_NAME}")
        if not is_url(location) and (problem := name_problem(location)):
            raise StoreError(f"{location}: {problem}")
    if _same(src, dst):
        raise StoreError(f"{src}: the source and the destination are the same database")
    if not database_exists(src):
        raise StoreError(f"{src}: no such database file")
    empty = StoreError(f"{_shown(src)}: an empty database, not a reviewer one: nothing to copy")
    if not is_url(src) and Path(src).is_file():
        if Path(src).stat().st_size == 0 or sqlite_without_tables(src):
            raise empty  # left as it is: opening it would write a header, or turn on WAL
    else:
        with open_store(src, migrate=False, on_wait=on_wait) as source:
            if not holds_schema(source):  # opened with migrations, reviewer would make one there
                raise empty
    made = not is_url(dst) and not Path(dst).exists()  # a new file: taken away again on failure
    try:
        with open_store(src, on_wait=on_wait) as source, open_store(dst, on_wait=on_wait) as dest:
            result = copy_database(source, dest, progress=progress)
    except BaseException:
        if made:
            _remove_database_file(dst)
        raise
    if made and not result.kept:
        _remove_database_file(dst)  # "as it was": no file, not an empty database
    result.source, result.dest = _shown(src), _shown(dst)
    return result


def _shown(location: str) -> str:
    return shown_url(location) if is_url(location) else location


def _remove_database_file(path: str) -> None:
    for name in (path, path + "-wal", path + "-shm", path + "-journal"):
        with contextlib.suppress(OSError):
            Path(name).unlink()


def result_lines(result: CopyResult) -> list[str]:
    """What `reviewer copy` prints: a line per table that holds rows, then the verdict."""
    width = max(len(t.table) for t in result.tables)
    lines = [f"{'table':<{width}}  {'rows':>9}  copied"]
    for t in result.tables:
        if t.rows or t.dest_rows:
            mark = "same" if t.same else f"DIFFERENT ({t.dest_rows:,} rows, hash differs)"
            lines.append(f"{t.table:<{width}}  {t.rows:>9,}  {mark}")
    if result.verified:
        lines.append(
            f"copied {result.rows:,} rows ({len(result.tables)} tables, those holding rows above) "
            f"from {result.source} to {result.dest}: every count and content hash the same"
        )
    else:
        bad = ", ".join(t.table for t in result.tables if not t.same)
        lines.append(
            f"NOT VERIFIED: {bad} differ between {result.source} and {result.dest}; the copy was "
            f"rolled back, {result.dest} is as it was"
        )
    return lines
