"""The monitor's per-conversation results (time, fired checks, signals), computed once per checks
version and read back by window; the latest verdicts of the judged sample."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.store.db import Store


@dataclass(frozen=True)
class MonitorInput:
    """A stored conversation the monitor has not analysed under the current version."""

    trial_id: str
    run: str
    task_id: str
    trial: int
    record: str
    tool_calls: int
    tool_errors: int
    broken_rules: tuple[str, ...]


def _run_clause(runs: Sequence[str]) -> tuple[str, list[Any]]:
    if not runs:
        return "", []
    return f" AND t.run IN ({','.join('?' * len(runs))})", list(runs)


def pending_inputs(db: Store, runs: Sequence[str], version: str) -> Iterator[MonitorInput]:
    """Conversations (of ``runs``, or all) with no stored result of ``version``, in import order,
    read in pages."""
    clause, params = _run_clause(runs)
    last = 0
    while True:
        rows = db.execute(
            "SELECT t.seq, t.id, t.run, t.task_id, t.trial, t.record, t.tool_calls, t.tool_errors, "
            "(SELECT group_concat(v.rule_id, char(31)) FROM violations v WHERE v.trial_id = t.id) "
            "FROM trials t WHERE t.seq > ?" + clause + " AND NOT EXISTS (SELECT 1 FROM "
            "monitor_trials m WHERE m.trial_id = t.id AND m.version = ?) ORDER BY t.seq LIMIT 500",
            [last, *params, version],
        ).fetchall()
        if not rows:
            return
        for r in rows:
            rules = tuple(r[8].split("\x1f")) if r[8] else ()
            yield MonitorInput(r[1], r[2], r[3], r[4], r[5], int(r[6]), int(r[7]), rules)
        last = rows[-1][0]


def save_results(
    db: Store,
    rows: Sequence[tuple[str, str | None, Sequence[str], int, int, dict[str, bool | None]]],
    version: str,
) -> None:
    """Store (trial id, started_at, fired checks, tool calls, tool errors, signals) in one
    transaction, replacing results of an older version."""
    with db.transaction():
        db.conn.executemany(
            "INSERT OR REPLACE INTO monitor_trials (trial_id, started_at, checks, signals, version) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (
                    tid,
                    started,
                    json.dumps({"fired": list(fired), "tool_calls": calls, "tool_errors": errors}),
                    json.dumps(signals, sort_keys=True),
                    version,
                )
                for tid, started, fired, calls, errors, signals in rows
            ],
        )


@dataclass(frozen=True)
class StoredResult:
    trial_id: str
    run: str
    started_at: str | None
    fired: tuple[str, ...]
    tool_calls: int
    tool_errors: int
    signals: dict[str, bool | None]


def stored_results(db: Store, runs: Sequence[str], version: str) -> list[StoredResult]:
    """Every stored result of ``version`` (of ``runs``, or all), oldest conversation first."""
    clause, params = _run_clause(runs)
    rows = db.execute(
        "SELECT m.trial_id, t.run, m.started_at, m.checks, m.signals FROM monitor_trials m "
        "JOIN trials t ON t.id = m.trial_id WHERE m.version = ?"
        + clause
        + " ORDER BY m.started_at, t.seq",
        [version, *params],
    ).fetchall()
    out = []
    for tid, run, started, checks, signals in rows:
        c = json.loads(checks)
        out.append(
            StoredResult(
                tid,
                run,
                started,
                tuple(c.get("fired", ())),
                int(c.get("tool_calls", 0)),
                int(c.get("tool_errors", 0)),
                json.loads(signals),
            )
        )
    return out


def latest_verdicts(
    db: Store, trial_ids: Sequence[str], judge: str | None = None
) -> dict[str, str]:
    """trial id -> the latest verdict (of ``judge``, or of any judge) for these trials."""
    out: dict[str, str] = {}
    view = "latest_trial_verdicts" if judge is None else "latest_judge_verdicts"
    extra = "" if judge is None else " AND judge = ?"
    for start in range(0, len(trial_ids), 500):
        chunk = list(trial_ids[start : start + 500])
        sql = (
            f"SELECT trial_id, verdict FROM {view} WHERE trial_id IN "
            f"({','.join('?' * len(chunk))}){extra}"
        )
        for tid, verdict in db.execute(sql, chunk + ([judge] if judge else [])).fetchall():
            out[tid] = verdict
    return out


def monitored_runs(db: Store) -> list[str]:
    """Runs whose conversations carry a time (what the monitor watches by default)."""
    return [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT t.run FROM monitor_trials m JOIN trials t ON t.id = m.trial_id "
            "WHERE m.started_at IS NOT NULL ORDER BY t.run"
        ).fetchall()
    ]


def is_production(db: Store, trial_id: str) -> bool:
    """Whether the monitor watched this conversation (a production one with a time)."""
    row = db.execute(
        "SELECT 1 FROM monitor_trials WHERE trial_id = ? AND started_at IS NOT NULL", [trial_id]
    ).fetchone()
    return row is not None


def trial_names(db: Store, trial_ids: Sequence[str]) -> dict[str, tuple[str, str, int]]:
    """trial id -> (run, task, trial number), for listing flagged conversations."""
    out: dict[str, tuple[str, str, int]] = {}
    for start in range(0, len(trial_ids), 500):
        chunk = list(trial_ids[start : start + 500])
        rows = db.execute(
            f"SELECT id, run, task_id, trial FROM trials WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        ).fetchall()
        out.update({r[0]: (r[1], r[2], int(r[3])) for r in rows})
    return out
