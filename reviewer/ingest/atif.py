"""Harbor ATIF trajectories (Agent Trajectory Interchange Format): ``trajectory.json``.

A JSON object with ``schema_version`` ``"ATIF-v1.x"``, ``session_id``, ``agent``, ``steps`` and
``final_metrics``. One file is one trial:

- a ``system`` / ``user`` step is a system / user message; an ``agent`` step is an assistant message
  (``reasoning_content`` in front as ``[thinking] …``) with its ``tool_calls`` (``function_name``,
  ``arguments``, ``tool_call_id``), followed by one tool message per ``observation.results[]`` entry
  (``source_call_id`` names the call; an observation of an agent without function calling, such as
  Terminus's terminal output, is a tool message with no call id). A step whose observation points at
  sub-trajectories (``subagent_trajectory_ref``), such as a context summarization, is a system marker.
- Continuations (``continued_trajectory_ref``, files ``trajectory.cont-N.json`` written after context
  summarization) are JOINED into the trial of the first file: their steps follow a system marker
  ``── context summarized: continued in <file> ──``; a copied step (``is_copied_context``) that repeats
  a step of the earlier file is left out, the copied handoff (summary, questions, answers) is kept. A continuation file imported on its own, beside the file that names it, is
  skipped with a reason; without that file it is read as a trial of its own.
- Outcome: ``verifier_result.rewards.reward`` of Harbor's ``result.json`` next to the trajectory, or
  one folder up from ``agent/`` (Harbor writes ``<trial>/agent/trajectory.json`` and
  ``<trial>/result.json``), its ``exception_info`` the error; without a result.json, unscored; a
  damaged result.json skips the trial, naming it (its outcome is unknown). A trial folder with a
  result.json and no trajectory (the agent crashed before writing one) is a trial of that file
  alone: an infrastructure error, or graded by its reward, with no conversation.
- Task id: ``task_name`` of result.json, else the trial folder (``<task>__<id>``) of a file named
  ``trajectory.json``, else the file name up to ``.trajectory``.
- A Harbor job (``<job>/<trial>/agent/trajectory.json`` beside ``<job>/<trial>/result.json``) is one
  run named after the job folder, the folder holding the trial folders; each trial's id hashes its
  trial folder's name and result.json with the trajectory, so two trials whose agents wrote the
  same steps but were graded apart stay two trials. Harbor's own ``result.json`` / ``config.json``
  files, of a trial or of the job, are read with the trajectories they describe and never reported
  as files of an unknown format (``harbor_side_file``).
- Usage: ``final_metrics`` totals (summed over continuations), else the steps' ``metrics``.
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
    as_dict,
    as_int,
    as_text,
    canonical,
    load_document,
    parse_arguments,
)
from reviewer.ingest.files import path_text
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import json_problem, loads_unchecked

NAME = "atif"
KIND: Kind = "trials"

_SCHEMA = re.compile(rb'"schema_version"\s*:\s*"ATIF-')
_CONT = re.compile(r"^(?P<base>.+)\.cont-(?P<n>\d+)\.json$")
_MAX_CONTINUATIONS = 100


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object whose ``schema_version`` starts with ``ATIF-``; or Harbor's ``result.json`` of
    a trial whose agent wrote no trajectory (a trial that crashed first: ``result_only``)."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text.startswith(b"{"):
        return False
    return bool(_SCHEMA.search(text[:16384])) or _trial_result_alone(path, text)


#: What Harbor's result.json of a trial names (a job's names no single trial).
_TRIAL_RESULT = re.compile(rb'"trial_name"\s*:\s*"')


def _trial_result_alone(path: Path, head: bytes) -> bool:
    """``path`` is Harbor's result.json of one trial (it names the trial) and no trajectory lies in
    its trial folder."""
    return (
        path.name == "result.json"
        and bool(_TRIAL_RESULT.search(head[:16384]))
        and not _holds_trajectory(path.parent)
        and not _holds_trials(path.parent)  # a job's result.json may name its trials too
    )


def _holds_trials(folder: Path) -> bool:
    """Whether ``folder`` is a Harbor job's: a folder of its own holds a result.json."""
    try:
        return any(c.is_dir() and (c / "result.json").is_file() for c in folder.iterdir())
    except OSError:
        return False


def _holds_trajectory(trial: Path) -> bool:
    """Whether a trial folder holds a trajectory, beside its result.json or in ``agent/``, by any
    name this reader takes (``trajectory.json``, ``<name>.trajectory.json``, continuations)."""
    try:
        return any(
            folder.is_dir() and any(folder.glob("*trajectory*.json"))
            for folder in (trial, trial / "agent")
        )
    except OSError:
        return False


