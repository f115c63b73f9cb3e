"""What every input format shares: the Format protocol, the error type, the record stream and helpers."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Literal, Protocol, runtime_checkable

from reviewer.ingest.limits import MIB, limits
from reviewer.ingest.reading import holds_last_line, place
from reviewer.models import Message, PairRecord, Skip, TaskEntry, ToolCall, Trial
from reviewer.record import (
    MAX_DEPTH,
    RecordError,
    as_text,
    loads,
    looks_like_error,
    parse_arguments,
    text_or_none,
)
from reviewer.text import json_error

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


BOM = b"\xef\xbb\xbf"
#: A stripped JSONL line with its number, or the Skip of a line too long to read.
Line = tuple[int, bytes] | Skip


def jsonl_lines(path: Path) -> Iterator[Line]:
    """(line number, stripped line) of every non-blank line of a JSONL file, a leading BOM dropped;
    a line over the record limit is read past in pieces and becomes a Skip. IngestError when the
    file cannot be opened."""
    file = str(path)
    limit = limits()
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise IngestError(file, f"cannot read: {exc.strerror or exc}") from None
    hold = holds_last_line()
    with fh:
        reached = place()  # how far this file is read, in bytes, for the import's progress
        reached.total = os.fstat(fh.fileno()).st_size
        lineno = 0
        while raw := fh.readline(limit.record + 1):
            lineno += 1
            if len(raw) > limit.record and not raw.endswith(b"\n"):
                size, ended = len(raw), False
                while (more := fh.readline(MIB)) and size < (1 << 62):
                    size += len(more)
                    if ended := more.endswith(b"\n"):
                        break
                if hold and not ended and size < (1 << 62):
                    return  # a last line still being written: read once its newline is there
                reached.done += size
                yield Skip(file, lineno, f"record is {limit.over_record(size)}")
                continue
            if hold and not raw.endswith(b"\n"):
                return  # a last line still being written: read once its newline is there
            reached.done += len(raw)
            line = raw.strip()
            if lineno == 1:
                line = line.removeprefix(BOM)
            if line:
                yield lineno, line


#: A JSONL line's number, where it starts in the file and how many bytes it takes (its newline
#: included), or the Skip of a line too long to read.
Span = tuple[int, int, int] | Skip


def jsonl_spans(fh: BinaryIO, file: str) -> Iterator[tuple[Span, bytes]]:
    """Every non-blank line of an open JSONL file with where it is, for a parser that reads the
    file in one pass and the lines it needs again later (seek to the start, read the length):
    ``((line number, start, length), stripped line)``, a leading BOM dropped; a line over the
    record limit is read past in pieces and becomes ``(Skip, b"")``."""
    limit = limits()
    hold = holds_last_line()
    lineno = start = 0
    while raw := fh.readline(limit.record + 1):
        lineno += 1
        length = len(raw)
        if length > limit.record and not raw.endswith(b"\n"):
            ended = False
            while (more := fh.readline(MIB)) and length < (1 << 62):
                length += len(more)
                if ended := more.endswith(b"\n"):
                    break
            if hold and not ended and length < (1 << 62):
                return  # a last line still being written: read once its newline is there
            yield Skip(file, lineno, f"record is {limit.over_record(length)}"), b""
        elif hold and not raw.endswith(b"\n"):
            return  # a last line still being written: read once its newline is there
        else:
            line = raw.strip()
            if lineno == 1:
                line = line.removeprefix(BOM)
            if line:
                yield (lineno, start, length), line
        start += length


def read_document(fh: BinaryIO, file: str) -> bytes:
    """The whole of a file read whole (a tau2-bench results file, an Inspect ``.json`` log);
    IngestError when it is over the document limit, before reading it."""
    limit = limits()
    size = os.fstat(fh.fileno()).st_size
    if size > limit.document:
        raise IngestError(file, f"file is {limit.over_document(size)}")
    # read what the file holds (asking for the whole limit would allocate a buffer of that size
    # first), then whatever it grew by since, up to one byte over the limit
    data = fh.read(size + 1)
    if len(data) > size:
        data += fh.read(limit.document + 1 - len(data))
    return data


def as_dict(value: Any) -> dict[str, Any]:
    """VALUE when it is a JSON object, else an empty one (a field of the wrong type reads as absent)."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """VALUE when it is an integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def has_key(head: bytes, key: bytes) -> bool:
    """Whether the JSON text HEAD names KEY as an object key (``"key":``), for sniffing."""
    return re.search(rb'"%s"\s*:' % re.escape(key), head) is not None


