"""The pure parts of importing: which files a path names, a file's default run name, a trial's stable
id, and ``--check`` validation of a trial stream (everything short of writing)."""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from reviewer.ingest.base import Item
from reviewer.ingest.outcome import Tally
from reviewer.models import Skip, Trial
from reviewer.record import negatives_as_unknown, trial_problem

SUFFIXES = {".jsonl", ".ndjson", ".json", ".eval", ".traj"}
#: Trials per write batch (a progress report follows each).
BATCH = 2000
#: How often a file being read reports its progress, in seconds (and after each batch): a file of a
#: few big records (an Inspect log) moves the bar, one of many small records costs ten reports a
#: second, not one a record.
PROGRESS_EVERY = 0.1
# Files named like this get their run name from their folder instead.
_GENERIC_STEMS = {
    "results",
    "trials",
    "log",
    "logs",
    "output",
    "outputs",
    "data",
    "samples",
    "eval",
    "trajectory",  # Harbor ATIF: one trajectory.json per trial folder
    "result",
}

Progress = Callable[[str, int], None]  # (file name, records so far in this file)


def discover(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, bool]], list[str]]:
    """Files to import as (path, named_directly), and one line for each path that is empty (``""``
    would be the current folder), does not exist, cannot be read (a folder anywhere below
    included: it is skipped, the rest is walked) or holds nothing."""
    found: list[tuple[Path, bool]] = []
    errors: list[str] = []
    for raw in paths:
        if not str(raw).strip():
            errors.append(f"an empty path {str(raw)!r}: give a file or folder (. for this one)")
            continue
        p = Path(raw)
        try:
            mode = p.stat().st_mode
        except FileNotFoundError:
            errors.append(f"{path_text(p)}: no such file or directory")
            continue
        except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
            reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            errors.append(f"{path_text(p)}: cannot read: {reason}")
            continue
        if stat.S_ISDIR(mode):
            files = _walk(p, errors)
            if not files:
                errors.append(f"{p}: no files to import (looked for {', '.join(sorted(SUFFIXES))})")
            found.extend((f, False) for f in files)
        elif stat.S_ISREG(mode):
            found.append((p, True))
        else:
            errors.append(f"{p}: not a file or folder")
    return found, errors


def _walk(root: Path, errors: list[str]) -> list[Path]:
    """The files under ``root`` with a suffix we read, hidden files and folders left out, sorted;
    a folder that cannot be read is one line in ``errors`` and is skipped."""

    def unreadable(e: OSError) -> None:
        errors.append(f"{e.filename}: cannot read folder: {e.strerror or e}; skipped")

    files: list[Path] = []
    for folder, dirs, names in os.walk(root, onerror=unreadable):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        base = Path(folder)
        for name in names:
            if name.startswith(".") or Path(name).suffix.lower() not in SUFFIXES:
                continue
            f = base / name
            if f.is_file():
                files.append(f)
    return sorted(files)


def screen(items: Iterable[Item], file: str, tally: Tally | None = None) -> Iterator[Item]:
    """The one gate every format's trials pass before they are checked (``--check``) or written: a
    trial holding a number the store cannot keep (NaN, ±Infinity, an integer beyond 64 bits, even
    when a format computed it) becomes a Skip naming it. The values of the file itself were checked
    as they were parsed (``reviewer.record.loads``). A negative token count, cost or latency is read
    as unknown, counted in ``tally`` for the file's warning."""
    for item in items:
        if isinstance(item, Trial):
            if problem := trial_problem(item):
                yield skip_of(file, item, problem)
                continue
            negative = negatives_as_unknown(item)
            if negative and tally is not None:
                tally.negative += 1
                tally.negative_fields += [f for f in negative if f not in tally.negative_fields]
                tally.negative_first = tally.negative_first or (place_of(item) or "")
            yield item
        elif isinstance(item, Skip) and item.file != file:
            yield Skip(path_text(item.file), item.line, item.reason)
        else:
            yield item


def skip_of(file: str, trial: Trial, reason: str) -> Skip:
    """The Skip of a parsed trial: ``file:line: reason``, or ``file: member: reason`` for a trial
    read from an archive member (an Inspect ``.eval`` sample), which has no line."""
    if trial.source_member is not None:
        return Skip(file, None, f"{trial.source_member}: {reason}")
    return Skip(file, trial.source_line, reason)


