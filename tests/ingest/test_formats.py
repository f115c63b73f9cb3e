"""The format registry: every registered format satisfies the one Format protocol, and sniffing
dispatches on kind (trials, task lists, pair judgements)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from reviewer import ingest
from reviewer.ingest.base import KINDS, Format
from reviewer.models import PairRecord, Skip, TaskEntry, Trial
from tests.conftest import SAMPLE_RUNS, native_trial, write_jsonl


@pytest.mark.parametrize("fmt", ingest.FORMATS, ids=lambda f: f.NAME)
def test_every_registered_format_satisfies_the_protocol(fmt: Format) -> None:
    assert isinstance(fmt, Format)
    assert isinstance(fmt.NAME, str) and fmt.NAME
    assert fmt.KIND in KINDS
    assert list(inspect.signature(fmt.sniff).parameters) == ["path", "head"]
    assert list(inspect.signature(fmt.parse).parameters) == ["path"]
    assert inspect.isgeneratorfunction(fmt.parse), "parse streams: a generator"


def test_format_names_are_unique_and_found_by_name() -> None:
    names = [f.NAME for f in ingest.FORMATS]
    assert len(names) == len(set(names))
    for fmt in ingest.FORMATS:
        assert ingest.format_by_name(fmt.NAME) is fmt


def test_kinds_are_declared_not_guessed() -> None:
    kinds = {f.NAME: f.KIND for f in ingest.FORMATS}
    assert kinds["task-list"] == "tasks" and kinds["pairs"] == "pairs"
    assert {k for n, k in kinds.items() if n not in ("task-list", "pairs")} == {"trials"}


def test_each_kind_parses_to_its_own_items(tmp_path: Path) -> None:
    trials = list(ingest.parse(SAMPLE_RUNS / "support-v1.jsonl"))
    assert trials and all(isinstance(t, Trial) for t in trials)

    pairs = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            {"pair_id": "p1", "judge": "j", "a": "x", "b": "y", "order_ab": "a", "order_ba": "a"},
            {"pair_id": "p1", "judge": "j", "a": "x", "b": "y", "order_ab": "b", "order_ba": "b"},
        ],
    )
    items = list(ingest.parse(pairs))
    assert isinstance(items[0], PairRecord)
    assert isinstance(items[1], Skip) and "repeats pair 'p1'" in items[1].reason

    task = {
        "format": "reviewer-task/1",
        "id": "t-1",
        "input": {"messages": [{"role": "user", "content": "hi"}]},
        "expected": {"text": "no refund"},
        "grading": {},
        "provenance": {
            "run": "r",
            "task_id": "a",
            "trial": 1,
            "trial_id": "abc",
            "source": "human",
        },
    }
    tasks = write_jsonl(tmp_path / "tasks.jsonl", [task, task, {"format": "reviewer-task/1"}])
    items = list(ingest.parse(tasks))
    assert isinstance(items[0], TaskEntry) and items[0].id == "t-1"
    assert [type(i) for i in items[1:]] == [Skip, Skip]


def test_a_native_file_is_trials(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a")])
    fmt = ingest.sniff(f)
    assert (fmt.NAME, fmt.KIND) == ("native", "trials")
