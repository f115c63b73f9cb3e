"""What a labeler needs beside the transcript: the task's instruction and, when the harness kept
them, the actions it expected next to the ones the agent took (tau-bench ``info.task.actions``).

Only the source's own task data: never a judge verdict or a score, so the label screen can show it
before the trial is labeled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reviewer.models import Trial

#: How much of the instruction (or first user message) the panel keeps.
INSTRUCTION_CHARS = 1_200
#: How much of one action's arguments is shown.
ARGS_CHARS = 160


@dataclass
class Action:
    name: str
    arguments: Any
    matched: bool = False  # an expected action the agent took with equal arguments, or the reverse
    #: an expected action not taken: the arguments that differ from the agent's last call of that name
    differs: list[str] | None = None

    def text(self) -> str:
        if self.arguments in (None, {}, ""):
            return f"{self.name}()"
        if isinstance(self.arguments, dict):
            args = ", ".join(f"{k}={_short(v)}" for k, v in self.arguments.items())
        else:
            args = _short(self.arguments)
        if len(args) > ARGS_CHARS:
            args = args[: ARGS_CHARS - 1] + "…"
        return f"{self.name}({args})"


@dataclass
class TaskContext:
    instruction: str | None = None
    #: where the instruction came from: "task" (the harness's) or "first user message"
    source: str = "task"
    expected: list[Action] | None = None  # None: the source keeps no expected actions
    actual: list[Action] = field(default_factory=list)


def _short(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return str(value)


def _canonical(value: Any) -> str:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _expected(metadata: dict[str, Any]) -> list[Action] | None:
    task = metadata.get("task")
    raw = task.get("actions") if isinstance(task, dict) else None
    if not isinstance(raw, list):
        info = metadata.get("reward_info")
        raw = info.get("actions") if isinstance(info, dict) else None
    if not isinstance(raw, list):
        return None
    out = []
    for a in raw:
        if isinstance(a, dict) and isinstance(a.get("name"), str):
            out.append(Action(a["name"], a.get("kwargs", a.get("arguments"))))
    return out


def task_context(trial: Trial) -> TaskContext:
    """The instruction (the harness's, else the first user message) and expected vs actual actions."""
    ctx = TaskContext()
    text = trial.instruction
    if not text:
        text = next((m.content for m in trial.messages if m.role == "user" and m.content), None)
        ctx.source = "first user message"
    if text:
        text = text.strip()
        ctx.instruction = (
            text if len(text) <= INSTRUCTION_CHARS else text[: INSTRUCTION_CHARS - 1] + "…"
        )
    ctx.actual = [
        Action(call.name, call.arguments)
        for m in trial.messages
        if m.role == "assistant"
        for call in m.tool_calls
    ]
    ctx.expected = _expected(trial.metadata if isinstance(trial.metadata, dict) else {})
    if ctx.expected is not None:
        taken: dict[tuple[str, str], list[Action]] = {}
        for a in ctx.actual:
            taken.setdefault((a.name, _canonical(a.arguments)), []).append(a)
        for e in ctx.expected:
            same = taken.get((e.name, _canonical(e.arguments)))
            if same:
                e.matched = True
                same.pop(0).matched = True
        for e in ctx.expected:
            near = [a for a in ctx.actual if a.name == e.name]
            if not e.matched and near:
                e.differs = _differs(e.arguments, near[-1].arguments)
    return ctx


def _differs(expected: Any, actual: Any) -> list[str]:
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return ["arguments"]
    keys = list(expected) + [k for k in actual if k not in expected]
    return [k for k in keys if _canonical(expected.get(k)) != _canonical(actual.get(k))]
