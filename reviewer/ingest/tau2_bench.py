"""tau2-bench results: ``{timestamp, info, tasks, simulations: [...]}``, one simulation per trial."""

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
    as_text,
    canonical,
    load_document,
    parse_arguments,
)
from reviewer.ingest.reading import place
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import json_problem, loads_unchecked, text_or_none

NAME = "tau2-bench"
KIND: Kind = "trials"
KEYS = ("simulations", "tasks", "info")
#: A run is one agent (model, implementation) against one user simulator: another goes apart.
RUN_KEY = "run_config"

_OBJECT_START = re.compile(rb"^\s*\{")
#: Keys of tau2's ``info`` block, which is written before the (possibly huge) ``tasks`` list.
_INFO_KEYS = (b'"agent_info"', b'"user_info"', b'"environment_info"')
#: Termination reasons after which tau2 itself does not score the rollout.
_ERROR_TERMINATIONS = ("context_window_exceeded",)
#: Terminations tau2-bench itself leaves out of its metrics: the harness failed, not the agent.
_INFRA_TERMINATIONS = ("infrastructure_error", "context_window_exceeded")


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object with ``simulations`` or with tau2's ``info`` (agent_info, user_info, environment_info)."""
    if not _OBJECT_START.match(head.removeprefix(b"\xef\xbb\xbf")):
        return False
    if b'"simulations"' in head and (b'"tasks"' in head or b'"info"' in head):
        return True
    return all(key in head for key in _INFO_KEYS)


def parse(path: Path) -> Iterator[Record]:
    """Trials of a tau2 results file (or of its ``simulations/`` folder in the "dir" format)."""
    file = str(path)
    data = _load(path, file)
    if not isinstance(data, dict):
        raise IngestError(file, "not a tau2-bench results object")
    tasks = {
        str(t["id"]): t
        for t in (data["tasks"] if isinstance(data.get("tasks"), list) else [])
        if isinstance(t, dict) and t.get("id") is not None
    }
    unfit = {tid: problem for tid, t in tasks.items() if (problem := json_problem(t))}
    info = as_dict(data.get("info"))
    run_meta = _run_metadata(info)
    if problem := json_problem(run_meta):
        raise IngestError(file, f"info: {problem}")
    sims = data.get("simulations")
    if isinstance(sims, list) and sims:
        reached = place()
        reached.total = len(sims)
        for index, sim in enumerate(sims, start=1):
            reached.done = index
            yield _checked(file, index, sim, tasks, unfit, run_meta)
        return
    folder = path.parent / "simulations"
    if sims in (None, []) and folder.is_dir():
        for index, sim_path in enumerate(sorted(folder.glob("*.json")), start=1):
            try:
                sim = _load(sim_path, str(sim_path))
            except IngestError as exc:
                yield Skip(str(sim_path), None, exc.reason)
                continue
            yield _checked(str(sim_path), index, sim, tasks, unfit, run_meta)
        return
    raise IngestError(file, "no simulations" if sims in (None, []) else "simulations is not a list")


def _checked(
    file: str,
    index: int,
    sim: Any,
    tasks: dict[str, Any],
    unfit: dict[str, str],
    run_meta: dict[str, Any],
) -> Record:
    """A simulation as a Trial, or a Skip when it (or its task) holds a value the store cannot keep."""
    problem = json_problem(sim)
    if problem is None and isinstance(sim, dict):
        task_problem = unfit.get(str(sim.get("task_id")))
        problem = f"task {sim.get('task_id')}: {task_problem}" if task_problem else None
    if problem:
        return Skip(file, None, f"{_where(index, sim)}: {problem}")
    return _simulation(file, index, sim, tasks, run_meta)


def _where(index: int, sim: Any) -> str:
    """A simulation named for a skip: its place in the file and its id (a results file has no lines
    worth naming, and a simulations/ folder holds one per file)."""
    sim_id = sim.get("id") if isinstance(sim, dict) else None
    if isinstance(sim_id, str | int) and not isinstance(sim_id, bool) and str(sim_id):
        text = str(sim_id)
        return f"simulation {index} (id {text[:60]}{'…' if len(text) > 60 else ''})"
    return f"simulation {index}"


def _load(path: Path, file: str) -> Any:
    """The whole file parsed (values are checked per simulation, so one bad value skips only its
    simulation); IngestError for a file too big to read whole, not UTF-8, invalid or nested too deep."""
    return load_document(path, loads_unchecked, file)


