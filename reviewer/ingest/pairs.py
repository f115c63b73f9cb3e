"""Pair judgements as JSONL: one judge's verdicts on one pair of trials in both orders, a line each.

    {"pair_id": ID, "task_id": T, "a": TRIAL_REF, "b": TRIAL_REF, "judge": ID,
     "order_ab": "a"|"b"|"tie"|null, "order_ba": "a"|"b"|"tie"|null, "human": "a"|"b"|"tie"|null,
     "rationale_ab": str, "rationale_ba": str}

Winners are already mapped back to the pair's own a / b (in order AB a is shown first, in order BA b
is); ``null`` is a missing or unparseable verdict. ``human`` and the rationales are optional. A
TRIAL_REF is ``{"run", "task_id", "trial"}`` or a stored trial id string. Pure parsing: references are
resolved against the store by the importer. Bad lines become Skips naming their line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import Kind, RecordError, jsonl_lines, load_line
from reviewer.models import PairRecord, Skip

NAME = "pairs"
KIND: Kind = "pairs"  # not trials: the import workflow writes these to the pairs table
KEYS = ("pair_id", "order_ab", "order_ba")

WINNERS = ("a", "b", "tie")
_SUFFIXES = {".jsonl", ".ndjson", ".json"}
_KEY = r'"{}"\s*:'

PairLine = PairRecord | Skip


def sniff(path: Path, head: bytes) -> bool:
    """First non-blank line: a JSON object with ``pair_id`` and ``order_ab``."""
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
        text = first.decode("utf-8", "replace")  # a first line longer than the head
        return all(re.search(_KEY.format(k), text) for k in ("pair_id", "order_ab"))
    return isinstance(obj, dict) and "pair_id" in obj and "order_ab" in obj


def parse(path: Path) -> Iterator[PairLine]:
    """One PairRecord per line; a bad line, or a repeat of an earlier (pair_id, judge), becomes a Skip
    naming its line number."""
    file = str(path)
    seen: dict[tuple[str, str], int | None] = {}
    for read in jsonl_lines(path):
        if isinstance(read, Skip):
            yield read
            continue
        lineno, line = read
        item = parse_line(line, file, lineno)
        if isinstance(item, PairRecord):
            key = (item.pair_id, item.judge)
            if key in seen:
                why = f"repeats pair {item.pair_id!r} of judge {item.judge!r} from line {seen[key]}"
                item = Skip(file, lineno, why)
            else:
                seen[key] = lineno
        yield item


def read_pairs(path: Path) -> tuple[list[PairRecord], list[Skip]]:
    """Every good line of a file, and a Skip for each bad line or repeated (pair_id, judge)."""
    records: list[PairRecord] = []
    skips: list[Skip] = []
    for item in parse(path):
        if isinstance(item, Skip):
            skips.append(item)
        else:
            records.append(item)
    return records, skips


def parse_line(line: bytes, file: str, lineno: int) -> PairLine:
    """One JSONL line as a PairRecord, or a Skip saying what is wrong with it."""
    try:
        obj = load_line(line)
    except RecordError as exc:
        return Skip(file, lineno, str(exc))
    if not isinstance(obj, dict):
        return Skip(file, lineno, f"not a JSON object ({type(obj).__name__})")
    problem = _problem(obj)
    if problem:
        return Skip(file, lineno, problem)
    return PairRecord(
        pair_id=obj["pair_id"],
        judge=obj["judge"],
        a=obj["a"],
        b=obj["b"],
        order_ab=obj["order_ab"],
        order_ba=obj["order_ba"],
        human=obj.get("human"),
        task_id=obj.get("task_id"),
        rationale_ab=obj.get("rationale_ab"),
        rationale_ba=obj.get("rationale_ba"),
        source_line=lineno,
    )


def _problem(obj: dict[str, Any]) -> str | None:
    """Why a parsed line is not a pair judgement, or None when it is one."""
    for key in ("pair_id", "judge"):
        if not isinstance(obj.get(key), str) or not obj[key].strip():
            return f"{key} must be a non-empty string"
    for key in ("order_ab", "order_ba"):
        if key not in obj:
            return f"missing {key} (a, b, tie or null)"
    for key in ("order_ab", "order_ba", "human"):
        value = obj.get(key)
        if value is not None and value not in WINNERS:
            return f"{key} must be a, b, tie or null, got {_short(value)}"
    for key in ("task_id", "rationale_ab", "rationale_ba"):
        if obj.get(key) is not None and not isinstance(obj[key], str):
            return f"{key} must be a string"
    for key in ("a", "b"):
        problem = ref_problem(obj.get(key))
        if problem:
            return f"{key}: {problem}"
    return None


def ref_problem(ref: Any) -> str | None:
    """Why ``ref`` is not a TRIAL_REF, or None when it is one."""
    if isinstance(ref, str):
        return None if ref.strip() else "a trial id must not be empty"
    if not isinstance(ref, dict):
        return "must be {run, task_id, trial} or a stored trial id"
    if not isinstance(ref.get("run"), str) or not isinstance(ref.get("task_id"), str):
        return "must be {run, task_id, trial} with run and task_id strings"
    trial = ref.get("trial")
    if isinstance(trial, bool) or not isinstance(trial, int):
        return "trial must be a whole number"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"
