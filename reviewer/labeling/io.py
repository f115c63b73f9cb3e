"""Labels as JSONL, so a team can label on several machines and combine the results.

One label (or retraction) a line, the whole history oldest first:

    {"trial": {"run": R, "task_id": T, "trial": i}, "trial_id": ID, "labeler": NAME,
     "verdict": "pass"|"fail"|"skip", "criteria": {ID: true|false|null}, "note": str,
     "rubric": "name@version", "at": ISO-8601, "retracted": false}
    ("override": true is added to a verdict kept against the rubric's pass rule; "tag": str to a
    fail tagged with a failure category)

Import merges by (trial, labeler, at, retracted): importing a file twice, or a file that overlaps
what is stored, adds only what is new. A TRIAL_REF is resolved by stored id, else by
(run, task_id, trial). Bad lines are reported ``file:line: reason`` and skipped: among them NaN or
Infinity anywhere in the line, and a time out of range in UTC or more than a day ahead (a label
from the future would outrank every later relabel).

Export writes a temporary file beside FILE and renames it (``export.files.write_atomic``), so a
full disk leaves the previous export whole; an existing FILE is replaced only with ``force``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from reviewer.export.files import write_atomic
from reviewer.labeling.tags import TagError, check_tag
from reviewer.models import MAX_STORED_LABELER, Label, stored_labeler
from reviewer.record import RecordError, loads
from reviewer.store.db import Store
from reviewer.store.labels import (
    VERDICTS,
    find_trial_id,
    iter_label_rows,
    merge_labels,
    normalize_at,
)

#: How far ahead of this machine's clock a label time may be (clocks of two machines differ a little).
MAX_AHEAD = timedelta(days=1)


class LabelFileError(Exception):
    """A labels file that cannot be read or written at all."""


@dataclass
class ImportResult:
    file: str = ""
    added: int = 0
    duplicates: int = 0
    skipped: list[str] = field(default_factory=list)  # "file:line: reason"


def label_json(
    label: Label, run: str | None, task_id: str | None, trial: int | None
) -> dict[str, Any]:
    ref: Any = (
        {"run": run, "task_id": task_id, "trial": trial} if run is not None else label.trial_id
    )
    out: dict[str, Any] = {
        "trial": ref,
        "trial_id": label.trial_id,
        "labeler": label.labeler,
        "verdict": label.verdict,
        "criteria": label.criteria,
        "note": label.note,
        "rubric": label.rubric,
        "at": label.at,
        "retracted": label.retracted,
    }
    if label.override:  # against the rubric's pass rule, confirmed by the labeler
        out["override"] = True
    if label.tag is not None:
        out["tag"] = label.tag
    return out


def export_labels(
    db: Store,
    path_or_stream: str | Path | IO[str],
    labeler: str | None = None,
    *,
    force: bool = False,
) -> int:
    """Write every label and retraction (of ``labeler``), oldest first; returns the line count.

    A path is written atomically and an existing one only replaced with ``force``."""
    if not isinstance(path_or_stream, str | Path):
        return _write(db, path_or_stream, labeler)
    path = Path(path_or_stream)
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as e:  # a name past the system's limit: is_dir() raises it
        raise LabelFileError(f"{path}: cannot write: {e.strerror or e}") from None
    if path.is_dir():
        raise LabelFileError(f"{path}: is a folder; give a file name")
    if path.exists() and not force:
        raise LabelFileError(f"{path} exists; --force replaces it")
    count = [0]

    def lines() -> Iterator[str]:
        for label, run, task_id, trial in iter_label_rows(db, labeler):
            count[0] += 1
            yield json.dumps(label_json(label, run, task_id, trial), ensure_ascii=False) + "\n"

    try:
        write_atomic(path, lines())
    except OSError as e:
        raise LabelFileError(f"{path}: cannot write: {e.strerror or e}") from None
    return count[0]


def _write(db: Store, out: IO[str], labeler: str | None) -> int:
    count = 0
    for label, run, task_id, trial in iter_label_rows(db, labeler):
        out.write(json.dumps(label_json(label, run, task_id, trial), ensure_ascii=False) + "\n")
        count += 1
    return count


def import_labels(db: Store, path: str | Path | IO[bytes]) -> ImportResult:
    """Merge a labels file (or ``-`` for stdin) into the database in one transaction."""
    if path == "-":
        name = "<stdin>"
    elif isinstance(path, str | Path):
        name = str(path)
    else:
        name = str(getattr(path, "name", "") or "<stream>")
    result = ImportResult(file=str(name))
    parsed: list[tuple[int, Label]] = []
    for no, text in _lines(path, result.file):
        if text is None:
            result.skipped.append(f"{result.file}:{no}: not UTF-8 text")
            continue
        if text.startswith(TOO_LONG):
            result.skipped.append(f"{result.file}:{no}: record is {text[len(TOO_LONG) :]}")
            continue
        if not text.strip():
            continue
        try:  # the import's checked decoder: NaN, 64-bit range, lone surrogates, depth
            # without its line end: a line cut short was said to fail at its next line's column 1
            obj = loads(text.rstrip("\r\n"))
        except RecordError as e:
            result.skipped.append(f"{result.file}:{no}: {e}")
            continue
        except json.JSONDecodeError as e:
            result.skipped.append(f"{result.file}:{no}: not JSON: {e.msg} (column {e.colno})")
            continue
        outcome = _label_of(db, obj)
        if isinstance(outcome, str):
            result.skipped.append(f"{result.file}:{no}: {outcome}")
        else:
            parsed.append((no, outcome))
    for was_added in merge_labels(db, [label for _, label in parsed]):
        if was_added:
            result.added += 1
        else:
            result.duplicates += 1
    return result


#: What ``_lines`` gives for a line over the record limit, before the limit's words (a line of
#: JSON never starts with a NUL).
TOO_LONG = "\x00too long\x00"


def _lines(path: str | Path | IO[bytes], name: str) -> Iterator[tuple[int, str | None]]:
    """(line number, text), None for a line that is not UTF-8, TOO_LONG and the limit's words for
    a line over the record limit."""
    from reviewer.ingest.limits import LimitError, limits

    try:
        record = limits().record
    except LimitError as e:
        raise LabelFileError(str(e)) from None
    try:
        if path == "-":
            stream: IO[bytes] = sys.stdin.buffer
            close = False
        elif isinstance(path, str | Path):
            import stat

            if stat.S_ISCHR(os.stat(path).st_mode) or stat.S_ISBLK(os.stat(path).st_mode):
                # /dev/zero has no line end: it was read into memory until the machine ran out
                raise LabelFileError(f"{name}: a device, not a labels file")
            stream = open(path, "rb")  # noqa: SIM115 -- closed below, after the generator is drained
            close = True
        else:
            stream, close = path, False
    except OSError as e:
        raise LabelFileError(f"{name}: cannot read: {e.strerror or e}") from None
    try:
        no = 0
        # a line is read up to the record limit (REVIEWER_MAX_RECORD_MB), as imports read theirs:
        # a longer one is read past in pieces, never held
        while raw := stream.readline(record + 1):
            no += 1
            if len(raw) > record and not raw.endswith(b"\n"):
                size = len(raw)
                while (more := stream.readline(1 << 20)) and not more.endswith(b"\n"):
                    size += len(more)
                yield no, TOO_LONG + limits().over_record(size + len(more))
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                yield no, None
                continue
            yield no, text.lstrip("\ufeff") if no == 1 else text
    except OSError as e:
        raise LabelFileError(f"{name}: cannot read: {e.strerror or e}") from None
    finally:
        if close:
            stream.close()


def _label_of(db: Store, obj: Any) -> Label | str:
    """The label a line holds, or why it cannot be used."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    trial_id, problem = _resolve(db, obj)
    if trial_id is None:
        return problem
    # a name a face could have stored (no escape sequence reaches a screen), kept as stored
    labeler = stored_labeler(obj["labeler"]) if isinstance(obj.get("labeler"), str) else None
    if labeler is None:
        return f"labeler must be 1 to {MAX_STORED_LABELER} printable characters"
    verdict = obj.get("verdict")
    if verdict not in VERDICTS:
        return f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}"
    criteria = obj.get("criteria") or {}
    if not isinstance(criteria, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, bool)) for k, v in criteria.items()
    ):
        return "criteria must map criterion ids to true, false or null"
    note = obj.get("note") or ""
    if not isinstance(note, str):
        return "note must be a string"
    rubric = obj.get("rubric")
    if rubric is not None and not isinstance(rubric, str):
        return "rubric must be a string (name@version) or null"
    retracted = obj.get("retracted", False)
    if not isinstance(retracted, bool):
        return "retracted must be true or false"
    override = obj.get("override", False)
    if not isinstance(override, bool):
        return "override must be true or false"
    tag = obj.get("tag")
    if tag is not None and not isinstance(tag, str):
        return "tag must be a string or null"
    try:
        tag = check_tag(verdict, tag)
    except TagError as e:
        return str(e)
    at = obj.get("at")
    if not isinstance(at, str):
        return "at must be an ISO-8601 time string"
    problem = _time_problem(at)
    if problem:
        return problem
    at = normalize_at(at)
    return Label(
        trial_id=trial_id,
        labeler=labeler,
        verdict=verdict,
        criteria=criteria,
        note=note,
        rubric=rubric,
        at=at,
        retracted=retracted,
        override=override,
        tag=tag,
    )


