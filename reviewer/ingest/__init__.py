"""Input formats, one module per format, registered once in ``FORMATS``; sniffing picks one for a file.

Every format satisfies :class:`reviewer.ingest.base.Format`: a pure streaming parser that never touches
SQL. Adding a format is one new module and one line in ``FORMATS``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from reviewer.ingest import (
    atif,
    claude_code,
    inspect_log,
    native,
    openai_chat,
    openhands,
    otel_genai,
    pairs,
    swe_agent,
    task_list,
    tau2_bench,
    tau_bench,
)
from reviewer.ingest.base import BOM, Format, IngestError, Item, RecordError, load_line
from reviewer.ingest.limits import MIB, limits

HEAD_BYTES = 64 * 1024
#: How many lines at the top of a JSONL file sniffing reads at most when they are not JSON: a file
#: whose first record was cut short (or damaged) is still known by the next one.
SNIFF_LINES = 5

#: Every format reviewer reads. Order matters: the more specific sniffers go first.
FORMATS: tuple[Format, ...] = (
    inspect_log,
    tau2_bench,
    tau_bench,
    claude_code,
    atif,
    swe_agent,
    openhands,
    otel_genai,
    pairs,
    task_list,
    native,
    openai_chat,
)

FORMAT_NAMES = (
    "native JSONL (reviewer), tau-bench results JSON, tau2-bench results JSON, "
    "Inspect AI logs (.eval, .json), OpenAI chat JSONL, regression task lists (reviewer export), "
    "pair judgements JSONL, Claude Code sessions (.jsonl), Harbor ATIF trajectories (trajectory.json), "
    "SWE-agent trajectories (.traj), OpenHands output.jsonl and trajectories, "
    "OpenTelemetry GenAI spans (OTLP JSON)"
)


def formats() -> list[Format]:
    return list(FORMATS)


def format_by_name(name: str) -> Format:
    for fmt in FORMATS:
        if fmt.NAME == name:
            return fmt
    raise KeyError(name)


LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"


def sniff(path: Path) -> Format:
    """The format of ``path``; IngestError naming what the file holds and the closest format we read
    when none fits (and a Git LFS pointer as one)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(HEAD_BYTES)
            if not head.removeprefix(BOM).strip():  # a byte-order mark alone holds nothing either
                raise IngestError(str(path), "empty file")
            if head.startswith(LFS_POINTER):
                raise IngestError(str(path), "a Git LFS pointer, not the file: run git lfs pull")
            fmt = _match(path, head)
            if fmt is None and len(head) == HEAD_BYTES:
                # a first JSONL record longer than the head: look at all of it
                head += _rest_of_first_line(fh, head)
                fmt = _match(path, head)
            if fmt is None:
                fmt = _past_broken_lines(path, fh, head)
    except OSError as e:
        raise IngestError(str(path), f"cannot read: {e.strerror or e}") from e
    if fmt is None:
        seen, line = _seen(head)
        raise IngestError(
            str(path), f"unknown format: {seen}; reviewer reads {FORMAT_NAMES}", line=line
        )
    return fmt


def _match(path: Path, head: bytes) -> Format | None:
    return next((fmt for fmt in FORMATS if fmt.sniff(path, head)), None)


def _rest_of_first_line(fh: BinaryIO, head: bytes) -> bytes:
    """More of a JSONL file whose first record is longer than the head, up to its first newline
    (and the record limit), so the sniffers see the whole first record."""
    if not head.lstrip(BOM + b" \t\r\n").startswith(b"{") or b"\n" in head.lstrip(BOM + b" \t\r\n"):
        return b""
    more: list[bytes] = []
    size, limit = len(head), limits().record
    while size < limit and (chunk := fh.readline(min(MIB, limit - size))):
        more.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n"):
            break
    return b"".join(more)


