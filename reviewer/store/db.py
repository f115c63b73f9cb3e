"""Open the SQLite file: WAL, a busy timeout, and the schema brought up to date by migrations."""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, quote, unquote, urlsplit, urlunsplit


def _import_sqlite_utils() -> None:
    """Import sqlite-utils without numpy: it imports numpy (60 ms) only to map numpy scalar types to
    column types when it creates tables from Python values, which reviewer never does (every table is
    made by a migration's SQL). numpy stays importable for the modules that use it."""
    if "numpy" in sys.modules or "sqlite_utils" in sys.modules:
        return
    sys.modules["numpy"] = None  # type: ignore[assignment]  # import numpy -> ImportError, for now
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]


_import_sqlite_utils()

import sqlite_utils  # noqa: E402
from sqlite_utils.migrations import Migrations  # noqa: E402

DEFAULT_DB = "reviewer.db"
# How long one statement waits for another connection's lock (reads, autocommit writes).
BUSY_TIMEOUT_MS = 30_000
# How long a writer waits for the write lock before giving up (REVIEWER_LOCK_TIMEOUT, seconds): an
# import of a large file holds it for minutes, and the second writer should finish after it, not fail.
LOCK_TIMEOUT_S = 600.0
# After this long waiting, a writer says so (Store.on_wait).
WAIT_NOTICE_S = 1.0

migrations = Migrations("reviewer")


class StoreError(Exception):
    """The database file cannot be opened, written or is not ours; the message is one line."""


class StoreBusy(StoreError, sqlite3.OperationalError):
    """Another connection held the write lock for longer than the lock timeout (also an
    OperationalError, so code that handles SQLite's own "database is locked" handles it too)."""


def lock_timeout() -> float:
    """Seconds a writer waits for the lock: REVIEWER_LOCK_TIMEOUT, else LOCK_TIMEOUT_S; StoreError
    naming the variable when it is set to something that is not a finite number of seconds >= 0."""
    raw = os.environ.get("REVIEWER_LOCK_TIMEOUT", "").strip()
    if not raw:
        return LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1e9:  # NaN fails this too
        shown = raw if len(raw) <= 40 else raw[:39] + "…"
        raise StoreError(
            f"REVIEWER_LOCK_TIMEOUT={shown!r} is not a number of seconds reviewer can use: give "
            f"one from 0 to 1e9, or unset it for the default {LOCK_TIMEOUT_S:.0f}"
        )
    return value


def _is_locked(e: sqlite3.OperationalError) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text


def describe_error(path: str | Path, e: BaseException) -> str:
    """One line naming what went wrong with the database file, for the user."""
    text = str(e)
    low = text.lower()
    where = str(path)
    if "readonly" in low and where in _read_only_reasons:
        return f"{_read_only_reasons[where]} (nothing was written)"
    if low.startswith("permission denied for table"):  # PostgreSQL's: a role that may only read
        return (
            f"{where}: this PostgreSQL role may not write reviewer's tables ({text}): it can read "
            "(reports, the app); labels, imports and other writes need a role granted INSERT, "
            "UPDATE and DELETE on them; nothing was written"
        )
    if "read-only transaction" in low:  # PostgreSQL's: no file or folder to blame
        said = text.removeprefix("attempt to write a readonly database ").strip("()")
        return (
            f"{where}: the PostgreSQL server takes no writes on this connection (a standby, or "
            f"default_transaction_read_only on): {said}; nothing was written"
        )
    if isinstance(e, OSError):
        if e.errno == errno.ENOSPC:
            return f"{where}: the disk is full ({e.strerror})"
        if e.errno in (errno.EACCES, errno.EPERM):
            return f"{where}: permission denied ({e.strerror})"
        if e.errno == errno.EROFS:
            return f"{where}: the file system is read-only"
        return f"{where}: cannot open ({e.strerror or text})"
    if "disk is full" in low or "disk i/o" in low and _disk_full(path):
        return f"{where}: the disk is full; free some space and run it again (nothing was lost)"
    if "disk i/o" in low and (limit := _size_limit()) is not None:
        return (
            f"{where}: database error ({text}): a write failed, and this process may write files "
            f"of {limit:,} bytes at most (ulimit -f): if the database or its log reached that, "
            "raise the limit and run it again (nothing was lost)"
        )
    if "readonly" in low or "read-only" in low:
        return f"{where}: the database is read-only (file or folder not writable); {_access(path)}"
    if "unable to open" in low:
        return f"{where}: cannot open the database file: {_access(path)}"
    if isinstance(e, sqlite3.OperationalError) and _is_locked(e):
        return (
            f"{where}: the database is locked: another process is writing to it and held the lock "
            f"longer than we wait ({lock_timeout():.0f} s, REVIEWER_LOCK_TIMEOUT); run it again when "
            "that finishes"
        )
    if low.startswith("lost the connection"):  # the store's own line for it
        return f"{where}: {text}"
    if connection_lost(e):
        return f"{where}: lost the connection to the PostgreSQL server ({text})"
    if "malformed" in low or "corrupt" in low:
        return f"{where}: the database is damaged ({text}); {RECOVER}"
    if "not a database" in low or "encrypted" in low:
        return f"{where}: not a reviewer database ({text})"
    return f"{where}: database error ({text})"


def connection_lost(e: BaseException) -> bool:
    """Whether E says the connection to a PostgreSQL server went (the server restarted, or the
    network between went): a new connection may work where this one no longer can."""
    low = str(e).lower()
    return (
        "server closed the connection" in low
        or "consuming input failed" in low
        or "the connection is closed" in low
        or ("connection" in low and ("lost" in low or "terminat" in low))
    )


#: What a user can do with a damaged database.
RECOVER = (
    "nothing was written: restore a backup, or recover what SQLite can with "
    "`sqlite3 FILE .recover | sqlite3 recovered.db`"
)
#: Files up to this size get SQLite's quick_check when a process first opens them (about 0.2 s at
#: this size, 0.65 s at 256 MB here); bigger files are checked by SQLite as pages are read, and a
#: page it finds damaged then stops the command with the same one line.
QUICK_CHECK_MAX_BYTES = 64 << 20
# (resolved path, inode) of the files this process has checked already
_checked: set[tuple[str, int]] = set()


