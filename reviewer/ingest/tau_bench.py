"""tau-bench results: a JSON array of ``{task_id, trial, reward, info, traj}`` read one record at a time."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from reviewer.ingest.base import IngestError, Kind, Record, as_dict, canonical, openai_messages
from reviewer.ingest.limits import Limits, limits
from reviewer.ingest.reading import place
from reviewer.models import Message, Skip, Trial, TrialError
from reviewer.record import decode_at
from reviewer.text import json_error

NAME = "tau-bench"
KIND: Kind = "trials"
#: A run is one agent strategy, model and user simulator (named in tau-bench's file name): a file
#: with another goes to a run of its own.
RUN_KEY = "run_config"
#: tau-bench's own file name: ``{strategy}-{model}-{temperature}_range_{start}-{end}_user-{user
#: model}-{user strategy}_{time}.json`` (``run.py``); the model is all between strategy and temperature.
_FILE_NAME = re.compile(
    r"(?:^|_)(?P<strategy>tool-calling|act|react|few-shot)-(?P<model>.+?)-(?P<temp>\d+(?:\.\d+)?)"
    r"_range_\d+--?\d+_user-(?P<user>.+)-(?P<ustrategy>[a-z]+)_\d+$"
)
KEYS = ("task_id", "reward", "traj", "info")

_CHUNK = 1 << 20
_WS = " \t\r\n"
_ARRAY_START = re.compile(rb"^\s*\[\s*\{")
_IN_STRING = re.compile(r'["\\]')
_OUTSIDE = re.compile(r'["\[\]{}]')
#: Tool-name prefixes that never change the database, so they say nothing about why the end state differs.
_READ_ONLY = (
    "get_",
    "search_",
    "list_",
    "find_",
    "calculate",
    "think",
    "respond",
    "transfer_to_human",
)


def sniff(path: Path, head: bytes) -> bool:
    """A JSON array whose first object has tau-bench's keys (``task_id``, ``reward`` and ``traj``/``info``)."""
    if not _ARRAY_START.match(head.removeprefix(b"\xef\xbb\xbf")):
        return False
    return b'"task_id"' in head and b'"reward"' in head and (b'"traj"' in head or b'"info"' in head)


class _BadArray(Exception):
    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


def _iter_array(fh: TextIO, limit: Limits) -> Iterator[tuple[int, Any, str | None, int]]:
    """Yield ``(1-based index, value, problem, line)`` for each element of a top-level JSON array,
    one at a time, with the line it starts on; an element over the record limit is read past
    without being kept (its value is None)."""
    buf = ""
    pos = 0
    eof = False
    # the newlines before buf[counted]: of the text let go and of buf up to there (counted once
    # each: counting from the buffer's start at every record took seconds a megabyte of records)
    lines_before = counted = 0

    def fill(size: int = _CHUNK) -> bool:
        nonlocal buf, pos, eof, lines_before, counted
        if eof:
            return False
        more = fh.read(max(size, min(len(buf) - pos, limit.record)))
        if not more:
            eof = True
            return False
        lines_before += buf.count("\n", counted, pos)
        buf = buf[pos:] + more
        pos = counted = 0
        return True

    def skip_ws() -> str:
        """The next non-blank character ("" at end of file), leaving ``pos`` on it."""
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in _WS:
                pos += 1
            if pos < len(buf):
                return buf[pos]
            if not fill():
                return ""

    def skip_big(index: int) -> int:
        """Read past the element at ``pos`` (an object, array or string) in pieces; its size."""
        nonlocal buf, pos
        if buf[pos] not in '{["':
            raise _BadArray(index, f"record is {limit.over_record(len(buf) - pos)}")
        depth, in_string, escaped, size, i = 0, False, False, 0, pos
        while True:
            while i < len(buf):
                if in_string:
                    if escaped:
                        escaped, i = False, i + 1
                        continue
                    m = _IN_STRING.search(buf, i)
                    if m is None:
                        i = len(buf)
                        break
                    i = m.end()
                    if m.group() == "\\":
                        escaped = True
                        continue
                    in_string = False
                else:
                    m = _OUTSIDE.search(buf, i)
                    if m is None:
                        i = len(buf)
                        break
                    i = m.end()
                    if m.group() == '"':
                        in_string = True
                        continue
                    depth += 1 if m.group() in "[{" else -1
                if depth <= 0 and not in_string:
                    size += i - pos
                    pos = i
                    return size
            size += len(buf) - pos
            pos = len(buf)
            i = 0
            if not fill():
                raise _BadArray(index, "the file ends inside this record")

    index = 0
    if skip_ws() != "[":
        raise _BadArray(0, "not a JSON array")
    pos += 1
    while True:
        ch = skip_ws()
        if ch == "]":
            return
        if index:
            if ch != ",":
                raise _BadArray(index + 1, f"expected ',' or ']' after record {index}, got {ch!r}")
            pos += 1
            skip_ws()
        lines_before += buf.count("\n", counted, pos)
        counted = pos
        line = lines_before + 1
        problem: str | None
        while True:
            if len(buf) - pos > limit.record:
                size = skip_big(index + 1)
                value, problem = None, f"record is {limit.over_record(size)}"
                break
            try:
                value, end, problem = decode_at(buf, pos)
            except json.JSONDecodeError as exc:
                if fill():
                    continue
                raise _BadArray(
                    index + 1, json_error(exc, place=False)
                ) from None  # a piece's place
            if end == len(buf) and fill():
                continue  # a scalar cut at the buffer end would parse short
            pos = end
            break
        index += 1
        yield index, value, problem, line


