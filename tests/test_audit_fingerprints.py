"""The audit's per-trial fingerprints: computed from the parsed trial as it is imported, stored, and
read by the audit instead of the records; the findings are the same as from the records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import reviewer.workflows.audit as audit_workflow
from reviewer.metrics.audit_trial import (
    FINGERPRINT_VERSION,
    TrialDigest,
    digest_trial,
    fingerprint,
    from_fingerprint,
)
from reviewer.store import open_store
from reviewer.store.audit import iter_fingerprints, iter_tasks
from reviewer.store.db import Store
from reviewer.store.queries import run_names
from reviewer.workflows.imports import import_paths
from tests.audit_sim import Sim
from tests.conftest import CORPORA, FIXTURES, SAMPLE_RUNS, write_jsonl


def planted(path: Path) -> Path:
    sim = Sim(seed=3, tasks=9, trials=4, random_ids=True, skill={"task_05": 1.0})
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_copy("task_01", 0, 3)
    sim.plant_hollow("task_05", 1, "no_tools")
    return write_jsonl(path, sim.records())


SOURCES = [
    "planted",
    str(SAMPLE_RUNS),
    str(FIXTURES / "tau_bench"),
    str(FIXTURES / "tau2"),
    str(FIXTURES / "inspect"),
    str(FIXTURES / "openai_chat"),
    str(FIXTURES / "atif"),
]
for _corpus in ("tau-bench", "realworld", "inspect"):
    if (CORPORA / _corpus).exists():
        SOURCES.append(str(CORPORA / _corpus))


def _source(src: str, tmp_path: Path) -> str:
    return str(planted(tmp_path / "sim.jsonl")) if src == "planted" else src


def _runs(db: Store) -> list[str]:
    return run_names(db)


def _from_records(db: Store, run: str) -> dict[str, TrialDigest]:
    return {tid: digest_trial(tid, t) for task in iter_tasks(db, run) for tid, t in task}


def _stored(
    db: Store, run: str, version: int = FINGERPRINT_VERSION
) -> dict[str, TrialDigest | None]:
    return {
        tid: None if fp is None else from_fingerprint(tid, task_id, no, fp)
        for task in iter_fingerprints(db, run, version)
        for tid, task_id, no, fp, _record in task
    }


def _audits(db: Store) -> dict[str, dict[str, Any]]:
    return {run: audit_workflow.audit_run(db, run).to_dict() for run in _runs(db)}


@pytest.mark.parametrize("src", SOURCES)
def test_fingerprints_stored_at_import_equal_digests_of_the_stored_records(
    src: str, tmp_path: Path
) -> None:
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [_source(src, tmp_path)])
        runs = _runs(db)
        assert runs
        for run in runs:
            from_records = _from_records(db, run)
            assert from_records
            assert _stored(db, run) == from_records


@pytest.mark.parametrize("src", SOURCES)
def test_findings_from_fingerprints_are_those_from_records(
    src: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(tmp_path / "new.db") as db:
        import_paths(db, [_source(src, tmp_path)])
        fresh = _audits(db)
    # a database from before fingerprints: the audit decodes the records, as it used to
    monkeypatch.setattr(audit_workflow, "fingerprint_batch", lambda db, batch: None)
    monkeypatch.setattr(audit_workflow, "audit_after_import", lambda db, runs: None)
    with open_store(tmp_path / "old.db") as db:
        import_paths(db, [_source(src, tmp_path)])
        assert all(fp is None for run in _runs(db) for fp in _stored(db, run).values())
        legacy = _audits(db)
        again = _audits(db)  # now from the fingerprints that audit stored
    assert fresh == legacy == again
    if src == "planted":
        assert fresh["sim"]["counts"] == {"leak": 1, "copy": 1, "hollow": 1, "order": 0}


def test_the_audit_stores_the_fingerprints_of_trials_imported_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as m:
        m.setattr(audit_workflow, "fingerprint_batch", lambda db, batch: None)
        m.setattr(audit_workflow, "audit_after_import", lambda db, runs: None)
        with open_store(tmp_path / "x.db") as db:
            import_paths(db, [planted(tmp_path / "sim.jsonl")])
    with open_store(tmp_path / "x.db") as db:
        audit_workflow.audit_run(db, "sim", store=False)  # a read-only audit keeps nothing
        assert set(_stored(db, "sim").values()) == {None}
        audit_workflow.audit_run(db, "sim")
        stored = _stored(db, "sim")
        assert len(stored) == 36
        assert stored == _from_records(db, "sim")
        # a fingerprint of another version is not read: computed again from the record
        assert set(_stored(db, "sim", FINGERPRINT_VERSION + 1).values()) == {None}


def test_a_fingerprint_reads_back_as_the_digest_it_was_made_from() -> None:
    sim = Sim(seed=5, tasks=6, trials=3, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_01", 2))
    from tests.audit_sim import digests

    for d in digests(sim.records()):
        assert from_fingerprint(d.id, d.task_id, d.trial, fingerprint(d)) == d
