"""A reviewer database on a PostgreSQL server (psycopg 3), behind the same ``Store`` as SQLite.

The store's code runs its SQL through ``db.execute`` / ``db.conn.execute`` and groups writes with
``db.transaction()``; here those run on PostgreSQL:

- each statement is rewritten once from SQLite's spelling (``pg_sql.to_postgres``) and sent with
  its parameters bound on the client, so untyped parameters behave as in SQLite;
- a value PostgreSQL cannot hold is stored as SQLite stores it: a float NaN as NULL, a NUL
  character in text as U+2400 (PostgreSQL text cannot hold NUL);
- ``transaction()`` is one transaction holding the database's writer lock (an advisory lock), so
  writers take turns exactly as SQLite's ``BEGIN IMMEDIATE`` makes them, and readers never wait;
- errors come out as the ``sqlite3`` exceptions the rest of the code already handles
  (``IntegrityError`` for a constraint, ``OperationalError`` for everything else), each with
  PostgreSQL's one-line message.

A URL's ``options=-csearch_path=NAME`` keeps reviewer's tables in a schema of their own.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from reviewer.store.db import TEST_SERVER_VAR, hide_secrets, is_url, shown_url  # noqa: F401
from reviewer.store.pg_sql import BulkInsert, bulk_insert, to_postgres

#: The schema, written for PostgreSQL (statements separated by a line that is only ";;").
SCHEMA_FILE = "schema_postgres.sql"
#: The migrations (store/db.py's names) the PostgreSQL schema file holds.
BASELINE = "m020_queue_leases"


def _m021(db: Any) -> None:
    from reviewer.store.search_text import reindex_arguments

    reindex_arguments(db)


#: The migrations after BASELINE, as PostgreSQL applies them to a database that lacks them (in
#: order, each in the transaction that records it): a new database gets them too, on no data.
MIGRATIONS: dict[str, Callable[[Any], None]] = {"m021_fts_arguments_as_written": _m021}

NUL_SHOWN = "\u2400"

# psycopg's own warnings (a COPY it could not end on a connection the server dropped: "error
# ignored terminating <psycopg.Copy [BAD]>: the connection is lost") went to stderr beside the
# one line that says what happened; that line says it
logging.getLogger("psycopg").addHandler(logging.NullHandler())


class Location(str):
    """Where a PostgreSQL store is, as ``Store.path`` is for a file: its URL (password hidden)
    and a ``name`` for messages."""

    @property
    def name(self) -> str:
        return str(self)


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", NUL_SHOWN) if "\x00" in value else value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return None
        if value == 0.0:
            return 0.0  # SQLite keeps no negative zero
    return value


def _params(params: Any) -> Any:
    if params is None:
        return ()
    if isinstance(params, dict):
        return {k: _clean(v) for k, v in params.items()}
    return [_clean(v) for v in params]


def _sqlite_error(e: Exception) -> sqlite3.Error:
    """The sqlite3 exception the rest of the code handles for this psycopg error."""
    import psycopg

    # one line: libpq's lines (a reason, then "Is the server running ...?"; a DETAIL) as its
    # sentences, "; " after a line that does not end one
    text = ""
    for line in str(e).splitlines():
        line = " ".join(line.split())
        if line:
            text += (" " if text.endswith((".", "?", "!", ":")) else "; ") * bool(text) + line
    text = text or type(e).__name__
    if isinstance(e, psycopg.errors.IntegrityError):
        return sqlite3.IntegrityError(text)
    if isinstance(e, (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected)):
        return sqlite3.OperationalError(f"database is locked ({text})")
    if isinstance(e, psycopg.errors.DiskFull):
        return sqlite3.OperationalError(f"database or disk is full ({text})")
    if isinstance(e, psycopg.errors.ReadOnlySqlTransaction):
        return sqlite3.OperationalError(f"attempt to write a readonly database ({text})")
    return sqlite3.OperationalError(text)


@contextmanager
def _as_sqlite() -> Iterator[None]:
    import psycopg

    try:
        yield
    except psycopg.Error as e:
        cut = _interruption(e)
        if cut is not None:  # psycopg's clean-up after a signal failed: the signal is what counts
            raise cut from None
        raise _sqlite_error(e) from e


def _interruption(e: BaseException) -> BaseException | None:
    """The interruption (^C, SIGTERM's Terminated: not an Exception) E was raised while handling,
    if any."""
    seen: set[int] = set()
    cause = e.__context__
    while cause is not None and id(cause) not in seen:
        if not isinstance(cause, Exception):
            return cause
        seen.add(id(cause))
        cause = cause.__context__
    return None


class Cursor:
    """A psycopg cursor with sqlite3's cursor interface (what the store uses of it)."""

    lastrowid = None

    def __init__(self, cur: Any) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return int(self._cur.rowcount)

    @property
    def description(self) -> Any:
        return self._cur.description

    def fetchone(self) -> Any:
        if self._cur.description is None:
            return None
        with _as_sqlite():
            return self._cur.fetchone()

    def fetchall(self) -> list[Any]:
        if self._cur.description is None:
            return []
        with _as_sqlite():
            return list(self._cur.fetchall())

    def fetchmany(self, size: int = 100) -> list[Any]:
        if self._cur.description is None:
            return []
        with _as_sqlite():
            return list(self._cur.fetchmany(size))

    def __iter__(self) -> Iterator[Any]:
        if self._cur.description is None:
            return iter(())
        return iter(self.fetchall())

    def close(self) -> None:
        self._cur.close()


class _NoRows:
    """A cursor of a statement that had nothing to do (see Connection._savepoint)."""

    description = None
    rowcount = -1

    def close(self) -> None:
        pass


_NO_ROWS = _NoRows()

_SAVEPOINT = re.compile(
    r"\s*(SAVEPOINT|RELEASE(?:\s+SAVEPOINT)?|ROLLBACK\s+TO(?:\s+SAVEPOINT)?)\s+(\w+)\s*;?\s*",
    re.IGNORECASE,
)


#: Statements sent again on a new connection when the old one turned out to be lost as they were
#: sent outside any transaction: a transaction's start and reads, which do the same the second time.
_REPEATABLE = re.compile(r"\s*(BEGIN|SELECT|SHOW)\b", re.IGNORECASE)
_ENDS = re.compile(r"\s*(COMMIT|END|ROLLBACK)\s*;?\s*", re.IGNORECASE)


class Connection:
    """A psycopg connection (autocommit; transactions begun explicitly) with sqlite3's interface.

    A connection the server or the network dropped while no transaction was open (the server
    restarted, an idle timeout, a failover) is made again by the next statement, so a process that
    lives long (the app's label screen, a served session, ``monitor --follow``) goes on; one lost
    inside a transaction fails that transaction, whose commit is then refused, never skipped."""

    def __init__(self, raw: Any, url: str | None = None) -> None:
        self.raw = raw
        self._url = url  # to connect again; never shown (it may hold a password)
        # a transaction this connection began and has not ended: known even when the connection
        # is lost, which takes the server's transaction status with it
        self._open = False
        # a SAVEPOINT outside any transaction begins one, as in SQLite; its RELEASE commits it
        self._outer_savepoint: str | None = None

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        if self._open:  # lost or not: until the caller ends it, it is the transaction it began
            return True
        # UNKNOWN: the connection is closed (see rollback), the server rolled back what it held
        status = self.raw.info.transaction_status
        return bool(status not in (TransactionStatus.IDLE, TransactionStatus.UNKNOWN))

    def _revive(self) -> bool:
        """A new connection in place of a lost one, when no transaction was open on it; whether it
        made one. sqlite3.OperationalError when the server cannot be reached again."""
        if not self.raw.closed or self._open or self._url is None:
            return False
        try:
            fresh = connect(self._url)
        except sqlite3.OperationalError as e:
            raise sqlite3.OperationalError(
                f"lost the connection to the PostgreSQL server, and connecting again failed ({e})"
            ) from None
        self.raw, self._outer_savepoint = fresh.raw, None
        return True

    def _run(self, cur_of: Callable[[], Any], sql: str, params: Any = None) -> Any:
        """SQL run on a new cursor (on a new connection in place of a lost one, outside any
        transaction), sent once more when the connection turned out lost as it was sent outside any
        transaction and it is a transaction's start or a read; a BEGIN or an end of the
        transaction kept track of."""
        self._revive()
        before = self._open
        try:
            with _as_sqlite():
                cur = cur_of()
                cur.execute(sql, params)
        except sqlite3.OperationalError:
            if before or not _REPEATABLE.match(sql) or not self._revive():
                raise
            with _as_sqlite():
                cur = cur_of()
                cur.execute(sql, params)
        if sql.lstrip()[:5].upper() == "BEGIN":
            self._open = True
        elif _ENDS.fullmatch(sql):
            self._open = False
        return cur

    def begin(self, sql: str = "BEGIN") -> None:
        """Begin a transaction (on a new connection in place of a lost one)."""
        self._run(self.raw_cursor, sql)

    def raw_cursor(self) -> Any:
        return self.raw.cursor()

    def execute(self, sql: str, params: Any = None) -> Cursor:
        savepoint = _SAVEPOINT.fullmatch(sql) if sql[:12].lstrip()[:1] in "SRsr" else None
        if savepoint is not None:
            return self._savepoint(savepoint.group(1).split()[0].upper(), savepoint.group(2), sql)
        return Cursor(self._run(self.raw_cursor, to_postgres(sql), _params(params)))

    def _savepoint(self, verb: str, name: str, sql: str) -> Cursor:
        from reviewer.store.db import lock_timeout

        if verb == "SAVEPOINT" and not self.in_transaction:
            self.begin()
            try:
                with _as_sqlite():
                    self.raw.execute(f"SET LOCAL lock_timeout = '{int(lock_timeout() * 1000)}ms'")
                    self.raw.execute(f"SELECT pg_advisory_xact_lock({writer_lock_sql()})")
            except BaseException:
                self.rollback()
                raise
            self._outer_savepoint = name
        outer = verb == "RELEASE" and name == self._outer_savepoint
        if self.raw.closed and self._open and verb != "SAVEPOINT" and not outer:
            # the connection was lost with the transaction: the server rolled it all back, so
            # there is nothing to roll back to or release (the failure that lost it is what the
            # caller reports, and the transaction's commit is refused)
            return Cursor(_NO_ROWS)
        with _as_sqlite():
            cur = self.raw.cursor()
            cur.execute(sql)
        if outer:
            self._outer_savepoint = None
            self.commit()
        return Cursor(cur)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Cursor:
        self._revive()
        bulk = bulk_insert(sql)
        with _as_sqlite():
            cur = self.raw.cursor()
            if bulk is not None and self.in_transaction:
                # inside a transaction: all rows or none, as executemany's would be
                if bulk.direct:
                    self._copy(cur, bulk.table, bulk.columns, rows)
                else:
                    self._staged(cur, bulk, rows)
            else:
                cur.executemany(to_postgres(sql), [_params(r) for r in rows])
        return Cursor(cur)

    @staticmethod
    def _copy(cur: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(_params(row))

    def _staged(self, cur: Any, bulk: BulkInsert, rows: Iterable[Sequence[Any]]) -> None:
        """Rows copied into a temporary table of the connection, then inserted from it in one
        statement (through each column's function, skipping conflicts for OR IGNORE)."""
        stage = f"_reviewer_stage_{bulk.table}_{abs(hash(bulk)) % 10**8}"
        typed = ", ".join(
            f"{c} AS p{i}" if f is None else f"NULL::text AS p{i}"
            for i, (c, f) in enumerate(zip(bulk.columns, bulk.functions, strict=True))
        )
        # made again when a rolled-back transaction took it away
        cur.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS {stage} AS SELECT {typed} FROM {bulk.table} LIMIT 0"
        )
        cur.execute(f"TRUNCATE {stage}")
        names = [f"p{i}" for i in range(len(bulk.columns))]
        self._copy(cur, stage, names, rows)
        values = ", ".join(
            n if f is None else f"{f}({n})" for n, f in zip(names, bulk.functions, strict=True)
        )
        conflict = " ON CONFLICT DO NOTHING" if bulk.ignore else ""
        cur.execute(
            f"INSERT INTO {bulk.table} ({', '.join(bulk.columns)}) SELECT {values} FROM {stage}"
            f"{conflict}"
        )

    def commit(self) -> None:
        if not self.in_transaction:
            return
        self._open = False
        if self.raw.closed:  # lost with what it held: never a commit that did nothing
            raise sqlite3.OperationalError(
                "lost the connection to the PostgreSQL server before the commit: nothing of this "
                "step was written"
            )
        with _as_sqlite():
            self.raw.execute("COMMIT")

    def rollback(self) -> None:
        from psycopg.pq import PipelineStatus, TransactionStatus

        if not self.in_transaction:
            return
        self._open = False
        raw = self.raw
        if raw.closed:  # lost: the server rolled back what it held
            return
        if (
            raw.info.transaction_status == TransactionStatus.ACTIVE
            or raw.pgconn.pipeline_status != PipelineStatus.OFF
        ):
            # a signal (SIGTERM's Terminated) cut a command short: the connection cannot send
            # another until that one's result is read, so it is closed instead, and the server
            # rolls the transaction back (^C's KeyboardInterrupt psycopg cancels by itself)
            raw.close()
            return
        with _as_sqlite():
            raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()


def _loaders(raw: Any) -> None:
    """numeric (SUM and AVG of integers) as Python int or float, never Decimal, as from SQLite."""
    from psycopg.adapt import Loader

    class NumberLoader(Loader):
        def load(self, data: Any) -> Any:
            text = bytes(data).decode()
            if text.lstrip("-").isdigit():
                return int(text)
            return float(text)

    raw.adapters.register_loader("numeric", NumberLoader)


def connect(url: str) -> Connection:
    """A connection to URL; sqlite3.OperationalError with the server's one line when it cannot be
    made."""
    import psycopg

    try:
        with _as_sqlite():
            raw = psycopg.connect(
                url, autocommit=True, cursor_factory=psycopg.ClientCursor, **_timeout(url)
            )
    except ValueError as e:  # a URL libpq cannot read: %ff in its user, a bad port
        raise sqlite3.OperationalError(f"not a PostgreSQL URL it can read: {e}") from None
    _loaders(raw)
    return Connection(raw, url)


#: Seconds to wait for a server that does not answer, unless the URL's connect_timeout or
#: PGCONNECT_TIMEOUT says otherwise.
CONNECT_TIMEOUT_S = 10


def _timeout(url: str) -> dict[str, Any]:
    """The connect_timeout to give psycopg: none when the URL or PGCONNECT_TIMEOUT sets one (a
    keyword given to psycopg overrides both: connect_timeout=2 in the URL waited 10 s)."""
    import os

    from psycopg.conninfo import conninfo_to_dict

    if os.environ.get("PGCONNECT_TIMEOUT", "").strip():
        return {}
    try:
        given = conninfo_to_dict(url)
    except Exception:  # a URL libpq cannot read: psycopg.connect says why
        return {}
    return {} if "connect_timeout" in given else {"connect_timeout": CONNECT_TIMEOUT_S}


def writer_lock_sql() -> str:
    """The advisory lock every writer of this database (its schema) holds for its transaction."""
    return "hashtext('reviewer writer ' || COALESCE(current_schema(), ''))"


def begin_writing(conn: Connection, timeout_s: float, on_wait: Callable[[], None] | None) -> bool:
    """BEGIN and take the writer lock, waiting up to TIMEOUT_S (calling ON_WAIT once after a
    second); False (nothing begun) when another writer held it all that time."""
    key = writer_lock_sql()
    deadline = time.monotonic() + timeout_s
    said = False
    delay = 0.002
    while True:
        conn.begin()
        try:
            with _as_sqlite():
                got = conn.raw.execute(f"SELECT pg_try_advisory_xact_lock({key})").fetchone()[0]
        except BaseException:
            conn.rollback()
            raise
        if got:
            return True
        conn.rollback()
        now = time.monotonic()
        if now >= deadline:
            return False
        if not said and now >= deadline - timeout_s + 1.0:
            said = True
            if on_wait is not None:
                on_wait()
        time.sleep(min(delay, max(deadline - now, 0)))
        delay = min(delay * 2, 0.1)


def _schema_statements() -> list[str]:
    text = resources.files("reviewer.store").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    return [s for s in text.split("\n;;\n") if s.strip()]


def tables(conn: Connection) -> list[str]:
    with _as_sqlite():
        rows = conn.raw.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        ).fetchall()
    return [str(r[0]) for r in rows]


