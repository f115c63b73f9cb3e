"""Two edits of the same clusters at once (two processes, or two app windows): before, both merges
of A+B and B+C succeeded and left failed trials in no cluster, and the loser of other races got
"UNIQUE constraint failed". Edits are serialized and checked against what they read: one wins, the
other is refused in one line and changes nothing, and every failure stays in exactly one cluster."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import reviewer.clustering.edit as edit
from reviewer.store import open_store
from reviewer.workflows import clusters as jobs
from tests.commands.test_cluster import invoke, sample_db  # noqa: F401 (a fixture)


def _membership(db_path: str) -> dict[str, int]:
    with open_store(db_path) as db:
        cid = db.execute("SELECT MAX(id) FROM clusterings").fetchone()[0]
        rows = db.execute(
            "SELECT trial_id, COUNT(*) FROM cluster_members WHERE clustering_id = ? GROUP BY trial_id",
            [cid],
        ).fetchall()
        failed = db.execute("SELECT COUNT(*) FROM trials WHERE outcome = 'fail'").fetchone()[0]
    counts = {str(t): int(n) for t, n in rows}
    assert len(counts) == failed, "a failed trial is in no cluster"
    return counts


def _race(
    db_path: str, monkeypatch: pytest.MonkeyPatch, first: Any, second: Any
) -> list[BaseException | None]:
    """Run two edits in two threads (each with its own connection) so that both read the clusters
    before either writes."""
    barrier = threading.Barrier(2, timeout=30)
    real = edit.describe_groups

    def slow(*args: Any, **kw: Any) -> Any:
        out = real(*args, **kw)
        barrier.wait()  # both have read and computed: now both try to write
        return out

    monkeypatch.setattr(edit, "describe_groups", slow)
    results: list[BaseException | None] = [None, None]

    def go(i: int, job: Any) -> None:
        with open_store(db_path) as db:
            try:
                job(db)
            except BaseException as e:  # noqa: BLE001 - the test reports it
                results[i] = e

    threads = [threading.Thread(target=go, args=(i, j)) for i, j in enumerate((first, second))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_merges_sharing_a_cluster(sample_db: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    invoke("--db", sample_db, "cluster")
    with open_store(sample_db) as db:
        ids = [r.id for r in jobs.current(db).rows]  # type: ignore[union-attr]
    assert len(ids) >= 3
    a, b, c = ids[:3]
    results = _race(
        sample_db, monkeypatch, lambda db: jobs.merge(db, [a, b]), lambda db: jobs.merge(db, [b, c])
    )
    errors = [e for e in results if e is not None]
    assert len(errors) == 1, results
    assert isinstance(errors[0], jobs.ClusterJobError)
    assert "changed since it was read" in str(errors[0])
    assert set(_membership(sample_db).values()) == {1}


def test_a_split_racing_a_merge_of_the_same_cluster(
    sample_db: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    invoke("--db", sample_db, "cluster")
    with open_store(sample_db) as db:
        rows = jobs.current(db).rows  # type: ignore[union-attr]
    big = max(rows, key=lambda r: r.size)
    other = next(r for r in rows if r.id != big.id)
    results = _race(
        sample_db,
        monkeypatch,
        lambda db: jobs.split(db, big.id, into=2),
        lambda db: jobs.merge(db, [big.id, other.id]),
    )
    assert sum(e is not None for e in results) == 1, results
    assert all(e is None or isinstance(e, jobs.ClusterJobError) for e in results)
    assert set(_membership(sample_db).values()) == {1}
    # the winner's edit can still be undone, and undoing leaves every failure in one cluster
    code, _, err = invoke("--db", sample_db, "cluster", "undo")
    assert code == 0, err
    assert set(_membership(sample_db).values()) == {1}


def test_renaming_a_cluster_merged_away_meanwhile_is_refused(sample_db: str) -> None:  # noqa: F811
    invoke("--db", sample_db, "cluster")
    with open_store(sample_db) as db:
        rows = jobs.current(db).rows  # type: ignore[union-attr]
        small = min(rows, key=lambda r: r.size)
        big = max(rows, key=lambda r: r.size)
        jobs.merge(db, [big.id, small.id])  # the small one is merged into the big one
        with pytest.raises(jobs.ClusterJobError, match="no cluster with id"):
            jobs.rename(db, small.id, "gone")