def continuation_beside_base(path: Path) -> bool:
    """``path`` is a continuation (``<name>.cont-N.json``) lying beside the file it continues, which
    reads it: an import walking the folder passes over it without a word."""
    cont = _CONT.match(path.name)
    return cont is not None and path.with_name(cont.group("base") + ".json").is_file()


def _load(path: Path) -> dict[str, Any]:
    file = str(path)
    data = load_document(path, loads_unchecked)
    if not isinstance(data, dict):
        raise IngestError(file, f"not an ATIF trajectory object ({type(data).__name__})")
    if not isinstance(data.get("steps"), list):
        raise IngestError(file, "ATIF trajectory has no steps list")
    return data


def parse(path: Path) -> Iterator[Record]:
    """The trial of one trajectory, its continuations joined; or of Harbor's result.json of a trial
    with no trajectory."""
    file = str(path)
    if path.name == "result.json" and not _holds_trajectory(path.parent):
        yield from _result_only(path)
        return
    data = _load(path)
    cont = _CONT.match(path.name)
    if cont:
        base = path.with_name(cont.group("base") + ".json")
        if base.is_file():
            yield Skip(
                file,
                None,
                f"continuation of {base.name} (context summarization): read with that file",
            )
            return
    parts: list[tuple[Path, dict[str, Any]]] = [(path, data)]
    skips: list[Skip] = []
    current, seen = data, {path.resolve()}
    while isinstance(current.get("continued_trajectory_ref"), str):
        ref = current["continued_trajectory_ref"]
        nxt = _continuation(parts[-1][0], ref)
        if nxt is None or nxt.resolve() in seen or len(parts) > _MAX_CONTINUATIONS:
            skips.append(Skip(file, None, f"continuation {ref} not found beside the trajectory"))
            break
        seen.add(nxt.resolve())
        try:
            current = _load(nxt)
        except IngestError as exc:
            skips.append(Skip(exc.file, exc.line, exc.reason))
            break
        parts.append((nxt, current))
    yield from skips
    for part_path, part in parts:
        if problem := json_problem(part):
            yield Skip(str(part_path), None, problem)
            return
    result = _result(path)
    if isinstance(result, Skip):
        yield result  # its outcome unknown: never guessed as unscored
        return
    try:
        yield _trial(path, parts, result)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        yield Skip(file, None, f"malformed trajectory: {exc!r}")


def _result_only(path: Path) -> Iterator[Record]:
    """A Harbor trial whose agent wrote no trajectory (it crashed setting up, or timed out before
    its first step): its result.json alone, an infrastructure error when it holds an exception
    and no reward, else graded by its reward, with no conversation."""
    result = _result_file(path)
    if isinstance(result, Skip):
        yield result
        return
    if not isinstance(result.get("trial_name"), str):  # ({} too: not Harbor's after all)
        yield Skip(str(path), None, "Harbor's result.json names no trial (trial_name)")
        return
    marker = Message(
        role="system",
        content="── no trajectory: the agent wrote none; Harbor's result.json alone ──",
    )
    try:
        yield _trial(path, [], result, messages=[marker])
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        yield Skip(str(path), None, f"malformed result: {exc!r}")


def _continuation(path: Path, ref: str) -> Path | None:
    """The file ``ref`` names, next to ``path``; also ``<name>.cont-N.json`` for a renamed copy."""
    name = Path(ref).name
    direct = path.parent / name
    if direct.is_file():
        return direct
    tail = name.removeprefix("trajectory")
    stem = path.name.removesuffix(".json")
    base = _CONT.match(path.name)
    if base:
        stem = base.group("base")
    renamed = path.parent / (stem + tail)
    return renamed if tail != name and renamed.is_file() else None


