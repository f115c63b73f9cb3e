"""Replies that arrived but could not be stored (a full disk, a database locked for too long).

They were paid for, so they are kept in a side file next to the database,
``<db>.judge-pending.jsonl`` (one outcome a line, replaced atomically and fsynced), and the next
``reviewer judge`` or ``reviewer bias`` stores them before it sends anything.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from reviewer.judge.reply import Job, Outcome
from reviewer.judge.sinks import store_outcomes
from reviewer.record import MAX_MONEY, MAX_TOKENS, RecordError, loads
from reviewer.store.db import Store
from reviewer.text import json_error

SUFFIX = ".judge-pending.jsonl"
#: Room set aside next to the database while requests are out, so their replies can still be kept
#: when the disk fills up (it is given back just before the side file is written).
ROOM_SUFFIX = ".judge-room"


def _side_base(db: Store) -> Path | None:
    """What the side files of this database are named after: the database file itself; for a
    database on a server (PostgreSQL), a file of this machine's own, under the user's data folder
    (``$XDG_DATA_HOME/reviewer/judge-pending/``), named after the database's URL (its password
    hidden) and a hash of it; None for a database in memory."""
    path = getattr(db, "path", None)
    if path is None or str(path) in ("", ":memory:"):
        return None
    if getattr(db, "dialect", "sqlite") == "sqlite":
        return Path(str(path))
    shown = str(path)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", shown.split("://", 1)[-1])[-60:]
    digest = hashlib.sha256(shown.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return side_folder() / f"{slug}-{digest}"


def side_folder() -> Path:
    """Where the side files of databases on a server are kept on this machine."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "reviewer" / "judge-pending"


def shown_path(path: Path) -> str:
    """A side file as messages name it: beside the database file, its name; else the whole path."""
    return str(path) if side_folder() in path.parents else path.name


def pending_path(db: Store) -> Path | None:
    """The side file of this database (None for a database without a file, e.g. in memory)."""
    base = _side_base(db)
    return None if base is None else Path(str(base) + SUFFIX)


def room_path(db: Store) -> Path | None:
    """The room set aside beside the side file while requests are out (None: no file)."""
    base = _side_base(db)
    return None if base is None else Path(str(base) + ROOM_SUFFIX)


class NoRoom(OSError):
    """The room for a run's replies could not be set aside: the message says why and where."""


def reserve_room(db: Store, size: int) -> Path | None:
    """A file of ``size`` bytes beside the side file (None for a database in memory); NoRoom,
    with the reason, when it cannot be made (a full disk, a folder that cannot be written)."""
    room = room_path(db)
    if room is None:
        return None
    try:
        room.parent.mkdir(parents=True, exist_ok=True)
        with open(room, "wb") as f:
            try:
                os.posix_fallocate(f.fileno(), 0, size)
            except (AttributeError, OSError):
                f.write(b"\0" * size)
        return room
    except OSError as e:
        free_room(room)
        mb = f"{size / 2**20:.1f} MB"
        where = "next to the database" if side_folder() not in room.parents else f"in {room.parent}"
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise NoRoom(
                f"no room on the disk for this run's replies ({mb} {where}, in case they cannot "
                "be stored): free some space and run it again"
            ) from None
        raise NoRoom(
            f"cannot set aside room for this run's replies ({mb} {where}, in case they cannot "
            f"be stored): {e.strerror or e}"
        ) from None


def free_room(room: Path | None) -> None:
    if room is not None:
        with contextlib.suppress(OSError):
            room.unlink()


