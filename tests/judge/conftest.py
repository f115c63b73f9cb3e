"""A store with the sample runs in it, and the Messages API stand-in the SDK is pointed at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils

from reviewer.store.db import open_store
from tests.support.standin import API_KEY

SAMPLE_RUNS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sample_small"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    from reviewer.workflows.imports import import_paths

    path = tmp_path / "reviewer.db"
    db = open_store(path)
    import_paths(db, [SAMPLE_RUNS / "support-v1.jsonl"])
    db.close()
    return path


@pytest.fixture
def db(db_path: Path) -> Iterator[sqlite_utils.Database]:
    d = open_store(db_path)
    yield d
    d.close()


@pytest.fixture
def api_key() -> str:
    return API_KEY