def read_file(path: Path, file: str | None = None) -> bytes:
    """A file's bytes, read whole within the document limit; IngestError naming the file when it
    cannot be read or is too big."""
    file = file or str(path)
    try:
        with path.open("rb") as fh:
            return read_document(fh, file)
    except OSError as exc:
        raise IngestError(file, f"cannot read: {exc.strerror or exc}") from None


def parse_document(raw: bytes, file: str, parse: Callable[[str], Any] = json.loads) -> Any:
    """RAW (a whole JSON document) parsed by PARSE; IngestError naming the file when it is not UTF-8,
    invalid, nested too deep, or holds a value PARSE refuses. A format whose file is one trial
    passes :func:`reviewer.record.loads_unchecked` and checks the value with ``json_problem``, so
    a bad value is a Skip naming its field (a record), not a failed file."""
    try:
        return parse(raw.decode("utf-8-sig"))
    except RecursionError:
        raise IngestError(file, f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except UnicodeDecodeError as exc:
        raise IngestError(file, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise IngestError(file, json_error(exc), line=exc.lineno) from None
    except RecordError as exc:
        raise IngestError(file, str(exc)) from None
    except ValueError as exc:  # json.loads and an integer of more than 4,300 digits
        raise IngestError(file, f"invalid JSON: {exc}") from None


def load_document(
    path: Path, parse: Callable[[str], Any] = json.loads, file: str | None = None
) -> Any:
    """A JSON file read whole (within the document limit) and parsed by PARSE; IngestError naming
    the file for every way that fails: unreadable, too big, not UTF-8, invalid, nested too deep,
    a value PARSE refuses."""
    file = file or str(path)
    return parse_document(read_file(path, file), file, parse)


def decode_line(line: bytes) -> str:
    """A JSONL line as text; RecordError naming the first byte that is not UTF-8."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(
            f"not UTF-8: byte 0x{line[exc.start]:02x} at column {exc.start + 1}"
        ) from None


def load_text(text: str, raw: bytes | None = None) -> Any:
    """JSON text parsed and checked (:func:`reviewer.record.loads`; RAW its UTF-8 when in hand);
    RecordError with a one-line reason: invalid JSON, or a value the store cannot keep."""
    try:
        return loads(text, raw)
    except json.JSONDecodeError as exc:
        raise RecordError(json_error(exc)) from None


def load_line(line: bytes) -> Any:
    """One JSONL line decoded, parsed and checked; RecordError with a one-line reason."""
    return load_text(decode_line(line), line)


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes of a parsed record, used as the fingerprint of formats without raw lines."""
    return _CANONICAL.encode(obj).encode()


#: ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)``, made
#: once: every trial of a format without raw lines is hashed through it.
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


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
                    id=text_or_none(c.get("id")),
                )
            )
        content = as_text(m.get("content"))
        role = str(m.get("role", "user"))
        out.append(
            Message(
                role=role,
                content=content,
                tool_calls=calls,
                tool_call_id=text_or_none(m.get("tool_call_id")),
                name=text_or_none(m.get("name")),
                is_error=bool(m.get("is_error", False))
                or (role == "tool" and looks_like_error(content)),
            )
        )
    return out


__all__ = [
    "BOM",
    "KINDS",
    "Format",
    "IngestError",
    "Item",
    "Kind",
    "Line",
    "Record",
    "RecordError",
    "Iterator",
    "as_text",
    "canonical",
    "decode_line",
    "jsonl_lines",
    "load_text",
    "load_line",
    "looks_like_error",
    "openai_messages",
    "parse_arguments",
    "read_document",
]
