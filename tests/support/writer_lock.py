"""Another writer holding a database's write lock, on either backend: a thread that opens the
database with the product's own ``open_store(path)`` and sits inside ``db.transaction()`` (SQLite's
``BEGIN IMMEDIATE``, PostgreSQL's writer advisory lock) until it is released."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from reviewer.store.db import open_store


class HeldWriteLock:
    """The write lock of the database at PATH, held from another thread from construction (which
    returns once it is held) until ``release()``; the transaction writes nothing."""

    def __init__(self, path: str | Path, *, wait_s: float = 30.0) -> None:
        self._held = threading.Event()
        self._release = threading.Event()
        self._error: list[BaseException] = []
        self._thread = threading.Thread(target=self._hold, args=(path,), daemon=True)
        self._thread.start()
        if not self._held.wait(wait_s):
            self._release.set()
            raise TimeoutError(f"{path}: the write lock was not taken within {wait_s} s")
        if self._error:
            raise self._error[0]

    def _hold(self, path: str | Path) -> None:
        try:
            with open_store(path) as db, db.transaction():
                self._held.set()
                self._release.wait()
        except BaseException as e:  # handed to the constructor's caller
            self._error.append(e)
            self._held.set()

    def release(self) -> None:
        """Let the lock go (the empty transaction ends); returns once it is gone. Idempotent, and
        safe to call from any thread (a timer's, say)."""
        self._release.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout=60)

    def __enter__(self) -> HeldWriteLock:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def hold_write_lock(path: str | Path) -> HeldWriteLock:
    """A second writer holding the lock of the database at PATH until ``release()``."""
    return HeldWriteLock(path)
