"""Reading one file into the store, by its format's kind: trials are written (one transaction per file,
so a file that fails halfway leaves the database as it was), pair judgements are written, task lists
are checked and listed. The import job (``imports.py``) calls this for every file it finds."""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from reviewer import ingest
from reviewer.ingest import atif, claude_code, swe_agent
from reviewer.ingest.base import Format, IngestError, Item
from reviewer.ingest.files import (
    BATCH,
    PROGRESS_EVERY,
    Progress,
    check_trials,
    default_run_name,
    newer_version,
    path_text,
    place_of,
    repeat_reason,
    screen,
    skip_of,
    trial_id,
)
from reviewer.ingest.outcome import GRADED_HEAD, ImportOptions, Tally, apply_options
from reviewer.metrics.rules import Rule, check_trial
from reviewer.models import FAIL, PASS, PairRecord, PassRule, Skip, TaskEntry, Trial, threshold_text
from reviewer.record import MAX_DEPTH
from reviewer.store.db import Store
from reviewer.store.pairs import PairCounts, write_pair_records
from reviewer.store.violations import add_violations
from reviewer.store.writer import (
    Pending,
    RunIndex,
    SessionIndex,
    StoredVersion,
    TaskStats,
    ensure_run,
    import_cache,
    next_seq,
    record_import,
    replace_trial,
    run_key_of,
    set_pass_rule,
    write_batch,
    write_task_stats,
)
from reviewer.workflows import audit

CANCEL_EVERY = 256  # records between two looks for a cancel inside a file, whatever they are


class Cancelled(Exception):
    """Raised inside a file's transaction when the caller asked to stop; the file is rolled back."""


@dataclass
class Session:
    """What one import job keeps across its files: each run's index (read once, then only what was
    added since) and the active rules, which every file's new trials are checked against in the
    file's own transaction (so a kill after the commit cannot lose their violations)."""

    rules: Sequence[Rule] = ()
    #: rules set by this import (a folder's rules.toml): the tools they name that no trial called
    #: yet, and the tools the trials call (stored before, then this import's), for the warning of
    #: a rule no trial can break (``active_rules.unused_tools``), said when the files are in
    tools_wanted: set[str] = field(default_factory=set)
    tools_called: set[str] = field(default_factory=set)
    indexes: dict[str, RunIndex] = field(default_factory=dict)
    sessions: dict[str, SessionIndex] = field(default_factory=dict)  # by run (SESSION_KEY)
    options: ImportOptions = field(default_factory=ImportOptions)
    #: --check writes nothing: the eval or configuration each run name of the checked files holds
    #: (RUN_KEY), so a later file of another one is named ``name (2)`` as the import would
    checked_keys: dict[str, str | None] = field(default_factory=dict)


@dataclass
class FileResult:
    file: str
    format: str | None = None
    added: int = 0
    already: int = 0
    updated: int = 0  # stored sessions replaced by a newer version of themselves (SESSION_KEY)
    skipped: list[Skip] = field(default_factory=list)
    error: str | None = None
    ignored: bool = False  # found by walking a folder, not a format we read
    quiet: bool = (
        False  # ignored without a word: Harbor's result.json / config.json of a trajectory, an
        # ATIF continuation beside the file it continues
    )
    cancelled: bool = False  # stopped by the caller; nothing of it was written
    runs: set[str] = field(default_factory=set)
    tasks: set[tuple[str, str]] = field(default_factory=set)
    trials: int = 0  # valid trials seen (for --check)
    new_ids: list[str] = field(default_factory=list)
    updated_ids: list[str] = field(default_factory=list)
    listed: list[TaskEntry] | None = None  # a task list's tasks: checked and listed, never stored
    pairs: PairCounts | None = None  # a pair-judgement file: what writing (or checking) it did
    violations: int = 0  # rule violations found in the new trials (written with them)
    warnings: list[str] = field(default_factory=list)  # graded rewards, a changed pass rule, …
    outcomes: dict[str, int] = field(default_factory=dict)  # new trials by outcome
    joined: int = 0  # trials given an outcome from --outcomes FILE
    considered: int = 0  # trials --outcomes FILE could give an outcome (SWE-agent, OpenHands)
    unmatched: list[str] = field(default_factory=list)  # instance ids --outcomes FILE lacks
    rule: PassRule | None = None  # the rule that decided this file's outcomes
    not_applied: list[str] = field(default_factory=list)  # options its format does not use


