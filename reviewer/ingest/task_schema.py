"""The native regression-task format: its name, its JSON Schema file, and the structural check that
`reviewer import` runs on every line (the schema itself is for other tools; jsonschema is optional)."""

from __future__ import annotations

from importlib import resources
from typing import Any

#: The value of every native task's ``format`` field; bumped when a field changes meaning.
FORMAT = "reviewer-task/1"
_ROLES = ("system", "user", "assistant")


def schema_text() -> str:
    """The JSON Schema of one native task line, as shipped in the package."""
    return resources.files("reviewer").joinpath("schemas/task.schema.json").read_text("utf-8")


def problems(obj: Any) -> list[str]:
    """What keeps ``obj`` from being a native task (empty when it is one), field names first."""
    if not isinstance(obj, dict):
        return [f"expected a JSON object, got {type(obj).__name__}"]
    if obj.get("format") != FORMAT:
        return [f"format must be {FORMAT!r}, got {obj.get('format')!r}"]
    out: list[str] = []
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        out.append("id must be a non-empty string")
    for part in ("input", "expected", "grading", "provenance"):
        if not isinstance(obj.get(part), dict):
            out.append(f"{part} must be an object")
    if out:
        return out
    return (
        _input_problems(obj["input"])
        + _expected_problems(obj["expected"])
        + _provenance_problems(obj["provenance"])
    )


def _input_problems(inp: dict[str, Any]) -> list[str]:
    out = []
    if inp.get("instruction") is not None and not isinstance(inp["instruction"], str):
        out.append("input.instruction must be a string or null")
    messages = inp.get("messages")
    if not isinstance(messages, list):
        return [*out, "input.messages must be a list"]
    for i, m in enumerate(messages):
        if (
            not isinstance(m, dict)
            or m.get("role") not in _ROLES
            or not isinstance(m.get("content"), str)
        ):
            out.append(
                f"input.messages[{i}] needs a role ({', '.join(_ROLES)}) and a string content"
            )
    return out


def _expected_problems(expected: dict[str, Any]) -> list[str]:
    if not isinstance(expected.get("text"), str) or not expected["text"]:
        return ["expected.text must be a non-empty string"]
    return []


def _provenance_problems(prov: dict[str, Any]) -> list[str]:
    out = [
        f"provenance.{k} must be a string"
        for k in ("run", "task_id", "trial_id")
        if not isinstance(prov.get(k), str)
    ]
    trial = prov.get("trial")
    if isinstance(trial, bool) or not isinstance(trial, int):
        out.append("provenance.trial must be an integer")
    if prov.get("source") not in ("human", "judge", "harness"):
        out.append("provenance.source must be human, judge or harness")
    return out
