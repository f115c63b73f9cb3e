"""SWE-agent trajectories: one ``<instance_id>.traj`` JSON file per task attempt.

``{"environment", "trajectory": [{response, thought, action, observation, state}], "history": [...],
"info": {"exit_status", "submission", "model_stats": {...}}}``. One file is one trial, unscored: a
``.traj`` does not say whether the patch resolved the issue (SWE-bench's evaluation does).

- Messages come from ``history`` (the conversation the model saw), demonstrations (``is_demo``) left
  out. An assistant entry's ``tool_calls`` are its tool calls (function-calling agents); without them
  its ``action`` (the command it ran) is one tool call named after the command's first word, with the
  whole command as ``{"command": ...}``. The reply that follows (role ``tool``, or ``user`` after an
  action in older files) is the tool message. With no ``history``, ``trajectory`` steps are used.
- Task id: the instance id, ``replay_config.problem_statement.id`` (SWE-agent 1.x; the config may be
  a JSON string), else the file name without ``.traj`` (SWE-agent names it after the instance id).
- Run: the run folder, the one holding the ``.traj`` files (``<run>/<id>.traj``) or the instance
  folders (``<run>/<id>/<id>.traj``, SWE-agent 1.x): one run per folder, one task per instance.
- Run identity (``RUN_KEY``, metadata ``run_config``): the model (``replay_config.agent.model.name``,
  SWE-agent 1.x) and a short hash of the agent's configuration (1.x: ``replay_config.agent``; older
  files: the system prompt and the demonstrations). A file whose identity differs from the run of its
  folder's name already stored goes to a run of its own (``name (2)``), with one line saying so.
- ``info.exit_status`` is the termination; ``info.model_stats`` gives the cost (``instance_cost``) and
  tokens (``tokens_sent`` / ``tokens_received``); the submission (patch) goes to metadata.
- ``all_preds.jsonl`` (``model_name_or_path``, ``instance_id``, ``model_patch`` per line) is
  predictions, not trajectories: sniffed here so it is not read as another format, and refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import (
    IngestError,
    Kind,
    Record,
    as_dict,
    as_int,
    as_text,
    canonical,
    has_key,
    parse_arguments,
    parse_document,
    read_file,
)
from reviewer.ingest.files import path_text
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import json_problem, loads, loads_unchecked

NAME = "swe-agent"
KIND: Kind = "trials"
#: ``import --outcomes FILE`` (a SWE-bench report) gives these trials their outcomes.
JOINS_OUTCOMES = True
#: A run is one model and agent configuration: a file with another goes to a run of its own.
RUN_KEY = "run_config"

_PRED_KEYS = (b"model_patch", b"instance_id")


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with ``trajectory`` and ``history``/``info``, or SWE-bench predictions lines."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text.startswith(b"{"):
        return False
    if _is_predictions(text):
        return True
    top = text[:16384]
    return (
        has_key(top, b"trajectory")
        and (has_key(text, b"history") or has_key(text, b"info") or has_key(top, b"environment"))
        and (has_key(text, b"observation") or has_key(text, b"action") or path.suffix == ".traj")
    )


def _is_predictions(text: bytes) -> bool:
    first = text.split(b"\n", 1)[0]
    return all(has_key(first, k) for k in _PRED_KEYS) and not has_key(first, b"history")


def is_predictions(path: Path) -> bool:
    """Whether ``path`` holds SWE-bench predictions (``all_preds.jsonl``: patches), which a SWE-agent
    run folder keeps beside its ``.traj`` files."""
    try:
        with path.open("rb") as fh:
            head = fh.read(65536)
    except OSError:
        return False
    return _is_predictions(head.removeprefix(b"\xef\xbb\xbf").lstrip())


def parse(path: Path) -> Iterator[Record]:
    """The trial of one ``.traj``; IngestError for a predictions file."""
    file = str(path)
    raw = read_file(path, file)
    if _is_predictions(raw.removeprefix(b"\xef\xbb\xbf").lstrip()):
        raise IngestError(
            file,
            "SWE-agent/SWE-bench predictions (instance_id, model_patch): patches, not trajectories; "
            "import the .traj files of the run instead",
        )
    data = parse_document(raw, file, loads_unchecked)
    if not isinstance(data, dict) or not isinstance(data.get("trajectory"), list):
        raise IngestError(file, "not a SWE-agent trajectory: no trajectory list")
    if problem := json_problem(data):
        yield Skip(file, None, problem)
        return
    try:
        yield _trial(path, data)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        yield Skip(file, None, f"malformed trajectory: {exc!r}")


def _trial(path: Path, data: dict[str, Any]) -> Trial:
    info = as_dict(data.get("info"))
    history = data.get("history")
    if isinstance(history, list) and history:
        messages = _from_history(history)
    else:
        messages = _from_steps([s for s in data["trajectory"] if isinstance(s, dict)])
    stats = as_dict(info.get("model_stats"))
    cost = stats.get("instance_cost")
    exit_status = info.get("exit_status")
    model = _model(data)
    metadata: dict[str, Any] = {
        k: v
        for k, v in {
            "model": model,
            "run_config": run_config(data, model),
            "environment": data.get("environment"),
            "exit_status": exit_status,
            "api_calls": stats.get("api_calls"),
            "submission": info.get("submission"),
        }.items()
        if v is not None
    }
    error = None
    if isinstance(exit_status, str) and ("error" in exit_status or "exit_format" in exit_status):
        error = TrialError(type=exit_status, message=None)
    task_id = instance_id(data) or path.name.removesuffix(".traj")
    return Trial(
        task_id=task_id,
        run=_run_name(path, task_id),
        messages=messages,
        usage=Usage(
            input_tokens=as_int(stats.get("tokens_sent")),
            output_tokens=as_int(stats.get("tokens_received")),
            cost_usd=float(cost)
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
        ),
        error=error,
        termination=exit_status.replace("_", " ") if isinstance(exit_status, str) else None,
        metadata=metadata,
        instruction=next((m.content for m in messages if m.role == "user" and m.content), None),
        source=data,
        fingerprint=canonical(data),
    )


def _config(data: dict[str, Any]) -> dict[str, Any]:
    config = data.get("replay_config")
    if isinstance(config, str):
        try:
            config = loads(config)
        except (ValueError, RecursionError):
            return {}
    return as_dict(config)


def _model(data: dict[str, Any]) -> str | None:
    """The model a SWE-agent 1.x trajectory names (``replay_config.agent.model.name``)."""
    name = as_dict(as_dict(_config(data).get("agent")).get("model")).get("name")
    return name if isinstance(name, str) and name.strip() else None


def run_config(data: dict[str, Any], model: str | None) -> str | None:
    """What makes a trajectory's run that run: its model and a short hash of the agent's settings
    (1.x: ``replay_config.agent``; older files: the system prompt and the demonstrations, which
    differ between configurations). None when the file records neither."""
    agent = as_dict(_config(data).get("agent"))
    if agent:
        settings: Any = agent
    else:
        history = data.get("history")
        settings = [
            h.get("content")
            for h in (history if isinstance(history, list) else [])
            if isinstance(h, dict) and (h.get("role") == "system" or h.get("is_demo"))
        ]
    if not settings and model is None:
        return None
    digest = hashlib.sha256(canonical(settings)).hexdigest()[:8] if settings else "none"
    return f"model {model or 'unnamed'}, config {digest}"


def instance_id(data: dict[str, Any]) -> str | None:
    """The SWE-bench instance id a trajectory records (``replay_config.problem_statement.id``)."""
    # checked (``loads``): an id with a lone surrogate is no id
    value = as_dict(_config(data).get("problem_statement")).get("id")
    return value if isinstance(value, str) and value.strip() else None


def _run_name(path: Path, task_id: str) -> str | None:
    """The run folder: the one holding the .traj, or above it when that folder is the instance's."""
    folder = path.resolve().parent
    if folder.name in (task_id, path.name.removesuffix(".traj")):
        folder = folder.parent
    return path_text(folder.name) if folder.name else None