def import_file(
    db: Store | None,
    path: Path,
    *,
    run: str | None = None,
    check: bool = False,
    progress: Progress | None = None,
    direct: bool = True,
    cancelled: Callable[[], bool] | None = None,
    session: Session | None = None,
) -> FileResult:
    """Import (or with ``check`` / without a store, only validate) one file, dispatching on its kind.

    ``check`` and importing read the trials through the same checks (``ingest.files.screen``), so
    ``--check`` reports exactly the records an import would skip."""
    result = FileResult(path_text(path))
    session = session if session is not None else Session()
    try:
        fmt = ingest.sniff(path)
    except IngestError as e:
        side = e.reason.startswith("unknown format") and atif.harbor_side_file(path)
        if not direct and e.reason.startswith("unknown format"):
            result.ignored = True
            result.quiet = side
        result.error = str(e)
        if direct and side:
            result.error = (
                f"{result.file}: Harbor's {path.name}, read with the trajectories it describes: "
                "import the trial or job folder"
            )
        return result
    result.format = fmt.NAME
    if not direct and fmt is swe_agent and swe_agent.is_predictions(path):
        # a SWE-agent run folder holds its patches beside the trajectories: passed over, said once
        result.ignored = True
        result.error = (
            f"{result.file}: SWE-bench predictions (patches), not trajectories: "
            "the .traj files beside it are the run"
        )
        return result
    if not direct and fmt is claude_code and claude_code.subagent_beside_session(path):
        result.ignored = result.quiet = True  # read with the session it belongs to, beside it
        result.error = f"{result.file}: a subagent's file, read with its session"
        return result
    if not direct and fmt is atif and atif.continuation_beside_base(path):
        result.ignored = result.quiet = True  # read with the file it continues, beside it
        result.error = f"{result.file}: a continuation, read with the file it continues"
        return result
    try:
        if fmt.KIND == "tasks":
            _list_tasks(fmt, path, result)
        elif fmt.KIND == "pairs":
            _import_pairs(None if check else db, fmt, path, result)
        elif check or db is None:
            default_run = run or default_run_name(path)
            tally = Tally()
            records = screen(
                apply_options(fmt.parse(path), session.options, tally, fmt), result.file, tally
            )
            if run is None and (key := getattr(fmt, "RUN_KEY", None)):
                held = session.checked_keys
                records = _distinct_runs(
                    _checked_held(held), records, key, default_run, result, held
                )
            found = check_trials(records, result.file, run, default_run, progress)
            result.trials, result.runs, result.tasks = found.trials, found.runs, found.tasks
            result.skipped = found.skipped
            result.warnings += tally.warnings(result.file, session.options)
            result.joined, result.considered = tally.joined, tally.considered
            result.unmatched, result.not_applied = tally.unmatched, tally.not_applied
        else:
            _import_trials(db, fmt, path, result, run, progress, cancelled, session)
    except (IngestError, Cancelled) as e:
        _forget(result, session)
        if isinstance(e, Cancelled):
            result.cancelled = True
        else:
            result.error = str(e)
    except RecursionError:
        _forget(result, session)
        result.error = f"{result.file}: JSON nested deeper than {MAX_DEPTH} levels"
    except OSError as e:
        _forget(result, session)
        result.error = f"{result.file}: {e.strerror or e}"
    except sqlite3.IntegrityError as e:
        # a row the database refuses (on PostgreSQL, two task ids that differ only by a NUL, which
        # it keeps as U+2400): this file is rolled back and the next is read
        _forget(result, session)
        why = str(e).split(" CONTEXT: ")[0]  # the server's place in its batch, not the file's
        result.error = f"{result.file}: cannot import: the database refused a row ({why})"
    except (MemoryError, OverflowError, UnicodeError) as e:
        # the checks in ingest.files.screen should stop every such record; this keeps a file we
        # did not foresee to one line and leaves the database as it was
        _forget(result, session)
        result.error = f"{result.file}: cannot import: {type(e).__name__}: {e}"
    return result


def _forget(result: FileResult, session: Session) -> None:
    """A file that was rolled back adds nothing; the run indexes may hold its trials, so they go."""
    result.added = result.updated = 0
    result.updated_ids.clear()
    result.violations = 0
    result.joined = result.considered = 0
    result.outcomes.clear()
    result.new_ids.clear()
    result.runs.clear()
    result.tasks.clear()
    session.indexes.clear()
    session.sessions.clear()


def _list_tasks(fmt: Format, path: Path, result: FileResult) -> None:
    """A task list (`reviewer export`): check every line, keep the tasks to report them."""
    result.listed = []
    for item in screen(fmt.parse(path), result.file):
        if isinstance(item, Skip):
            result.skipped.append(item)
        elif isinstance(item, TaskEntry):
            result.listed.append(item)


