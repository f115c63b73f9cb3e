"""Import files into the store: discover, sniff, parse, give each trial its stable id, write per file.

Each file is written in one transaction, so a file that fails halfway leaves the database as it was.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from reviewer import ingest
from reviewer.ingest.base import IngestError
from reviewer.models import Skip, Trial
from reviewer.store.db import Store
from reviewer.store.writer import Pending, RunIndex, ensure_run, next_seq, write_batch

SUFFIXES = {".jsonl", ".ndjson", ".json", ".eval"}
BATCH = 2000
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
}


@dataclass
class FileResult:
    file: str
    format: str | None = None
    added: int = 0
    already: int = 0
    skipped: list[Skip] = field(default_factory=list)
    error: str | None = None
    ignored: bool = False  # found by walking a folder, not a format we read
    runs: set[str] = field(default_factory=set)
    tasks: set[tuple[str, str]] = field(default_factory=set)
    trials: int = 0  # valid trials seen (for --check)
    new_ids: list[str] = field(default_factory=list)
    listed: list[Any] | None = None  # a task list's tasks: validated and reported, never stored
    pairs: Any = None  # a pair-judgement file: its store.pairs.PairCounts


@dataclass
class ImportSummary:
    files: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # problems not tied to one file's content

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def already(self) -> int:
        return sum(f.already for f in self.files)

    @property
    def new_ids(self) -> list[str]:
        return [i for f in self.files for i in f.new_ids]

    @property
    def skipped(self) -> list[Skip]:
        return [s for f in self.files for s in f.skipped]

    @property
    def runs(self) -> set[str]:
        return {r for f in self.files for r in f.runs}

    @property
    def tasks(self) -> set[tuple[str, str]]:
        return {t for f in self.files for t in f.tasks}

    @property
    def failed_files(self) -> list[FileResult]:
        return [f for f in self.files if f.error]

    @property
    def ok(self) -> bool:
        """True when something was imported or was already there, and nothing failed outright."""
        stored = self.added + self.already + self.pairs
        return (stored > 0 or self.checked > 0) and not self.errors

    @property
    def pairs(self) -> int:
        """Pair judgements written, already stored or (with --check) valid."""
        return sum(f.pairs.total + f.pairs.checked for f in self.files if f.pairs is not None)

    @property
    def checked(self) -> int:
        return sum(f.trials for f in self.files)


def discover(paths: Iterable[str | Path]) -> tuple[list[tuple[Path, bool]], list[str]]:
    """Files to import as (path, named_directly), and errors for paths that do not exist or hold nothing."""
    found: list[tuple[Path, bool]] = []
    errors: list[str] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = sorted(
                f
                for f in p.rglob("*")
                if f.is_file()
                and f.suffix.lower() in SUFFIXES
                and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
            if not files:
                errors.append(f"{p}: no files to import (looked for {', '.join(sorted(SUFFIXES))})")
            found.extend((f, False) for f in files)
        elif p.is_file():
            found.append((p, True))
        else:
            errors.append(f"{p}: no such file or directory")
    return found, errors


def default_run_name(path: Path) -> str:
    stem = path.name
    for suffix in (".jsonl", ".ndjson", ".json", ".eval"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    if stem.lower() in _GENERIC_STEMS and path.parent.name:
        return path.parent.resolve().name
    return stem


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


Progress = Callable[[str, int], None]  # (file name, records so far in this file)


def import_paths(
    db: Store | None,
    paths: Sequence[str | Path],
    *,
    run: str | None = None,
    check: bool = False,
    progress: Progress | None = None,
    on_file: Callable[[FileResult], None] | None = None,
) -> ImportSummary:
    """Import (or with ``check``, only validate) every file under ``paths``."""
    summary = ImportSummary()
    files, summary.errors = discover(paths)
    for path, direct in files:
        result = import_file(db, path, run=run, check=check, progress=progress, direct=direct)
        summary.files.append(result)
        if on_file:
            on_file(result)
    return summary


def import_file(
    db: Store | None,
    path: Path,
    *,
    run: str | None = None,
    check: bool = False,
    progress: Progress | None = None,
    direct: bool = True,
) -> FileResult:
    name = str(path)
    result = FileResult(name)
    try:
        fmt = ingest.sniff(path)
    except IngestError as e:
        if not direct and e.reason.startswith("unknown format"):
            result.ignored = True
        result.error = str(e)
        return result
    result.format = fmt.NAME
    if getattr(fmt, "KIND", "trials") == "tasks":
        return _list_tasks(fmt, path, result)
    if getattr(fmt, "KIND", "trials") == "pairs":
        return _import_pairs(db, fmt, path, result, check)
    default_run = run or default_run_name(path)
    try:
        if check or db is None:
            _check_file(fmt.parse(path), result, run, default_run, progress)
        else:
            with db.transaction():
                _write_file(db, fmt.parse(path), result, run, default_run, progress)
                db.execute(
                    "INSERT INTO imports (file, format, added, already, skipped, at) VALUES (?, ?, ?, ?, ?, ?)",
                    [name, fmt.NAME, result.added, result.already, len(result.skipped), _now()],
                )
    except IngestError as e:
        result.error = str(e)
        result.added = 0
        result.new_ids.clear()
        result.runs.clear()
        result.tasks.clear()
    except (OSError, MemoryError) as e:
        result.error = f"{name}: {e}"
        result.added = 0
        result.new_ids.clear()
    return result


def _list_tasks(fmt: ModuleType, path: Path, result: FileResult) -> FileResult:
    """A file that lists tasks (a `reviewer export` task list): check every line, keep the tasks."""
    try:
        result.listed, result.skipped = fmt.read_tasks(path)
    except IngestError as e:
        result.error = str(e)
    return result


def _import_pairs(
    db: Store | None, fmt: ModuleType, path: Path, result: FileResult, check: bool
) -> FileResult:
    """A pair-judgement file: every line checked; unless checking, written in one transaction."""
    from reviewer.store.pairs import PairCounts, write_pair_records

    try:
        records, result.skipped = fmt.read_pairs(path)
    except IngestError as e:
        result.error = str(e)
        return result
    if check or db is None:
        result.pairs = PairCounts(checked=len(records), judges={r.judge for r in records})
        return result
    with db.transaction():
        counts = result.pairs = write_pair_records(db, records)
        db.execute(
            "INSERT INTO imports (file, format, added, already, skipped, at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                str(path),
                fmt.NAME,
                counts.added + counts.updated,
                counts.already,
                len(result.skipped),
                _now(),
            ],
        )
    return result


def pairs_summary(summary: ImportSummary, check: bool) -> str | None:
    """One line about the pair-judgement files of an import, or None when there were none."""
    files = [f.pairs for f in summary.files if f.pairs is not None]
    if not files:
        return None
    judges = len({j for c in files for j in c.judges})
    of = f"{judges} judge{'' if judges == 1 else 's'}"
    if check:
        return f"pairs: {sum(c.checked for c in files)} valid pair judgements ({of})"
    added, updated = sum(c.added for c in files), sum(c.updated for c in files)
    already, refs = sum(c.already for c in files), sum(c.unresolved_refs for c in files)
    line = (
        f"pairs: {added} pair judgements added, {updated} updated, {already} already stored ({of})"
    )
    if refs:
        line += f"; {refs} trial refs not in the store, kept as given (they open once imported)"
    return line


def _write_file(
    db: Store,
    records: Iterable[ingest.Record],
    result: FileResult,
    run_override: str | None,
    default_run: str,
    progress: Progress | None,
) -> None:
    now = _now()
    indexes: dict[str, RunIndex] = {}
    seen: dict[str, int | None] = {}  # id -> line, within this file
    batch: list[Pending] = []
    seq = next_seq(db)
    count = 0
    for rec in records:
        count += 1
        if isinstance(rec, Skip):
            result.skipped.append(rec)
            continue
        run = run_override or rec.run or default_run
        index = indexes.get(run)
        if index is None:
            index = indexes[run] = RunIndex(db, run)
            ensure_run(db, run, result.file, result.format or "", now)
        pending = _place(rec, run, index, seen, result)
        if pending is None:
            continue
        batch.append(pending)
        if len(batch) >= BATCH:
            seq = write_batch(db, batch, seq, result.file, now)
            batch.clear()
            if progress:
                progress(result.file, count)
    if batch:
        write_batch(db, batch, seq, result.file, now)
    if progress:
        progress(result.file, count)


def _place(
    rec: Trial, run: str, index: RunIndex, seen: dict[str, int | None], result: FileResult
) -> Pending | None:
    """Give the trial its id and trial number, or record why it is skipped or already stored."""
    tid = trial_id(run, rec)
    where = rec.source_line
    if tid in seen:
        first = seen[tid]
        result.skipped.append(
            Skip(
                result.file,
                where,
                f"repeats the trial at line {first}" if first else "repeated trial",
            )
        )
        return None
    seen[tid] = where
    result.runs.add(run)
    result.tasks.add((run, rec.task_id))
    if tid in index.ids:
        result.already += 1
        return None
    if rec.trial is None:
        trial_no = index.max_trial.get(rec.task_id, 0) + 1
    else:
        trial_no = rec.trial
        other = index.by_slot.get((rec.task_id, trial_no))
        if other is not None:
            source = other[1]
            if source == result.file:
                why = f"trial {trial_no} of task {rec.task_id!r} in run {run!r} is already taken by a different record"
            else:
                why = (
                    f"trial {trial_no} of task {rec.task_id!r} in run {run!r} is already stored from {source}; "
                    "use --run NAME to import this file as a run of its own"
                )
            result.skipped.append(Skip(result.file, where, why))
            return None
    index.add(rec.task_id, trial_no, tid, result.file)
    result.added += 1
    result.new_ids.append(tid)
    return Pending(tid, run, trial_no, rec)


def _check_file(
    records: Iterable[ingest.Record],
    result: FileResult,
    run_override: str | None,
    default_run: str,
    progress: Progress | None,
) -> None:
    seen: dict[str, int | None] = {}
    slots: dict[tuple[str, str, int], int | None] = {}
    count = 0
    for rec in records:
        count += 1
        if isinstance(rec, Skip):
            result.skipped.append(rec)
            continue
        run = run_override or rec.run or default_run
        tid = trial_id(run, rec)
        if tid in seen:
            result.skipped.append(
                Skip(result.file, rec.source_line, f"repeats the trial at line {seen[tid]}")
            )
            continue
        seen[tid] = rec.source_line
        if rec.trial is not None:
            slot = (run, rec.task_id, rec.trial)
            if slot in slots:
                result.skipped.append(
                    Skip(
                        result.file,
                        rec.source_line,
                        f"trial {rec.trial} of task {rec.task_id!r} already given at line {slots[slot]}",
                    )
                )
                continue
            slots[slot] = rec.source_line
        result.trials += 1
        result.runs.add(run)
        result.tasks.add((run, rec.task_id))
        if progress and count % BATCH == 0:
            progress(result.file, count)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
