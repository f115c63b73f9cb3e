"""The independence audit's reads and writes: a run's trials task by task, and its stored findings."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.models import Trial
from reviewer.record import decode
from reviewer.store.db import Store

PAGE = 500


def iter_tasks(db: Store, run: str) -> Iterator[list[tuple[str, Trial]]]:
    """The trials of ``run`` as (id, Trial), one list per task, tasks and trials in order; read in
    pages on the (run, task_id, trial) index so memory holds one task and one page at most."""
    last: tuple[str, int] | None = None
    task: list[tuple[str, Trial]] = []
    while True:
        if last is None:
            rows = db.execute(
                "SELECT id, task_id, trial, record FROM trials WHERE run = ? "
                "ORDER BY task_id, trial LIMIT ?",
                [run, PAGE],
            ).fetchall()
        else:
            rows = db.execute(
                "SELECT id, task_id, trial, record FROM trials WHERE run = ? "
                "AND (task_id, trial) > (?, ?) ORDER BY task_id, trial LIMIT ?",
                [run, last[0], last[1], PAGE],
            ).fetchall()
        if not rows:
            break
        for tid, task_id, trial_no, record in rows:
            if task and task[0][1].task_id != task_id:
                yield task
                task = []
            task.append((tid, decode(record, run=run, task_id=task_id, trial=trial_no)))
        last = (rows[-1][1], rows[-1][2])
    if task:
        yield task


#: One trial as the audit reads it: (seq, id, task_id, trial, its outcome now (the fingerprint's
#: is the one it was imported with: `reviewer rescore` changes outcomes), its stored fingerprint or
#: None, and its record when it has no fingerprint of the version asked for, else None).
FingerprintRow = tuple[int, str, str, int, str, str | None, str | None]


def iter_fingerprints(db: Store, run: str, version: int) -> Iterator[list[FingerprintRow]]:
    """The trials of ``run`` one list per task, tasks and trials in order, each with its audit
    fingerprint of ``version`` (the record is read only for a trial without one); in pages, as
    :func:`iter_tasks`."""
    sql = (
        "SELECT t.seq, t.id, t.task_id, t.trial, t.outcome, f.fingerprint, "
        "CASE WHEN f.fingerprint IS NULL THEN t.record END "
        "FROM trials t LEFT JOIN audit_fingerprints f ON f.seq = t.seq AND f.version = ? "
        "WHERE t.run = ? {after}ORDER BY t.task_id, t.trial LIMIT ?"
    )
    last: tuple[str, int] | None = None
    task: list[FingerprintRow] = []
    while True:
        if last is None:
            rows = db.execute(sql.format(after=""), [version, run, FINGERPRINT_PAGE]).fetchall()
        else:
            rows = db.execute(
                sql.format(after="AND (t.task_id, t.trial) > (?, ?) "),
                [version, run, last[0], last[1], FINGERPRINT_PAGE],
            ).fetchall()
        if not rows:
            break
        for row in rows:
            if task and task[0][2] != row[2]:
                yield task
                task = []
            task.append(row)
        last = (rows[-1][2], rows[-1][3])
    if task:
        yield task


FINGERPRINT_PAGE = 500


def save_fingerprints(
    db: Store, rows: Sequence[tuple[int, int, str]], *, new: bool = False
) -> None:
    """Keep (trial seq, version, fingerprint) rows, in the caller's transaction if there is one;
    ``new``: the rows are of trials just written, which have none yet (a plain insert, which many
    rows at once make a COPY on PostgreSQL), else each replaces the trial's stored one."""
    verb = "INSERT" if new else "INSERT OR REPLACE"
    with db.transaction():
        db.conn.executemany(
            f"{verb} INTO audit_fingerprints (seq, version, fingerprint) VALUES (?, ?, ?)", rows
        )


@dataclass(frozen=True)
class AuditState:
    """A stored audit: when, over how many trials and up to which row, and its summary."""

    run: str
    audited_at: str
    trials: int
    top_seq: int
    summary: dict[str, Any]


def run_extent(db: Store, run: str) -> tuple[int, int]:
    """(how many trials, the highest row number) of ``run``: a stored audit with other numbers is
    stale."""
    row = db.execute(
        "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM trials WHERE run = ?", [run]
    ).fetchone()
    return int(row[0]), int(row[1])


def save_audit(
    db: Store,
    run: str,
    at: str,
    extent: tuple[int, int],
    summary: dict[str, Any],
    findings: Sequence[dict[str, Any]],
) -> None:
    """Replace ``run``'s stored audit with this one, in one transaction."""
    with db.transaction():
        db.execute("DELETE FROM audit_findings WHERE run = ?", [run])
        db.execute(
            "INSERT OR REPLACE INTO audit_runs (run, audited_at, trials, top_seq, summary) "
            "VALUES (?, ?, ?, ?, ?)",
            [run, at, extent[0], extent[1], json.dumps(summary, ensure_ascii=False)],
        )
        db.conn.executemany(
            "INSERT INTO audit_findings (run, kind, task_id, finding) VALUES (?, ?, ?, ?)",
            [
                (run, f["kind"], f.get("task_id"), json.dumps(f, ensure_ascii=False))
                for f in findings
            ],
        )


def audit_state(db: Store, run: str) -> AuditState | None:
    row = db.execute(
        "SELECT run, audited_at, trials, top_seq, summary FROM audit_runs WHERE run = ?", [run]
    ).fetchone()
    if row is None:
        return None
    return AuditState(row[0], row[1], int(row[2]), int(row[3]), json.loads(row[4]))


def stored_findings(db: Store, run: str) -> list[dict[str, Any]]:
    """The stored findings of ``run`` in the order they were found."""
    rows = db.execute(
        "SELECT finding FROM audit_findings WHERE run = ? ORDER BY id", [run]
    ).fetchall()
    return [json.loads(r[0]) for r in rows]
