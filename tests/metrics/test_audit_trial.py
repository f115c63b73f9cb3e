"""The audit's per-trial fingerprints: computed from the parsed trial as it is imported, stored, and
read by the audit instead of the records; the findings are the same as from the records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reviewer.workflows.audit as audit_workflow
from reviewer.metrics.audit_trial import (
    FINGERPRINT_VERSION,
    TrialDigest,
    digest_trial,
    fingerprint,
    from_fingerprint,
)
from reviewer.record import trial_from_dict
from reviewer.store import open_store
from reviewer.store.audit import iter_fingerprints, iter_tasks
from reviewer.store.db import Store
from reviewer.store.queries import run_names
from reviewer.workflows.imports import import_paths
from tests.conftest import CORPORA, FIXTURES, SAMPLE_RUNS
from tests.support.audit_reference import reference_digest
from tests.support.audit_sim import Sim, planted

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
        for _seq, tid, task_id, no, _outcome, fp, _record in task
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
    monkeypatch.setattr(audit_workflow, "fingerprint_batch", lambda db, batch, seq, **kw: None)
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
        m.setattr(audit_workflow, "fingerprint_batch", lambda db, batch, seq, **kw: None)
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
    from tests.support.audit_sim import digests

    for d in digests(sim.records()):
        assert from_fingerprint(d.id, d.task_id, d.trial, fingerprint(d)) == d


@pytest.mark.parametrize("src", SOURCES)
def test_digest_reads_only_what_matters_and_gives_the_reference_digest(
    src: str, tmp_path: Path
) -> None:
    with open_store(tmp_path / "x.db") as db:
        import_paths(db, [_source(src, tmp_path)])
        n = 0
        for run in _runs(db):
            for task in iter_tasks(db, run):
                for tid, trial in task:
                    assert digest_trial(tid, trial) == reference_digest(tid, trial)
                    n += 1
        assert n


@pytest.mark.parametrize("seed", range(6))
def test_digest_gives_the_reference_digest_on_runs_that_write(seed: int) -> None:
    sim = Sim(seed=seed, tasks=12, trials=4, random_ids=seed % 2 == 0)
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_leak(("task_03", 1), ("task_07", 0))
    sim.plant_hollow("task_05", 1, "no_tools")
    for rec in sim.records():
        trial = trial_from_dict(rec)
        assert digest_trial("x", trial) == reference_digest("x", trial)


def test_a_failed_write_and_reads_after_a_write_give_the_reference_digest() -> None:
    def call(i: int, name: str, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"c{i}", "name": name, "arguments": args}],
        }

    def result(i: int, name: str, content: str, **extra: Any) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": content, **extra}

    rec = {
        "task_id": "t",
        "trial": 0,
        "outcome": {"passed": True},
        "messages": [
            {"role": "system", "content": "Agent SYSPROMPTID 9912345"},
            {"role": "user", "content": "my id is user_77"},
            call(1, "get_user", {"id": "user_77"}),
            result(1, "get_user", '{"orders": ["W1234", "W5678"]}'),
            call(2, "cancel_order", {"id": "W1234"}),
            result(2, "cancel_order", "Error: ORDERX99 not found", is_error=True),
            call(3, "get_order", {"id": "W5678"}),
            result(3, "get_order", '{"ref": "R777111"}'),
            call(4, "create_ticket", {"about": "W5678"}),
            result(4, "create_ticket", '{"ticket": "T9000001", "ref": "R777111"}'),
            call(5, "get_ticket", {"id": "T9000001"}),
            result(5, "get_ticket", '{"ticket": "T9000001", "note": "N4242424"}'),
            {"role": "assistant", "content": "Done: T9000001."},
        ],
    }
    trial = trial_from_dict(rec)
    d = digest_trial("x", trial)
    assert d == reference_digest("x", trial)
    assert set(d.created) == {"T9000001"}  # R777111 was seen before the write
    assert [r.tool for r in d.reads] == ["get_user", "get_order"]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ09_-AB xé٣\n")), max_size=30) | st.text())
def test_the_quick_identifier_check_agrees_with_its_expression(text: str) -> None:
    from reviewer.metrics.audit_trial import _MAYBE_ID, _maybe_id

    assert _maybe_id(text) == (_MAYBE_ID.search(text) is not None)
