"""A regression task list written by `reviewer export` (native task JSONL), read back and checked.

A task list is not trials: its kind is ``tasks``, so the import workflow validates and reports it and
never stores it. ``parse`` yields one TaskEntry per valid line and a Skip for every other line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import BOM, Kind, RecordError, jsonl_lines, load_line
from reviewer.ingest.task_schema import FORMAT, problems
from reviewer.models import Skip, TaskEntry

NAME = "task-list"
KIND: Kind = "tasks"
KEYS = ("format", "id", "input", "expected", "provenance")
_MARK = b'"format"'


def sniff(path: Path, head: bytes) -> bool:
    """The first non-blank line is an object whose ``format`` is the native task format."""
    first = next((ln.strip() for ln in head.removeprefix(BOM).splitlines() if ln.strip()), b"")
    if not first.startswith(b"{"):
        return False
    try:
        obj = json.loads(first)
    except (ValueError, RecursionError):  # a first line cut by the head: judge by its opening
        return _MARK in first[:200] and FORMAT.encode() in first[:200]
    return isinstance(obj, dict) and obj.get("format") == FORMAT


def parse(path: Path) -> Iterator[TaskEntry | Skip]:
    """Every line as a TaskEntry, or a Skip naming its problem (a repeated task id included)."""
    name = str(path)
    first_line: dict[str, int] = {}
    for read in jsonl_lines(path):
        if isinstance(read, Skip):
            yield read
            continue
        lineno, raw = read
        entry = _entry(raw, name, lineno)
        if isinstance(entry, Skip):
            yield entry
        elif entry.id in first_line:
            yield Skip(name, lineno, f"repeats task {entry.id} of line {first_line[entry.id]}")
        else:
            first_line[entry.id] = lineno
            yield entry


def read_tasks(path: Path) -> tuple[list[TaskEntry], list[Skip]]:
    """Every valid task of the file, and a Skip naming the line and problem of every other line."""
    tasks: list[TaskEntry] = []
    skips: list[Skip] = []
    for item in parse(path):
        if isinstance(item, Skip):
            skips.append(item)
        else:
            tasks.append(item)
    return tasks, skips


def _entry(raw: bytes, file: str, lineno: int) -> TaskEntry | Skip:
    try:
        obj: Any = load_line(raw)
    except RecordError as e:
        return Skip(file, lineno, str(e))
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