def _trial(
    path: Path,
    parts: list[tuple[Path, dict[str, Any]]],
    result: dict[str, Any],
    messages: list[Message] | None = None,
) -> Trial:
    data = parts[0][1] if parts else {}
    agent = as_dict(data.get("agent"))
    names: dict[str, str] = {}
    messages = messages or []
    models: list[str] = []
    earlier: set[tuple[str, str]] = set()
    step_usage: dict[str, Any] = {"in": 0, "out": 0, "cost": 0.0, "seen": False, "cost_seen": False}
    for index, (part_path, part) in enumerate(parts):
        if index:
            messages.append(
                Message(
                    role="system",
                    content=f"── context summarized: continued in {part_path.name} ──",
                )
            )
        for step in part["steps"]:
            if not isinstance(step, dict):
                continue
            step_key = (str(step.get("source")), as_text(step.get("message")))
            if index and step.get("is_copied_context") and step_key in earlier:
                continue  # the same step as before the summarization, copied
            earlier.add(step_key)
            model = step.get("model_name")
            if isinstance(model, str) and model not in models:
                models.append(model)
            metrics = as_dict(step.get("metrics"))
            for key, field in (("in", "prompt_tokens"), ("out", "completion_tokens")):
                if as_int(metrics.get(field)) is not None:
                    step_usage[key] += metrics[field]
                    step_usage["seen"] = True
            if _num(metrics.get("cost_usd")) is not None:
                step_usage["cost"] += metrics["cost_usd"]
                step_usage["cost_seen"] = True
            messages.extend(_step(step, names))
    verifier = as_dict(result.get("verifier_result"))
    reward = _num(as_dict(verifier.get("rewards")).get("reward"))
    exc = as_dict(result.get("exception_info"))
    error = (
        TrialError(
            type=str(exc.get("exception_type") or "exception"),
            message=str(exc.get("exception_message") or "") or None,
        )
        if exc
        else None
    )
    metadata: dict[str, Any] = {
        k: v
        for k, v in {
            "schema_version": data.get("schema_version"),
            "session_id": data.get("session_id"),
            "agent": agent.get("name"),
            "agent_version": agent.get("version"),
            "model": agent.get("model_name") or (", ".join(models) if models else None),
        }.items()
        if v is not None
    }
    if len(parts) > 1:
        metadata["continuations"] = [p.name for p, _ in parts[1:]]
    if result:
        metadata["result"] = {
            k: result[k]
            for k in ("trial_name", "task_name", "verifier_result", "exception_info")
            if k in result
        }
    trial_folder = path.parent if not parts else _trial_folder(path)
    fingerprint = canonical([p for _, p in parts])
    if trial_folder is not None:
        # two Harbor trials may hold byte-identical trajectories: their folder and grading tell
        # them apart
        fingerprint = canonical(
            {"trajectory": [p for _, p in parts], "trial": trial_folder.name, "result": result}
        )
    return Trial(
        task_id=_task_id(path, result),
        run=_job_name(trial_folder),
        messages=messages,
        reward=reward,
        error=error,
        # Harbor's exception with no verifier reward: the trial crashed before it could be graded
        infra_error=error is not None and reward is None,
        usage=_usage(parts, step_usage) if parts else _agent_result_usage(result),
        metadata=metadata,
        instruction=next((m.content for m in messages if m.role == "user" and m.content), None),
        source=result,
        fingerprint=fingerprint,
    )


def _step(step: dict[str, Any], names: dict[str, str]) -> list[Message]:
    source = str(step.get("source") or "user")
    text = as_text(step.get("message"))
    observation = as_dict(step.get("observation"))
    results = [r for r in observation.get("results") or [] if isinstance(r, dict)]
    refs = [r for r in results if r.get("subagent_trajectory_ref")]
    if source != "agent":
        role = "system" if source == "system" else "user"
        out = [Message(role=role, content=text)]
        for ref in refs:
            out.append(Message(role="system", content=f"▸ sub-trajectories: {_refs(ref)}"))
        return out
    reasoning = step.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        text = f"[thinking] {reasoning}\n{text}" if text else f"[thinking] {reasoning}"
    calls: list[ToolCall] = []
    for c in step.get("tool_calls") or []:
        if not isinstance(c, dict):
            continue
        call = ToolCall(
            name=str(c.get("function_name") or c.get("name") or ""),
            arguments=parse_arguments(c.get("arguments")),
            id=str(c["tool_call_id"]) if c.get("tool_call_id") is not None else None,
        )
        if call.id:
            names[call.id] = call.name
        calls.append(call)
    out = [Message(role="assistant", content=text, tool_calls=calls)]
    for r in results:
        if r.get("subagent_trajectory_ref"):
            out.append(Message(role="system", content=f"▸ sub-trajectories: {_refs(r)}"))
            continue
        call_id = r.get("source_call_id")
        call_id = str(call_id) if call_id is not None else None
        out.append(
            Message(
                role="tool",
                content=as_text(r.get("content")),
                tool_call_id=call_id,
                name=names.get(call_id) if call_id else None,
            )
        )
    return out


def _refs(result: dict[str, Any]) -> str:
    refs = result.get("subagent_trajectory_ref")
    items = refs if isinstance(refs, list) else [refs]
    return ", ".join(
        str(as_dict(r).get("trajectory_path") or as_dict(r).get("session_id") or r) for r in items
    )


