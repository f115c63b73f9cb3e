"""Reading one file into the store, by its format's kind: trials are written (one transaction per file,
so a file that fails halfway leaves the database as it was), pair judgements are written, task lists
are checked and listed. The import job (``imports.py``) calls this for every file it finds."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from reviewer import ingest
from reviewer.ingest.base import Format, IngestError, Item
from reviewer.ingest.files import BATCH, Progress, check_trials, default_run_name, trial_id
from reviewer.models import PairRecord, Skip, TaskEntry, Trial
from reviewer.store.db import Store
from reviewer.store.pairs import PairCounts, write_pair_records
from reviewer.store.writer import (
    Pending,
    RunIndex,
    ensure_run,
    next_seq,
    record_import,
    write_batch,
)

CANCEL_EVERY = 256  # records between two looks for a cancel inside a file, whatever they are


class Cancelled(Exception):
    """Raised inside a file's transaction when the caller asked to stop; the file is rolled back."""


@dataclass
class FileResult:
    file: str
    format: str | None = None
    added: int = 0
    already: int = 0
    skipped: list[Skip] = field(default_factory=list)
    error: str | None = None
    ignored: bool = False  # found by walking a folder, not a format we read
    cancelled: bool = False  # stopped by the caller; nothing of it was written
    runs: set[str] = field(default_factory=set)
    tasks: set[tuple[str, str]] = field(default_factory=set)
    trials: int = 0  # valid trials seen (for --check)
    new_ids: list[str] = field(default_factory=list)
    listed: list[TaskEntry] | None = None  # a task list's tasks: checked and listed, never stored
    pairs: PairCounts | None = None  # a pair-judgement file: what writing (or checking) it did


def import_file(
    db: Store | None,
    path: Path,
    *,
    run: str | None = None,
    check: bool = False,
    progress: Progress | None = None,
    direct: bool = True,
    cancelled: Callable[[], bool] | None = None,
) -> FileResult:
    """Import (or with ``check`` / without a store, only validate) one file, dispatching on its kind."""
    result = FileResult(str(path))
    try:
        fmt = ingest.sniff(path)
    except IngestError as e:
        if not direct and e.reason.startswith("unknown format"):
            result.ignored = True
        result.error = str(e)
        return result
    result.format = fmt.NAME
    try:
        if fmt.KIND == "tasks":
            _list_tasks(fmt, path, result)
        elif fmt.KIND == "pairs":
            _import_pairs(None if check else db, fmt, path, result)
        elif check or db is None:
            default_run = run or default_run_name(path)
            found = check_trials(fmt.parse(path), result.file, run, default_run, progress)
            result.trials, result.runs, result.tasks = found.trials, found.runs, found.tasks
            result.skipped = found.skipped
        else:
            _import_trials(db, fmt, path, result, run, progress, cancelled)
    except (IngestError, Cancelled) as e:
        _forget(result)
        if isinstance(e, Cancelled):
            result.cancelled = True
        else:
            result.error = str(e)
    except (OSError, MemoryError) as e:
        _forget(result)
        result.error = f"{result.file}: {e}"
    return result


def _forget(result: FileResult) -> None:
    """A file that was rolled back adds nothing."""
    result.added = 0
    result.new_ids.clear()
    result.runs.clear()
    result.tasks.clear()


def _list_tasks(fmt: Format, path: Path, result: FileResult) -> None:
    """A task list (`reviewer export`): check every line, keep the tasks to report them."""
    result.listed = []
    for item in fmt.parse(path):
        if isinstance(item, Skip):
            result.skipped.append(item)
        elif isinstance(item, TaskEntry):
            result.listed.append(item)


def _import_pairs(db: Store | None, fmt: Format, path: Path, result: FileResult) -> None:
    """A pair-judgement file: every line checked; with a store, written in one transaction."""
    records: list[PairRecord] = []
    for item in fmt.parse(path):
        if isinstance(item, Skip):
            result.skipped.append(item)
        elif isinstance(item, PairRecord):
            records.append(item)
    if db is None:
        result.pairs = PairCounts(checked=len(records), judges={r.judge for r in records})
        return
    with db.transaction():
        counts = result.pairs = write_pair_records(db, records)
        record_import(
            db,
            result.file,
            fmt.NAME,
            counts.added + counts.updated,
            counts.already,
            len(result.skipped),
            _now(),
        )


def _import_trials(
    db: Store,
    fmt: Format,
    path: Path,
    result: FileResult,
    run: str | None,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> None:
    default_run = run or default_run_name(path)
    with db.transaction():
        _write_trials(db, fmt.parse(path), result, run, default_run, progress, cancelled)
        record_import(
            db, result.file, fmt.NAME, result.added, result.already, len(result.skipped), _now()
        )


def _write_trials(
    db: Store,
    records: Iterable[Item],
    result: FileResult,
    run_override: str | None,
    default_run: str,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
) -> None:
    now = _now()
    indexes: dict[str, RunIndex] = {}
    seen: dict[str, int | None] = {}  # id -> line, within this file
    batch: list[Pending] = []
    seq = next_seq(db)
    count = 0
    for rec in records:
        count += 1
        if count % CANCEL_EVERY == 0 and cancelled is not None and cancelled():
            raise Cancelled(result.file)  # also when no batch fills (skipped or stored records)
        if isinstance(rec, Skip):
            result.skipped.append(rec)
            continue
        if not isinstance(rec, Trial):
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
            if cancelled is not None and cancelled():
                raise Cancelled(result.file)
            seq = write_batch(db, batch, seq, result.file, now)
            batch.clear()
            if progress:
                progress(result.file, count)
    if cancelled is not None and cancelled():
        raise Cancelled(result.file)
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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
