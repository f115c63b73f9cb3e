"""Opening the database: many openers of a new file at once migrate it once, and all of them work."""

from __future__ import annotations

import threading
from pathlib import Path

from reviewer.store.db import migrations, open_store


def test_many_openers_of_a_new_file_migrate_it_once(tmp_path: Path) -> None:
    for attempt in range(5):
        path = tmp_path / f"new-{attempt}.db"
        start = threading.Barrier(8)
        errors: list[BaseException] = []

        def opener(
            path: Path = path,
            start: threading.Barrier = start,
            errors: list[BaseException] = errors,
        ) -> None:
            start.wait()
            try:
                with open_store(path) as db:
                    db.execute("SELECT COUNT(*) FROM trials").fetchone()
            except BaseException as e:  # collected for the assertion below
                errors.append(e)

        threads = [threading.Thread(target=opener) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        with open_store(path) as db:
            assert migrations.pending(db) == []
            names = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations")]
            assert len(names) == len(set(names))
