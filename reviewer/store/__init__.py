"""The only package that speaks SQL: opening the database, its schema, and the queries."""

from reviewer.store import postgres as _postgres  # noqa: F401  # gives open_store PostgreSQL
from reviewer.store.db import DEFAULT_DB, open_store

__all__ = ["DEFAULT_DB", "open_store"]
