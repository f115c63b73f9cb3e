"""Replies that arrived but could not be stored (a full disk, a database locked for too long).

They were paid for, so they are kept in a side file next to the database,
``<db>.judge-pending.jsonl`` (one outcome a line, replaced atomically and fsynced), and the next
``reviewer judge`` or ``reviewer bias`` stores them before it sends anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from reviewer.judge.reply import Job, Outcome
from reviewer.judge.sinks import store_outcomes
from reviewer.store.db import Store

SUFFIX = ".judge-pending.jsonl"
#: Room set aside next to the database while requests are out, so their replies can still be kept
#: when the disk fills up (it is given back just before the side file is written).
ROOM_SUFFIX = ".judge-room"


def pending_path(db: Store) -> Path | None:
    """The side file of this database (None for a database without a file, e.g. in memory)."""
    path = getattr(db, "path", None)
    if path is None or str(path) in ("", ":memory:"):
        return None
    return Path(str(path) + SUFFIX)


def reserve_room(db: Store, size: int) -> Path | None:
    """A file of ``size`` bytes next to the database (None when there is no room or no file)."""
    path = getattr(db, "path", None)
    if path is None or str(path) in ("", ":memory:"):
        return None
    room = Path(str(path) + ROOM_SUFFIX)
    try:
        with open(room, "wb") as f:
            try:
                os.posix_fallocate(f.fileno(), 0, size)
            except (AttributeError, OSError):
                f.write(b"\0" * size)
        return room
    except OSError:
        free_room(room)
        return None


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
    outcomes: list[Outcome] = []
    bad = 0
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            d: dict[str, Any] = json.loads(line)
            job = Job.from_dict(d.pop("job"))
            outcomes.append(Outcome(job=job, **d))
        except (ValueError, TypeError, KeyError, AttributeError):
            bad += 1
    return outcomes, bad


def restore(db: Store) -> tuple[int, int, Path | None]:
    """Store the outcomes of the side file in one transaction, then remove it: (stored, left out,
    the file). Left out are unreadable lines and outcomes whose trial is gone from the store. A
    write that fails (sqlite3.OperationalError) reaches the caller with the file untouched."""
    path = pending_path(db)
    if path is None or not path.exists():
        return 0, 0, path
    outcomes, bad = load(path)
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