def _import_pairs(db: Store | None, fmt: Format, path: Path, result: FileResult) -> None:
    """A pair-judgement file: every line checked; with a store, written in one transaction."""
    records: list[PairRecord] = []
    for item in screen(fmt.parse(path), result.file):
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
    session: Session,
) -> None:
    default_run = run or default_run_name(path)
    tally = Tally()
    earlier: dict[str, str | None] = {}  # each run of this file: the rule it was stored with
    with import_cache(db), db.transaction(), _collector_paused():
        records = screen(
            apply_options(fmt.parse(path), session.options, tally, fmt), result.file, tally
        )
        if key := getattr(fmt, "RUN_KEY", None):
            records = (
                _distinct_runs(partial(run_key_of, db), records, key, default_run, result)
                if run is None
                else _mixed_run(db, records, key, run, result)
            )
        _write_trials(
            db,
            records,
            result,
            run,
            default_run,
            progress,
            cancelled,
            session,
            earlier,
            getattr(fmt, "SESSION_KEY", None),
        )
        result.warnings += tally.warnings(result.file, session.options)
        result.joined, result.considered = tally.joined, tally.considered
        result.unmatched, result.not_applied = tally.unmatched, tally.not_applied
        result.rule = tally.applied_rule(session.options)
        _store_rule(db, result, result.rule, earlier)
        record_import(
            db, result.file, fmt.NAME, result.added, result.already, len(result.skipped), _now()
        )


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading a file allocates millions of objects that hold no reference cycles (parsed JSON, trials),
    so Python's cycle collector would run dozens of full passes over the pending batch for nothing;
    it is paused for the file and runs again after it (the batch is freed by reference counting)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _store_rule(
    db: Store, result: FileResult, rule: PassRule, earlier: dict[str, str | None]
) -> None:
    """A run this file made stores the rule that actually decided its outcomes. A run stored before
    under a threshold of its own (chosen on its first import or by `reviewer rescore`) judges this
    file's reward-decided trials by it when the file was read by the default rule; a run stored
    under another rule gets a warning."""
    from reviewer.store.rescore import rescore

    for name, before in earlier.items():
        if before is None:
            set_pass_rule(db, name, rule.to_json())
            continue
        stored = PassRule.from_json(before)
        if stored == rule:
            continue
        if (
            rule.is_default
            and stored.threshold is not None
            and stored.field is None
            and stored.scorer is None
        ):
            got = rescore(
                db,
                name,
                stored.threshold,
                apply=True,
                only={*result.new_ids, *result.updated_ids},
            )
            moved = got.to_pass - got.to_fail
            for outcome, by in ((PASS, moved), (FAIL, -moved)):
                if by and (left := result.outcomes.get(outcome, 0) + by) > 0:
                    result.outcomes[outcome] = left
                elif by:
                    result.outcomes.pop(outcome, None)
            # the file's "rewards look graded … unless you set a threshold": the run has one
            result.warnings = [w for w in result.warnings if GRADED_HEAD not in w]
            if got.decided:
                result.warnings.append(
                    f"{result.file}: run {name!r} is judged by {stored.describe()}; its "
                    f"{got.decided} new trial{'s' * (got.decided != 1)} decided by a reward "
                    f"follow it ({got.to_pass} that the default rule failed pass by it)"
                )
            continue
        if _plain_threshold(rule) and _plain_threshold(stored):
            # two thresholds in one run would make its pass rates mean two things at once
            assert rule.threshold is not None and stored.threshold is not None
            raise IngestError(
                result.file,
                f"run {name!r} is judged by {stored.describe()} and this import asks for "
                f"{rule.describe()}: one run has one rule, so nothing of this file was stored; "
                f"import it with --pass-threshold {threshold_text(stored.threshold)}, as another "
                f"run (--run NAME), or rescore the stored run first (reviewer rescore {name} "
                f"--pass-threshold {threshold_text(rule.threshold)})",
            )
        again = (
            f"; to judge the stored run by it: reviewer rescore {name} "
            f"--pass-threshold {threshold_text(rule.threshold)}"
            if rule.threshold is not None and rule.field is None and rule.scorer is None
            else ""
        )
        result.warnings.append(
            f"{result.file}: run {name!r} is judged by {stored.describe()}; these trials use "
            f"{rule.describe()} (use --run NAME to keep them apart{again})"
        )


def _plain_threshold(rule: PassRule) -> bool:
    """A rule that is a reward threshold alone (no success field, no scorer), not the default."""
    return (
        not rule.is_default
        and rule.threshold is not None
        and rule.field is None
        and rule.scorer is None
    )


