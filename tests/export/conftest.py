"""Databases for the export tests: small hand-made ones with known labels, verdicts and clusters, and
the sample runs with a few human labels."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.clustering.cluster import ClusteringResult
from reviewer.clustering.naming import FailureCluster
from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.store.clusters import save_clustering
from reviewer.store.labels import add_label, ensure_rubric_version
from reviewer.workflows.imports import import_paths
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl


@dataclass(frozen=True)
class Spec:
    """One trial of a hand-made database: its task, judge verdict and cluster (None: none)."""

    task: str
    judge: str | None = None
    cluster: str | None = None
    passed: bool = False
    extra: dict[str, Any] | None = None


def build(
    path: Path, specs: Sequence[Spec], run: str = "r1"
) -> tuple[sqlite_utils.Database, list[str]]:
    """A database with one trial per spec (trial numbers in spec order); returns it and the ids."""
    records = []
    for i, spec in enumerate(specs):
        rec = native_trial(spec.task, passed=spec.passed, run=run, trial=i + 1)
        rec["messages"][-1]["content"] = f"Done with case {i}."
        rec["outcome"]["reason"] = f"case {i} went wrong"
        if spec.judge is not None:
            rec["judge"] = {"verdict": spec.judge, "model": "m", "rationale": f"judge on {i}"}
        rec.update(spec.extra or {})
        records.append(rec)
    db = open_store(path)
    summary = import_paths(db, [write_jsonl(path.with_name(f"{path.stem}-source.jsonl"), records)])
    assert summary.added == len(specs), summary.skipped
    ids = [r[0] for r in db.execute("SELECT id FROM trials WHERE run = ? ORDER BY trial", [run])]
    _cluster(db, run, ids, specs)
    return db, ids


def _cluster(db: sqlite_utils.Database, run: str, ids: list[str], specs: Sequence[Spec]) -> None:
    groups: dict[str, list[str]] = {}
    for tid, spec in zip(ids, specs, strict=True):
        if spec.cluster is not None:
            groups.setdefault(spec.cluster, []).append(tid)
    if not groups:
        return
    total = sum(len(v) for v in groups.values())
    clusters = [
        FailureCluster(
            id=cid,
            name=f"name of {cid}",
            size=len(members),
            share="",
            fraction=len(members) / total,
            signature=f"sig {cid}",
            terms=(),
            runs=(run,),
            tasks=(),
            representative=members[-1],  # the last member, so "first" and "representative" differ
            trial_ids=tuple(members),
        )
        for cid, members in sorted(groups.items())
    ]
    signatures = {t: f"sig {cid}" for cid, members in groups.items() for t in members}
    save_clustering(
        db, run, ClusteringResult(clusters=clusters, total=total), signatures=signatures
    )


BuildDb = Callable[..., tuple[sqlite_utils.Database, list[str]]]


@pytest.fixture
def build_db(tmp_path: Path) -> BuildDb:
    def make(
        specs: Sequence[Spec], name: str = "t.db", run: str = "r1"
    ) -> tuple[sqlite_utils.Database, list[str]]:
        return build(tmp_path / name, specs, run)

    return make


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


#: Notes given to the sample failures: one with secrets, to check that --redact finds them.
NOTES = [
    "Offer a return instead; customer is ana@example.com, phone +1 415 555 0100",
    "Look the order up before refunding W5521 ($25.00 on 2024-05-13)",
    "",
]


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    """The sample runs, clustered, with three failures labeled fail and one labeled pass by ana."""
    db_path = sample_copy(tmp_path / "s.db", SAMPLE_RUNS, "cluster")
    db = open_store(db_path)
    try:
        rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
        ensure_rubric_version(db, rubric)
        failed = [r[0] for r in db.execute("SELECT id FROM trials WHERE success = 0 ORDER BY seq")]
        for tid, note in zip(failed[:3], NOTES, strict=True):
            add_label(
                db,
                tid,
                "ana",
                "fail",
                {"looked_up": True, "followed_policy": False, "resolved_correctly": False},
                note=note,
                rubric_ref=rubric.ref,
            )
        add_label(db, failed[3], "ana", "pass", {}, rubric_ref=rubric.ref)
    finally:
        db.close()
    return db_path


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
