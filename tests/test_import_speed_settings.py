"""What the importer changes for speed is put back after each file: the cycle collector runs again
(also after a file that fails halfway) and the connection's page cache is its usual size again."""

from __future__ import annotations

import gc
from pathlib import Path

from reviewer.store import open_store
from reviewer.store.writer import IMPORT_CACHE_KIB, import_cache
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl


def test_the_collector_runs_again_after_a_file_good_or_broken(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [native_trial("a"), native_trial("b")])
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    seen: list[bool] = []
    with open_store(tmp_path / "x.db") as db:
        assert gc.isenabled()
        summary = import_paths(db, [str(good)], progress=lambda *_: seen.append(gc.isenabled()))
        assert summary.added == 2
        assert seen and not any(seen)  # paused while the file was read
        assert gc.isenabled()
        import_paths(db, [str(broken)])
        assert gc.isenabled()


def test_the_page_cache_is_put_back(tmp_path: Path) -> None:
    with open_store(tmp_path / "x.db") as db:
        before = db.execute("PRAGMA cache_size").fetchone()[0]
        with import_cache(db):
            assert db.execute("PRAGMA cache_size").fetchone()[0] == -IMPORT_CACHE_KIB
        assert db.execute("PRAGMA cache_size").fetchone()[0] == before
