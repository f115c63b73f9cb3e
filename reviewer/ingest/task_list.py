"""A regression task list written by `reviewer export` (native task JSONL), read back and checked.

A task list is not trials: ``KIND = "tasks"`` tells the importer to validate and report it, never to
store it. ``parse`` therefore refuses; ``read_tasks`` is the reader.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.export.schema import FORMAT, problems
from reviewer.ingest.base import IngestError, Record, jsonl_lines
from reviewer.models import Skip

NAME = "task-list"
KIND = "tasks"
_MARK = b'"format"'


@dataclass(frozen=True)
class TaskEntry:
    """One valid task of a task list: its id and where it came from."""

    id: str
    run: str
    task_id: str
    trial: int
    source: str
    cluster: str | None
    line: int


def sniff(path: Path, head: bytes) -> bool:
    """The first non-blank line is an object whose ``format`` is the native task format."""
    first = next((ln.strip() for ln in head.splitlines() if ln.strip()), b"")
    if not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except ValueError:  # a first line cut by the head: judge by its opening
        return _MARK in first[:200] and FORMAT.encode() in first[:200]
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def parse(path: Path) -> Iterator[Record]:
    """Task lists hold no trials; the importer reports them with ``read_tasks`` instead."""
    raise IngestError(str(path), "a regression task list (reviewer export), not trials")
    yield  # pragma: no cover - makes this a generator like every other parse


def read_tasks(path: Path) -> tuple[list[TaskEntry], list[Skip]]:
    """Every valid task of the file, and a Skip naming the line and problem of every other line."""
    name = str(path)
    tasks: list[TaskEntry] = []
    skips: list[Skip] = []
    first_line: dict[str, int] = {}
    for lineno, raw in jsonl_lines(path):
        entry = _entry(raw, name, lineno)
        if isinstance(entry, Skip):
            skips.append(entry)
        elif entry.id in first_line:
            skips.append(
                Skip(name, lineno, f"repeats task {entry.id} of line {first_line[entry.id]}")
            )
        else:
            first_line[entry.id] = lineno
            tasks.append(entry)
    return tasks, skips


def _entry(raw: bytes, file: str, lineno: int) -> TaskEntry | Skip:
    try:
        obj: Any = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        return Skip(file, lineno, f"not UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1})")
    except ValueError as e:
        return Skip(file, lineno, f"invalid JSON: {e}")
    found = problems(obj)
    if found:
        return Skip(file, lineno, "; ".join(found))
    prov = obj["provenance"]
    cluster = prov.get("cluster")
    return TaskEntry(
        id=obj["id"],
        run=prov["run"],
        task_id=prov["task_id"],
        trial=prov["trial"],
        source=prov["source"],
        cluster=str(cluster.get("name") or cluster.get("id"))
        if isinstance(cluster, dict)
        else None,
        line=lineno,
    )
