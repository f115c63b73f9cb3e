"""Databases with known strata for the labeling tests: tasks, judge verdicts and failure clusters."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import sqlite_utils

from reviewer.clustering.cluster import ClusteringResult
from reviewer.clustering.naming import FailureCluster
from reviewer.store import open_store
from reviewer.store.clusters import save_clustering
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl

#: (task id, judge verdict or None, cluster id or None) for one trial
Spec = tuple[str, str | None, str | None]
BuildDb = Callable[..., sqlite_utils.Database]


def build(
    path: Path, specs: Sequence[Spec], run: str = "r1", reverse: bool = False
) -> sqlite_utils.Database:
    """A database holding one trial per spec (trial numbers in spec order, written in reverse order
    with ``reverse``); trials with a cluster are failures in that cluster."""
    records = []
    for i, (task, verdict, cluster) in enumerate(specs):
        rec = native_trial(task, passed=cluster is None, run=run, trial=i + 1)
        rec["messages"][-1]["content"] = f"Done with case {i}."
        if verdict is not None:
            rec["judge"] = {"verdict": verdict, "model": "m"}
        records.append(rec)
    src = write_jsonl(path.with_suffix(".jsonl"), records[::-1] if reverse else records)
    db = open_store(path)
    summary = import_paths(db, [src])
    assert summary.added == len(specs), summary.skipped
    clusters: dict[str, list[str]] = {}
    ids = [r[0] for r in db.execute("SELECT id FROM trials WHERE run = ? ORDER BY trial", [run])]
    for tid, (_, _, cluster) in zip(ids, specs, strict=True):
        if cluster is not None:
            clusters.setdefault(cluster, []).append(tid)
    if clusters:
        total = sum(len(v) for v in clusters.values())
        result = ClusteringResult(
            clusters=[
                FailureCluster(
                    id=cid,
                    name=cid,
                    size=len(members),
                    share="",
                    fraction=len(members) / total,
                    signature="",
                    terms=(),
                    runs=(run,),
                    tasks=(),
                    representative=members[0],
                    trial_ids=tuple(members),
                )
                for cid, members in sorted(clusters.items())
            ],
            total=total,
        )
        save_clustering(db, run, result)
    return db


@pytest.fixture
def build_db(tmp_path: Path) -> BuildDb:
    def make(
        specs: Sequence[Spec], name: str = "t.db", run: str = "r1", reverse: bool = False
    ) -> sqlite_utils.Database:
        return build(tmp_path / name, specs, run, reverse)

    return make
