"""What every importer shares: the error type, the record stream and small coercion helpers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.models import Message, Skip, ToolCall, Trial

Record = Trial | Skip


class IngestError(Exception):
    """A problem that stops a whole file (bad archive, unknown format). Printed as ``file[:line]: reason``."""

    def __init__(self, file: str, reason: str, line: int | None = None) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {reason}")


def jsonl_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, stripped line) of every non-blank line of a JSONL file, a leading BOM dropped;
    IngestError when the file cannot be opened."""
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise IngestError(str(path), f"cannot read: {exc.strerror or exc}") from None
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.strip()
            if lineno == 1:
                line = line.removeprefix(b"\xef\xbb\xbf")
            if line:
                yield lineno, line


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes of a parsed record, used as the fingerprint of formats without raw lines."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def as_text(value: Any) -> str:
    """Message content as plain text: strings as they are, lists of content parts joined, rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("reasoning"), str):
                    parts.append(part["reasoning"])
                else:
                    parts.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments: OpenAI gives a JSON *string*; keep the raw text when it is not JSON."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw


def openai_messages(raw: list[Any]) -> list[Message]:
    """Messages in OpenAI chat format (tau-bench ``traj``, OpenAI JSONL) as our Messages."""
    out: list[Message] = []
    for m in raw:
        if not isinstance(m, dict):
            continue
        calls = []
        for c in m.get("tool_calls") or []:
            if not isinstance(c, dict):
                continue
            fn = c["function"] if isinstance(c.get("function"), dict) else c
            calls.append(
                ToolCall(
                    name=str(fn.get("name", "")),
                    arguments=parse_arguments(fn.get("arguments")),
                    id=c.get("id"),
                )
            )
        content = as_text(m.get("content"))
        role = str(m.get("role", "user"))
        out.append(
            Message(
                role=role,
                content=content,
                tool_calls=calls,
                tool_call_id=m.get("tool_call_id"),
                name=m.get("name"),
                is_error=bool(m.get("is_error", False))
                or (role == "tool" and looks_like_error(content)),
            )
        )
    return out


_ERROR_PREFIXES = ("error", "exception", "traceback", "failed", "failure")


def looks_like_error(text: str) -> bool:
    """A tool result that reads like an error even when the format has no error flag."""
    head = text.lstrip()[:40].lower()
    return head.startswith(_ERROR_PREFIXES)


__all__ = [
    "IngestError",
    "Record",
    "Iterator",
    "as_text",
    "canonical",
    "looks_like_error",
    "openai_messages",
    "parse_arguments",
]
