"""Regression tests: `labels give` stored a label in a queue that does not exist, and took
--criterion answers with no rubric to check them against."""

from __future__ import annotations

from pathlib import Path

from reviewer.store import open_store
from reviewer.store.queries import trials_by_id_prefix
from tests.conftest import native_trial, run_cli, stored, write_jsonl


def _one_trial(tmp_path: Path) -> str:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2")])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    with open_store("x.db") as db:
        return str(trials_by_id_prefix(db, "", limit=1)[0][0])


def test_labels_give_unknown_or_empty_queue_is_refused(tmp_path: Path) -> None:
    tid = _one_trial(tmp_path)
    code, out, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--queue", "nosuchq")
    assert code == 2 and err == "reviewer: no queue named 'nosuchq'; queues: none\n"
    code, _, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--queue", "")
    assert code == 2 and err == "reviewer: --queue must not be empty\n"
    assert stored("x.db", "labels") == 0
    assert run_cli("--db", "x.db", "labels", "give", tid, "pass")[0] == 0


def test_labels_give_criterion_without_rubric_is_refused(tmp_path: Path) -> None:
    tid = _one_trial(tmp_path)
    code, _, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--criterion", "x=yes")
    assert code == 2 and err.startswith("reviewer: --criterion needs a rubric")
    assert len(err.splitlines()) == 1 and stored("x.db", "labels") == 0