def _checked_held(held: dict[str, str | None]) -> Callable[[str, str], tuple[bool, str | None]]:
    """``run_key_of`` for --check, over the runs of the files checked so far (nothing is stored)."""

    def of(run: str, key: str) -> tuple[bool, str | None]:
        return run in held, held.get(run)

    return of


def _distinct_runs(
    run_key: Callable[[str, str], tuple[bool, str | None]],
    records: Iterable[Item],
    key: str,
    default_run: str,
    result: FileResult,
    remember: dict[str, str | None] | None = None,
) -> Iterator[Item]:
    """Trials whose format records what makes their run that run (Inspect: which eval; SWE-agent,
    OpenHands, tau-bench, tau2: the model and configuration, ``metadata[key]``): a stored run of
    that name holding another is another run, so these go to ``name (2)``, ``name (3)``, … with one
    line when that run is new (the same eval or configuration imported again finds its own run,
    silently)."""
    chosen: dict[tuple[str, str | None], str] = {}
    for item in records:
        if isinstance(item, Trial):
            base = item.run or default_run
            ident = item.metadata.get(key)
            ident = None if ident is None else str(ident)
            name = chosen.get((base, ident))
            if name is None:
                name, n, first = base, 1, None
                while True:
                    exists, held = run_key(name, key)
                    if not exists or held is None or held == ident or ident is None:
                        first = None if exists else first  # found its own run: said before
                        break
                    first = first or held
                    n += 1
                    name = f"{base} ({n})"
                chosen[(base, ident)] = name
                if first is not None:
                    done = "imported" if remember is None else "would be imported"
                    result.warnings.append(
                        f"{result.file}: run {base!r} holds another {_KEY_WORDS.get(key, key)} "
                        f"({first}; this file: {ident}): {done} as run {name!r} "
                        "(--run NAME to name it yourself)"
                    )
            item.run = name
        yield item
    if remember is not None:  # --check: what each run now holds, for the files checked next
        for (_, ident), name in chosen.items():
            remember.setdefault(name, ident)


def _mixed_run(
    db: Store, records: Iterable[Item], key: str, run: str, result: FileResult
) -> Iterator[Item]:
    """``--run NAME`` is obeyed, but a stored run of that name holding another eval, model or
    configuration than this file's gets one line saying the run now mixes them."""
    exists, held = run_key_of(db, run, key)
    told = not exists or held is None
    for item in records:
        if not told and isinstance(item, Trial):
            ident = item.metadata.get(key)
            if ident is not None and str(ident) != held:
                told = True
                result.warnings.append(
                    f"{result.file}: run {run!r} holds another {_KEY_WORDS.get(key, key)} "
                    f"({held}; this file: {ident}): imported into it as --run asked, so its "
                    "pass^k mixes the two (another --run NAME keeps them apart)"
                )
        yield item


#: What a format's RUN_KEY is, in words, for the line that names a run apart.
_KEY_WORDS = {"eval": "eval", "run_config": "model or configuration"}


def _write_trials(
    db: Store,
    records: Iterable[Item],
    result: FileResult,
    run_override: str | None,
    default_run: str,
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
    session: Session,
    earlier: dict[str, str | None],
    session_key: str | None = None,
) -> None:
    now = _now()
    versions: dict[str, SessionIndex] = {}  # the runs' stored sessions, up to date (SESSION_KEY)
    indexes = session.indexes
    used: dict[str, RunIndex] = {}  # the runs of this file, their indexes brought up to date
    seen: dict[str, str | None] = {}  # id -> where in this file ("line 7" or an archive member)
    batch: list[Pending] = []
    stats: TaskStats = {}  # written once for the file (write_batch)
    seq = next_seq(db)
    count = 0
    due = time.monotonic() + PROGRESS_EVERY
    for rec in records:
        count += 1
        if count % CANCEL_EVERY == 0 and cancelled is not None and cancelled():
            raise Cancelled(result.file)  # also when no batch fills (skipped or stored records)
        if progress and time.monotonic() >= due:
            progress(result.file, count)  # a file of a few big records moves too
            due = time.monotonic() + PROGRESS_EVERY
        if isinstance(rec, Skip):
            result.skipped.append(rec)
            continue
        if not isinstance(rec, Trial):
            continue
        run = run_override or rec.run or default_run
        index = used.get(run)
        if index is None:
            index = indexes.get(run)
            if index is None:
                index = indexes[run] = RunIndex(db, run)
            else:
                index.refresh(db)
            used[run] = index
            rule = session.options.rule.to_json()  # until the file is read: see _store_rule
            earlier[run] = ensure_run(db, run, result.file, result.format or "", now, rule)
        if session_key is not None and isinstance(key := rec.metadata.get(session_key), str):
            known = versions.get(run)
            if known is None:
                known = session.sessions.get(run)
                if known is None:
                    known = session.sessions[run] = SessionIndex(db, run, session_key)
                else:
                    known.refresh(db)
                versions[run] = known
            write_task_stats(db, stats)  # a trial replaced finds its task's row up to date
            if _same_session(db, rec, run, known, key, result, now, session):
                continue
        pending = _place(rec, run, index, seen, result)
        if pending is None:
            continue
        batch.append(pending)
        outcome = rec.outcome
        result.outcomes[outcome] = result.outcomes.get(outcome, 0) + 1
        if len(batch) >= BATCH:
            if cancelled is not None and cancelled():
                raise Cancelled(result.file)
            seq = write_batch(db, batch, seq, result.file, now, stats)
            audit.fingerprint_batch(db, batch, seq - len(batch), new=True)
            result.violations += _check_rules(db, batch, session)
            batch.clear()
            if progress:
                progress(result.file, count)
                due = time.monotonic() + PROGRESS_EVERY
    if cancelled is not None and cancelled():
        raise Cancelled(result.file)
    if batch:
        seq = write_batch(db, batch, seq, result.file, now, stats)
        audit.fingerprint_batch(db, batch, seq - len(batch), new=True)
        result.violations += _check_rules(db, batch, session)
    write_task_stats(db, stats)
    for index in used.values():
        index.written(seq - 1)
    if progress:
        progress(result.file, count)


