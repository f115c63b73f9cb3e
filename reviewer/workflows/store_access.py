"""Opening the store for a face, and the one read every command needs (the runs' names): the faces
import workflows only, so what they need of the store itself is named here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reviewer.store.db import TEST_SERVER_VAR as TEST_SERVER_VAR
from reviewer.store.db import Store as Store
from reviewer.store.db import StoreError as StoreError
from reviewer.store.db import command_url, shown_as_typed
from reviewer.store.db import connection_lost as connection_lost
from reviewer.store.db import describe_error as describe_error
from reviewer.store.db import last_opened as last_opened
from reviewer.store.db import name_problem as name_problem
from reviewer.store.postgres import database_exists as database_exists
from reviewer.store.postgres import is_url as is_url
from reviewer.store.postgres import shown_url as shown_url
from reviewer.store.queries import run_names as run_names


def shown_db(location: str | Path) -> str:
    """A --db value as printed: a file's path as given, a URL without its password (one of
    another scheme too, ``POSTGRESQL://u:pw@h/db``, which is taken for a file's name)."""
    text = str(location)
    if is_url(location):
        return shown_url(text)
    if "://" in text:  # the scheme as typed (urllib lower-cases it): that is the mistake to see
        return shown_as_typed(text)
    return text


def command_db(location: str | Path) -> str:
    """A --db value in a command printed to be pasted: a file's path as given, a URL without its
    password (libpq finds it in PGPASSWORD or ~/.pgpass)."""
    text = str(location)
    return command_url(text) if is_url(location) or "://" in text else text


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