def create_schema(conn: Connection, migration_names: Sequence[str]) -> None:
    """Every table, view, function and trigger of the schema, and the migrations it holds
    recorded, in one transaction (the caller holds the writer lock)."""
    for statement in _schema_statements():
        conn.raw.execute(statement)
    _compress_fast(conn)
    conn.raw.execute(
        'CREATE TABLE _reviewer_migrations (name TEXT COLLATE "C" PRIMARY KEY, '
        "applied_at TEXT NOT NULL)"
    )
    now = datetime.now(UTC).isoformat()
    with conn.raw.cursor() as cur:
        cur.executemany(
            "INSERT INTO _reviewer_migrations (name, applied_at) VALUES (%s, %s)",
            [(name, now) for name in migration_names],
        )


#: The columns holding a trial's whole record and its words: values of several kilobytes, which
#: PostgreSQL compresses; lz4 does it several times faster than its default (pglz): an import
#: about a tenth faster, for a table about 40% larger (bench/postgres.py's trials).
_LARGE_COLUMNS = (("trials", "record"), ("trials_fts", "text"), ("trials_fts", "system"))


def _compress_fast(conn: Connection) -> None:
    """The large columns compressed with lz4 when the server was built with it (most are: the
    Debian, RHEL and official images); pglz, the default, kept otherwise."""
    supported = conn.raw.execute(
        "SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' "
        "AND 'lz4' = ANY(enumvals)"
    ).fetchone()
    if supported:
        for table, column in _LARGE_COLUMNS:
            conn.raw.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION lz4")