def _trial_folder(path: Path) -> Path | None:
    """The Harbor trial folder of a trajectory: ``<trial>/agent/`` holding it, or the folder
    holding it beside a ``result.json``; None for a trajectory on its own."""
    if path.parent.name == "agent":
        return path.parent.parent
    return path.parent if (path.parent / "result.json").is_file() else None


def _job_name(trial_folder: Path | None) -> str | None:
    """A Harbor job's run name: the folder holding the trial folders (None without one)."""
    if trial_folder is None:
        return None
    job = trial_folder.resolve().parent
    return path_text(job.name) if job.name else None


#: Harbor's own files beside the trajectories: a trial's or a job's result and config.
_HARBOR_SIDE_FILES = {"result.json", "config.json"}


def harbor_side_file(path: Path) -> bool:
    """True for Harbor's ``result.json`` / ``config.json`` of a trial (beside ``agent/`` or a
    ``trajectory.json``) or of a job (a folder of such trials): read with the trajectories, so an
    import walking the folder passes over them without a word."""
    if path.name not in _HARBOR_SIDE_FILES:
        return False
    folder = path.parent

    def harbor_trial(trial: Path) -> bool:
        return _holds_trajectory(trial) or _names_a_trial(trial / "result.json")

    try:
        if harbor_trial(folder):
            return True
        return any(c.is_dir() and harbor_trial(c) for c in folder.iterdir())
    except OSError:
        return False


def _names_a_trial(result: Path) -> bool:
    """Harbor's result.json of one trial, by its first bytes."""
    try:
        with result.open("rb") as fh:
            return bool(_TRIAL_RESULT.search(fh.read(16384)))
    except OSError:
        return False


def _result(path: Path) -> dict[str, Any] | Skip:
    """Harbor's result.json beside the trajectory, or one folder up from ``agent/``; {} when there
    is none; a Skip naming it when it is damaged (cut short by a crash, NaN, a lone surrogate...):
    the trial's outcome is then unknown, and is never read as unscored."""
    folders = [path.parent, path.parent.parent] if path.parent.name == "agent" else [path.parent]
    for folder in folders:
        candidate = folder / "result.json"
        if candidate.is_file():
            return _result_file(candidate)
    return {}


#: What Harbor's result.json of a trial holds, one key at least: a file of that name without any
#: is some other program's, and the trajectory beside it is read as having none.
_HARBOR_KEYS = ("task_name", "trial_name", "verifier_result", "exception_info", "agent_result")


def _result_file(candidate: Path) -> dict[str, Any] | Skip:
    file = str(candidate)
    try:
        data = load_document(candidate, loads_unchecked)
    except IngestError as exc:
        return Skip(exc.file, exc.line, f"{exc.reason}; the trial's outcome is unknown")
    if not isinstance(data, dict) or not any(k in data for k in _HARBOR_KEYS):
        return {}  # not Harbor's: the trial has no result of its
    if problem := json_problem(data):
        return Skip(file, None, f"{problem}; the trial's outcome is unknown")
    return data


def _task_id(path: Path, result: dict[str, Any]) -> str:
    if isinstance(result.get("task_name"), str) and result["task_name"]:
        return str(result["task_name"])
    if path.name in ("trajectory.json", "result.json"):
        folder = path.parent.parent if path.parent.name == "agent" else path.parent
        return folder.name.split("__")[0] or folder.name
    return path.name.split(".trajectory")[0] if ".trajectory" in path.name else path.stem


def _agent_result_usage(result: dict[str, Any]) -> Usage:
    """A trial's usage as Harbor's result.json totals it (``agent_result``): what a trial with no
    trajectory spent before it stopped."""
    totals = as_dict(result.get("agent_result"))
    return Usage(
        input_tokens=as_int(totals.get("n_input_tokens")),
        output_tokens=as_int(totals.get("n_output_tokens")),
        cost_usd=_num(totals.get("cost_usd")),
    )


def _usage(parts: list[tuple[Path, dict[str, Any]]], steps: dict[str, Any]) -> Usage:
    totals = [as_dict(p.get("final_metrics")) for _, p in parts]
    if all(as_int(t.get("total_prompt_tokens")) is not None for t in totals):
        costs = [_num(t.get("total_cost_usd")) for t in totals]
        return Usage(
            input_tokens=sum(t["total_prompt_tokens"] for t in totals),
            output_tokens=sum(as_int(t.get("total_completion_tokens")) or 0 for t in totals),
            cost_usd=sum(c for c in costs if c is not None) if any(costs) else None,
        )
    return Usage(
        input_tokens=steps["in"] if steps["seen"] else None,
        output_tokens=steps["out"] if steps["seen"] else None,
        cost_usd=steps["cost"] if steps["cost_seen"] else None,
    )


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
