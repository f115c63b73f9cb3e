"""A tool call's id, a tool result's tool_call_id or name written as a list, an object or a number
(valid JSON, the wrong shape) in native JSONL, OpenAI chat JSONL, tau-bench, tau2-bench or an
Inspect log stopped the whole import with an internal error (TypeError: unhashable type, exit 70) in the audit after the file was
read: the value reached the Message unchanged. It is kept as its JSON text, as a native tool
result's tool_call_id always was, and the trial is imported, shown and audited."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, run_cli, stored, write_jsonl

ODD: list[Any] = [{"a": 1}, [1], 5]


def _native(odd: Any) -> list[dict[str, Any]]:
    return [
        {
            "run": "r",
            "task_id": "t",
            "outcome": {"passed": False},
            "messages": [
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"id": odd, "name": "cancel_order", "arguments": {}}],
                },
                {"role": "tool", "tool_call_id": odd, "name": "cancel_order", "content": "ok"},
            ],
        }
    ]


def _chat(odd: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": odd,
                    "type": "function",
                    "function": {"name": "cancel_order", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": odd, "name": odd, "content": "ok"},
    ]


def _write(kind: str, odd: Any, folder: Path) -> Path:
    if kind == "native":
        return write_jsonl(folder / "n.jsonl", _native(odd))
    if kind == "openai":
        return write_jsonl(folder / "o.jsonl", [{"messages": _chat(odd), "passed": True}])
    if kind == "tau-bench":
        f = folder / "tb.json"
        f.write_text(
            json.dumps([{"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": _chat(odd)}])
        )
        return f
    if kind == "inspect":
        log = json.loads((FIXTURES / "inspect" / "support.json").read_text())
        for sample in log["samples"]:
            for m in sample["messages"]:
                for c in m.get("tool_calls") or []:
                    c["id"] = odd
                if m.get("role") == "tool":
                    m["tool_call_id"], m["function"] = odd, odd
        f = folder / "inspect.json"
        f.write_text(json.dumps(log))
        return f
    doc = json.loads((FIXTURES / "tau2" / "airline-small.json").read_text())
    for sim in doc["simulations"]:
        for m in sim["messages"]:
            for c in m.get("tool_calls") or []:
                c["id"] = odd
    f = folder / "t2.json"
    f.write_text(json.dumps(doc))
    return f


@pytest.mark.parametrize("odd", ODD, ids=["object", "list", "number"])
@pytest.mark.parametrize("kind", ["native", "openai", "tau-bench", "tau2-bench", "inspect"])
def test_an_id_of_the_wrong_shape_is_imported_as_its_json(
    tmp_path: Path, kind: str, odd: Any
) -> None:
    db = str(tmp_path / "x.db")
    code, out, err = run_cli("--db", db, "import", str(_write(kind, odd, tmp_path)))
    assert code == 0, err
    assert "internal error" not in err
    assert stored(db) >= 1
    code, out, err = run_cli("--db", db, "trials", "--json")
    trial_id = json.loads(out)["trials"][0]["id"]
    for show in (["show"], ["show", "--json"]):
        code, out, err = run_cli("--db", db, *show, trial_id)
        assert code == 0, err
    code, out, err = run_cli("--db", db, "audit")
    assert code == 0, err