def _run_metadata(info: dict[str, Any]) -> dict[str, Any]:
    def sub(key: str) -> dict[str, Any]:
        value = info.get(key)
        return value if isinstance(value, dict) else {}

    agent, user = sub("agent_info"), sub("user_info")
    meta = {
        "domain": sub("environment_info").get("domain_name"),
        "agent_llm": agent.get("llm"),
        "user_llm": user.get("llm"),
        "git_commit": info.get("git_commit"),
        # the model column, and what makes the run that run (RUN_KEY)
        "model": agent.get("llm") if isinstance(agent.get("llm"), str) else None,
    }
    parts = [
        f"{label} {value}"
        for label, value in (
            ("agent", agent.get("implementation")),
            ("model", agent.get("llm")),
            ("user", user.get("llm")),
        )
        if isinstance(value, str) and value
    ]
    if parts:
        meta["run_config"] = ", ".join(parts)
    return {k: v for k, v in meta.items() if v is not None}


def _simulation(
    file: str, index: int, sim: Any, tasks: dict[str, Any], run_meta: dict[str, Any]
) -> Record:
    try:
        return _convert(file, index, sim, tasks, run_meta)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return Skip(file, None, f"{_where(index, sim)}: malformed simulation: {exc!r}")


def _convert(
    file: str, index: int, sim: Any, tasks: dict[str, Any], run_meta: dict[str, Any]
) -> Record:
    def skip(reason: str) -> Skip:
        return Skip(file, None, f"{_where(index, sim)}: {reason}")

    if not isinstance(sim, dict):
        return skip(f"not a JSON object ({type(sim).__name__})")
    if sim.get("task_id") is None:
        return skip("no task_id")
    task_id = str(sim["task_id"])
    termination = sim.get("termination_reason")
    termination = str(termination) if termination is not None else None
    reward_info = as_dict(sim.get("reward_info"))
    reward = reward_info.get("reward")
    # tau2 leaves these out of its denominators: the harness failed, not the agent
    infra = termination in _INFRA_TERMINATIONS
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        # not evaluated (an unfinished run, evaluation switched off): an unscored trial, kept
        reward = None
    raw_messages = sim.get("messages")
    if not isinstance(raw_messages, list):
        return skip(f"task {task_id}: no messages list (full-duplex ticks are not read)")
    try:
        messages = _messages(raw_messages)
    except (TypeError, ValueError, AttributeError) as exc:
        return skip(f"task {task_id}: malformed messages: {exc}")
    task = tasks.get(task_id)
    trial = sim.get("trial")
    metadata = dict(run_meta)
    for key in ("id", "seed", "user_cost", "mode"):
        if sim.get(key) is not None:
            metadata["simulation_id" if key == "id" else key] = sim[key]
    metadata["reward_info"] = reward_info
    if task is not None:
        metadata["task"] = task
    note = as_dict(reward_info.get("info")).get("note")
    error = None
    if termination and (termination.endswith("_error") or termination in _ERROR_TERMINATIONS):
        error = TrialError(type=termination, message=note if isinstance(note, str) else None)
    reason: str | None = None
    if infra:
        reason = f"infrastructure error: {(termination or '').replace('_', ' ')}"
        if error is not None and error.message:
            reason += f": {error.message}"
    elif reward is None:
        reason = f"not scored: no reward_info.reward (termination: {termination or 'unknown'})"
    elif reward < 1 - 1e-6:
        reason = _reason(float(reward), reward_info)
    return Trial(
        task_id=task_id,
        messages=messages,
        reward=None if reward is None else float(reward),
        infra_error=infra,
        trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else None,
        reason=reason,
        usage=_usage(raw_messages, sim.get("agent_cost")),
        latency_s=_number(sim.get("duration")),
        error=error,
        metadata=metadata,
        instruction=_instruction(task),
        termination=_termination(termination, messages),
        source_line=index,
        source=sim,
        fingerprint=canonical(sim),
    )


def _messages(raw: list[Any]) -> list[Message]:
    """tau2 messages: tool calls carry dict arguments; a tool result's ``id`` is its call's id."""
    flat: list[dict[str, Any]] = []
    for m in raw:
        if isinstance(m, dict) and isinstance(m.get("tool_messages"), list):
            flat.extend(t for t in m["tool_messages"] if isinstance(t, dict))
        elif isinstance(m, dict):
            flat.append(m)
    names: dict[str, str] = {}
    out: list[Message] = []
    for m in flat:
        role = str(m.get("role") or "user")
        calls = []
        for c in m.get("tool_calls") or []:
            if isinstance(c, dict):
                call = ToolCall(
                    name=str(c.get("name", "")),
                    arguments=parse_arguments(c.get("arguments")),
                    id=text_or_none(c.get("id")),
                )
                if call.id:
                    names[str(call.id)] = call.name
                calls.append(call)
        call_id = m.get("id") if role == "tool" else None
        out.append(
            Message(
                role=role,
                content=as_text(m.get("content")),
                tool_calls=calls,
                tool_call_id=str(call_id) if call_id is not None else None,
                name=names.get(str(call_id)) if call_id is not None else None,
                is_error=role == "tool" and bool(m.get("error")),
            )
        )
    return out


