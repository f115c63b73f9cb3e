"""OpenHands evaluation output (``output.jsonl``) and saved runtime trajectories (a JSON list of events).

``output.jsonl``: one record per line, ``{instance_id, instruction, history: [events], test_result,
metrics, error, metadata}`` (evaluation harness), or ``{issue, issue_type, history, success,
result_explanation, metrics}`` (the issue resolver). One record is one trial; a trajectory file
(``[{id, source, action | observation, ...}, ...]``) is one trial named after the file.

- Events: ``system`` is a system message, ``message`` a user or assistant message by its ``source``;
  any other action is an assistant tool call (``tool_call_metadata.function_name`` / ``tool_call_id``,
  arguments from the model response, else the action's ``args``), its ``thought`` the text; actions of
  one model response are one message. An observation is a tool message for the call its
  ``tool_call_metadata`` or ``cause`` names (``error`` observations are tool errors). ``recall`` and
  agent-state events are left out.
- Outcome: only what the record carries: ``test_result.report.resolved`` / ``report.resolved`` /
  ``resolved`` (evaluation), ``success`` (the resolver's own verdict, with ``result_explanation`` as the
  reason); otherwise unscored. The record's ``error`` is the trial's error.
- Task id: ``instance_id``; the resolver's ``owner/repo#number``; a trajectory file's name.
- Usage: ``metrics.accumulated_token_usage`` (prompt / completion tokens), ``metrics.accumulated_cost``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import (
    IngestError,
    Kind,
    Record,
    RecordError,
    as_dict,
    as_int,
    as_text,
    canonical,
    has_key,
    jsonl_lines,
    load_document,
    load_line,
    parse_arguments,
)
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import json_problem, loads_unchecked

NAME = "openhands"
KIND: Kind = "trials"
#: A run is one agent class and model (``metadata.agent_class``, ``metadata.llm_config.model``): an
#: output file with another goes to a run of its own.
RUN_KEY = "run_config"
#: ``import --outcomes FILE`` (a SWE-bench report) gives these trials their outcomes.
JOINS_OUTCOMES = True

_SKIP_ACTIONS = {"recall", "change_agent_state", "null", "agent_state_changed"}
_SKIP_OBSERVATIONS = {"recall", "agent_state_changed", "null"}
_EVENT_LIST = re.compile(rb"^\s*\[\s*\{")
_EXC = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\s*:\s*(.*)$", re.S)
#: Fields of an old-style flat event that are not the action's arguments.
_NOT_ARGS = {"action", "observation", "thought", "source", "id", "timestamp", "message", "cause"}


def sniff(path: Path, head: bytes) -> bool:
    """Output lines (``instance_id`` with ``history``/``test_result``, or the resolver's ``issue_type``),
    or a JSON list of events (``source`` and ``action``)."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if _EVENT_LIST.match(text):
        top = text[:4096]
        return has_key(top, b"source") and has_key(top, b"action") and has_key(top, b"timestamp")
    if not text.startswith(b"{"):
        return False
    first = text.split(b"\n", 1)[0]
    if has_key(first, b"model_patch") or has_key(first, b"outcome"):
        return False
    evaluation = has_key(first, b"instance_id") and (
        has_key(first, b"history") or has_key(first, b"test_result")
    )
    resolver = (
        has_key(first, b"issue_type")
        and has_key(first, b"issue")
        and has_key(first, b"instruction")
    )
    return evaluation or resolver


def parse(path: Path) -> Iterator[Record]:
    """One trial per output line, or the one trial of an event-list file."""
    file = str(path)
    try:
        with path.open("rb") as fh:
            start = fh.read(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    except OSError as exc:
        raise IngestError(file, f"cannot read: {exc.strerror or exc}") from None
    if start.startswith(b"["):
        events = load_document(path, loads_unchecked)
        if not isinstance(events, list):
            raise IngestError(file, "not a list of OpenHands events")
        if problem := json_problem(events):
            yield Skip(file, None, problem)
            return
        record = {"history": events}
        yield _record(file, None, record, task_id=path.stem)
        return
    for item in jsonl_lines(path):
        if isinstance(item, Skip):
            yield item
            continue
        lineno, line = item
        try:
            obj = load_line(line)
        except RecordError as exc:
            yield Skip(file, lineno, str(exc))
            continue
        if not isinstance(obj, dict):
            yield Skip(file, lineno, f"not a JSON object ({type(obj).__name__})")
            continue
        yield _record(file, lineno, obj, task_id=None)


def _record(file: str, lineno: int | None, rec: dict[str, Any], task_id: str | None) -> Record:
    try:
        return _convert(file, lineno, rec, task_id)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return Skip(file, lineno, f"malformed record: {exc!r}")


def _convert(file: str, lineno: int | None, rec: dict[str, Any], task_id: str | None) -> Record:
    if task_id is None:
        task_id = _task_id(rec)
    if task_id is None:
        return Skip(file, lineno, "no instance_id (nor issue owner/repo/number)")
    history = rec.get("history")
    if not isinstance(history, list):
        return Skip(file, lineno, f"{task_id}: no history list")
    messages = _events(history)
    passed, reason = _outcome(rec)
    metrics = as_dict(rec.get("metrics"))
    tokens = as_dict(metrics.get("accumulated_token_usage"))
    cost = metrics.get("accumulated_cost")
    meta = as_dict(rec.get("metadata"))
    model = as_dict(meta.get("llm_config")).get("model")
    metadata: dict[str, Any] = {
        k: v
        for k, v in {
            "model": model,
            "agent_class": meta.get("agent_class"),
            "run_config": ", ".join(
                f"{label} {value}"
                for label, value in (("agent", meta.get("agent_class")), ("model", model))
                if isinstance(value, str) and value
            )
            or None,
            "git_patch": as_dict(rec.get("test_result")).get("git_patch") or rec.get("git_patch"),
            "test_result": {
                k: v for k, v in as_dict(rec.get("test_result")).items() if k != "git_patch"
            }
            or None,
        }.items()
        if v is not None
    }
    error = None
    if isinstance(rec.get("error"), str) and rec["error"].strip():
        match = _EXC.match(rec["error"].strip())
        error = (
            TrialError(type=match.group(1), message=match.group(2))
            if match
            else TrialError(type="error", message=rec["error"].strip())
        )
    instruction = rec.get("instruction")
    return Trial(
        task_id=task_id,
        messages=messages,
        passed=passed,
        reason=reason if passed is False else None,
        usage=Usage(
            input_tokens=as_int(tokens.get("prompt_tokens")),
            output_tokens=as_int(tokens.get("completion_tokens")),
            cost_usd=float(cost)
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
        ),
        error=error,
        metadata=metadata,
        instruction=instruction if isinstance(instruction, str) else None,
        source_line=lineno,
        source=rec,
        fingerprint=canonical(rec),
    )


def _task_id(rec: dict[str, Any]) -> str | None:
    if rec.get("instance_id") is not None:
        return str(rec["instance_id"])
    issue = as_dict(rec.get("issue"))
    if issue.get("repo") is not None and issue.get("number") is not None:
        owner = f"{issue['owner']}/" if issue.get("owner") else ""
        return f"{owner}{issue['repo']}#{issue['number']}"
    return None


def _outcome(rec: dict[str, Any]) -> tuple[bool | None, str | None]:
    test_result = as_dict(rec.get("test_result"))
    for holder in (
        as_dict(test_result.get("report")),
        as_dict(rec.get("report")),
        test_result,
        rec,
    ):
        if isinstance(holder.get("resolved"), bool):
            return holder["resolved"], "issue not resolved (SWE-bench report)"
    if isinstance(rec.get("success"), bool):
        explanation = rec.get("result_explanation")
        return rec["success"], explanation if isinstance(explanation, str) else None
    return None, None


def _events(history: list[Any]) -> list[Message]:
    out: list[Message] = []
    calls_by_event: dict[str, ToolCall] = {}
    last_response: str | None = None
    last_message: Message | None = None
    pending: ToolCall | None = None
    for e in history:
        if not isinstance(e, dict):
            continue
        action, observation = e.get("action"), e.get("observation")
        args = e["args"] if isinstance(e.get("args"), dict) else e
        tcm = as_dict(e.get("tool_call_metadata"))
        if isinstance(action, str):
            if action in _SKIP_ACTIONS:
                continue
            if action in ("system", "message"):
                text = as_text(args.get("content")) or as_text(e.get("message"))
                role = (
                    "system"
                    if action == "system"
                    else ("user" if e.get("source", "user") == "user" else "assistant")
                )
                out.append(Message(role=role, content=text))
                last_response, last_message = None, None
                continue
            call, thought, response_id = _call(action, args, tcm)
            if response_id and response_id == last_response and last_message is not None:
                last_message.tool_calls.append(call)
            else:
                last_message = Message(role="assistant", content=thought, tool_calls=[call])
                out.append(last_message)
            last_response = response_id
            if e.get("id") is not None:
                calls_by_event[str(e["id"])] = call
            pending = call
        elif isinstance(observation, str):
            if observation in _SKIP_OBSERVATIONS:
                continue
            source = calls_by_event.get(str(e.get("cause"))) if e.get("cause") is not None else None
            call_id = tcm.get("tool_call_id") or (source.id if source else None)
            if source is None and not tcm and pending is not None:
                source = pending
                call_id = source.id
            name = tcm.get("function_name") or (source.name if source else observation)
            exit_code = as_dict(as_dict(e.get("extras")).get("metadata")).get(
                "exit_code", e.get("exit_code")
            )
            out.append(
                Message(
                    role="tool",
                    content=as_text(e.get("content")) or as_text(e.get("message")),
                    tool_call_id=str(call_id) if call_id is not None else None,
                    name=str(name),
                    is_error=observation == "error"
                    or (isinstance(exit_code, int) and exit_code not in (0, -1)),
                )
            )
            pending = None
    return out


def _call(
    action: str, args: dict[str, Any], tcm: dict[str, Any]
) -> tuple[ToolCall, str, str | None]:
    """The tool call of an action event, the assistant's text for it, and its model response id."""
    call_id = tcm.get("tool_call_id")
    name = str(tcm.get("function_name") or action)
    response = as_dict(tcm.get("model_response"))
    choices = response.get("choices")
    message = (
        as_dict(choices[0].get("message"))
        if isinstance(choices, list) and choices and isinstance(choices[0], dict)
        else {}
    )
    arguments: Any = None
    for c in message.get("tool_calls") or []:
        if isinstance(c, dict) and c.get("id") == call_id:
            arguments = parse_arguments(as_dict(c.get("function")).get("arguments"))
    if arguments is None:
        arguments = {
            k: v for k, v in args.items() if k not in _NOT_ARGS and v not in (None, "", {})
        }
    thought = as_text(args.get("thought")) or as_text(message.get("content"))
    if not thought and action == "finish":
        thought = as_text(args.get("final_thought")) or as_text(args.get("message"))
    response_id = response.get("id")
    return (
        ToolCall(name=name, arguments=arguments, id=str(call_id) if call_id is not None else None),
        thought,
        str(response_id) if response_id else None,
    )