def run_metadata(path: Path) -> dict[str, str]:
    """The model and run configuration tau-bench's file name gives ({} for a file named otherwise)."""
    match = _FILE_NAME.search(path.name.removesuffix(".json"))
    if match is None:
        return {}
    model = match["model"]
    return {
        "model": model,
        "run_config": f"agent {match['strategy']}, model {model}, temperature {match['temp']}, "
        f"user {match['user']} ({match['ustrategy']})",
    }


def _with_run(record: Record, run_meta: dict[str, str]) -> Record:
    if run_meta and isinstance(record, Trial):
        record.metadata = {**run_meta, **record.metadata}
    return record


def parse(path: Path) -> Iterator[Record]:
    """Trials of a tau-bench results file; a bad record becomes a Skip naming its index."""
    file = str(path)
    run_meta = run_metadata(path)
    try:
        with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig") as fh:
            reached = place()  # bytes read, for the import's progress
            reached.total = os.fstat(raw.fileno()).st_size
            for index, rec, problem, line in _iter_array(fh, limits()):
                reached.done = raw.tell()
                if problem:
                    yield Skip(file, line, f"record {index}: {problem}")
                else:
                    yield _with_run(_record(file, index, rec, line), run_meta)
    except _BadArray as exc:
        where = f"record {exc.index}: " if exc.index else ""
        raise IngestError(file, f"{where}{exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise IngestError(file, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except OSError as exc:
        raise IngestError(file, f"cannot read: {exc.strerror or exc}") from None


def _record(file: str, index: int, rec: Any, line: int | None = None) -> Record:
    """Record INDEX of the array, which starts on LINE of the file (a skip names both)."""
    try:
        return _convert(file, index, rec, line)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return Skip(file, line, f"record {index}: malformed record: {exc!r}")


def _convert(file: str, index: int, rec: Any, line: int | None = None) -> Record:
    def skip(reason: str) -> Skip:
        return Skip(file, line, f"record {index}: {reason}")

    if not isinstance(rec, dict):
        return skip(f"not a JSON object ({type(rec).__name__})")
    if rec.get("task_id") is None:
        return skip("no task_id")
    reward = rec.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        return skip("no numeric reward")
    traj = rec.get("traj")
    if not isinstance(traj, list):
        return skip("traj is not a list of messages")
    trial = rec.get("trial")
    info = as_dict(rec.get("info"))
    task = as_dict(info.get("task"))
    reward_info = as_dict(info.get("reward_info")) or None
    # tau-bench's runner writes info {"error", "traceback"} (and an empty traj) when the harness
    # crashed: a rate limit, a context overflow, the simulated user's EOF. Not the agent's failure.
    crash = info.get("error")
    error = None
    if crash is not None:
        last = (str(info.get("traceback") or "").strip().splitlines() or [""])[-1]
        kind = last.split(":", 1)[0].strip() if ":" in last else None
        error = TrialError(type=kind or "error", message=str(crash))
    # tau-bench adds reward_info only when the env says done, so an info without it ran out of steps
    unfinished = bool(info) and reward_info is None and error is None
    try:
        messages = openai_messages(traj)
    except (TypeError, ValueError, AttributeError) as exc:
        return skip(f"malformed traj: {exc}")
    instruction = task.get("instruction")
    metadata = {
        k: v
        for k, v in {
            "task": task or None,
            "reward_info": reward_info,
            "source": info.get("source"),
            "user_cost": info.get("user_cost"),
            "traceback": info.get("traceback") if error is not None else None,
        }.items()
        if v is not None
    }
    return Trial(
        task_id=str(rec["task_id"]),
        messages=messages,
        reward=float(reward),
        trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else None,
        reason=(
            f"infrastructure error: {error.message}"
            if error is not None
            else _reason(float(reward), reward_info, unfinished)
            if reward < 1 - 1e-6
            else None
        ),
        error=error,
        infra_error=error is not None,
        instruction=instruction if isinstance(instruction, str) else None,
        termination=_termination(info, unfinished, messages),
        metadata=metadata,
        source_line=index,
        source=rec,
        fingerprint=canonical(rec),
    )


def _reason(reward: float, reward_info: dict[str, Any] | None, unfinished: bool) -> str:
    """A short why-it-failed from ``info.reward_info``: wrong database state or missing outputs."""
    if unfinished:
        return "no reward computed: the episode did not finish"
    if reward_info is None:
        return f"reward {reward:g}"
    parts = []
    detail = as_dict(reward_info.get("info"))
    r_actions = detail.get("r_actions")
    if isinstance(r_actions, int | float) and r_actions < 1:
        actions = reward_info.get("actions")
        writes: list[str] = []
        for action in actions if isinstance(actions, list) else []:
            name = action.get("name") if isinstance(action, dict) else None
            if isinstance(name, str) and name not in writes and not name.startswith(_READ_ONLY):
                writes.append(name)
        if writes:
            parts.append(
                f"actions did not match expected (expected writes: {', '.join(writes[:4])})"
            )
        elif isinstance(actions, list):
            parts.append("actions did not match expected (expected no database writes)")
        else:
            parts.append("actions did not match expected")
    outputs = detail.get("outputs")
    r_outputs = detail.get("r_outputs")
    if isinstance(r_outputs, int | float) and r_outputs < 1:
        missing = (
            [str(k) for k, ok in outputs.items() if not ok] if isinstance(outputs, dict) else []
        )
        parts.append(f"outputs missing: {', '.join(missing)}" if missing else "outputs missing")
    return "; ".join(parts) or f"reward {reward:g}"


def _termination(info: dict[str, Any], unfinished: bool, messages: list[Message]) -> str | None:
    """Why the episode ended: transfer to a human, the simulated user's ``###STOP###``, or max steps."""
    if info.get("source") == "transfer_to_human_agents" or any(
        call.name == "transfer_to_human_agents" for m in messages[-3:] for call in m.tool_calls
    ):
        return "transfer to human"
    last_user = next((m for m in reversed(messages) if m.role == "user"), None)
    if last_user is not None and "###STOP###" in last_user.content and messages[-1] is last_user:
        return "user stop"
    return "max steps" if unfinished else None
