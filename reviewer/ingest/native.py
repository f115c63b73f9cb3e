"""The native trial format: JSONL, one trial per line (see DESIGN.md and schemas/trial.schema.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from reviewer.ingest.base import IngestError, Kind, Record
from reviewer.models import Skip
from reviewer.record import RecordError, trial_from_dict

NAME = "native"
KIND: Kind = "trials"


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object per line with ``task_id``, ``messages`` and ``outcome``."""
    first = _first_line(head)
    if first is None or not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except ValueError:
        # a first line cut by the 64 KiB head, or broken: judge by its keys
        return b'"outcome"' in first and b'"messages"' in first
    return isinstance(obj, dict) and "outcome" in obj and "messages" in obj


def _first_line(head: bytes) -> bytes | None:
    for line in head.splitlines():
        line = line.strip()
        if line:
            return line
    return None


def parse(path: Path) -> Iterator[Record]:
    name = str(path)
    try:
        fh = path.open("rb")
    except OSError as e:
        raise IngestError(name, f"cannot read: {e.strerror or e}") from e
    with fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line:
                continue
            yield parse_line(line, name, lineno)


def parse_line(line: bytes, file: str, lineno: int) -> Record:
    """One JSONL line as a Trial, or a Skip saying what is wrong with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        return Skip(file, lineno, f"not UTF-8 (byte 0x{line[e.start]:02x} at column {e.start + 1})")
    try:
        obj = json.loads(text)
    except ValueError as e:
        return Skip(file, lineno, f"invalid JSON: {e}")
    try:
        trial = trial_from_dict(obj)
    except RecordError as e:
        return Skip(file, lineno, str(e))
    trial.source_line = lineno
    trial.fingerprint = line
    trial.raw = text
    return trial