def check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """StoreError unless the database passes ``PRAGMA quick_check`` (once per file and process,
    for files up to QUICK_CHECK_MAX_BYTES): a damaged file is neither read (its numbers could be
    wrong without an error) nor written."""
    try:
        st = path.stat()
    except OSError:
        return
    try:  # the -wal file comes and goes as other connections close: no exists-then-stat race
        wal_size = path.with_name(path.name + "-wal").stat().st_size
    except OSError:
        wal_size = 0
    size = st.st_size + wal_size
    key = (str(path.resolve()), st.st_ino)
    if key in _checked or size > QUICK_CHECK_MAX_BYTES or st.st_size == 0:
        return
    rows = conn.execute("PRAGMA quick_check(3)").fetchall()
    if rows and rows[0][0] == "ok":
        _checked.add(key)
        return
    problem = " ".join(str(rows[0][0]).replace("*** in database main ***", "").split())
    raise StoreError(f"{path}: the database is damaged (quick_check: {problem}); {RECOVER}")


def check_schema(db: sqlite_utils.Database, path: Path) -> None:
    """StoreError when a newer reviewer wrote the database: it holds migrations this version does
    not know, and writing to it (or reading it as if it were ours) could corrupt what it added."""
    tables = [
        str(r[0])
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    ]
    ours = "_sqlite_migrations" in tables and migrations.applied(db)
    if tables and not ours:  # another program's (one using sqlite-utils' migrations too)
        shown = ", ".join(sorted(tables)[:5]) + (" …" if len(tables) > 5 else "")
        raise StoreError(
            f"{path}: a SQLite database of something else (tables: {shown}); reviewer reads and "
            "writes only its own files: name another database"
        )
    known = {m.name for m in migrations.pending(sqlite_utils.Database(memory=True))}
    newer = [m.name for m in migrations.applied(db) if m.name not in known]
    if newer:
        raise StoreError(
            f"{path}: written by a newer reviewer (its schema has {newer[-1]}, which this version "
            "does not know); upgrade reviewer to open it (nothing was read or written)"
        )


