"""The runs the app offers to compare by default: the newest scored run against the newest earlier
one holding the same tasks, never two evals that share a task id by chance."""

from __future__ import annotations

from pathlib import Path

from reviewer.store import open_store
from reviewer.workflows.compare import comparable_pair
from tests.conftest import native_trial, run_cli, write_jsonl


def _run(tmp_path: Path, db: str, run: str, tasks: list[str]) -> None:
    records = [native_trial(t, i % 2 == 0, run=run) for i, t in enumerate(tasks)]
    code, _, err = run_cli(
        "--db", db, "import", str(write_jsonl(tmp_path / f"{run}.jsonl", records))
    )
    assert code == 0, err


def test_the_newest_run_is_compared_with_the_newest_earlier_one_of_its_tasks(
    tmp_path: Path,
) -> None:
    """The palette compared `theory_of_mind · gpt-4o-mini → websearch_addition_problem ·
    claude-sonnet-4-5` after a folder of Inspect logs: they share task id "1" alone, and every
    headline row read 1.00 → 1.00 (found by a new user's review)."""
    db = str(tmp_path / "c.db")
    ten = [str(i) for i in range(1, 11)]
    _run(tmp_path, db, "a", ten)
    with open_store(db) as store:
        assert comparable_pair(store) is None  # one run
    _run(tmp_path, db, "b", ten)
    _run(tmp_path, db, "other-eval", ["1", "x", "y", "z"])
    with open_store(db) as store:
        assert comparable_pair(store) is None  # the newest shares "1" alone with the rest
    _run(tmp_path, db, "c", ten[:6])
    with open_store(db) as store:
        assert comparable_pair(store) == ("b", "c")  # 6 of c's 6 in b, the newest such