def _from_history(history: list[Any]) -> list[Message]:
    out: list[Message] = []
    pending: list[ToolCall] = []  # calls of the last assistant message still waiting for a result
    for h in history:
        if not isinstance(h, dict) or h.get("is_demo"):
            continue
        role = str(h.get("role") or "user")
        content = as_text(h.get("content"))
        if role == "assistant":
            calls = _calls(h)
            out.append(Message(role="assistant", content=content, tool_calls=calls))
            pending = list(calls)
            continue
        if role == "tool" or (role == "user" and pending):
            ids = h.get("tool_call_ids")
            call_id = str(ids[0]) if isinstance(ids, list) and ids else None
            call = next((c for c in pending if c.id == call_id), pending[0] if pending else None)
            out.append(
                Message(
                    role="tool",
                    content=content,
                    tool_call_id=call.id if call else call_id,
                    name=call.name if call else None,
                )
            )
            if call in pending:
                pending.remove(call)
            continue
        out.append(Message(role=role, content=content))
    return out


def _calls(h: dict[str, Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for c in h.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        fn = as_dict(c.get("function")) or c
        calls.append(
            ToolCall(
                name=str(fn.get("name", "")),
                arguments=parse_arguments(fn.get("arguments")),
                id=str(c["id"]) if c.get("id") is not None else None,
            )
        )
    if calls:
        return calls
    action = h.get("action")
    if isinstance(action, str) and action.strip():
        return [ToolCall(name=action.split()[0], arguments={"command": action.strip()})]
    return []


def _from_steps(steps: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    for step in steps:
        calls = _calls(step)
        out.append(
            Message(
                role="assistant",
                content=as_text(step.get("response") or step.get("thought")),
                tool_calls=calls,
            )
        )
        if step.get("observation") is not None:
            out.append(
                Message(
                    role="tool",
                    content=as_text(step.get("observation")),
                    name=calls[0].name if calls else None,
                )
            )
    return out