def applied(conn: Connection) -> list[str]:
    rows = conn.raw.execute("SELECT name FROM _reviewer_migrations ORDER BY name").fetchall()
    return [str(r[0]) for r in rows]


def _connect_problem(location: str, text: str) -> str:
    """One line for a connection the server refused or could not take."""
    missing = re.search(r'database "([^"]*)" does not exist', text)
    if missing:
        return (
            f"{location}: the server has no database {missing.group(1)!r}: create it first "
            f"(createdb {missing.group(1)}, or CREATE DATABASE), then run this again"
        )
    text = text.removeprefix("connection failed: ")
    return f"{location}: cannot connect to the PostgreSQL server ({text})"


def _not_allowed_to_create(conn: Connection, location: str, text: str) -> str:
    """One line for a role that may not make reviewer's tables in an empty database: since
    PostgreSQL 15 only the database's owner may create in its schema public, so a database made by
    an administrator for a team's role refuses that role (what to run, for the role and schema)."""
    import shlex

    try:
        role, schema = conn.raw.execute("SELECT current_user, current_schema()").fetchone()
    except Exception:  # noqa: BLE001 - the line is said without them
        role, schema = "ROLE", "public"
    return (
        f"{location}: the role {role} may not create reviewer's tables in schema {schema} "
        f"({text}); make the database with the role as its owner (createdb -O "
        f"{shlex.quote(role)} NAME), or let it: GRANT CREATE ON SCHEMA {_ident(schema)} TO "
        f"{_ident(role)}"
    )


