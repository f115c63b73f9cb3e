"""The independence audit, one job for the CLI, the app, the import and the gate: audit runs (read
task by task), store what was found, and say it in a line or a warning."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from sys import intern
from typing import Any

from reviewer.metrics.audit import RunAudit, RunAuditor, TrialRef

# re-exported for the faces (they import workflows only)
from reviewer.metrics.audit import kind_count as kind_count
from reviewer.metrics.audit_trial import (
    FINGERPRINT_VERSION,
    TrialDigest,
    created_of,
    digest_trial,
    fingerprint,
    from_fingerprint,
)
from reviewer.metrics.audit_types import copies_once as copies_once
from reviewer.metrics.audit_types import not_kept_line as not_kept_line
from reviewer.record import decode
from reviewer.store.db import Store
from reviewer.store.writer import Pending

#: Fingerprints computed for trials imported without one are stored this many at a time.
SAVE_EVERY = 2000


@dataclass
class StoredAudit:
    """A run's audit as stored: its summary (``RunAudit.to_dict`` without findings), its findings,
    and whether the run gained trials since (stale)."""

    run: str
    audited_at: str
    summary: dict[str, Any]
    findings: list[dict[str, Any]]
    stale: bool

    def to_dict(self) -> dict[str, Any]:
        return {**self.summary, "audited_at": self.audited_at, "findings": self.findings}


def audit_run(db: Store, run: str, *, store: bool = True) -> RunAudit:
    """Audit ``run`` (read twice, a task at a time: what every trial created, then each task) and,
    with ``store``, keep the result in place of the last one."""
    from reviewer.store.audit import iter_fingerprints, run_extent, save_audit, save_fingerprints

    extent = run_extent(db, run)
    auditor = RunAuditor(run)
    computed: list[tuple[int, int, str]] = []  # for trials imported before fingerprints were kept
    for task in iter_fingerprints(db, run, FINGERPRINT_VERSION):
        for seq, tid, task_id, trial_no, _outcome, stored, record in task:
            if stored is not None:
                if created := created_of(stored):
                    auditor.add_created(TrialRef(tid, intern(task_id), trial_no), created)
                continue
            assert record is not None
            d = digest_trial(tid, decode(record, run=run, task_id=task_id, trial=trial_no))
            auditor.add_created(
                TrialRef.of(d), {v: (c.message, c.tool) for v, c in d.created.items()}
            )
            if store:
                computed.append((seq, FINGERPRINT_VERSION, fingerprint(d)))
        if len(computed) >= SAVE_EVERY:
            save_fingerprints(db, computed)
            computed = []
    if computed:
        save_fingerprints(db, computed)
    for task in iter_fingerprints(db, run, FINGERPRINT_VERSION):
        digests: list[TrialDigest] = []
        for _seq, tid, task_id, trial_no, outcome, stored, record in task:
            if stored is not None:
                d = from_fingerprint(tid, task_id, trial_no, stored)
            else:  # not stored (a store we may not write), or a trial added between the passes
                assert record is not None
                d = digest_trial(tid, decode(record, run=run, task_id=task_id, trial=trial_no))
            d.outcome = outcome  # as the run is judged now (a rescore changes it), not at import
            digests.append(d)
        auditor.add_task(digests)
    result = auditor.finish()
    if not store:
        return result
    data = result.to_dict()
    findings = data.pop("findings")
    at = datetime.now(UTC).isoformat(timespec="seconds")
    save_audit(db, run, at, extent, data, findings)
    return result


def fingerprint_batch(
    db: Store, batch: Sequence[Pending], first_seq: int, *, new: bool = False
) -> None:
    """Store the audit fingerprint of each trial of an import's ``batch``, written from row
    ``first_seq`` on (in the import's transaction), from the parsed trials in hand: the audit after
    the import then reads these small rows instead of decoding every record of the run again.
    ``new``: the rows were just added (none has a fingerprint), not replaced."""
    from reviewer.store.audit import save_fingerprints

    save_fingerprints(
        db,
        [
            (seq, FINGERPRINT_VERSION, fingerprint(digest_trial(p.id, p.trial)))
            for seq, p in enumerate(batch, first_seq)
        ],
        new=new,
    )


def audit_runs(
    db: Store, runs: Sequence[str], *, on_run: Callable[[str], None] | None = None
) -> list[RunAudit]:
    """Audit each of ``runs`` in turn (``on_run(name)`` before each), storing every result."""
    out = []
    for run in runs:
        if on_run is not None:
            on_run(run)
        out.append(audit_run(db, run))
    return out


def stored_audit(db: Store, run: str, *, refresh: bool = True) -> StoredAudit | None:
    """``run``'s stored audit; with ``refresh``, audited first when it never was or is stale."""
    from reviewer.store.audit import audit_state, run_extent, stored_findings

    state = audit_state(db, run)
    stale = state is None or (state.trials, state.top_seq) != run_extent(db, run)
    if stale and refresh:
        audit_run(db, run)
        state = audit_state(db, run)
        stale = False
    if state is None:
        return None
    return StoredAudit(run, state.audited_at, state.summary, stored_findings(db, run), stale)


def summary_line(audits: Sequence[RunAudit]) -> str | None:
    """The import's one line about the audit of the runs it added to; None when there were none."""
    if not audits:
        return None
    flagged = [a for a in audits if a.findings]
    if not flagged:
        n = len(audits)
        return f"audit: no finding in {n} run{'' if n == 1 else 's'}"
    shown = "; ".join(a.summary() for a in flagged[:3])
    more = f"; and {len(flagged) - 3} more runs" if len(flagged) > 3 else ""
    return f"audit: {shown}{more} (see `reviewer audit`)"


def warning_of(summary: dict[str, Any], *, short: bool = False) -> str | None:
    """The warning a report header shows for a run with findings, else None; ``short``: its facts
    alone, for a screen that names the run and says its key (``the audit found …; pass^k …``)."""
    counts = {k: v for k, v in (summary.get("counts") or {}).items() if v}
    if not counts:
        return None
    parts = [kind_count(k, n) for k, n in counts.items()]
    run = str(summary.get("run"))
    line = "the audit found " + ", ".join(parts)
    k = summary.get("k")
    reported, once = summary.get("pass_hat_k_reported"), summary.get("pass_hat_k_copies_once")
    if counts.get("copy") and reported != once:
        fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
        line += f"; pass^{k} {fmt(reported)}, {copies_once(k, once)}"
    if short:
        return line
    return f"warning: run {_one_line(run)}: {line} (reviewer audit --run {_one_line(shlex.quote(run))})"


def audit_note(db: Store, run: str) -> str | None:
    """What the screens say of ``run``'s stored audit (``warning_of``'s short line), None when it
    found nothing or never ran (the audit runs after every import; a screen does not run it)."""
    from reviewer.store.audit import audit_state

    state = audit_state(db, run)  # the summary alone: a run's findings may be thousands
    return None if state is None else warning_of(state.summary, short=True)


def _one_line(name: str) -> str:
    """A run's name as data on a warning's line: a newline or an escape in it shown, not acted on."""
    from reviewer.text import visible

    return visible(name, single_line=True)


def audit_warnings(db: Store, run_ids: Sequence[str]) -> list[str]:
    """One warning line per run of ``run_ids`` the audit flags (audited first when never audited or
    stale), and one per run whose rewards look graded while no pass rule was chosen
    (``graded_warning``), for the headers of `report`, `compare` and `gate`."""
    import sqlite3

    from reviewer.store.db import StoreError

    out = []
    for run in run_ids:
        try:
            stored = stored_audit(db, run)
            summary = None if stored is None else stored.summary
        except (sqlite3.Error, StoreError):  # a database we may not write: audit, keep nothing
            summary = audit_run(db, run, store=False).to_dict()
        if summary is not None and (line := warning_of(summary)):
            out.append(line)
        if line := graded_warning(db, run):
            out.append(line)
    return out


def graded_warning(db: Store, run: str, *, short: bool = False) -> str | None:
    """ "warning: run X: rewards look graded: …" when ``run`` was imported with the default pass rule
    (reward ≥ 1 − 1e-6) and its stored rewards look graded (``ingest.outcome.graded_line``, the
    import's own test): its pass@1 counts only full rewards. None otherwise."""
    from reviewer.ingest.outcome import graded_line
    from reviewer.models import PassRule
    from reviewer.store.trials import GRADING_SAMPLE, reward_grading
    from reviewer.store.writer import pass_rule_of

    if not PassRule.from_json(pass_rule_of(db, run)).is_default:
        return None
    rewards, graded, examples, more = reward_grading(db, run)
    line = graded_line(graded, rewards, examples)
    if line is None:
        return None
    among = f" (of its first {GRADING_SAMPLE:,} trials)" if more else ""
    if short:  # for a screen: the rule's facts, the screen says its key
        return f"{line}{among}"
    return (
        f"warning: run {_one_line(run)}: {line}{among}, so pass@1 counts only full rewards (to "
        f"choose a threshold: reviewer rescore {_one_line(shlex.quote(run))} --pass-threshold X, "
        "or P on the app's Runs screen)"
    )


def audit_after_import(db: Store, runs: set[str]) -> str | None:
    """Audit the runs an import added trials to; the import summary's one line (None: no run).
    The import is done and stored whatever happens here, so a failure is told, not raised."""
    import sqlite3

    from reviewer.store.db import StoreError

    if not runs:
        return None
    try:
        return summary_line(audit_runs(db, sorted(runs)))
    except (sqlite3.Error, StoreError, ValueError) as e:
        return f"audit: not run ({e}); run `reviewer audit` to retry"
