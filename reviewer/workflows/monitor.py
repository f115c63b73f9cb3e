"""Online evaluation of production traffic: the one path behind `reviewer monitor` and the app's
Monitor screen. Import (optional), analyse the new conversations once (time, cheap checks, outcome
signals), judge the seeded sample through the judge workflow (cache, cost cap), build the windows,
find alerts, and route flagged conversations to a review queue."""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# re-exported for the faces (they import workflows only)
from reviewer.config import MAX_BASELINE_WINDOWS
from reviewer.metrics.alerts import Detectable as Detectable
from reviewer.metrics.monitor import metric_words as metric_words
from reviewer.metrics.monitor_alerts import Alert
from reviewer.store.db import Store
from reviewer.store.monitor import trial_names as trial_names
from reviewer.text import unknown_run
from reviewer.workflows.monitor_report import MonitorReport

Note = Callable[[str], None]


class MonitorError(Exception):
    """A usage or data problem (a bad time, an unknown run, a bad config): one line, exit 2."""


@dataclass(frozen=True)
class MonitorRequest:
    """What to watch and how; None means the [monitor] setting, else the default."""

    runs: Sequence[str] = ()
    window: str | None = None  # day | hour
    since: str | None = None  # an ISO time: windows from then on are reported
    sample: float | None = None  # share of conversations the judge grades
    seed: int | None = None
    max_cost: float | None = None  # the judge's cost cap for this pass
    judge: bool = True
    baseline_windows: int | None = None
    baseline: str | None = None  # recent | same-weekday | same-hour
    queue: str | None = None  # route flagged conversations to this review queue
    queue_size: int = 50
    labeler: str = ""
    imports: Sequence[str | Path] = ()


def _settings(
    req: MonitorRequest, cfg: Any
) -> tuple[str, float, int, float | None, int, list[str], str]:
    m = cfg.monitor
    size = req.window or m.get("window", "day")
    if size not in ("day", "hour"):
        raise MonitorError(f"window must be day or hour, got {size!r}")
    sample = req.sample if req.sample is not None else float(m.get("sample", 0.02))
    if not 0 <= sample <= 1:
        raise MonitorError(f"--sample must be a share between 0 and 1, got {sample:g}")
    seed = req.seed if req.seed is not None else int(m.get("seed", 0))
    max_cost = req.max_cost if req.max_cost is not None else m.get("max_cost")
    base = (
        req.baseline_windows
        if req.baseline_windows is not None
        else int(m.get("baseline_windows", 7))
    )
    if not 1 <= base <= MAX_BASELINE_WINDOWS:
        raise MonitorError(
            f"--baseline-windows must be 1 to {MAX_BASELINE_WINDOWS:,}"
            if base > 0
            else "--baseline-windows must be 1 or more"
        )
    from reviewer.metrics.alerts import BASELINES, lag_of

    kind = req.baseline or m.get("baseline", "recent")
    if kind not in BASELINES:
        raise MonitorError(f"--baseline must be one of {', '.join(BASELINES)}, got {kind!r}")
    try:
        lag_of(kind, size)
    except ValueError as e:
        raise MonitorError(f"--baseline {kind}: {e} (--window hour)") from e
    return size, sample, seed, max_cost, base, list(m.get("signals", [])), kind


def checks_version(db: Store, signals: Sequence[str]) -> str:
    """What stored results depend on: the checks' definitions, the active rules, the signals."""
    from reviewer.metrics.monitor import CHECKS_VERSION
    from reviewer.store.violations import latest_rule_set

    rules = latest_rule_set(db)
    key = json.dumps([CHECKS_VERSION, rules.digest if rules else None, list(signals)])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def analyse_new(db: Store, runs: Sequence[str], signals: Sequence[str], version: str) -> int:
    """Compute and store the facts of every conversation not analysed under ``version``."""
    from reviewer.metrics.monitor import conversation_facts
    from reviewer.record import decode
    from reviewer.store.monitor import pending_inputs, save_results

    batch: list[Any] = []
    done = 0
    for item in pending_inputs(db, runs, version):
        obj = json.loads(item.record)
        trial = decode(item.record, run=item.run, task_id=item.task_id, trial=item.trial)
        f = conversation_facts(
            item.trial_id,
            obj if isinstance(obj, dict) else {},
            trial.messages,
            item.broken_rules,
            item.tool_calls,
            item.tool_errors,
            signals,
        )
        batch.append((f.trial_id, f.started_at, f.fired, f.tool_calls, f.tool_errors, f.signals))
        if len(batch) >= 500:
            save_results(db, batch, version)
            done += len(batch)
            batch = []
    if batch:
        save_results(db, batch, version)
        done += len(batch)
    return done


