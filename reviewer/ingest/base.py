"""What every input format shares: the Format protocol, the error type, the record stream and helpers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from reviewer.models import Message, PairRecord, Skip, TaskEntry, ToolCall, Trial
from reviewer.record import as_text, looks_like_error, parse_arguments

Record = Trial | Skip
#: What a file holds: trials (stored), a regression task list (checked and listed), pair judgements.
Kind = Literal["trials", "tasks", "pairs"]
KINDS: tuple[Kind, ...] = ("trials", "tasks", "pairs")
#: One item of a parsed file: a Trial, a TaskEntry or a PairRecord by the format's kind, or a Skip.
Item = Trial | TaskEntry | PairRecord | Skip


@runtime_checkable
class Format(Protocol):
    """An input format: one module with these names, listed once in ``reviewer.ingest.FORMATS``.

    ``sniff`` looks at the first bytes of a file (cheap, no full parse); ``parse`` streams the file as
    items of the format's ``KIND`` and Skips for the lines it cannot use, and raises IngestError only
    for a problem that stops the whole file. Parsing never touches the store.
    """

    NAME: str
    KIND: Kind

    def sniff(self, path: Path, head: bytes) -> bool: ...

    def parse(self, path: Path) -> Iterator[Item]: ...


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


__all__ = [
    "KINDS",
    "Format",
    "IngestError",
    "Item",
    "Kind",
    "Record",
    "Iterator",
    "as_text",
    "canonical",
    "looks_like_error",
    "openai_messages",
    "parse_arguments",
]
