"""OpenAI chat JSONL: one conversation a line, ``{"messages": [...], "passed": bool}`` or ``"reward": x``;
a line with neither (a fine-tuning or production log) is an unscored trial."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import (
    Kind,
    Record,
    RecordError,
    as_text,
    jsonl_lines,
    load_line,
    openai_messages,
)
from reviewer.models import Skip, Trial, TrialError, Usage

NAME = "openai-chat"
KIND: Kind = "trials"
KEYS = ("messages", "passed")

_SUFFIXES = {".jsonl", ".json", ".ndjson"}
_KEY = r'"{}"\s*:'
_SLUG_WORDS = 6
_SLUG_MAX = 40


def sniff(path: Path, head: bytes) -> bool:
    """First non-blank line: an object with a ``messages`` list of chat messages (``role``) and no
    ``outcome`` (``passed`` / ``reward`` optional). The last format tried, so every more specific
    one goes first."""
    if path.suffix.lower() not in _SUFFIXES:
        return False
    first = next(
        (ln.strip() for ln in head.removeprefix(b"\xef\xbb\xbf").splitlines() if ln.strip()), b""
    )
    if not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        # a first line longer than the head: judge by the keys it shows
        text = first.decode("utf-8", "replace")
        has = {
            k: re.search(_KEY.format(k), text) is not None for k in ("messages", "role", "outcome")
        }
        return has["messages"] and has["role"] and not has["outcome"]
    if not isinstance(obj, dict) or "outcome" in obj or not isinstance(obj.get("messages"), list):
        return False
    return any(isinstance(m, dict) and "role" in m for m in obj["messages"])


def parse(path: Path) -> Iterator[Record]:
    """One Trial per line; a bad line becomes a Skip naming its line number."""
    file = str(path)
    for item in jsonl_lines(path):
        yield item if isinstance(item, Skip) else parse_line(item[1], file, item[0])


def parse_line(line: bytes, file: str, lineno: int) -> Record:
    """One JSONL line as a Trial, or a Skip saying what is wrong with it."""
    try:
        rec = load_line(line)
    except RecordError as exc:
        return Skip(file, lineno, str(exc))
    if not isinstance(rec, dict):
        return Skip(file, lineno, f"not a JSON object ({type(rec).__name__})")
    try:
        return _trial(rec, file, lineno, line)
    except (TypeError, ValueError, AttributeError, KeyError) as exc:
        return Skip(file, lineno, f"malformed record: {exc!r}")


def _trial(rec: dict[str, Any], file: str, lineno: int, line: bytes) -> Record:
    raw_messages = rec.get("messages")
    if not isinstance(raw_messages, list):
        return Skip(file, lineno, "no messages list")
    passed = rec.get("passed")
    reward = rec.get("reward")
    if passed is not None and not isinstance(passed, bool):
        return Skip(file, lineno, f"passed must be true or false, got {passed!r}")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
        return Skip(file, lineno, f"reward must be a number, got {reward!r}")
    metadata = dict(rec["metadata"]) if isinstance(rec.get("metadata"), dict) else {}
    task_id = rec.get("task_id")
    if task_id is None or task_id == "":
        task_id = metadata.get("task_id")
    if task_id is None or task_id == "":
        task_id = _derived_task_id(raw_messages)
        if task_id is None:
            return Skip(file, lineno, "no task_id and no user message to derive one from")
    trial = rec.get("trial")
    run = rec.get("run")
    reason = rec.get("reason")
    return Trial(
        task_id=str(task_id),
        messages=openai_messages(raw_messages),
        passed=passed,
        reward=float(reward) if reward is not None else None,
        run=str(run) if run not in (None, "") else None,
        trial=trial if isinstance(trial, int) and not isinstance(trial, bool) else None,
        reason=reason if isinstance(reason, str) and reason else None,
        usage=_usage(rec.get("usage")),
        latency_s=_number(rec.get("latency_s")),
        error=_error(rec.get("error")),
        metadata=metadata,
        source_line=lineno,
        fingerprint=line,
    )


def _derived_task_id(raw_messages: list[Any]) -> str | None:
    """A slug of the first user message's first words plus 8 hex of its hash: stable across trials."""
    first = next(
        (m for m in raw_messages if isinstance(m, dict) and m.get("role") == "user"),
        None,
    )
    text = as_text(first.get("content")).strip() if first is not None else ""
    if not text:
        return None
    words = re.findall(r"[a-z0-9]+", text.lower())[:_SLUG_WORDS]
    slug = "-".join(words)[:_SLUG_MAX].strip("-") or "task"
    return f"{slug}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _usage(value: Any) -> Usage:
    """Our usage keys, or OpenAI's (``prompt_tokens`` / ``completion_tokens``)."""
    if not isinstance(value, dict):
        return Usage()

    def tokens(*keys: str) -> int | None:
        return next(
            (
                value[k]
                for k in keys
                if isinstance(value.get(k), int) and not isinstance(value.get(k), bool)
            ),
            None,
        )

    return Usage(
        input_tokens=tokens("input_tokens", "prompt_tokens"),
        output_tokens=tokens("output_tokens", "completion_tokens"),
        cost_usd=_number(value.get("cost_usd", value.get("cost"))),
    )


def _error(value: Any) -> TrialError | None:
    if isinstance(value, dict):
        kind, message = value.get("type"), value.get("message")
        return TrialError(
            type=str(kind) if kind is not None else None,
            message=str(message) if message is not None else None,
        )
    if isinstance(value, str) and value:
        return TrialError(message=value)
    return None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