def run_monitor(
    db: Store,
    req: MonitorRequest,
    *,
    cfg: Any = None,
    on_note: Note | None = None,
    told: set[str] | None = None,
) -> MonitorReport:
    """One pass of the monitor (see the module docstring). Raises MonitorError with one line.
    ``told``: skipped records an earlier pass of a follow said already, not said again."""
    from reviewer.config import ConfigError, resolve_config
    from reviewer.metrics.active_rules import active_rules
    from reviewer.metrics.monitor import (
        BUILTIN_CHECKS,
        build_windows,
        in_sample,
        parse_time,
        plausible,
    )
    from reviewer.metrics.monitor_alerts import find_alerts
    from reviewer.metrics.rules import RuleError
    from reviewer.store.monitor import latest_verdicts, monitored_runs, stored_results
    from reviewer.store.queries import run_names

    note = on_note or (lambda line: None)
    try:
        cfg = resolve_config(cfg)
    except ConfigError as e:
        raise MonitorError(str(e)) from e
    size, sample, seed, max_cost, base_windows, signals, kind = _settings(req, cfg)
    since = None
    if req.since is not None:
        since = parse_time(req.since)
        if since is None:
            raise MonitorError(
                f"--since {req.since!r} is not a time (e.g. 2025-06-10 or 2025-06-10T14:00Z)"
            )
    report_imported = None
    if req.imports:
        report_imported = import_for_monitor(db, req.imports, note, told)
    runs = list(req.runs) or ([cfg.monitor["run"]] if cfg.monitor.get("run") else [])
    known = run_names(db)
    for r in runs:
        if r not in known:
            raise MonitorError(unknown_run(r, known))
    version = checks_version(db, signals)
    notes: list[str] = []
    analysed = analyse_new(db, runs, signals, version)
    if not runs:
        runs = monitored_runs(db)
    results = stored_results(db, runs, version) if runs else []
    timed = [r for r in results if r.started_at is not None]
    odd = [r.trial_id for r in timed if not plausible(r.started_at or "")]
    if odd:
        listed = ", ".join(odd[:3]) + (f" ... {len(odd) - 3} more" if len(odd) > 3 else "")
        notes.append(
            f"{len(odd)} conversation{'s' if len(odd) != 1 else ''} with an implausible time "
            f"(before 1970-01-01 or more than a day after now) left out: {listed}"
        )
        bad = set(odd)
        timed = [r for r in timed if r.trial_id not in bad]
    try:
        active = active_rules(db)
    except RuleError as e:
        raise MonitorError(f"stored rules no longer load: {e}") from e
    rule_ids = [r.id for r in active.rules] if active else []
    for res in timed:
        for fired in res.fired:
            if fired.startswith("rule:") and fired[5:] not in rule_ids:
                rule_ids.append(fired[5:])
    metrics = [*(f"rule:{r}" for r in rule_ids), *BUILTIN_CHECKS, *(f"signal:{s}" for s in signals)]
    sampled = [r.trial_id for r in timed if in_sample(r.trial_id, sample, seed)]
    report = MonitorReport(size, runs, metrics, [], [], sample, seed)
    report.baseline, report.baseline_windows = kind, base_windows
    no_time = len(results) - len(timed) - len(odd)  # the implausible are counted in a note
    report.analysed, report.no_time, report.sampled = analysed, no_time, sampled
    report.judge_cap = max_cost
    report.imported = report_imported
    report.notes = notes
    if req.judge and sampled:
        _judge(db, sampled, max_cost, cfg, note, report)
    verdicts = latest_verdicts(db, sampled)
    from reviewer.metrics.monitor import Facts

    facts = [
        Facts(r.trial_id, r.started_at, r.fired, r.tool_calls, r.tool_errors, r.signals)
        for r in timed
    ]
    windows = build_windows(facts, size, verdicts, metrics)
    if facts and len(windows) > 1:
        from reviewer.metrics.monitor import MAX_FILLED_WINDOWS, window_span

        if window_span([windows[0].start, windows[-1].start], size) > MAX_FILLED_WINDOWS:
            notes.append(
                f"the conversations span more than {MAX_FILLED_WINDOWS} {size} windows: "
                "only windows with conversations are listed"
            )
    found = find_alerts(windows, base_windows, size=size, baseline=kind)
    alerts = found.alerts
    report.detectable = found.detectable
    notes += _untested_note(found.untested, windows, kind, size)
    if since is not None:
        from reviewer.metrics.monitor import window_start

        first = window_start(since.isoformat(), size)
        windows = [w for w in windows if w.start >= first]
        alerts = [a for a in alerts if a.window >= first]
    report.windows, report.alerts = windows, alerts
    shown = {w.start: w for w in windows}
    from reviewer.metrics.monitor import window_start as start_of

    for f in facts:
        assert f.started_at is not None
        w = shown.get(start_of(f.started_at, size))
        if w is None:
            continue
        report.conversations += 1
        why = [c for c in f.fired if c in metrics]
        why += [f"signal:{k}" for k, v in f.signals.items() if v]
        if verdicts.get(f.trial_id) == "fail":
            why.append("judge_fail")
        why += [f"alert:{m}" for m in w.alerts if m in why]
        if why:
            report.flagged[f.trial_id] = why
            report.window_of[f.trial_id] = w.start
    if req.queue:
        _route(db, req, report)
    return report


