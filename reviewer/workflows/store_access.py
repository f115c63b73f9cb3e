"""Opening the store for a face, and the one read every command needs (the runs' names): the faces
import workflows only, so what they need of the store itself is named here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reviewer.store.db import TEST_SERVER_VAR as TEST_SERVER_VAR
from reviewer.store.db import Store as Store
from reviewer.store.db import StoreError as StoreError
from reviewer.store.db import command_url
from reviewer.store.db import describe_error as describe_error
from reviewer.store.db import last_opened as last_opened
from reviewer.store.postgres import database_exists as database_exists
from reviewer.store.postgres import is_url as is_url
from reviewer.store.postgres import shown_url as shown_url
from reviewer.store.queries import run_names as run_names


def shown_db(location: str | Path) -> str:
    """A --db value as printed: a file's path as given, a URL without its password."""
    return shown_url(str(location)) if is_url(location) else str(location)


def command_db(location: str | Path) -> str:
    """A --db value in a command printed to be pasted: a file's path as given, a URL without its
    password (libpq finds it in PGPASSWORD or ~/.pgpass)."""
    return command_url(str(location)) if is_url(location) else str(location)


def open_store(
    path: str | Path,
    *,
    migrate: bool = True,
    on_wait: Callable[[str], None] | None = None,
) -> Store:
    """The database at ``path``, opened for the calling thread (``store.db.open_store``: a
    StoreError names the problem in one line)."""
    from reviewer.store import db

    return db.open_store(path, migrate=migrate, on_wait=on_wait)