def _ident(name: str) -> str:
    """NAME as an SQL identifier, quoted when it needs to be."""
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def _names_no_database(url: str) -> bool:
    """Whether URL leaves its database to libpq's default, the user's name (postgresql://me@host,
    .../ with nothing after the slash): no ?dbname=, no service, no PGDATABASE or PGSERVICE either."""
    import os

    from psycopg.conninfo import conninfo_to_dict

    try:
        given = conninfo_to_dict(url)
    except Exception:  # noqa: BLE001 - a URL libpq cannot read: connect names the problem
        return False
    return not (
        given.get("dbname")
        or given.get("service")
        or os.environ.get("PGDATABASE")
        or os.environ.get("PGSERVICE")
    )


def _store_class() -> type:
    from reviewer.store.db import Store

    class PgStore(Store):
        """A reviewer database on PostgreSQL: the same ``Store`` the rest of the code uses."""

        dialect = "postgres"

        def __init__(self, conn: Connection, location: Location) -> None:  # no sqlite-utils set-up
            self.conn = conn  # type: ignore[assignment]
            self.path = location  # type: ignore[assignment]
            self.on_wait = None
            self._tracer = None

        def execute(self, sql: str, parameters: Any = None) -> Any:
            return self.conn.execute(sql, parameters)

        def close(self) -> None:
            self.conn.close()

        def identity(self) -> str | None:
            return str(self.path)

        def table_names(self, fts4: bool = False, fts5: bool = False) -> list[str]:
            """The tables of this database (its schema), by name (sqlite-utils' reads sqlite_master;
            PostgreSQL has no FTS tables, so FTS4 or FTS5 asks for none)."""
            if fts4 or fts5:
                return []
            return tables(self.conn)  # type: ignore[arg-type]

        def view_names(self) -> list[str]:
            """The views of this database (its schema), by name."""
            with _as_sqlite():
                rows = self.conn.raw.execute(  # type: ignore[attr-defined]
                    "SELECT viewname FROM pg_views WHERE schemaname = current_schema() "
                    "ORDER BY viewname"
                ).fetchall()
            return [str(r[0]) for r in rows]

        def after_copy(self) -> None:
            """Each identity column's next value past the ids written by hand."""
            found = self.conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND is_identity = 'YES'"
            ).fetchall()
            for table, column in found:
                self.conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
                    f"COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)"
                )

        def batches(
            self, sql: str, parameters: Any = None, size: int = 2000
        ) -> Iterator[list[Any]]:
            """The rows of a query, SIZE at a time: inside a transaction through a cursor of the
            server's (psycopg's own cursor takes the whole result at once, so a copy held each
            table of a team's database in memory whole), else as the rest of the store reads."""
            if not self.conn.in_transaction:
                yield from Store.batches(self, sql, parameters, size)
                return
            raw = self.conn.raw  # type: ignore[attr-defined]
            with _as_sqlite():
                cur = raw.cursor(name=f"reviewer_batches_{next(_CURSORS)}")
            try:
                with _as_sqlite():
                    cur.execute(to_postgres(sql), _params(parameters))
                while True:
                    with _as_sqlite():
                        rows = cur.fetchmany(size)
                    if not rows:
                        return
                    yield rows
            finally:
                import psycopg

                # a transaction a failure aborted takes no CLOSE: the failure is what is told
                with contextlib.suppress(psycopg.Error):
                    cur.close()

        def _begin_snapshot(self) -> None:
            self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            self.conn.execute("SELECT 1").fetchone()  # the snapshot, taken now

        def _begin_immediate(self) -> None:
            from reviewer.store.db import StoreBusy, lock_timeout

            timeout = lock_timeout()

            def said() -> None:
                if self.on_wait is not None:
                    self.on_wait(
                        f"waiting for the database: another process is writing to {self.path} "
                        f"(up to {timeout:.0f} s)"
                    )

            if not begin_writing(self.conn, timeout, said):  # type: ignore[arg-type]
                raise StoreBusy(
                    f"{self.path}: the database is locked: another process is writing to it and "
                    f"held the lock longer than we wait ({timeout:.0f} s, REVIEWER_LOCK_TIMEOUT); "
                    "run it again when that finishes"
                )

    return PgStore


