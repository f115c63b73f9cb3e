"""The CI gate and its baseline: the one path behind `reviewer baseline`, `reviewer gate` and the
app's "gate" palette entries. Every usage or data problem is one ``GateError`` line (exit 2)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reviewer.config import MAX_K
from reviewer.metrics.gate import GateResult

# re-exported for the faces (they import workflows only)
from reviewer.metrics.gate_formats import junit as junit
from reviewer.metrics.gate_formats import markdown as markdown
from reviewer.store.baseline import BaselineEntry
from reviewer.store.baseline import baseline_history as baseline_history
from reviewer.store.baseline import current_baseline as current_baseline
from reviewer.store.db import Store
from reviewer.text import unknown_run


class GateError(Exception):
    """The gate could not decide (no baseline, an unknown run, a bad config or import): exit 2.
    ``no_baseline``: none is set, which marking a run the baseline mends."""

    def __init__(self, message: str, *, no_baseline: bool = False) -> None:
        super().__init__(message)
        self.no_baseline = no_baseline


def _check_shared(old_stats: Sequence[Any], new_stats: Sequence[Any], k: int | None) -> None:
    """GateError when the runs share no scored task (every row would be n/a and the gate would pass)
    or ``k`` is more than the scored trials per task both runs have."""
    from reviewer.metrics.compare import count_by_task, default_k

    oc, nc = count_by_task(old_stats), count_by_task(new_stats)
    shared = [t for t in oc.keys() & nc.keys() if oc[t][0] and nc[t][0]]
    if not shared:
        raise GateError(
            f"no task in common with the baseline (baseline tasks: {_few(oc)}, new: {_few(nc)})"
        )
    most = default_k(oc, nc)
    if k is not None and k > most:
        raise GateError(
            f"k = {k} is more than the {most} trial{'s' if most != 1 else ''} per task both runs have"
        )


def _few(counts: dict[str, Any], n: int = 5) -> str:
    names = sorted(counts)
    more = f", ... {len(names) - n} more" if len(names) > n else ""
    return (", ".join(names[:n]) or "none") + more


def set_baseline_run(
    db: Store,
    run: str,
    by: str | None = None,
    note: str | None = None,
    *,
    cfg: Any = None,
    grade_anchors: bool = False,
    on_note: Any = None,
) -> BaselineEntry:
    """Make ``run`` the baseline; GateError when no such run is stored or it has no scored trial
    (a baseline of crashed or unscored trials would make every gate row n/a). With
    ``grade_anchors`` and [gate] anchors configured, the configured judge grades the anchors (cached,
    capped), so a later gate can measure a judge change against them."""
    from reviewer.store.baseline import set_baseline
    from reviewer.store.trials import OUTCOME_SOURCES, trial_stats

    _require_run(db, run)
    if not any(any(s.scored for s in trial_stats(db, run, source)) for source in OUTCOME_SOURCES):
        raise GateError(
            f"run {run!r} has no scored trial (pass or fail, by the harness, a label or the "
            "judge): it cannot be the baseline"
        )
    entry = set_baseline(db, run, by, note)
    if grade_anchors:
        cfg = _load(cfg)
        if cfg.gate.get("anchors"):
            from reviewer.workflows.anchors import AnchorError, anchor_ids, judge_anchors

            say = on_note or (lambda line: None)
            try:
                ids = anchor_ids(db, cfg.gate["anchors"])
            except AnchorError as e:
                raise GateError(str(e)) from e
            judge, done, cost = judge_anchors(db, cfg, ids, note=say)
            if judge is not None:
                say(f"anchors: {len(ids)} graded by {judge} ({done} now, ${cost:.4f})")
    return entry


def _load(cfg: Any) -> Any:
    from reviewer.config import ConfigError, resolve_config

    try:
        return resolve_config(cfg)
    except ConfigError as e:
        raise GateError(str(e)) from e


def _require_run(db: Store, run: str) -> None:
    from reviewer.store.queries import run_names

    known = run_names(db)
    if run not in known:
        raise GateError(unknown_run(run, known, none="none (import some first)"))


def import_new_run(db: Store, paths: Sequence[str | Path], on_note: Any = None) -> list[str]:
    """Import ``paths`` (``--import``) and return the runs they hold; GateError when nothing could be
    imported or a path could not be read (a CI step must not gate a run it did not load)."""
    from reviewer.workflows.imports import import_paths

    note = on_note or (lambda line: None)
    summary = import_paths(db, list(paths))
    for skip in summary.skipped[:8]:
        note(str(skip))
    if len(summary.skipped) > 8:
        note(f"... {len(summary.skipped) - 8} more records skipped")
    if summary.problems:
        raise GateError(summary.problems[0])
    if not summary.ok:
        raise GateError(f"nothing imported from {', '.join(map(str, paths))}")
    note(f"imported {summary.added} new trials ({summary.already} already stored)")
    return sorted(summary.runs)


def run_gate(
    db: Store,
    new: str,
    *,
    baseline: str | None = None,
    k: int | None = None,
    seed: int = 0,
    cfg: Any = None,
    outcome: str | None = None,
    anchors: str = "grade",
    on_note: Any = None,
) -> GateResult:
    """Compare ``new`` with ``baseline`` (default: the one `baseline set` chose) with the compare
    command's statistics and the [gate] settings of the config.

    ``outcome``: where the trials' outcomes come from (default [gate] outcome, else the harness).
    ``anchors``: with [gate] anchors configured, "grade" lets the new run's judge grade the anchors
    it has not graded (cached, capped at anchors_max_cost), "stored" uses only stored verdicts
    (the app: it never spends without asking), "off" skips them."""
    from reviewer.metrics.gate import attribute_to_judge, evaluate_gate, ratio_budgets
    from reviewer.metrics.rules import RuleError
    from reviewer.store.baseline import current_baseline, failing_trial_ids
    from reviewer.store.trials import trial_stats
    from reviewer.workflows.audit import audit_warnings
    from reviewer.workflows.compare import CompareError, compare_stored

    cfg = _load(cfg)
    if baseline is None:
        entry = current_baseline(db)
        if entry is None:
            raise GateError(
                "no baseline set; mark the last good run: reviewer baseline set RUN",
                no_baseline=True,
            )
        baseline = entry.run
    _require_run(db, baseline)
    _require_run(db, new)
    if baseline == new:
        raise GateError(f"{new!r} is the baseline itself; gate a new run against it")
    if k is None:
        k = cfg.gate.get("k")
    if k is not None and not 1 <= k <= MAX_K:
        raise GateError(f"k must be from 1 to {MAX_K}, got {k}")
    outcome = outcome or cfg.gate.get("outcome", "harness")
    old_stats, new_stats = trial_stats(db, baseline, outcome), trial_stats(db, new, outcome)
    if not any(s.scored for s in old_stats):
        raise GateError(f"baseline {baseline!r} has no scored trial (pass or fail) to gate against")
    if not any(s.scored for s in new_stats):
        raise GateError(f"run {new!r} has no scored trial (pass or fail) to gate")
    _check_shared(old_stats, new_stats, k)
    budgets = {key: v for key, v in cfg.gate.items() if key.startswith("max_")}
    noise = bool(cfg.gate.get("budget_noise", False))
    try:
        cmp = compare_stored(
            db,
            baseline,
            new,
            k=k,
            seed=seed,
            outcome=outcome,
            scaled=ratio_budgets(budgets) if noise else None,
            stats=(old_stats, new_stats),
        )
    except (CompareError, RuleError) as e:
        raise GateError(str(e)) from e
    options = {
        "trial_url": cfg.gate.get("trial_url"),
        "budget_noise": noise,
        "new_forbidden": cfg.gate.get("new_forbidden", "red flag"),
    }
    result = evaluate_gate(cmp, budgets, **options)
    bad = [t.task_id for t in result.regressed_tasks]
    if bad:
        result = evaluate_gate(cmp, budgets, failing_trial_ids(db, new, bad), **options)
    if cfg.gate.get("anchors") and anchors != "off":
        from reviewer.workflows.anchors import AnchorError, check_anchors

        try:
            result.anchors = check_anchors(
                db,
                cfg,
                baseline,
                new,
                spend=anchors == "grade",
                note=on_note or (lambda line: None),
            )
        except AnchorError as e:
            raise GateError(str(e)) from e
        attribute_to_judge(result)
    result.warnings = audit_warnings(db, [baseline, new])
    return result


#: How each report file the gate writes starts: an existing file that starts otherwise was not
#: written by the gate, and is not overwritten without --force.
REPORT_MARKS = {
    "markdown": ("## reviewer gate: ",),
    "junit": ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="reviewer gate: ',),
}


def write_report(
    path: str | Path, text: str, kind: str, *, db_path: Path | None = None, force: bool = False
) -> None:
    """Write a gate report (``kind`` markdown or junit) whole: to a temporary file beside it, then
    renamed over it, after :func:`check_report_path`."""
    from reviewer.export.files import write_atomic

    real = check_report_path(path, kind, db_path=db_path, force=force)
    try:
        write_atomic(real, [text])
    except OSError as e:
        raise GateError(f"{path}: cannot write: {e.strerror or e}") from e


def check_report_path(
    path: str | Path, kind: str, *, db_path: Path | None = None, force: bool = False
) -> Path:
    """The file a report may be written to (symlinks followed); GateError (one line) for an empty
    path, a folder, the open database (or its journal), anything but a regular file, and an existing
    file that is not empty and was not written by the gate, unless ``force`` (which never
    overwrites the database or a device)."""
    import stat

    if not str(path).strip():
        raise GateError(f"--{kind}: give a file name")
    target = Path(path)
    real = target.resolve()
    if db_path is not None:
        db = Path(db_path).resolve()
        journals = {db, *(db.with_name(db.name + s) for s in ("-wal", "-shm", "-journal"))}
        if real in journals:
            raise GateError(f"{path}: is the database reviewer has open; give another file")
    try:
        st = real.stat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise GateError(f"{path}: cannot check it: {e.strerror or e}") from e
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise GateError(f"{path}: is a folder; give a file name")
        if not stat.S_ISREG(st.st_mode):
            raise GateError(f"{path}: not a regular file (a device, pipe or socket); not written")
        if st.st_size and not force and not _written_by_gate(real, kind):
            raise GateError(
                f"{path}: exists and was not written by `reviewer gate`; --force to overwrite it"
            )
    return real


def _written_by_gate(path: Path, kind: str) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(256).decode("utf-8", "replace")
    except OSError:
        return False
    return head.startswith(REPORT_MARKS[kind])
