"""The trial record codec: a stored record holds no identity, decodes without re-validation, and
records written by older versions (identity inside) still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.ingest.native import parse_line
from reviewer.models import Trial
from reviewer.record import (
    RecordError,
    decode,
    encode,
    trial_from_dict,
    trial_to_dict,
)
from tests.conftest import native_trial, run_cli, stored


def parsed(rec: dict[str, object], text: str | None = None) -> Trial:
    line = (text or json.dumps(rec)).encode()
    trial = parse_line(line, "f.jsonl", 1)
    assert isinstance(trial, Trial)
    return trial


def test_a_stored_record_has_no_run_task_or_trial() -> None:
    trial = parsed(native_trial("refund", trial=3, metadata={"run": "nested stays"}))
    stored = json.loads(encode(trial))
    assert not {"run", "task_id", "trial"} & set(stored)
    assert stored["metadata"] == {"run": "nested stays"}  # only the top level is cut
    assert stored["messages"] == native_trial()["messages"]


@pytest.mark.parametrize(
    "text",
    [
        '{"run": "r1", "task_id": "a", "trial": 2, "outcome": {"passed": true}, "messages": []}',
        '{ "outcome" : {"passed": true} , "messages":[], "task_id" : "a" , "x": {"run": 1}, "run":"r1"}',
        '{"outcome": {"passed": true}, "messages": [], "run": "r1", "task_id": "a"}',  # identity last
        '{"task_id": "a\\"b", "outcome": {"passed": true}, "messages": [], "trial": null}',
    ],
)
def test_identity_is_cut_from_any_spelling_of_the_line(text: str) -> None:
    trial = parsed({}, text)
    stored = json.loads(encode(trial))
    assert {"run", "task_id"}.isdisjoint(stored)
    assert stored.get("trial") is None
    assert stored["outcome"] == {"passed": True}
    back = decode(encode(trial), run="R", task_id="T", trial=7)
    assert (back.run, back.task_id, back.trial, back.success) == ("R", "T", 7, True)


def test_decode_takes_identity_from_the_columns_and_ignores_an_old_records_own() -> None:
    old = json.dumps(native_trial("a", run="old-name", trial=1))
    trial = decode(old, run="renamed", task_id="a", trial=4)
    assert (trial.run, trial.task_id, trial.trial) == ("renamed", "a", 4)
    assert trial.tool_call_count == 1 and trial.messages[3].name == "get_order"


def test_decode_does_not_validate_and_round_trips_with_encode() -> None:
    rec = native_trial(
        "a",
        judge={"verdict": "FAIL", "rationale": "no", "model": "m", "rubric": "r@1"},
        usage={"input_tokens": 5, "output_tokens": 2, "cost_usd": 0.5},
        latency_s=2.5,
        error={"type": "ToolError", "message": "boom"},
    )
    trial = parsed(rec)
    back = decode(encode(trial), run="r1", task_id="a", trial=1)
    trial.trial, trial.raw, trial.fingerprint, trial.source_line = 1, None, b"", None
    assert back == trial
    # a record with a role the validator refuses still shows: display never re-validates
    odd = json.dumps({"outcome": {"passed": False}, "messages": [{"role": "developer"}]})
    assert decode(odd, run="r", task_id="t", trial=1).messages[0].role == "developer"
    with pytest.raises(RecordError, match="role must be one of"):
        trial_from_dict({"task_id": "t", "outcome": {"passed": False}, **json.loads(odd)})


def test_converted_formats_encode_without_identity_too() -> None:
    trial = trial_from_dict(native_trial("a", trial=2))
    assert trial_to_dict(trial)["run"] == "r1"
    assert "run" not in json.loads(encode(trial))
    assert trial_from_dict(trial_to_dict(trial)) == trial


@pytest.mark.parametrize("role", [["user"], {"user": 1}])
def test_a_role_that_is_a_list_or_object_is_a_skip_naming_the_line(role: object) -> None:
    """``"role": ["user"]`` stopped the import with an internal error (TypeError: unhashable type:
    'list', exit 70): the role was looked up in a set before its type was checked."""
    line = json.dumps(
        {"task_id": "t", "outcome": {"passed": True}, "messages": [{"role": role, "content": "x"}]}
    )
    skip = parse_line(line.encode(), "f.jsonl", 3)
    assert not isinstance(skip, Trial)
    assert (skip.file, skip.line) == ("f.jsonl", 3)
    assert "messages[0].role must be one of system, user, assistant, tool" in skip.reason
    odd = json.dumps({"outcome": {"passed": False}, "messages": [{"role": role}]})
    assert decode(odd, run="r", task_id="t", trial=1).messages[0].role == str(role)


def test_a_judge_model_or_rubric_of_the_wrong_shape_is_kept_as_its_json(tmp_path: Path) -> None:
    """``"judge": {"model": {...}, "rubric": [...]}`` stopped the import of the whole file with
    'database error (Error binding parameter 5: type 'dict' is not supported)', naming neither the
    file nor the line: the values reached the verdict's text columns unchanged."""
    rec = {
        "task_id": "t",
        "outcome": {"passed": True},
        "messages": [],
        "judge": {"verdict": "pass", "model": {"a": 1}, "rubric": ["x"]},
    }
    trial = parsed(rec)
    assert trial.judge is not None
    assert (trial.judge.model, trial.judge.rubric) == ('{"a": 1}', '["x"]')
    assert trial.judge.judge == '{"a": 1}:["x"]'
    src = tmp_path / "r.jsonl"
    src.write_text(json.dumps(rec) + "\n" + json.dumps(native_trial("u")) + "\n")
    code, _, err = run_cli("--db", str(tmp_path / "x.db"), "import", str(src))
    assert code == 0, err
    assert stored(str(tmp_path / "x.db")) == 2