def _untested_note(untested: list[str], windows: Sequence[Any], kind: str, size: str) -> list[str]:
    """Say which windows could not be tested for want of baseline windows, when it is not just the
    first few of a recent baseline (the same weekday / hour needs weeks / days of history)."""
    from reviewer.metrics.monitor_alerts import needs

    with_data = [w.start for w in windows if w.conversations]
    if not untested or (kind == "recent" and len(untested) < len(with_data)):
        return []
    need = f"a window is tested against {needs(kind, size)} (--baseline {kind})"
    if len(untested) == len(with_data):
        return [f"no window tested yet: {need}, and none has them"]
    return [
        f"{len(untested)} of {len(with_data)} windows not tested ({untested[0]} to "
        f"{untested[-1]}): {need}"
    ]


def _judge(
    db: Store, ids: list[str], max_cost: float | None, cfg: Any, note: Note, report: MonitorReport
) -> None:
    """Judge the sample's unjudged conversations (the cache and --only-unjudged: never twice)."""
    from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials

    overrides = {} if max_cost is None else {"max_cost": max_cost}
    try:
        result = judge_trials(
            db,
            JudgeRequest(trial_ids=ids, only_unjudged=True, overrides=overrides),
            cfg=cfg,
            on_note=note,
        )
    except JudgeFailed as e:
        report.judge_problem = f"judge not run: {e}"
        return
    if result.planned:
        report.judge_line = result.summary


def _route(db: Store, req: MonitorRequest, report: MonitorReport) -> None:
    """Flagged conversations to the review queue ``req.queue`` (the queues' own make_queue): made
    from the flagged conversations not labeled yet, resumed when it holds every one already."""
    from reviewer.calibration.sampling import NothingToSample
    from reviewer.store.queues import get_queue, queue_exists
    from reviewer.workflows.queues import make_queue

    assert req.queue is not None
    ids = list(report.flagged)
    if not ids:
        report.queue_note = f"queue {req.queue}: nothing flagged"
        return
    replace = False
    if queue_exists(db, req.queue):
        held = {it.trial_id for it in get_queue(db, req.queue).items}
        replace = bool(set(ids) - held)
    try:
        made = make_queue(
            db, req.labeler, n=req.queue_size, name=req.queue, trial_ids=ids, replace=replace
        )
    except NothingToSample:
        report.queue_note = f"queue {req.queue}: every flagged conversation is labeled already"
        return
    report.queue = made
    verb = "made" if made.created else "resumed"
    report.queue_note = (
        f"queue {req.queue}: {verb} with {len(made.queue.items)} of {len(ids)} flagged "
        f"conversations; label them with L in the app"
    )


