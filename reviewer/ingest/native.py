"""The native trial format: JSONL, one trial per line (see DESIGN.md and schemas/trial.schema.json)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from reviewer.ingest.base import BOM, Kind, Record, RecordError, decode_line, jsonl_lines, load_text
from reviewer.models import Skip
from reviewer.record import trial_from_dict

NAME = "native"
KIND: Kind = "trials"


#: The members a native record has; what an unknown file is compared with.
KEYS = ("task_id", "messages", "outcome")


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object per line with ``task_id``, ``messages`` and ``outcome``."""
    first = _first_line(head.removeprefix(BOM))
    if first is None or not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):
        # a first line cut by the head, or broken: judge by its keys
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
    for item in jsonl_lines(path):
        yield item if isinstance(item, Skip) else parse_line(item[1], name, item[0])


def parse_line(line: bytes, file: str, lineno: int) -> Record:
    """One JSONL line as a Trial, or a Skip saying what is wrong with it."""
    try:
        text = decode_line(line)
        obj = load_text(text, line)
        trial = trial_from_dict(obj)
    except RecordError as e:
        return Skip(file, lineno, str(e))
    trial.source = obj
    trial.source_line = lineno
    trial.fingerprint = line
    trial.raw = text
    return trial