def _time_problem(at: str) -> str:
    """Why ``at`` cannot be a label time, or "" when it can."""
    try:
        t = datetime.fromisoformat(at.strip())
    except ValueError:
        return f"at is not an ISO-8601 time: {at!r}"
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    try:
        t = t.astimezone(UTC)
    except OverflowError:
        return f"at {at!r} is out of range in UTC (before year 1 or after 9999)"
    if t > datetime.now(UTC) + MAX_AHEAD:
        return (
            f"at {at!r} is more than a day ahead of this machine's clock; a label from the "
            "future would outrank every later relabel"
        )
    return ""


def _resolve(db: Store, obj: dict[str, Any]) -> tuple[str | None, str]:
    """(the stored trial id, "") or (None, why there is none)."""
    ref = obj.get("trial")
    stored = obj.get("trial_id")
    if stored is not None and not isinstance(stored, str):
        return None, "trial_id must be a string"
    run = task_id = trial = None
    if isinstance(ref, str):
        stored = stored or ref
    elif isinstance(ref, dict):
        run, task_id, trial = ref.get("run"), ref.get("task_id"), ref.get("trial")
        if not isinstance(run, str) or not isinstance(task_id, str):
            return None, "trial must be {run, task_id, trial} or a stored trial id"
        if isinstance(trial, bool) or not isinstance(trial, int):
            return None, "trial.trial must be a whole number"
    elif ref is not None:
        return None, "trial must be {run, task_id, trial} or a stored trial id"
    if stored is None and run is None:
        return None, "no trial: give trial {run, task_id, trial} or trial_id"
    found = find_trial_id(db, stored, run, task_id, trial)
    if found is not None:
        return found, ""
    if run is not None:
        return None, f"unknown trial {run}/{task_id}/{trial} (import its run first)"
    return None, f"unknown trial id {stored!r} (import its run first)"
