"""Read queries used by the CLI and the TUI. Per-task counts come from the ``task_counts`` view
(migration m006), the one definition of n and c per task."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reviewer.models import Criterion, Rubric
from reviewer.store.db import Store


@dataclass
class RunRow:
    name: str
    tasks: int
    trials: int
    passed: int
    cost_usd: float | None
    imported_at: str | None
    source: str | None


def list_runs(db: Store) -> list[RunRow]:
    rows = db.execute(
        """
        SELECT r.name, COUNT(s.task_id), COALESCE(SUM(s.n), 0), COALESCE(SUM(s.c), 0),
               CASE WHEN SUM(s.cost_n) > 0 THEN SUM(s.cost_sum) END, r.imported_at, r.source
        FROM runs r LEFT JOIN task_counts s ON s.run = r.name
        GROUP BY r.name ORDER BY r.imported_at, r.name
        """
    ).fetchall()
    # a cost sum beyond a float (costs near 1e308 stored by an older version) is unknown, not inf
    return [
        RunRow(name, tasks, n, c, cost if cost is None or math.isfinite(cost) else None, at, src)
        for name, tasks, n, c, cost, at, src in rows
    ]


def count_groups(db: Store, run: str) -> list[tuple[int, int, int]]:
    """(n, c, how many tasks) of ``run``: all that run-level pass@k / pass^k averages need."""
    return [
        (int(n), int(c), int(times))
        for n, c, times in db.execute(
            "SELECT n, c, COUNT(*) FROM task_counts WHERE run = ? GROUP BY n, c", [run]
        ).fetchall()
    ]


def run_names(db: Store) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM runs ORDER BY imported_at, name").fetchall()]


def task_counts(db: Store, run: str) -> list[tuple[str, int, int]]:
    """(task_id, n, c) for every task of ``run``, in first-seen order."""
    rows = db.execute(
        "SELECT task_id, n, c FROM task_counts WHERE run = ? ORDER BY first_seq", [run]
    ).fetchall()
    return [(r[0], int(r[1]), int(r[2])) for r in rows]


def task_outcomes(db: Store, run: str) -> dict[str, list[bool]]:
    """Trial outcomes per task, in trial order (for outcome strips)."""
    out: dict[str, list[bool]] = {}
    for task_id, success in db.execute(
        "SELECT task_id, success FROM trials WHERE run = ? ORDER BY task_id, trial", [run]
    ).fetchall():
        out.setdefault(task_id, []).append(bool(success))
    return out


def count_trials(db: Store) -> int:
    return int(db.execute("SELECT COUNT(*) FROM trials").fetchone()[0])


@dataclass
class VerdictRow:
    judge: str
    verdict: str
    rationale: str | None
    model: str | None
    rubric: str | None
    source: str
    created_at: str


def verdicts_for(db: Store, trial_id: str) -> list[VerdictRow]:
    """Every judge's verdict on one trial, newest first."""
    rows = db.execute(
        "SELECT judge, verdict, rationale, model, rubric, source, created_at FROM verdicts "
        "WHERE trial_id = ? ORDER BY created_at DESC, id DESC",
        [trial_id],
    ).fetchall()
    return [VerdictRow(*r) for r in rows]


@dataclass
class TrialHeader:
    """The summary columns of one trial (no transcript), for headers and lists."""

    id: str
    seq: int
    run: str
    task_id: str
    trial: int
    success: bool
    reward: float | None
    reason: str | None
    steps: int
    n_messages: int
    tool_errors: int
    cost_usd: float | None
    latency_s: float | None
    error_type: str | None
    error_message: str | None
    termination: str | None
    source_file: str | None
    source_line: int | None


_HEADER_COLUMNS = (
    "id, seq, run, task_id, trial, success, reward, reason, steps, n_messages, tool_errors, cost_usd, "
    "latency_s, error_type, error_message, termination, source_file, source_line"
)


def trial_header(db: Store, trial_id: str) -> TrialHeader | None:
    row = db.execute(f"SELECT {_HEADER_COLUMNS} FROM trials WHERE id = ?", [trial_id]).fetchone()
    if row is None:
        return None
    values = list(row)
    values[5] = bool(values[5])
    return TrialHeader(*values)


def record_of(db: Store, trial_id: str) -> str | None:
    """The stored native JSON record of a trial (for $PAGER / $EDITOR)."""
    row = db.execute("SELECT record FROM trials WHERE id = ?", [trial_id]).fetchone()
    return None if row is None else str(row[0])


@dataclass
class TaskRow:
    task_id: str
    n: int
    c: int
    avg_steps: float | None
    avg_cost: float | None
    outcomes: list[bool]


def task_table(db: Store, run: str) -> list[TaskRow]:
    """Per-task counts, average steps and cost, and the outcome of every trial in trial order."""
    rows = db.execute(
        """
        SELECT s.task_id, s.n, s.c, s.avg_steps, s.avg_cost,
               (SELECT GROUP_CONCAT(success, '') FROM (
                    SELECT success FROM trials t WHERE t.run = s.run AND t.task_id = s.task_id
                    ORDER BY t.trial))
        FROM task_counts s WHERE s.run = ? ORDER BY s.first_seq
        """,
        [run],
    ).fetchall()
    return [
        TaskRow(r[0], int(r[1]), int(r[2]), r[3], r[4], [ch == "1" for ch in (r[5] or "")])
        for r in rows
    ]


def latest_rubric(db: Store) -> Rubric | None:
    """The rubric recorded most recently (by the first label under it or an import), if any."""
    import json

    row = db.execute("SELECT definition FROM rubrics ORDER BY first_seen DESC LIMIT 1").fetchone()
    if row is None:
        return None
    d = json.loads(row[0])
    criteria = [Criterion(**c) for c in d.pop("criteria", [])]
    return Rubric(criteria=criteria, **d)


def trials_by_id_prefix(db: Store, prefix: str, limit: int = 10) -> list[tuple[str, str, str, int]]:
    """(id, run, task id, trial) of the trials whose id starts with the hex ``prefix``, by id."""
    rows = db.execute(
        "SELECT id, run, task_id, trial FROM trials WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
        [prefix, prefix + "g", limit],
    ).fetchall()
    return [(str(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in rows]