def import_for_monitor(
    db: Store, paths: Sequence[str | Path], note: Note, told: set[str] | None = None
) -> str:
    """Import ``paths`` (new conversations); MonitorError when a path cannot be read. The first
    eight skipped records not in ``told`` are said, and the problems (an empty file) not in it
    (each added to it)."""
    from reviewer.workflows.imports import import_paths

    summary = import_paths(db, list(paths))
    fresh = [str(s) for s in summary.skipped if told is None or str(s) not in told]
    for skip in fresh[:8]:
        note(skip)
    if told is not None:
        told.update(fresh[:8])
    if summary.errors:
        raise MonitorError(summary.errors[0])
    for problem in summary.problems:
        if told is None or problem not in told:
            note(problem)
            if told is not None:
                told.add(problem)
    return f"imported {summary.added} new conversations ({summary.already} already stored)"


def follow(
    db: Store,
    path: str | Path,
    req: MonitorRequest,
    on_pass: Callable[[MonitorReport, list[Alert]], None],
    *,
    interval: float = 30.0,
    passes: int | None = None,
    on_note: Note | None = None,
    sleep: Callable[[float], None] = time.sleep,
    cfg: Any = None,
    reopen: Callable[[], Store] | None = None,
) -> None:
    """Keep importing a growing JSONL file or folder and updating the windows: a pass whenever it
    changed (and the first time); ``on_pass`` gets each report and the alerts it raised that no
    earlier pass had. ``passes`` stops after that many passes (else until interrupted).

    With ``reopen``, a PostgreSQL server that restarted (or a network that went) is connected to
    again at the next look, and until it answers at each look after, instead of ending the
    follow: nothing of a pass cut short is kept (its import is one transaction a file), and the
    next pass reads the file again."""
    import sqlite3
    import stat

    from reviewer.store.db import StoreError, connection_lost

    if not str(path).strip():  # Path("") is the current folder: never walk it unasked
        raise MonitorError("an empty path '': give a file or folder (. for this one)")

    note = on_note or (lambda line: None)
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except OSError as e:
        raise MonitorError(f"{path}: cannot read: {e.strerror or e}") from e
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise _not_a_file(path)
    from reviewer.ingest.reading import holding_last_line

    seen: set[tuple[str, str]] = set()
    # the skipped records said: a file is read whole on every look, and its bad lines were said
    # again each time (the first eight only, so a new one past them was never said)
    told: set[str] = set()
    last: tuple[Any, ...] | None = None
    held = False  # the last import left out a last line still being written
    still = 0  # looks since the file last changed, while a line is held
    gone = False  # the file was rotated away (or deleted): wait for it to come back
    lost = False  # the connection to the server went: connect again at each look until it works
    done = 0
    while passes is None or done < passes:
        if lost and reopen is not None:
            try:
                db = reopen()
            except StoreError:
                done += 1
                if passes is None or done < passes:
                    sleep(interval)
                continue
            note(f"{db.path}: connected again")
            lost = False
        state = _state(target)
        if state is None:
            if not gone:
                note(f"{path} is gone (rotated?): waiting for it to come back")
            gone = True
            told.clear()  # the file that comes back is another: its lines are new
            done += 1
            if passes is None or done < passes:
                sleep(interval)
            continue
        if gone:
            note(f"{path} is back: reading it again")
            gone = False
        final = passes is not None and done == passes - 1  # the follow stops after this look
        if last is not None and _shrank(last, state):
            told.clear()  # truncated (copytruncate) or replaced: its lines are new
        still = still + 1 if held and state == last else 0
        # a held line unchanged for HOLD_LOOKS looks is no line being written: a file that ends
        # without a newline (copied in whole, finished) has its last record read
        settled = held and still >= HOLD_LOOKS
        if (state != last or (final and held) or settled) and (
            final or settled or not _nothing_whole(target)
        ):
            # a last line without its newline may be mid-write: left out (not read, not reported)
            # until a look finds its newline, or the file stays as it is for HOLD_LOOKS looks;
            # the follow's last look reads it as an import does
            read_all = final or settled
            last, held = state, not read_all and _half_written(target)
            try:
                with holding_last_line(not read_all):
                    report = run_monitor(
                        db, _with_import(req, path), cfg=cfg, on_note=on_note, told=told
                    )
            except (sqlite3.Error, StoreError, MonitorError) as e:
                # (an import's failure comes as a MonitorError naming the file: the same)
                if reopen is None or not connection_lost(e):
                    raise
                note(
                    f"{db.path}: lost the connection to the PostgreSQL server ({e}); connecting "
                    "again at each look"
                )
                with contextlib.suppress(Exception):
                    db.close()
                lost, last = True, None  # the next pass reads the file again
                done += 1
                if passes is None or done < passes:
                    sleep(interval)
                continue
            new = [a for a in report.alerts if (a.window, a.metric) not in seen]
            seen.update((a.window, a.metric) for a in report.alerts)
            on_pass(report, new)
        done += 1
        if passes is None or done < passes:
            sleep(interval)


