"""The native trial format: JSONL, one trial per line (see DESIGN.md and schemas/trial.schema.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import IngestError, Record, as_text, looks_like_error, parse_arguments
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage, Verdict

NAME = "native"

_ROLES = {"system", "user", "assistant", "tool"}


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object per line with ``task_id``, ``messages`` and ``outcome``."""
    first = _first_line(head)
    if first is None or not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except ValueError:
        # a first line cut by the 64 KiB head, or broken: judge by its keys
        return b'"outcome"' in first and b'"messages"' in first
    return isinstance(obj, dict) and "outcome" in obj and "messages" in obj


def _first_line(head: bytes) -> bytes | None:
    for line in head.splitlines():
        line = line.strip()
        if line:
            return line
    return None


def parse(path: Path) -> Iterator[Record]:
    name = str(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise IngestError(name, f"cannot read: {e.strerror or e}") from e
    with fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            yield parse_line(line, name, lineno)


def parse_line(line: bytes, file: str, lineno: int) -> Record:
    """One JSONL line as a Trial, or a Skip saying what is wrong with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return Skip(file, lineno, f"not UTF-8 (byte 0x{line[e.start]:02x} at column {e.start + 1})")
    try:
        obj = json.loads(text)
    except ValueError as e:
        return Skip(file, lineno, f"invalid JSON: {e}")
    try:
        trial = trial_from_dict(obj)
    except RecordError as e:
        return Skip(file, lineno, str(e))
    trial.source_line = lineno
    trial.fingerprint = line
    trial.raw = text
    return trial


class RecordError(ValueError):
    """A record that does not follow the native format; the message says which field."""


def trial_from_dict(obj: Any) -> Trial:
    if not isinstance(obj, dict):
        raise RecordError(f"expected a JSON object, got {type(obj).__name__}")
    task_id = obj.get("task_id")
    if task_id is None or task_id == "":
        raise RecordError("missing task_id")
    if not isinstance(task_id, str | int):
        raise RecordError("task_id must be a string")
    raw_messages = obj.get("messages")
    if not isinstance(raw_messages, list):
        raise RecordError(
            "missing messages (a list)" if raw_messages is None else "messages must be a list"
        )
    outcome = obj.get("outcome")
    if not isinstance(outcome, dict):
        raise RecordError("missing outcome (an object with passed or reward)")
    passed = outcome.get("passed")
    reward = outcome.get("reward")
    if passed is None and reward is None:
        raise RecordError("outcome needs passed or reward")
    if passed is not None and not isinstance(passed, bool):
        raise RecordError("outcome.passed must be true or false")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
        raise RecordError("outcome.reward must be a number")
    trial_no = obj.get("trial")
    if trial_no is not None and (isinstance(trial_no, bool) or not isinstance(trial_no, int)):
        raise RecordError("trial must be an integer")
    run = obj.get("run")
    if run is not None and not isinstance(run, str):
        raise RecordError("run must be a string")

    messages = _messages(raw_messages)
    judge = obj.get("judge")
    verdict = None
    if isinstance(judge, dict) and judge.get("verdict") is not None:
        v = str(judge.get("verdict")).lower()
        if v not in ("pass", "fail", "error"):
            raise RecordError(
                f"judge.verdict must be pass, fail or error, got {judge.get('verdict')!r}"
            )
        verdict = Verdict(
            verdict=v,
            judge=str(judge.get("id") or _judge_id(judge)),
            rationale=as_text(judge.get("rationale")),
            model=judge.get("model"),
            rubric=judge.get("rubric"),
            cost_usd=_num(judge.get("cost_usd")),
        )
    usage: dict[str, Any] = obj["usage"] if isinstance(obj.get("usage"), dict) else {}
    err = obj.get("error")
    error = None
    if isinstance(err, dict):
        error = TrialError(type=_str(err.get("type")), message=_str(err.get("message")))
    elif isinstance(err, str):
        error = TrialError(message=err)
    metadata: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    return Trial(
        task_id=str(task_id),
        messages=messages,
        passed=passed,
        reward=None if reward is None else float(reward),
        run=run,
        trial=trial_no,
        reason=_str(outcome.get("reason")),
        judge=verdict,
        usage=Usage(
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cost_usd=_num(usage.get("cost_usd")),
        ),
        latency_s=_num(obj.get("latency_s")),
        error=error,
        metadata=metadata,
        instruction=_str(obj.get("instruction")),
        termination=_str(obj.get("termination")),
    )


def _judge_id(judge: dict[str, Any]) -> str:
    model = judge.get("model") or "imported"
    rubric = judge.get("rubric")
    return f"{model}:{rubric}" if rubric else str(model)


def _messages(raw_messages: list[Any]) -> list[Message]:
    # The hot loop of every import: plain type checks and positional construction on purpose.
    out: list[Message] = []
    append = out.append
    roles = _ROLES
    for i, m in enumerate(raw_messages):
        if type(m) is not dict:
            raise RecordError(f"messages[{i}] must be an object")
        get = m.get
        role = get("role")
        if role not in roles:
            raise RecordError(
                f"messages[{i}].role must be one of system, user, assistant, tool; got {role!r}"
            )
        raw_calls = get("tool_calls")
        content = get("content")
        if type(content) is not str:
            content = as_text(content)
        is_error = get("is_error")
        if is_error is None:
            is_error = role == "tool" and looks_like_error(content)
        tool_call_id = get("tool_call_id")
        if tool_call_id is not None and type(tool_call_id) is not str:
            tool_call_id = _str(tool_call_id)
        name = get("name")
        if name is not None and type(name) is not str:
            name = _str(name)
        append(
            Message(
                role,
                content,
                _calls(raw_calls, i) if raw_calls else [],
                tool_call_id,
                name,
                bool(is_error),
            )
        )
    return out


def _calls(raw_calls: Any, i: int) -> list[ToolCall]:
    if not isinstance(raw_calls, list):
        raise RecordError(f"messages[{i}].tool_calls must be a list")
    calls = []
    for j, c in enumerate(raw_calls):
        if type(c) is not dict or type(c.get("name")) is not str:
            raise RecordError(f"messages[{i}].tool_calls[{j}] needs a name")
        args = c.get("arguments")
        if type(args) is str:
            args = parse_arguments(args)
        calls.append(ToolCall(c["name"], args, c.get("id")))
    return calls


def _str(v: Any) -> str | None:
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return int(v)


def trial_to_dict(trial: Trial) -> dict[str, Any]:
    """A Trial as a native-format record; ``trial_from_dict`` reads it back to an equal Trial."""
    rec: dict[str, Any] = {"task_id": trial.task_id}
    if trial.run is not None:
        rec["run"] = trial.run
    if trial.trial is not None:
        rec["trial"] = trial.trial
    outcome: dict[str, Any] = {}
    if trial.passed is not None:
        outcome["passed"] = trial.passed
    if trial.reward is not None:
        outcome["reward"] = trial.reward
    if trial.passed is None and trial.reward is None:
        outcome["passed"] = False
    if trial.reason is not None:
        outcome["reason"] = trial.reason
    rec["outcome"] = outcome
    messages = []
    for m in trial.messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        if m.name is not None:
            d["name"] = m.name
        d["is_error"] = m.is_error
        messages.append(d)
    rec["messages"] = messages
    if trial.judge is not None:
        j = trial.judge
        rec["judge"] = {
            "verdict": j.verdict,
            "rationale": j.rationale,
            "model": j.model,
            "rubric": j.rubric,
        }
        if j.judge:
            rec["judge"]["id"] = j.judge
    u = trial.usage
    if u.input_tokens is not None or u.output_tokens is not None or u.cost_usd is not None:
        rec["usage"] = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cost_usd": u.cost_usd,
        }
    if trial.latency_s is not None:
        rec["latency_s"] = trial.latency_s
    if trial.error is not None:
        rec["error"] = {"type": trial.error.type, "message": trial.error.message}
    if trial.instruction is not None:
        rec["instruction"] = trial.instruction
    if trial.termination is not None:
        rec["termination"] = trial.termination
    if trial.metadata:
        rec["metadata"] = trial.metadata
    return rec


def record_text(trial: Trial) -> str:
    """The trial as one native JSON line: its own text when it came as one."""
    if trial.raw is not None:
        return trial.raw
    return json.dumps(trial_to_dict(trial), ensure_ascii=False, default=str)
