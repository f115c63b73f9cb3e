"""Trial ids are content hashes: a re-import into an existing database finds its trials by them, so a
faster importer must give exactly the same ids (and store records holding exactly the same JSON
values) as before."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from reviewer.store import open_store
from reviewer.workflows.imports import import_paths

REPO = Path(__file__).resolve().parents[2]

# (file, count, first three ids, sha256 of all ids joined by newlines, sha256 of all stored records
# as the JSON values they hold, written again by json.dumps: the same since records are written by
# msgspec, checked against the code before it).
# An Inspect sample's identity is its eval, sample id and epoch since commit 1335ee2 (a deliberate
# change of ids); these are the ids from then on.
PINNED = [
    (
        "tests/fixtures/sample_small/support-v1.jsonl",
        40,
        ["48abf99975007781c64a", "b0b77c81156beaf640aa", "69ea34ce8c5959c446b8"],
        "7486942c83729ee1",
        "b88ec272dc797799",
    ),
    (
        "tests/fixtures/inspect/support.eval",
        16,
        ["a6cad79bacd1bef305dd", "5a4e542fd38610bd2cfd", "6958d559097530a03ed2"],
        "3c6b6c94ceb895f7",
        "1b6ae1b7f4e00f6f",
    ),
    (
        "tests/fixtures/inspect/support.json",
        16,
        ["f89514c29a9392e26265", "8399ac18cb9b97112a08", "aba46c744447dc017d06"],
        "18554446baafe344",
        "fc15e8faedddc3c1",
    ),
]


@pytest.mark.parametrize(("name", "count", "first", "all_ids", "records"), PINNED)
def test_fixture_trial_ids_and_records_are_pinned(
    tmp_path: Path, name: str, count: int, first: list[str], all_ids: str, records: str
) -> None:
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [str(REPO / name)])
        rows = db.execute("SELECT id, record FROM trials ORDER BY seq").fetchall()
    ids = [r[0] for r in rows]
    assert len(ids) == count
    assert ids[:3] == first
    assert hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16] == all_ids
    blob = "\n".join(json.dumps(json.loads(r[1]), ensure_ascii=False) for r in rows).encode()
    assert hashlib.sha256(blob).hexdigest()[:16] == records
