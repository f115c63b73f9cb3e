"""What a task holds: stable ids, the input up to the first user turn (or the instruction), the expected
behaviour, grading hints and provenance; every line valid under the shipped JSON Schema; the Inspect
form loadable by ``inspect_ai.dataset.json_dataset`` when Inspect is installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reviewer.export.run import export_tasks
from reviewer.export.select import Selection
from reviewer.export.tasks import task_id
from reviewer.ingest.task_schema import FORMAT, problems, schema_text
from reviewer.metrics.active_rules import set_rules
from reviewer.store import open_store
from reviewer.store.labels import add_label
from tests.export.conftest import BuildDb, Spec, read_lines

SCHEMA = json.loads(schema_text())


def validate(records: list[dict[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    for i, rec in enumerate(records, 1):
        errors = sorted(validator.iter_errors(rec), key=str)
        assert not errors, f"line {i}: {errors[0].message} at {list(errors[0].absolute_path)}"
        assert problems(rec) == []


def test_the_schema_is_itself_valid_and_shipped() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["format"]["const"] == FORMAT


def test_task_ids_are_stable_and_readable() -> None:
    a = task_id("support-v1", "refund_partial", 3, "abc123")
    assert a == task_id("support-v1", "refund_partial", 3, "abc123")
    assert a.startswith("refund_partial-") and len(a) == len("refund_partial-") + 12
    assert a != task_id("support-v1", "refund_partial", 4, "abc123")
    assert a != task_id("support-v2", "refund_partial", 3, "abc123")
    assert task_id("r", "[red]x[/] ü/..", 1, "t").startswith("red_x-")
    assert task_id("r", "///", 1, "t").startswith("task-")


def test_ids_do_not_depend_on_the_database(tmp_path: Path, build_db: BuildDb) -> None:
    first, ids1 = build_db([Spec("a"), Spec("b")], name="one.db")
    second, ids2 = build_db([Spec("a"), Spec("b")], name="two.db")
    for db, ids in ((first, ids1), (second, ids2)):
        add_label(db, ids[1], "ana", "fail")
        export_tasks(db, Selection(), tmp_path / f"{id(db)}.jsonl")
    (one,) = read_lines(tmp_path / f"{id(first)}.jsonl")
    (two,) = read_lines(tmp_path / f"{id(second)}.jsonl")
    assert one["id"] == two["id"]


def test_a_task_from_a_labeled_failure(tmp_path: Path, build_db: BuildDb) -> None:
    db, ids = build_db([Spec("refund", "fail", cluster="c1")])
    set_rules(
        db,
        "rules.toml",
        '[[rule]]\nid = "no-lookup"\ntype = "forbid_tool"\ntool = "get_order"\n'
        'severity = "forbidden"\ndescription = "Never look orders up."\n',
    )
    add_label(
        db,
        ids[0],
        "ana",
        "fail",
        {"looked_up": True, "followed_policy": False},
        note="Refund only the item.",
        rubric_ref="support-policy@1",
    )
    export_tasks(db, Selection(), tmp_path / "t.jsonl")
    (task,) = read_lines(tmp_path / "t.jsonl")
    validate([task])
    assert task["input"] == {
        "instruction": None,
        "messages": [
            {"role": "system", "content": "You are a support agent."},
            {"role": "user", "content": "Refund order #W5521 please"},
        ],
    }
    exp = task["expected"]
    assert exp["note"] == "Refund only the item."
    assert exp["failed_criteria"] == [{"id": "followed_policy", "question": None}]
    assert exp["violated_rules"] == [
        {
            "id": "no-lookup",
            "severity": "forbidden",
            "description": "Never look orders up.",
            "detail": exp["violated_rules"][0]["detail"],
            "count": 1,
        }
    ]
    assert exp["outcome_reason"] == "case 0 went wrong"
    assert exp["text"].splitlines() == [
        "Refund only the item.",
        "Must hold: followed_policy",
        "Must not break rule no-lookup: Never look orders up.",
        "The failing trial ended with: case 0 went wrong",
    ]
    assert task["grading"]["rubric"] == "support-policy@1"
    assert task["grading"]["criteria"] == ["followed_policy"]
    assert task["grading"]["rules_must_not_fire"] == ["no-lookup"]
    assert task["grading"]["rules"][0]["id"] == "no-lookup"
    assert task["grading"]["rules"][0]["tool"] == "get_order"
    prov = task["provenance"]
    assert (prov["run"], prov["task_id"], prov["trial"], prov["trial_id"]) == (
        "r1",
        "refund",
        1,
        ids[0],
    )
    assert prov["source"] == "human" and prov["labeler"] == "ana" and prov["labeled_at"]
    assert prov["cluster"] == {"id": "c1", "name": "name of c1"}
    assert prov["signature"] == "sig c1"
    assert prov["judge"] == {"id": "m", "verdict": "fail", "rationale": "judge on 0"}


def test_the_instruction_is_the_input_when_the_format_has_one(
    tmp_path: Path, build_db: BuildDb
) -> None:
    extra = {
        "instruction": "You are Yusuf; you want to cancel reservation ZFA04Y.",
        "messages": [
            {"role": "system", "content": "Airline policy ..."},
            {"role": "assistant", "content": "Hi! How can I help?"},
            {"role": "user", "content": "Cancel my booking."},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Thanks."},
        ],
    }
    db, ids = build_db([Spec("t7", "fail", extra=extra)])
    export_tasks(db, Selection(include_judge=True), tmp_path / "n.jsonl")
    export_tasks(db, Selection(include_judge=True), tmp_path / "i.jsonl", "inspect")
    (task,) = read_lines(tmp_path / "n.jsonl")
    validate([task])
    assert task["input"]["instruction"] == extra["instruction"]
    assert [m["content"] for m in task["input"]["messages"]] == [
        "Airline policy ...",
        "Hi! How can I help?",
        "Cancel my booking.",
    ]
    assert task["provenance"]["source"] == "judge" and task["provenance"]["labeler"] is None
    assert task["expected"]["judge_rationale"] == "judge on 0"
    assert "The judge failed it because: judge on 0" in task["expected"]["text"]
    (sample,) = read_lines(tmp_path / "i.jsonl")
    assert sample["input"] == extra["instruction"]


def test_a_trial_without_a_user_turn_keeps_its_system_prompt(
    tmp_path: Path, build_db: BuildDb
) -> None:
    extra = {
        "messages": [{"role": "system", "content": "S"}, {"role": "assistant", "content": "A"}]
    }
    db, ids = build_db([Spec("t", extra=extra)])
    add_label(db, ids[0], "ana", "fail")
    export_tasks(db, Selection(), tmp_path / "n.jsonl")
    (task,) = read_lines(tmp_path / "n.jsonl")
    assert task["input"]["messages"] == [{"role": "system", "content": "S"}]
    validate([task])


def test_every_sample_export_line_validates(tmp_path: Path, sample_db: Path) -> None:
    db = open_store(sample_db)
    export_tasks(db, Selection(include_judge=True), tmp_path / "all.jsonl")
    export_tasks(db, Selection(), tmp_path / "red.jsonl", redact=True)
    records = read_lines(tmp_path / "all.jsonl")
    assert len(records) > 10
    validate(records + read_lines(tmp_path / "red.jsonl"))
    human = [r for r in records if r["provenance"]["source"] == "human"]
    assert len(human) == 3
    assert all(r["grading"]["rubric"] == "support-policy@1" for r in human)
    questions = {c["question"] for r in human for c in r["expected"]["failed_criteria"]}
    assert "Did the agent stay within the store policy?" in questions
    assert all(r["provenance"]["cluster"] is not None for r in human)


def test_the_harness_failures_export_validates_and_imports_back(
    tmp_path: Path, sample_db: Path
) -> None:
    """`export --harness-fails` wrote provenance.source "harness", which the schema and the task
    list's own reader refused: 40 bad lines of 40 on importing the export (found by an attack)."""
    from click.testing import CliRunner

    from reviewer.cli import cli

    db = open_store(sample_db)
    export_tasks(db, Selection(include_harness=True), tmp_path / "h.jsonl")
    db.close()
    records = read_lines(tmp_path / "h.jsonl")
    assert "harness" in {r["provenance"]["source"] for r in records}
    validate(records)
    got = CliRunner().invoke(cli, ["--db", str(sample_db), "import", str(tmp_path / "h.jsonl")])
    assert got.exit_code == 0, got.output
    assert f"a regression task list with {len(records)} tasks" in got.output
    assert ", 0 bad lines;" in got.output