def place_of(trial: Trial) -> str | None:
    """Where a trial is in its file, for a message: ``line 7`` or its archive member."""
    if trial.source_member is not None:
        return trial.source_member
    return None if trial.source_line is None else f"line {trial.source_line}"


def path_text(path: str | Path) -> str:
    """A path as text the store can keep and a terminal can show: bytes of a file name that are not
    UTF-8 (which Python holds as lone surrogates) become ``\\xff`` escapes."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def default_run_name(path: Path) -> str:
    """The file name without its suffix, or its folder's name for generic names like results.json."""
    stem = path.name
    for suffix in (".jsonl", ".ndjson", ".json", ".eval", ".traj"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if stem.lower() in _GENERIC_STEMS and path.parent.name:
        return path_text(path.parent.resolve().name)
    return path_text(stem)


def trial_id(run: str, trial: Trial) -> str:
    """Stable content hash: the same record imported again gets the same id."""
    h = hashlib.sha256()
    h.update(run.encode())
    h.update(b"\0")
    h.update(trial.task_id.encode())
    h.update(b"\0")
    if trial.trial is not None:
        h.update(str(trial.trial).encode())
    h.update(b"\0")
    h.update(trial.fingerprint)
    return h.hexdigest()[:20]


def repeat_reason(trial: Trial, first: str | None) -> str:
    """Why a record identical to one earlier in its file is skipped: an explicit trial number
    written twice is one trial; identical records with none may be two tries that went the same
    way, which only a trial number can tell apart."""
    at = f"repeats the trial at {first}" if first else "repeated trial"
    if trial.trial is not None:
        return at
    return (
        f"{at} (identical, and neither has a trial number: give each try its `trial` to keep both)"
    )


def newer_version(trial: Trial, ended_at: str | None, n_messages: int) -> bool:
    """Whether ``trial`` is a newer version of a stored session that ended at ``ended_at`` with
    ``n_messages`` messages: it ended later, or as late with more messages (a session that grew
    since, or a file that was cut short before and is whole now). An older or equal version is
    the stored one again."""
    end = trial.metadata.get("ended_at")
    mine = _moment(end if isinstance(end, str) else None)
    theirs = _moment(ended_at)
    if type(mine) is not type(theirs):  # one time unreadable: compare them as written
        mine, theirs = str(end or ""), ended_at or ""
    return (mine, len(trial.messages)) > (theirs, n_messages)


def _moment(text: str | None) -> float | str:
    """An ISO-8601 time as seconds since the epoch (``…05Z`` and ``…05.000+00:00`` are one
    moment), or "" when absent or unreadable."""
    if not text:
        return ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


@dataclass
class Checked:
    """What validating one file of trials found: valid trials, their runs and tasks, and the Skips."""

    trials: int = 0
    runs: set[str] = field(default_factory=set)
    tasks: set[tuple[str, str]] = field(default_factory=set)
    skipped: list[Skip] = field(default_factory=list)


def check_trials(
    records: Iterable[Item],
    file: str,
    run_override: str | None,
    default_run: str,
    progress: Progress | None = None,
) -> Checked:
    """Validate a file's trials as an import would place them (repeats, taken trial numbers), writing
    nothing."""
    out = Checked()
    seen: dict[str, str | None] = {}
    slots: dict[tuple[str, str, int], str | None] = {}
    count = 0
    due = time.monotonic() + PROGRESS_EVERY
    for rec in records:
        count += 1
        if progress and (count % BATCH == 0 or time.monotonic() >= due):
            progress(file, count)
            due = time.monotonic() + PROGRESS_EVERY
        if isinstance(rec, Skip):
            out.skipped.append(rec)
            continue
        if not isinstance(rec, Trial):
            continue
        run = run_override or rec.run or default_run
        tid = trial_id(run, rec)
        if tid in seen:
            out.skipped.append(skip_of(file, rec, repeat_reason(rec, seen[tid])))
            continue
        seen[tid] = place_of(rec)
        if rec.trial is not None:
            slot = (run, rec.task_id, rec.trial)
            if slot in slots:
                out.skipped.append(
                    skip_of(
                        file,
                        rec,
                        f"trial {rec.trial} of task {rec.task_id!r} already given at {slots[slot]}",
                    )
                )
                continue
            slots[slot] = place_of(rec)
        out.trials += 1
        out.runs.add(run)
        out.tasks.add((run, rec.task_id))
    if progress:
        progress(file, count)
    return out