_PG_STORE: list[type] = []
#: Names for the server's cursors of ``PgStore.batches``, one each.
_CURSORS = itertools.count(1)


def open_postgres(
    url: str,
    *,
    migrate: bool = True,
    on_wait: Callable[[str], None] | None = None,
    name: str | None = None,
) -> Any:
    """The reviewer database at URL (in the first schema of its search_path), its schema made on
    first use; StoreError with one line when the server cannot be reached, the database is
    another program's or a newer reviewer's. NAME, when given, names it in messages instead of
    its URL."""
    from reviewer.store.db import StoreError, migrations

    if not _PG_STORE:
        _PG_STORE.append(_store_class())
    location = Location(name if name is not None else shown_url(url))
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreError(
            f"{location}: a PostgreSQL database needs psycopg: pip install 'reviewer[postgres]'"
        ) from None
    if _names_no_database(url):
        raise StoreError(
            f"{location}: the URL names no database (libpq would take the one named after the "
            "user, often the server's own postgres): name one, postgresql://user@host/reviewer "
            "(createdb reviewer first)"
        )
    try:
        conn = connect(url)
    except sqlite3.Error as e:
        raise StoreError(_connect_problem(location, hide_secrets(str(e), url))) from e
    db = _PG_STORE[0](conn, location)
    db.on_wait = on_wait
    from reviewer.store import db as sqlite_db

    sqlite_db._last_opened[:] = [location]  # type: ignore[list-item]  # named in later failures
    names = [m.name for m in migrations._migrations]
    try:
        if conn.raw.execute("SELECT current_schema()").fetchone()[0] is None:
            path = conn.raw.execute("SHOW search_path").fetchone()[0]
            raise StoreError(
                f"{location}: no schema of its search_path ({path}) exists: create it first "
                "(CREATE SCHEMA name), then run this again"
            )
        found = tables(conn)
        if "_reviewer_migrations" not in found:
            if found:
                shown = ", ".join(found[:5]) + (" …" if len(found) > 5 else "")
                raise StoreError(
                    f"{location}: a PostgreSQL database of something else (tables: {shown}); "
                    "reviewer reads and writes only its own: name another database, or a schema of "
                    "its own (CREATE SCHEMA evals, then ?options=-csearch_path%3Devals)"
                )
            if not migrate:
                raise StoreError(f"{location}: not a reviewer database yet")
            try:
                with db.transaction():
                    if "_reviewer_migrations" not in tables(conn):  # another made it meanwhile
                        with _as_sqlite():
                            create_schema(conn, names[: names.index(BASELINE) + 1])
            except sqlite3.OperationalError as e:
                if "permission denied" not in str(e):
                    raise
                raise StoreError(_not_allowed_to_create(conn, location, str(e))) from e
        with _as_sqlite():
            done = applied(conn)
        newer = sorted(set(done) - set(names))
        if newer:
            raise StoreError(
                f"{location}: written by a newer reviewer (its schema has {newer[-1]}, which this "
                "version does not know); upgrade reviewer to open it (nothing was read or written)"
            )
        missing = [n for n in names if n not in done]
        if missing and migrate and all(n in MIGRATIONS for n in missing):
            try:
                with db.transaction():
                    with _as_sqlite():
                        done = applied(conn)  # another process may have applied them meanwhile
                    for name in (n for n in names if n not in done):
                        MIGRATIONS[name](db)
                        with _as_sqlite():
                            conn.raw.execute(
                                "INSERT INTO _reviewer_migrations (name, applied_at) "
                                "VALUES (%s, %s)",
                                (name, datetime.now(UTC).isoformat()),
                            )
            except (sqlite3.Error, StoreError):
                # a role that may only read: what reads need is there, the rest waits for a
                # writer (``db.READ_WITHOUT``)
                if set(missing) - sqlite_db.READ_WITHOUT:
                    raise
            missing = []
        unknown = [n for n in missing if n not in MIGRATIONS]
        if unknown:
            raise StoreError(
                f"{location}: its schema lacks {unknown[0]}, which this version of reviewer "
                "cannot add on PostgreSQL; copy it to a new database with `reviewer copy`"
            )
    except StoreError:
        conn.close()
        raise
    except sqlite3.Error as e:
        conn.close()
        raise StoreError(f"{location}: database error ({e})") from e
    return db