def test_inspect_samples(tmp_path: Path, sample_db: Path) -> None:
    db = open_store(sample_db)
    export_tasks(db, Selection(), tmp_path / "n.jsonl")
    export_tasks(db, Selection(), tmp_path / "i.jsonl", "inspect")
    native, samples = read_lines(tmp_path / "n.jsonl"), read_lines(tmp_path / "i.jsonl")
    assert [s["id"] for s in samples] == [t["id"] for t in native]
    for s, t in zip(samples, native, strict=True):
        assert set(s) == {"id", "input", "target", "metadata"}
        assert s["input"] == t["input"]["messages"] and s["input"][-1]["role"] == "user"
        assert s["target"] == t["expected"]["text"]
        assert s["metadata"]["provenance"] == t["provenance"]


def test_inspect_json_dataset_loads_the_export(tmp_path: Path, sample_db: Path) -> None:
    dataset_mod = pytest.importorskip("inspect_ai.dataset")
    db = open_store(sample_db)
    export_tasks(db, Selection(include_judge=True), tmp_path / "inspect.jsonl", "inspect")
    dataset = dataset_mod.json_dataset(str(tmp_path / "inspect.jsonl"))
    samples = list(dataset)
    expected = read_lines(tmp_path / "inspect.jsonl")
    assert [s.id for s in samples] == [e["id"] for e in expected]
    assert all(s.target and s.metadata["provenance"]["run"] for s in samples)