def save(path: Path, outcomes: Sequence[Outcome]) -> None:
    """Add ``outcomes`` to the side file: the old lines and the new ones go to a temporary file that
    is fsynced and then renamed over it, so a failed write leaves the old file whole."""
    old = path.read_bytes() if path.exists() else b""
    if old and not old.endswith(b"\n"):
        old += b"\n"
    new = "".join(json.dumps(asdict(o), ensure_ascii=False) + "\n" for o in outcomes)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(old + new.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself on disk (not possible everywhere)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def load(path: Path) -> tuple[list[Outcome], int]:
    """The outcomes in the side file, and how many lines could not be read (a cut last line)."""
    outcomes, problems = read(path)
    return outcomes, len(problems)


def read(path: Path) -> tuple[list[Outcome], list[str]]:
    """The outcomes in the side file, and one line ``file:line: reason; skipped`` for each line that
    cannot be used. Lines are parsed by the import's checked decoder (no NaN or Infinity, 64-bit
    integers, bounded depth) and every field is checked, so a damaged file is never an error."""
    outcomes: list[Outcome] = []
    problems: list[str] = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            outcomes.append(_outcome(loads(line)))
        except json.JSONDecodeError as e:
            problems.append(f"{shown_path(path)}:{no}: {json_error(e)}; skipped")
        except (RecordError, _Bad) as e:
            problems.append(f"{shown_path(path)}:{no}: {e}; skipped")
    return outcomes, problems


class _Bad(ValueError):
    """A side-file line whose fields are not those of an outcome."""


_JOB_TEXT = ("kind", "target", "judge", "rubric", "key")
_COUNTS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
_AMOUNTS = ("cost_usd", "latency_s")


def _outcome(d: Any) -> Outcome:
    """One parsed side-file line as an Outcome; _Bad naming the first field that does not fit."""
    if not isinstance(d, dict):
        raise _Bad(f"expected a JSON object, got {type(d).__name__}")
    job = d.get("job")
    if not isinstance(job, dict):
        raise _Bad("job: missing or not an object")
    for k in _JOB_TEXT:
        if not isinstance(job.get(k), str):
            raise _Bad(f"job.{k}: missing or not a string")
    if not isinstance(job.get("params"), dict):
        raise _Bad("job.params: missing or not an object")
    if job.get("order") is not None and not isinstance(job.get("order"), str):
        raise _Bad("job.order: not a string")
    if not isinstance(job.get("meta", {}), dict):
        raise _Bad("job.meta: not an object")
    if unknown := set(job) - {f.name for f in fields(Job)}:
        raise _Bad(f"job: unknown keys {sorted(unknown)}")
    for k in ("value", "rationale", "raw", "source"):
        if not isinstance(d.get(k), str):
            raise _Bad(f"{k}: missing or not a string")
    for k in _COUNTS:
        v = d.get(k)
        if v is not None and (type(v) is not int or not 0 <= v <= MAX_TOKENS):
            raise _Bad(f"{k}: {v!r:.40} is not a token count (0 to {MAX_TOKENS:.0e})")
    for k in _AMOUNTS:
        v = d.get(k)
        if v is not None and (type(v) not in (int, float) or not 0 <= v <= MAX_MONEY):
            raise _Bad(f"{k}: {v!r:.40} is not an amount (0 to {MAX_MONEY:.0e})")
    if not isinstance(d.get("cacheable", True), bool):
        raise _Bad("cacheable: not true or false")
    if unknown := set(d) - {f.name for f in fields(Outcome)}:
        raise _Bad(f"unknown keys {sorted(unknown)}")
    rest = {k: v for k, v in d.items() if k != "job"}
    for k in _AMOUNTS:
        if rest.get(k) is not None:
            rest[k] = float(rest[k])
    return Outcome(job=Job.from_dict(job), **rest)


def restore(db: Store, note: Callable[[str], None] | None = None) -> tuple[int, int, Path | None]:
    """Store the outcomes of the side file in one transaction, then remove it: (stored, left out,
    the file). Left out are unreadable lines (each told to ``note`` as ``file:line: reason;
    skipped``) and outcomes whose trial is gone from the store. A write that fails
    (sqlite3.OperationalError) reaches the caller with the file untouched."""
    path = pending_path(db)
    if path is None or not path.exists():
        return 0, 0, path
    outcomes, problems = read(path)
    bad = len(problems)
    if note is not None:
        for line in problems:
            note(line)
    stored = len(outcomes)
    try:
        if outcomes:
            store_outcomes(db, outcomes, release_any_claim=True)
    except sqlite3.IntegrityError:  # a trial was deleted since: store the others one by one
        stored = 0
        for o in outcomes:
            try:
                store_outcomes(db, [o], release_any_claim=True)
                stored += 1
            except sqlite3.IntegrityError:
                bad += 1
    path.unlink()
    return stored, bad, path