def _disk_full(path: str | Path) -> bool:
    try:
        st = os.statvfs(Path(path).resolve().parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 1 << 20


def _size_limit() -> int | None:
    """The process's file size limit in bytes (RLIMIT_FSIZE, ``ulimit -f``), None when there is
    none: a write past it fails as SQLite's bare 'disk I/O error', the log that reached it gone
    by the time the error is told."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if limit == resource.RLIM_INFINITY else int(limit)


def _access(path: str | Path) -> str:
    """Why a file cannot be opened or written: a missing folder, a permission, a read-only file."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.exists():
        return f"the folder {folder} does not exist"
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"the file system of {folder} is mounted read-only"
    except OSError:
        pass
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable (permission denied)"
    if p.exists() and not os.access(p, os.R_OK):
        return "permission denied (the file is not readable)"
    if p.exists() and not os.access(p, os.W_OK):
        return "the file is read-only"
    return "permission denied"


class Store(sqlite_utils.Database):
    """One connection to a reviewer database, for the thread that opened it.

    ``with open_store(path) as db:`` opens it and closes it; ``db.transaction()`` is the one way to
    group writes.
    """

    path: Path
    #: Which database holds it: "sqlite" (a file) or "postgres" (store/postgres.py)
    dialect = "sqlite"
    # Called once with a one-line message when a writer has waited WAIT_NOTICE_S for the lock.
    on_wait: Callable[[str], None] | None = None

    def __enter__(self) -> Store:
        return self

    def after_copy(self) -> None:
        """What rows written with their own ids need before the next insert (nothing in SQLite:
        a new id is always the top one plus one)."""

    def batches(self, sql: str, parameters: Any = None, size: int = 2000) -> Iterator[list[Any]]:
        """The rows of a query, SIZE at a time, never all held at once (a whole table read so, as
        `reviewer copy` reads each, is the size of the table)."""
        cur = self.execute(sql, parameters or [])
        while rows := cur.fetchmany(size):
            yield rows

    def identity(self) -> str | None:
        """What names this database among others, for caches keyed by it: the file's path, a
        PostgreSQL database's URL; None for an in-memory database."""
        rows = self.execute("PRAGMA database_list").fetchall()
        files = [str(r[2]) for r in rows if r[1] == "main"]
        return files[0] if files and files[0] else None

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Writes that land together or not at all.

        The outermost call takes the write lock up front (``BEGIN IMMEDIATE``) and waits for it up
        to the lock timeout, saying so through ``on_wait`` after a second; a nested call is a
        savepoint that rolls back alone.
        """
        conn = self.conn
        if conn.in_transaction:
            with self.atomic():
                yield self
            return
        self._begin_immediate()
        try:
            yield self
        except BaseException:
            if conn.in_transaction:
                conn.rollback()
            raise
        conn.commit()

    @contextmanager
    def read_snapshot(self) -> Iterator[Store]:
        """Reads that all see the database as it was when the first of them ran, whatever other
        processes write meanwhile (a read transaction, ended without writing anything): a copy
        and its verification read one state of it."""
        conn = self.conn
        if conn.in_transaction:
            yield self
            return
        self._begin_snapshot()
        try:
            yield self
        finally:
            if conn.in_transaction:
                conn.rollback()

    def _begin_snapshot(self) -> None:
        self.conn.execute("BEGIN")  # deferred: the first read takes the snapshot, made at once
        self.conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()

    def _begin_immediate(self) -> None:
        conn = self.conn
        deadline = time.monotonic() + lock_timeout()
        said = False
        try:
            while True:
                left = deadline - time.monotonic()
                wait = left if said else min(left, WAIT_NOTICE_S)
                conn.execute(f"PRAGMA busy_timeout={max(int(wait * 1000), 0)}")
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as e:
                    if not _is_locked(e):
                        raise
                    if time.monotonic() >= deadline:
                        raise StoreBusy(describe_error(self.path, e)) from e
                if not said:
                    said = True
                    if self.on_wait is not None:
                        self.on_wait(
                            f"waiting for the database: another process is writing to "
                            f"{self.path.name} (up to {lock_timeout():.0f} s)"
                        )
        finally:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")


_last_opened: list[Path] = []


def last_opened() -> Path | None:
    """The database this process opened last (to name it in a failure that surfaces later)."""
    return _last_opened[-1] if _last_opened else None


def _set_wal(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as e:
        if "readonly" not in str(e).lower():
            raise
        # a read-only file keeps its mode: reading works, a write is refused with a clear line


def _retry_locked(step: Callable[[], object], deadline: float) -> None:
    """Run STEP, again and again while the file is locked: some statements (changing the journal
    mode of a new file) fail at once instead of waiting out the busy timeout."""
    delay = 0.005
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as e:
            if not _is_locked(e) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.2)


#: The test suite's switch to PostgreSQL (store/postgres.py says how it works).
TEST_SERVER_VAR = "REVIEWER_TEST_POSTGRES"


#: A --db value that starts like a PostgreSQL URL but is not one (``postgres:db``,
#: ``postgresql:/db``, ``PostgreSQL://…``).
_LIKE_A_URL = re.compile(r"(?i)postgres(?:ql)?[:+]")
#: Any other URL (``postgresq://…``, ``sqlite:///x.db``, ``mysql://…``).
_OTHER_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def url_like(location: str | Path) -> bool:
    """Whether a --db value is written as a URL, PostgreSQL's or not: never a file's name, so
    ``open_store`` says what is wrong with it (a missing file's "import some first" would not)."""
    text = str(location)
    return is_url(text) or bool(_LIKE_A_URL.match(text) or _OTHER_URL.match(text))


#: A password as libpq reads it, which urllib does not see: the user information runs to the first
#: @ before any / (a # or a ? in it is the password's), and a password with an unencoded / (libpq
#: reads no password then, but it is one). Group 1 is what comes before the colon, 2 the password.
_CREDENTIALS = (
    re.compile(r"^(postgres(?:ql)?://[^:@/]*):([^@/]*)@"),
    re.compile(r"^(postgres(?:ql)?://[^:@/?#]*):([^@?]*/[^@?]*)@"),
)


def _unsplit(parts: SplitResult) -> str:
    """``urlunsplit`` keeping the // of a URL without a host (postgresql:///db?host=/run/x, a
    Unix socket): without it a command printed to paste named a SQLite file postgresql:/db."""
    out = urlunsplit(parts)
    scheme = f"{parts.scheme}:"
    if not parts.netloc and not out.startswith(scheme + "//"):
        out = scheme + "//" + out[len(scheme) :]
    return out


def _without_credentials(url: str, put: str) -> str:
    """URL with the passwords ``_CREDENTIALS`` find replaced: ``user`` + PUT + the host."""
    for pattern in _CREDENTIALS:
        url = pattern.sub(lambda m: m.group(1) + put, url, count=1)
    return url


def command_url(url: str) -> str:
    """The URL as a command printed for the user to paste gives it: without its password at all
    (``***`` in its place would fail to log in), which libpq then reads from ``PGPASSWORD`` or
    ``~/.pgpass`` as usual."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return re.sub(r"(://[^/@:]*?):[^/@]*@", r"\1@", url)
    if password is not None:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username or ''}@{host}")
    if "password" in parts.query.lower():
        query = re.sub(r"(?i)(^|&)password=[^&]*", "", parts.query).lstrip("&")
        parts = parts._replace(query=query)
    return _without_credentials(_unsplit(parts), "@")


def shown_url(url: str) -> str:
    """The URL without its password (in the user part or a ``password=`` parameter), to name the
    database in a message or a command printed for the user."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # not a URL urllib reads (postgresql://[bad): whatever follows a colon
        return re.sub(r"(://[^/@]*?:)[^/@]*@", r"\1***@", url)
    if password is not None:
        host = parts.netloc.rsplit("@", 1)[-1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if "password" in parts.query.lower():
        query = re.sub(r"(?i)(^|&)(password=)[^&]*", r"\1\2***", parts.query)
        parts = parts._replace(query=query)
    return _without_credentials(_unsplit(parts), ":***@")


def shown_as_typed(url: str) -> str:
    """A URL of any scheme without its password, the scheme as typed (urllib lower-cases it:
    ``POSTGRESQL://`` is the mistake a message about it must show)."""
    if "://" not in url and "@" not in url:  # no password in it: as typed (postgresql:/db, whose
        return url  # missing slash is the mistake; urllib would show postgresql:///db)
    shown = shown_url(url)
    if "://" not in url or "://" not in shown:
        return shown
    return url.split("://", 1)[0] + shown[shown.find("://") :]


def hide_secrets(text: str, url: str) -> str:
    """TEXT (a driver's message about URL) with the URL shown as :func:`shown_url` shows it and its
    password taken out wherever else the message quotes it (libpq quotes a token it cannot read:
    ``invalid percent-encoded token: "hunter2%G1"``), as written and percent-decoded, where no
    letter or digit goes on either side of it."""
    text = text.replace(url, shown_url(url))
    found = re.findall(r"://[^/@?#]*?:([^/@?#]*)@", url)
    found += re.findall(r"(?i)(?:[?&])password=([^&#]*)", url)
    found += [m.group(2) for p in _CREDENTIALS if (m := p.match(url)) and m.group(2) != "***"]
    for secret in found:
        for form in {secret, unquote(secret, errors="replace")}:
            if form:  # where it stands alone: a password "se" leaves "service" as it was
                text = re.sub(rf"(?<![^\W_]){re.escape(form)}(?![^\W_])", "***", text)
    return text


def is_url(location: object) -> bool:
    """Whether a --db value names a PostgreSQL database rather than a SQLite file."""
    return str(location).startswith(("postgresql://", "postgres://"))


#: Opens a PostgreSQL database (a URL, or a test's file name under TEST_SERVER_VAR); set by
#: store/postgres.py, which the store package imports (this module never imports it).
_PG_OPENER: list[Callable[..., Store]] = []


def _pg_opener() -> Callable[..., Store]:
    return _PG_OPENER[0]


#: What a blank --db (or SRC / DST of a copy) is told.
BLANK_NAME = (
    "a blank database name; name a SQLite file (reviewer.db) or a PostgreSQL URL "
    "(postgresql://user@host:port/database)"
)


def name_problem(path: str | Path) -> str | None:
    """Why PATH cannot name a file at all (a name or path past the system's limit, a folder in it
    that cannot be searched), or None: Path.exists() and is_file() raise OSError for these instead
    of answering, which stopped a command with an internal error."""
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return (
                "the name is too long for a file (the system takes 255 bytes a name, 4,096 a path)"
            )
        return f"cannot look at it: {e.strerror or e}"
    except ValueError:  # an embedded NUL
        return "a file name cannot hold a NUL character"
    return None


def open_store(
    path: str | Path = DEFAULT_DB,
    *,
    migrate: bool = True,
    on_wait: Callable[[str], None] | None = None,
) -> Store:
    """One connection for the calling thread (WAL, busy timeout, schema up to date); open another in
    each worker thread. Use it as a context manager to close it.

    Raises StoreError with a one-line message naming the problem: a missing folder, a path that is
    not a regular file, a read-only file, a full disk, a file that is not ours, a lock held too long.
    A complete database that cannot be written (a read-only file system, a full disk) is opened for
    reading, so reports still work; a write then fails with the reason.
    """
    if is_url(path):
        return _pg_opener()(str(path), migrate=migrate, on_wait=on_wait)
    if _LIKE_A_URL.match(str(path)):  # a mistyped URL would otherwise make an empty SQLite file
        file = "" if "/" in str(path) else f"; a SQLite file of that name: ./{path}"
        raise StoreError(
            f"{shown_as_typed(str(path))}: not a PostgreSQL URL (postgresql://user@host:port/database, the scheme in "
            f"lower case, no +driver){file}"
        )
    if _OTHER_URL.match(str(path)):  # not a folder to create, as a path would be told
        raise StoreError(
            f"{shown_as_typed(str(path))}: not a database reviewer opens: a PostgreSQL database is a URL "
            "postgresql://user@host:port/database, a SQLite database a file path (reviewer.db)"
        )
    if not str(path).strip():  # Path("") is ".", which was told "is a folder"
        raise StoreError(f"{str(path)!r}: {BLANK_NAME}")
    path = Path(path)
    if problem := name_problem(path):
        raise StoreError(f"{path}: {problem}")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"{path}: the folder {folder} does not exist; create it first")
    if path.is_dir():
        raise StoreError(f"{path}: is a folder, not a database file")
    if path.exists() and not path.is_file():
        raise StoreError(f"{path}: not a regular file (a device, a pipe or a socket)")
    if os.environ.get(TEST_SERVER_VAR) and not (path.exists() and path.stat().st_size > 0):
        db = _pg_opener()(path, migrate=migrate, on_wait=on_wait)
        db.path = path  # named as the file the test gave
        return db
    try:
        return _open(path, migrate=migrate, on_wait=on_wait)
    except StoreError as refused:
        if not _readable_as_is(path, refused):
            raise
        try:
            db = _open(path, migrate=False, on_wait=on_wait, read_only=True)
        except StoreError:
            raise refused from None
        if migrate and {m.name for m in migrations.pending(db)} - READ_WITHOUT:
            db.close()
            raise
        full = "disk is full" in str(refused)
        _read_only_reasons[str(path)] = (
            f"{path}: the disk is full; free some space and run it again"
            if full
            else f"{path}: the database cannot be written: {_access(path)}"
        )
        return db


# Databases opened for reading only, with the reason a write was refused (named when one is tried).
_read_only_reasons: dict[str, str] = {}
#: Migrations a database that cannot be written is read without: they change no table a read
#: needs (m021 indexes some text again; search finds what it found before), so a file on a
#: read-only or full file system written by the version before still gives its reports.
READ_WITHOUT = frozenset({"m021_fts_arguments_as_written"})


def _readable_as_is(path: Path, refused: StoreError) -> bool:
    """Whether the file can be read without writing: it was refused for a reason other than its
    content (no space, no write access) and holds everything committed (no write-ahead log left)."""
    cause = refused.__cause__
    if not isinstance(cause, sqlite3.OperationalError) or isinstance(refused, StoreBusy):
        return False
    wal = path.with_name(path.name + "-wal")
    try:
        return path.stat().st_size > 0 and (not wal.exists() or wal.stat().st_size == 0)
    except OSError:
        return False


def _open(
    path: Path,
    *,
    migrate: bool,
    on_wait: Callable[[str], None] | None,
    read_only: bool = False,
) -> Store:
    conn: sqlite3.Connection | None = None
    try:
        if read_only:
            # immutable: no shared-memory index to create, nothing written; safe because no
            # write-ahead log is left and this process cannot write the file either
            uri = f"file:{quote(str(path.resolve()))}?mode=ro&immutable=1"
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        else:
            conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000)
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys=ON")
        check_integrity(conn, path)
        db = Store(conn)
        db.path = path
        db.on_wait = on_wait
        _last_opened[:] = [path]
        check_schema(db, path)
        if not read_only:
            # only once the file is known to be ours (or new): WAL is written into the file's
            # header, so setting it first turned another program's database to WAL
            deadline = time.monotonic() + lock_timeout()
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                _retry_locked(lambda: _set_wal(conn), deadline)
            conn.execute("PRAGMA synchronous=NORMAL")
        if migrate and migrations.pending(db):
            # under the write lock, so processes opening a new file migrate it once, in turn
            with db.transaction():
                migrations.apply(db)
    except StoreError:
        if conn is not None:
            conn.close()
        raise
    except (sqlite3.Error, OSError) as e:
        if conn is not None:
            conn.close()
        raise StoreError(describe_error(path, e)) from e
    return db


def _run_script(db: sqlite_utils.Database, script: str) -> None:
    """Statement by statement: ``executescript`` would commit and break the migration's transaction."""
    for statement in script.split(";\n"):
        body = "\n".join(ln for ln in statement.splitlines() if not ln.strip().startswith("--"))
        if body.strip():
            db.execute(body)


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    _run_script(
        db,
        """
        CREATE TABLE runs (
            name TEXT PRIMARY KEY,
            source TEXT,
            format TEXT,
            imported_at TEXT,
            metadata TEXT
        );
        CREATE TABLE trials (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            run TEXT NOT NULL REFERENCES runs(name),
            task_id TEXT NOT NULL,
            trial INTEGER NOT NULL,
            success INTEGER NOT NULL,
            passed INTEGER,
            reward REAL,
            reason TEXT,
            n_messages INTEGER NOT NULL,
            assistant_turns INTEGER NOT NULL,
            tool_calls INTEGER NOT NULL,
            tool_errors INTEGER NOT NULL,
            steps INTEGER NOT NULL,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd REAL,
            latency_s REAL,
            error_type TEXT,
            error_message TEXT,
            termination TEXT,
            instruction TEXT,
            metadata TEXT,
            record TEXT NOT NULL,
            source_file TEXT,
            source_line INTEGER,
            imported_at TEXT NOT NULL,
            UNIQUE (run, task_id, trial)
        );
        CREATE INDEX trials_run_success ON trials(run, success);
        -- full-text index over every message of a trial; rowid = trials.seq (contentless: the text
        -- lives in trials.record, search hits are located within the transcript when shown)
        CREATE VIRTUAL TABLE trials_fts USING fts5(text, content='', tokenize='unicode61');
        -- a judge's verdict on a trial: imported from the harness or made by `reviewer judge`
        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            trial_id TEXT NOT NULL REFERENCES trials(id),
            judge TEXT NOT NULL,
            verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'fail', 'error')),
            rationale TEXT,
            model TEXT,
            rubric TEXT,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost_usd REAL,
            raw TEXT,
            source TEXT NOT NULL DEFAULT 'import',
            created_at TEXT NOT NULL,
            UNIQUE (trial_id, judge)
        );
        -- human labels: append-only; the latest per (trial, labeler) counts; undo appends a retraction
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY,
            trial_id TEXT NOT NULL REFERENCES trials(id),
            labeler TEXT NOT NULL,
            verdict TEXT CHECK (verdict IN ('pass', 'fail', 'skip') OR verdict IS NULL),
            criteria TEXT,
            note TEXT,
            rubric TEXT,
            at TEXT NOT NULL,
            retracted INTEGER NOT NULL DEFAULT 0,
            queue TEXT,
            UNIQUE (trial_id, labeler, at, retracted)
        );
        CREATE INDEX labels_trial ON labels(trial_id, labeler);
        -- pairwise judgements, winners mapped back to the pair's own a/b
        CREATE TABLE pairs (
            pair_id TEXT NOT NULL,
            judge TEXT NOT NULL,
            task_id TEXT,
            a_trial TEXT,
            b_trial TEXT,
            order_ab TEXT,
            order_ba TEXT,
            human TEXT,
            rationale_ab TEXT,
            rationale_ba TEXT,
            source TEXT NOT NULL DEFAULT 'import',
            created_at TEXT NOT NULL,
            PRIMARY KEY (pair_id, judge)
        );
        -- failure clusterings: one row per run of the clusterer, replaced atomically
        CREATE TABLE clusterings (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            params TEXT NOT NULL,
            created_at TEXT NOT NULL,
            n_failures INTEGER NOT NULL
        );
        CREATE TABLE clusters (
            id TEXT NOT NULL,
            clustering_id INTEGER NOT NULL REFERENCES clusterings(id) ON DELETE CASCADE,
            rank INTEGER NOT NULL,
            name TEXT NOT NULL,
            size INTEGER NOT NULL,
            signature TEXT,
            terms TEXT,
            runs TEXT,
            tasks TEXT,
            representative TEXT,
            PRIMARY KEY (clustering_id, id)
        );
        CREATE TABLE cluster_members (
            clustering_id INTEGER NOT NULL REFERENCES clusterings(id) ON DELETE CASCADE,
            cluster_id TEXT NOT NULL,
            trial_id TEXT NOT NULL,
            signature TEXT,
            PRIMARY KEY (clustering_id, trial_id)
        );
        -- human edits to clusters (rename; merges and splits) survive re-clustering by id
        CREATE TABLE cluster_names (
            cluster_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            at TEXT NOT NULL
        );
        -- trajectory rule violations per trial, recomputed when rules change
        CREATE TABLE violations (
            trial_id TEXT NOT NULL REFERENCES trials(id),
            rule_id TEXT NOT NULL,
            severity TEXT NOT NULL,
            message_index INTEGER,
            detail TEXT
        );
        CREATE INDEX violations_trial ON violations(trial_id);
        CREATE INDEX violations_rule ON violations(rule_id);
        CREATE TABLE rule_sets (
            id INTEGER PRIMARY KEY,
            source TEXT,
            digest TEXT NOT NULL,
            rules TEXT NOT NULL,
            applied_at TEXT NOT NULL
        );
        -- judge response cache keyed by a hash of (model, prompt, parameters)
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            request TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE TABLE imports (
            id INTEGER PRIMARY KEY,
            file TEXT NOT NULL,
            format TEXT NOT NULL,
            added INTEGER NOT NULL,
            already INTEGER NOT NULL,
            skipped INTEGER NOT NULL,
            at TEXT NOT NULL
        );
        """,
    )


@migrations()
def m002_trial_list_indexes(db: sqlite_utils.Database) -> None:
    """Indexes for the filtered trials list: each one yields rows in seq order (an index ends with the
    rowid), so a keyset page of a filter is a range scan that stops after one page."""
    _run_script(
        db,
        """
        CREATE INDEX IF NOT EXISTS trials_run ON trials(run);
        CREATE INDEX IF NOT EXISTS trials_task ON trials(task_id);
        CREATE INDEX IF NOT EXISTS trials_success ON trials(success);
        CREATE INDEX IF NOT EXISTS verdicts_latest ON verdicts(trial_id, created_at, id);
        CREATE INDEX IF NOT EXISTS verdicts_verdict ON verdicts(verdict);
        CREATE INDEX IF NOT EXISTS violations_trial_rule ON violations(trial_id, rule_id);
        CREATE INDEX IF NOT EXISTS cluster_members_cluster ON cluster_members(clustering_id, cluster_id);
        """,
    )


@migrations()
def m003_queues(db: sqlite_utils.Database) -> None:
    """Calibration queues (a seeded stratified sample, in a stable order, with an optional dev/test
    split), the rubric versions labels were given under, and an index for a labeler's history."""
    _run_script(
        db,
        """
        CREATE TABLE queues (
            name TEXT PRIMARY KEY,
            labeler TEXT NOT NULL,
            seed INTEGER NOT NULL,
            params TEXT NOT NULL,
            created_at TEXT NOT NULL,
            split TEXT CHECK (split IN ('half') OR split IS NULL)
        );
        CREATE TABLE queue_items (
            queue TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            trial_id TEXT NOT NULL REFERENCES trials(id),
            split TEXT CHECK (split IN ('dev', 'test') OR split IS NULL),
            -- the stratum the trial was drawn from, as it was when the queue was made
            judge_verdict TEXT,
            cluster_id TEXT,
            PRIMARY KEY (queue, position),
            UNIQUE (queue, trial_id)
        );
        -- one row per rubric name@version: a changed rubric under an old version is refused
        CREATE TABLE rubrics (
            ref TEXT PRIMARY KEY,
            digest TEXT NOT NULL,
            definition TEXT NOT NULL,
            first_seen TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS labels_labeler_at ON labels(labeler, at);
        """,
    )


@migrations()
def m004_task_stats(db: sqlite_utils.Database) -> None:
    """Per-task counts kept up to date on import, so run summaries cost O(tasks), not O(trials)."""
    _run_script(
        db,
        """
        CREATE TABLE task_stats (
            run TEXT NOT NULL,
            task_id TEXT NOT NULL,
            n INTEGER NOT NULL,
            c INTEGER NOT NULL,
            steps_sum INTEGER NOT NULL,
            cost_sum REAL NOT NULL,
            cost_n INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            PRIMARY KEY (run, task_id)
        );
        INSERT INTO task_stats (run, task_id, n, c, steps_sum, cost_sum, cost_n, first_seq)
        SELECT run, task_id, COUNT(*), SUM(success), SUM(steps), COALESCE(SUM(cost_usd), 0),
               COUNT(cost_usd), MIN(seq)
        FROM trials GROUP BY run, task_id;
        """,
    )


@migrations()
def m005_judge_runs(db: sqlite_utils.Database) -> None:
    """What `reviewer judge` needs beyond m001: per-verdict latency and the cache key it came from,
    and Message Batches submitted but not yet collected (so a restart between submit and collect
    loses nothing)."""
    _run_script(
        db,
        """
        ALTER TABLE verdicts ADD COLUMN cache_key TEXT;
        ALTER TABLE verdicts ADD COLUMN latency_s REAL;
        CREATE INDEX IF NOT EXISTS verdicts_judge ON verdicts(judge, trial_id);
        CREATE TABLE judge_batches (
            id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            judge TEXT NOT NULL,
            model TEXT NOT NULL,
            n_requests INTEGER NOT NULL,
            status TEXT NOT NULL,
            submitted_at TEXT NOT NULL,
            collected_at TEXT
        );
        CREATE TABLE judge_batch_items (
            batch_id TEXT NOT NULL REFERENCES judge_batches(id),
            custom_id TEXT NOT NULL,
            cache_key TEXT NOT NULL,
            job TEXT NOT NULL,
            PRIMARY KEY (batch_id, custom_id)
        );
        """,
    )


@migrations()
def m006_data_rules(db: sqlite_utils.Database) -> None:
    """Each rule of the data written once, as a view every reader uses: which label stands, the
    latest verdict, per-task counts."""
    _run_script(
        db,
        """
        -- A label row is effective when it is not itself a retraction and no retraction names its
        -- (trial, labeler, at). A retraction retracts exactly the label of its (trial, labeler, at);
        -- one that matches no stored label retracts nothing (not an earlier label), so labels merge
        -- to the same result in any import order and the retracted label may still arrive later.
        CREATE VIEW IF NOT EXISTS effective_labels AS
        SELECT l.* FROM labels l
        WHERE l.retracted = 0 AND NOT EXISTS (
            SELECT 1 FROM labels r WHERE r.retracted = 1 AND r.trial_id = l.trial_id
            AND r.labeler = l.labeler AND r.at = l.at);
        -- The standing label of each (trial, labeler): the latest effective one. (trial, labeler, at)
        -- is unique among effective rows, so `at` alone orders them.
        CREATE VIEW IF NOT EXISTS standing_labels AS
        SELECT e.* FROM effective_labels e
        WHERE NOT EXISTS (
            SELECT 1 FROM effective_labels f WHERE f.trial_id = e.trial_id
            AND f.labeler = e.labeler AND f.at > e.at);
        -- The label a trial shows: the latest standing label of any labeler; equal times go to the
        -- greater labeler name (row ids differ between machines, names do not).
        CREATE VIEW IF NOT EXISTS trial_labels AS
        SELECT s.* FROM standing_labels s
        WHERE NOT EXISTS (
            SELECT 1 FROM standing_labels o WHERE o.trial_id = s.trial_id
            AND (o.at, o.labeler) > (s.at, s.labeler));
        -- The latest verdict of each judge on each trial (by created_at, then id).
        CREATE VIEW IF NOT EXISTS latest_judge_verdicts AS
        SELECT v.* FROM verdicts v
        WHERE NOT EXISTS (
            SELECT 1 FROM verdicts w WHERE w.trial_id = v.trial_id AND w.judge = v.judge
            AND (w.created_at, w.id) > (v.created_at, v.id));
        -- The latest verdict on each trial of any judge (by created_at, then id).
        CREATE VIEW IF NOT EXISTS latest_trial_verdicts AS
        SELECT v.* FROM verdicts v
        WHERE NOT EXISTS (
            SELECT 1 FROM verdicts w WHERE w.trial_id = v.trial_id
            AND (w.created_at, w.id) > (v.created_at, v.id));
        -- Per-task counts of each run (n trials, c successes, first seq, averages), kept on import
        -- in task_stats so a run summary costs O(tasks).
        CREATE VIEW IF NOT EXISTS task_counts AS
        SELECT run, task_id, n, c, first_seq, steps_sum, cost_sum, cost_n,
               CAST(steps_sum AS REAL) / n AS avg_steps,
               CASE WHEN cost_n > 0 THEN cost_sum / cost_n END AS avg_cost
        FROM task_stats;
        """,
    )


@migrations()
def m007_edit_counter(db: sqlite_utils.Database) -> None:
    """A counter bumped by every in-place change (UPDATE or DELETE) to the rows a trial filter reads.

    Inserts show in the tables' top rowids; merges, splits, re-graded verdicts and recomputed
    violations change rows in place, so cached counts key on this counter too."""
    tables = ("trials", "verdicts", "labels", "violations", "cluster_members", "rule_sets")
    script = (
        "CREATE TABLE data_edits (id INTEGER PRIMARY KEY CHECK (id = 1), n INTEGER NOT NULL);\n"
    )
    script += "INSERT INTO data_edits (id, n) VALUES (1, 0);\n"
    for table in tables:
        for event in ("UPDATE", "DELETE"):
            script += (
                f"CREATE TRIGGER {table}_{event.lower()}_counted AFTER {event} ON {table} "
                "BEGIN UPDATE data_edits SET n = n + 1 WHERE id = 1; END;\n"
            )
    _run_script(db, script)


@migrations()
def m008_judge_claims(db: sqlite_utils.Database) -> None:
    """Requests a `reviewer judge` process is sending, so a second process skips them (a claim
    whose owner stops renewing it expires), and a verdict's prompt-cache tokens."""
    _run_script(
        db,
        """
        CREATE TABLE judge_claims (
            key TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            expires_at REAL NOT NULL
        );
        CREATE INDEX judge_claims_owner ON judge_claims(owner);
        ALTER TABLE verdicts ADD COLUMN cache_write_tokens INTEGER;
        ALTER TABLE verdicts ADD COLUMN cache_read_tokens INTEGER;
        """,
    )


@migrations()
def m009_outcomes(db: sqlite_utils.Database) -> None:
    """A trial's outcome beyond pass / fail: ``infra`` (the harness crashed, not the agent) and
    ``unscored`` (no outcome at all). Only pass and fail are scored: ``task_counts.n`` counts them
    alone (pass@k / pass^k denominators), with the infra and unscored trials counted beside. A run
    keeps the pass rule its trials were judged by on import."""
    _run_script(
        db,
        """
        ALTER TABLE trials ADD COLUMN outcome TEXT NOT NULL DEFAULT 'fail';
        UPDATE trials SET outcome = 'pass' WHERE success = 1;
        CREATE INDEX IF NOT EXISTS trials_run_outcome ON trials(run, outcome);
        ALTER TABLE task_stats ADD COLUMN infra INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE task_stats ADD COLUMN unscored INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN pass_rule TEXT;
        -- n: scored trials (pass or fail), the denominators; trials: every trial of the task
        DROP VIEW IF EXISTS task_counts;
        CREATE VIEW task_counts AS
        SELECT run, task_id, n - infra - unscored AS n, c, infra, unscored, n AS trials, first_seq,
               steps_sum, cost_sum, cost_n,
               CAST(steps_sum AS REAL) / n AS avg_steps,
               CASE WHEN cost_n > 0 THEN cost_sum / cost_n END AS avg_cost
        FROM task_stats;
        """,
    )


@migrations()
def m010_audit(db: sqlite_utils.Database) -> None:
    """The independence audit of each run (`reviewer audit`): when it ran and over which trials (so
    a run that gained trials since reads as stale), its summary as JSON, and one row per finding."""
    _run_script(
        db,
        """
        CREATE TABLE audit_runs (
            run TEXT PRIMARY KEY REFERENCES runs(name),
            audited_at TEXT NOT NULL,
            trials INTEGER NOT NULL,
            top_seq INTEGER NOT NULL,
            summary TEXT NOT NULL
        );
        CREATE TABLE audit_findings (
            id INTEGER PRIMARY KEY,
            run TEXT NOT NULL REFERENCES runs(name),
            kind TEXT NOT NULL,
            task_id TEXT,
            finding TEXT NOT NULL
        );
        CREATE INDEX audit_findings_run ON audit_findings(run, kind);
        """,
    )


@migrations()
def m011_gate_monitor(db: sqlite_utils.Database) -> None:
    """The CI gate's baselines (every `baseline set` kept: the latest is the baseline) and the
    monitor's per-conversation results (time, cheap checks, outcome signals), computed once."""
    _run_script(
        db,
        """
        CREATE TABLE baselines (
            id INTEGER PRIMARY KEY,
            run TEXT NOT NULL,
            set_at TEXT NOT NULL,
            set_by TEXT,
            note TEXT
        );
        CREATE TABLE monitor_trials (
            trial_id TEXT PRIMARY KEY REFERENCES trials(id),
            started_at TEXT,
            checks TEXT NOT NULL,
            signals TEXT NOT NULL,
            version TEXT NOT NULL
        );
        CREATE INDEX monitor_trials_time ON monitor_trials(started_at);
        """,
    )


@migrations()
def m012_cluster_edits(db: sqlite_utils.Database) -> None:
    """The hand edits (merge, split, rename) of a stored clustering, newest last, each with what it
    replaced, so the last one can be undone; a new clustering of the scope drops them."""
    _run_script(
        db,
        """
        CREATE TABLE cluster_edits (
            id INTEGER PRIMARY KEY,
            clustering_id INTEGER NOT NULL REFERENCES clusterings(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            at TEXT NOT NULL,
            before TEXT NOT NULL
        );
        CREATE INDEX cluster_edits_clustering ON cluster_edits(clustering_id, id);
        """,
    )


@migrations()
def m013_fts_system(db: sqlite_utils.Database) -> None:
    """Full-text search over the conversation by default: the index gets a second column for the
    system prompt (searched only when asked), and every stored trial is indexed again."""
    from reviewer.record import decode
    from reviewer.store.search_text import search_text, system_text

    _run_script(
        db,
        """
        DROP TABLE IF EXISTS trials_fts;
        CREATE VIRTUAL TABLE trials_fts USING fts5(text, system, content='', tokenize='unicode61')
        """,
    )
    rows = db.execute("SELECT seq, run, task_id, trial, record FROM trials ORDER BY seq")
    while batch := rows.fetchmany(500):
        out = []
        for seq, run, task_id, trial_no, record in batch:
            try:
                trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            except ValueError:
                continue  # a record this version cannot read stays out of search, as on import
            out.append((seq, search_text(trial), system_text(trial)))
        db.conn.executemany("INSERT INTO trials_fts (rowid, text, system) VALUES (?, ?, ?)", out)


@migrations()
def m014_label_override(db: sqlite_utils.Database) -> None:
    """A label whose verdict goes against the rubric's pass rule, confirmed by the labeler, says so
    (``override = 1``); the label views select ``l.*`` and so carry it."""
    _run_script(db, "ALTER TABLE labels ADD COLUMN override INTEGER NOT NULL DEFAULT 0;")


@migrations()
def m015_audit_fingerprints(db: sqlite_utils.Database) -> None:
    """What the independence audit needs of each trial (its fingerprint, computed as the trial is
    imported), so an audit reads these small rows instead of decoding every record again; trials
    imported before have none until an audit computes and stores it."""
    _run_script(
        db,
        """
        CREATE TABLE audit_fingerprints (
            seq INTEGER PRIMARY KEY REFERENCES trials(seq),
            version INTEGER NOT NULL,
            fingerprint TEXT NOT NULL
        );
        """,
    )


@migrations()
def m016_summaries(db: sqlite_utils.Database) -> None:
    """Summaries that keep the app and the reports fast on a million trials, kept true by triggers
    (so every writer, now or later, keeps them) and filled here from the data already stored.

    - ``trials_metrics``: a covering index of the per-trial numbers the reports read, in import
      order per run, so they never walk the records' overflow pages.
    - ``trial_verdicts``: the latest verdict of each trial (``latest_trial_verdicts`` as a table,
      by ``created_at`` then id), with the trial's run and outcome; ``verdict_counts`` counts it per
      (run, outcome, verdict), so the trials list counts a verdict filter in O(runs).
    - ``run_totals`` / ``run_groups``: ``task_stats`` summed per run and its (n, c) histogram per
      run, so the runs screen reads O(runs) rows."""
    from reviewer.store.summaries import create

    create(db)


@migrations()
def m017_summary_costs(db: sqlite_utils.Database) -> None:
    """m016's triggers that take a task's row out of its run's totals, made again: the first ones
    failed every later import into a run whose cost sum is infinite (costs near 1e308 stored by an
    older version), infinity less infinity being NULL in SQLite."""
    from reviewer.store.summaries import replace_cost_triggers

    replace_cost_triggers(db)


@migrations()
def m018_label_tags(db: sqlite_utils.Database) -> None:
    """A fail label's failure category (``tag``: a rubric category or free text), which
    `reviewer cluster --score` compares with the clusters; the label views select ``l.*`` and so
    carry it."""
    _run_script(db, "ALTER TABLE labels ADD COLUMN tag TEXT;")


@migrations()
def m019_cluster_judge_names(db: sqlite_utils.Database) -> None:
    """The name the LLM judge last gave each cluster (`reviewer cluster --with-judge`), by cluster
    id as human names are: a cluster showing this name is the judge's to rename again, any other
    name a human gave it stays."""
    _run_script(
        db,
        """
        CREATE TABLE cluster_judge_names (
            cluster_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            model TEXT NOT NULL,
            at TEXT NOT NULL
        );
        """,
    )


@migrations()
def m020_queue_leases(db: sqlite_utils.Database) -> None:
    """Leases of a shared queue's trials (`reviewer sample --shared`): the labeler who holds a trial
    and until when (Unix seconds), so several labelers on one queue each get different trials. A
    lease is taken, renewed and released in a write transaction; an expired one is anybody's."""
    _run_script(
        db,
        """
        CREATE TABLE queue_leases (
            queue TEXT NOT NULL REFERENCES queues(name) ON DELETE CASCADE,
            trial_id TEXT NOT NULL,
            labeler TEXT NOT NULL,
            expires REAL NOT NULL,
            PRIMARY KEY (queue, trial_id, labeler)
        );
        CREATE INDEX IF NOT EXISTS queue_leases_labeler ON queue_leases(queue, labeler);
        CREATE INDEX IF NOT EXISTS queue_leases_trial ON queue_leases(trial_id);
        """,
    )


@migrations()
def m021_fts_arguments_as_written(db: sqlite_utils.Database) -> None:
    """Tool calls' arguments are indexed with their text as written: before, JSON's escapes to
    ASCII stood for every character past it (``Zürich`` was indexed as ``z`` and ``u00fcrich``, and
    a search for it found nothing). The trials whose entry changes are indexed again
    (``search_text.reindex_arguments``; on PostgreSQL too, ``postgres.MIGRATIONS``)."""
    from reviewer.store.search_text import reindex_arguments

    assert isinstance(db, Store)
    reindex_arguments(db)