def _same_session(
    db: Store,
    rec: Trial,
    run: str,
    known: SessionIndex,
    key: str,
    result: FileResult,
    now: str,
    session: Session,
) -> bool:
    """A trial whose session (``key``) is stored already in ``run`` and task: the stored trial is
    put in its place when this version is newer (same id, trial number, labels and verdicts),
    else it counts as already stored. False for a session not stored yet, which is imported as
    a new trial (a file holds a session once; the next file's refresh reads it)."""
    old = known.by_key.get(key)
    if old is None or old.task_id != rec.task_id:
        return False
    result.runs.add(run)
    result.tasks.add((run, rec.task_id))
    if not newer_version(rec, old.ended_at, old.n_messages):
        result.already += 1
        return True
    pending = Pending(old.id, run, old.trial_no, rec)
    seq = replace_trial(db, pending, result.file, now)
    audit.fingerprint_batch(db, [pending], seq)
    result.violations += _check_rules(db, [pending], session)
    known.put(key, StoredVersion(old.id, rec.task_id, old.trial_no, len(rec.messages), _ended(rec)))
    result.updated += 1
    result.updated_ids.append(old.id)
    return True


def _ended(trial: Trial) -> str | None:
    end = trial.metadata.get("ended_at")
    return end if isinstance(end, str) else None


def _check_rules(db: Store, batch: Sequence[Pending], session: Session) -> int:
    """Store the violations of the active rules in ``batch`` (in the file's transaction), and
    take the tools it calls off the rules' tools no trial called yet (``Session.tools_wanted``)."""
    rules = session.rules
    if session.tools_wanted:
        for p in batch:
            session.tools_called.update(c.name for m in p.trial.messages for c in m.tool_calls)
        session.tools_wanted -= session.tools_called
    if not rules:
        return 0
    rows = [
        (p.id, v.rule_id, v.severity, v.message_index, v.detail)
        for p in batch
        for v in check_trial(p.trial, rules)
    ]
    return add_violations(db, rows)


def _place(
    rec: Trial, run: str, index: RunIndex, seen: dict[str, str | None], result: FileResult
) -> Pending | None:
    """Give the trial its id and trial number, or record why it is skipped or already stored."""
    tid = trial_id(run, rec)
    if tid in seen:
        result.skipped.append(skip_of(result.file, rec, repeat_reason(rec, seen[tid])))
        return None
    seen[tid] = place_of(rec)
    result.runs.add(run)
    result.tasks.add((run, rec.task_id))
    if tid in index.ids:
        result.already += 1
        return None
    if rec.trial is None:
        trial_no = index.max_trial.get(rec.task_id, 0) + 1
        if trial_no >= 1 << 63:
            why = f"no trial number left for task {rec.task_id!r} after {trial_no - 1}; give one"
            result.skipped.append(skip_of(result.file, rec, why))
            return None
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
            result.skipped.append(skip_of(result.file, rec, why))
            return None
    index.add(rec.task_id, trial_no, tid, result.file)
    result.added += 1
    result.new_ids.append(tid)
    return Pending(tid, run, trial_no, rec)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