#: The test suite's switch to PostgreSQL (tests/conftest.py, `pytest --backend postgres`): with
#: it set to a server's URL, a database the code opens by file name is a database of that server
#: named after the file (made from a template holding the schema), so every test runs unchanged
#: on PostgreSQL. A file that exists and is not empty (one a test wrote: a damaged database,
#: another program's) is still opened as the SQLite file it is.
TEST_TEMPLATE = "reviewer_template"


def test_database(path: Any) -> str:
    """The name of the database standing for the file PATH under REVIEWER_TEST_POSTGRES."""
    import hashlib
    from pathlib import Path

    resolved = str(Path(path).resolve())
    return "f_" + hashlib.sha1(resolved.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def with_database(url: str, name: str) -> str:
    """URL with its database replaced by NAME."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def make_test_database(server: str, name: str, template: str = TEST_TEMPLATE) -> str:
    """The URL of database NAME on SERVER, made from TEMPLATE when missing (the template made
    first, with reviewer's schema, when it is missing too); safe for processes racing to make it."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists:
            return with_database(server, name)
        admin.execute("SELECT pg_advisory_lock(hashtext('reviewer test databases'))")
        try:
            if (
                template == TEST_TEMPLATE
                and not admin.execute(
                    "SELECT 1 FROM pg_database WHERE datname = %s", [template]
                ).fetchone()
            ):
                admin.execute(f'CREATE DATABASE "{template}"')
                open_postgres(with_database(server, template)).close()
            if not admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')
        finally:
            admin.execute("SELECT pg_advisory_unlock(hashtext('reviewer test databases'))")
    return with_database(server, name)


def database_exists(location: Any) -> bool:
    """Whether a --db value names a database that is there already, so reading it makes none: a
    URL (the server says when it is not), a file; under TEST_SERVER_VAR a file name that
    ``open_store`` takes for a test database once that database is made."""
    import os
    from pathlib import Path

    if is_url(location):
        return True
    path = Path(location)
    server = os.environ.get(TEST_SERVER_VAR)
    if not server or (path.is_file() and path.stat().st_size > 0):
        return path.is_file()
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        found = admin.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [test_database(path)]
        ).fetchone()
    return found is not None


def _open(location: Any, **kwargs: Any) -> Any:
    """``store.db.open_store``'s way to PostgreSQL: a URL, or (under TEST_SERVER_VAR) a file name
    standing for a database of the test server. A bad REVIEWER_LOCK_TIMEOUT is refused first
    (StoreError naming it), as opening a SQLite file refuses it."""
    import os

    from reviewer.store.db import lock_timeout

    lock_timeout()
    if is_url(location):
        return open_postgres(str(location), **kwargs)
    server = os.environ[TEST_SERVER_VAR]
    url = make_test_database(server, test_database(location))
    return open_postgres(url, name=str(location), **kwargs)  # named as the file the test gave


def _register() -> None:
    from reviewer.store import db

    if not db._PG_OPENER:
        db._PG_OPENER.append(_open)


_register()