def _past_broken_lines(path: Path, fh: BinaryIO, head: bytes) -> Format | None:
    """The format of a JSONL file whose first line is not JSON (a record cut short or damaged), known
    by the first line after it that a format reads; the lines before it are the parser's to skip,
    each named with its line number. At most ``SNIFF_LINES`` lines are looked at, each a JSON
    object's opening, and no more than the record limit is read past the head; a line that is JSON
    but of no format ends the search (the file is of no format reviewer reads)."""
    text = head.removeprefix(BOM)
    if not text.lstrip().startswith(b"{"):
        return None
    start = looked = 0
    for line in _whole_lines(fh, text, limits().record):
        at, start = start, start + len(line)
        record = line.strip()
        if not record:
            continue
        looked += 1
        if looked > SNIFF_LINES or not record.startswith(b"{") or record == b"{":
            return None  # not a JSONL record (a JSON document's opening brace, other text)
        if looked > 1 and (fmt := _match(path, text[at:] if start <= len(text) else line)):
            return fmt  # (the first line was matched against every format already)
        if _is_json(record):
            return None  # a record that is JSON, of no format reviewer reads
    return None


def _whole_lines(fh: BinaryIO, text: bytes, budget: int) -> Iterator[bytes]:
    """The lines of TEXT (the file read so far, without its BOM) and on into the file, each whole
    (with its newline), reading at most BUDGET more bytes; the last one may lack its newline."""
    *whole, tail = text.split(b"\n")
    for line in whole:
        yield line + b"\n"
    pieces = [tail]
    while budget > 0 and (more := fh.readline(min(MIB, budget))):
        budget -= len(more)
        pieces.append(more)
        if more.endswith(b"\n"):
            yield b"".join(pieces)
            pieces = []
    if any(pieces):
        yield b"".join(pieces)


def _is_json(record: bytes) -> bool:
    try:
        json.loads(record)
    except (ValueError, RecursionError):
        return False
    return True


def _seen(head: bytes) -> tuple[str, int | None]:
    """What an unknown file holds, in a few words: its top-level keys, or its first bytes, and
    the format whose keys come closest; with the number of its first line when that line opens a
    JSON object but is not valid JSON (what is wrong with it is said)."""
    text = head.removeprefix(BOM)
    lines = text.splitlines()
    at, first = next(
        ((n, ln.strip()) for n, ln in enumerate(lines, start=1) if ln.strip()), (None, b"")
    )
    obj: Any = None
    for candidate in (first, text):
        try:
            obj = json.loads(candidate)
            break
        except (ValueError, RecursionError):
            continue
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        keys, what = list(obj[0]), "a JSON array of objects with keys"
    elif isinstance(obj, dict):
        keys, what = list(obj), "a JSON object with keys"
    elif first.startswith(b"{") and first != b"{" and (problem := _json_problem(first)):
        return f"{problem}; it starts with {_printable(first[:48])}", at
    else:
        return f"it starts with {_printable(text[:48])}", None
    shown = ", ".join(_printable(k.encode("utf-8", "backslashreplace")[:40]) for k in keys[:8]) + (
        ", …" if len(keys) > 8 else ""
    )
    saw = f"{what} {shown or '(none)'}"
    best, best_score = None, 0.0
    for fmt in FORMATS:
        wanted = getattr(fmt, "KEYS", ())
        score = sum(1 for k in wanted if k in keys) / max(len(wanted), 1)
        if score > best_score:
            best, best_score = fmt, score
    if best is None:
        return saw, None
    wanted = getattr(best, "KEYS", ())
    lacks = [k for k in wanted if k not in keys]
    if lacks:
        return f"{saw}; closest is {best.NAME}, which also needs {', '.join(lacks)}", None
    return saw, None


def _json_problem(line: bytes) -> str | None:
    """What a parser would say of a JSONL line that is not JSON (``invalid JSON: … at column N``,
    ``not UTF-8: …``), as it says it when it skips the line."""
    try:
        load_line(line)
    except RecordError as exc:
        return str(exc)
    except (ValueError, RecursionError):
        return None
    return None


def _printable(data: bytes) -> str:
    """Bytes as one visible line: printable ASCII kept, everything else escaped."""
    out = "".join(
        chr(b) if 32 <= b < 127 and b != 92 else ("\\\\" if b == 92 else f"\\x{b:02x}")
        for b in data
    )
    return f'"{out}"'


def parse(path: Path) -> Iterator[Item]:
    return sniff(path).parse(path)


__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "Format",
    "IngestError",
    "format_by_name",
    "formats",
    "parse",
    "sniff",
]