def _termination(reason: str | None, messages: list[Message]) -> str | None:
    """tau2's ``termination_reason`` in words; a user stop on ``###TRANSFER###`` is a transfer to a human."""
    if reason == "user_stop":
        last_user = next((m for m in reversed(messages) if m.role == "user"), None)
        if last_user is not None and "###TRANSFER###" in last_user.content:
            return "transfer to human"
    return reason.replace("_", " ") if reason else None


def _usage(raw: list[Any], agent_cost: Any) -> Usage:
    """Agent cost from ``agent_cost``; tokens summed over the assistant messages' ``usage``."""
    totals = {"in": 0, "out": 0}
    seen = False
    for m in raw:
        usage = m.get("usage") if isinstance(m, dict) and m.get("role") == "assistant" else None
        if not isinstance(usage, dict):
            continue
        for key, names in (
            ("in", ("prompt_tokens", "input_tokens")),
            ("out", ("completion_tokens", "output_tokens")),
        ):
            value = next((usage[n] for n in names if isinstance(usage.get(n), int)), None)
            if value is not None:
                totals[key] += value
                seen = True
    return Usage(
        input_tokens=totals["in"] if seen else None,
        output_tokens=totals["out"] if seen else None,
        cost_usd=_number(agent_cost),
    )


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


_CHECKS = {
    "DB": "db_check",
    "ACTION": "action_checks",
    "COMMUNICATE": "communicate_checks",
    "NL_ASSERTION": "nl_assertions",
    "ENV_ASSERTION": "env_assertions",
}


def _reason(reward: float, info: dict[str, Any]) -> str:
    """The failed checks in a line, those that gate the reward (``reward_basis``) first."""
    basis = info.get("reward_basis")
    gating = (
        [_CHECKS[str(b)] for b in basis if str(b) in _CHECKS] if isinstance(basis, list) else []
    )
    kinds = gating + [k for k in _CHECKS.values() if k not in gating]
    parts: list[str] = []
    for kind in kinds:
        value = info.get(kind)
        if kind == "db_check":
            if isinstance(value, dict) and value.get("db_match") is False:
                parts.append("database state did not match expected")
            continue
        failed = [c for c in value if isinstance(c, dict)] if isinstance(value, list) else []
        if kind == "action_checks":
            names = [
                str(as_dict(c.get("action")).get("name"))
                for c in failed
                if c.get("action_match") is False
            ]
            if names:
                parts.append(f"expected actions not taken: {', '.join(names[:4])}")
        elif kind == "communicate_checks":
            missed = [str(c.get("info")) for c in failed if c.get("met") is False]
            if missed:
                parts.append(f"did not communicate: {', '.join(missed[:4])}")
        elif kind == "nl_assertions":
            missed = [str(c.get("nl_assertion")) for c in failed if c.get("met") is False]
            if missed:
                parts.append(f"assertion not met: {missed[0]}")
        elif kind == "env_assertions":
            missed = [
                str(as_dict(c.get("env_assertion")).get("func_name"))
                for c in failed
                if c.get("met") is False
            ]
            if missed:
                parts.append(f"environment assertion failed: {', '.join(missed[:4])}")
    note = as_dict(info.get("info")).get("note")
    if not parts and isinstance(note, str) and note:
        parts.append(note)
    return "; ".join(parts) or f"reward {reward:g}"


def _instruction(task: Any) -> str | None:
    """The user scenario's instructions: plain text, or the structured fields joined."""
    scenario = task.get("user_scenario") if isinstance(task, dict) else None
    instructions = scenario.get("instructions") if isinstance(scenario, dict) else None
    if isinstance(instructions, str):
        return instructions
    if not isinstance(instructions, dict):
        return None
    labels = (
        ("reason_for_call", "Reason for call"),
        ("known_info", "Known info"),
        ("unknown_info", "Unknown info"),
        ("task_instructions", "Task instructions"),
    )
    lines = [
        f"{label}: {instructions[k]}" for k, label in labels if isinstance(instructions.get(k), str)
    ]
    return "\n".join(lines) or None