#: Looks a last line without its newline may stay as it is and still be mid-write: past them it is
#: read as it is (a writer pauses mid-line for moments, not for three looks).
HOLD_LOOKS = 3


def _with_import(req: MonitorRequest, path: str | Path) -> MonitorRequest:
    from dataclasses import replace

    return replace(req, imports=[path])


def _nothing_whole(path: Path) -> bool:
    """Whether the followed file holds no whole line yet: its first is still being written."""
    if path.is_dir() or path.suffix.lower() not in (".jsonl", ".ndjson"):
        return False
    try:
        with path.open("rb") as f:
            while chunk := f.read(1 << 20):
                if b"\n" in chunk:
                    return False
    except OSError:
        return False
    return path.stat().st_size > 0


def _half_written(path: Path) -> bool:
    """Whether a JSONL file (or one under the folder) ends without a newline: its last line may
    still be being written, and is left out until its newline comes (or the follow stops)."""
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    for p in files:
        if p.suffix.lower() not in (".jsonl", ".ndjson") or not p.is_file():
            continue  # a pipe would block the open
        try:
            with p.open("rb") as f:
                if f.seek(0, 2) == 0:
                    continue
                f.seek(-1, 2)
                if f.read(1) != b"\n":
                    return True
        except OSError:
            continue
    return False


def _shrank(before: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    """Whether a file of the state BEFORE is smaller NOW, or gone from it."""
    sizes = {name: size for name, size, _ in now}
    return any(sizes.get(name, -1) < size for name, size, _ in before)


def _not_a_file(path: str | Path) -> MonitorError:
    return MonitorError(
        f"{path}: not a file or folder (a pipe, a device or a socket): --follow watches a log "
        "file or a folder of them grow"
    )


def _state(path: Path) -> tuple[Any, ...] | None:
    """Sizes and times of the file, or of every file under the folder: what changes as it grows;
    None when the path is gone (rotated away). MonitorError when it cannot be read, or is now a
    pipe, a device or a socket: rotation may put one in its place, and opening it would block the
    follow for good."""
    import stat

    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise MonitorError(f"{path}: cannot read: {e.strerror or e}") from e
    if stat.S_ISREG(st.st_mode):
        return ((str(path), st.st_size, st.st_mtime_ns),)
    if not stat.S_ISDIR(st.st_mode):
        raise _not_a_file(path)
    found = []
    for p in path.rglob("*"):
        try:
            s = p.stat()
        except OSError:
            continue  # rotated away (or unreadable) between the listing and the look
        if stat.S_ISREG(s.st_mode):
            found.append((str(p), s.st_size, s.st_mtime_ns))
    return tuple(sorted(found))
