"""Read queries used by the CLI and the TUI. Per-task counts come from the ``task_counts`` view
(migration m006), the one definition of n and c per task."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from reviewer.models import Criterion, Rubric
from reviewer.store.db import Store
from reviewer.store.summaries import latest_verdict_sql


@dataclass
class RunRow:
    name: str
    tasks: int
    trials: int
    passed: int
    cost_usd: float | None
    imported_at: str | None
    source: str | None
    infra: int = 0  # trials ended by infrastructure errors (not in ``trials``)
    unscored: int = 0  # trials with no outcome (not in ``trials``)
    pass_rule: str | None = None  # the rule its trials were judged by on import (JSON)
    model: str | None = None  # the model the run's trials name (Inspect logs), if one


def run_tasks(db: Store) -> dict[str, tuple[int, set[str]]]:
    """Each run's first trial's place in import order (its smallest seq: runs imported within one
    second, a folder's files, in the order they were written, which ``imported_at`` cannot
    tell) and its task ids, in one read of the per-task summary."""
    out: dict[str, tuple[int, set[str]]] = {}
    for run, task, seq in db.execute("SELECT run, task_id, first_seq FROM task_stats"):
        first, tasks = out.get(run, (int(seq), set()))
        tasks.add(str(task))
        out[str(run)] = (min(first, int(seq)), tasks)
    return out


def list_runs(db: Store) -> list[RunRow]:
    """Every run; ``trials`` counts the scored ones (pass or fail), infra and unscored beside.

    The sums of ``task_counts`` per run come from ``run_totals`` (m016: kept by triggers on
    ``task_stats``), one row per run, so the runs screen costs O(runs) on any number of trials."""
    rows = db.execute(
        """
        SELECT r.name, COALESCE(s.tasks, 0), COALESCE(s.n, 0), COALESCE(s.c, 0),
               CASE WHEN s.cost_n > 0 THEN s.cost_sum END, r.imported_at, r.source,
               COALESCE(s.infra, 0), COALESCE(s.unscored, 0), r.pass_rule,
               (SELECT CASE WHEN json_valid(t.metadata) THEN json_extract(t.metadata, '$.model')
                END FROM trials t WHERE t.run = r.name ORDER BY t.seq LIMIT 1)
        FROM runs r LEFT JOIN run_totals s ON s.run = r.name
        ORDER BY r.imported_at, r.name
        """
    ).fetchall()
    return [
        RunRow(
            name=r[0],
            tasks=r[1],
            trials=r[2],
            passed=r[3],
            # a cost sum beyond a float (costs near 1e308 stored by an older version) is
            # unknown, not inf
            cost_usd=_exact_near_a_half_cent(db, r[0], r[4]),
            imported_at=r[5],
            source=r[6],
            infra=int(r[7]),
            unscored=int(r[8]),
            pass_rule=r[9],
            model=_text(r[10]),
        )
        for r in rows
    ]


def _exact_near_a_half_cent(db: Store, run: str, kept: float | None) -> float | None:
    """The run's cost as the runs screen prints it (to the cent) from the total m016 keeps by adding
    and taking away each task's sum, which drifts from the sum taken afresh by about 1e-16 of it a
    change: harmless, except within that drift of a half cent, where the printed cent could differ
    ($0.90 for $0.91). There (rarely: a thousandth of a cent around each half cent) the sum is
    taken afresh as before m016, over the run's tasks in the same order."""
    if kept is None or not math.isfinite(kept):
        return None
    cents = kept * 100
    if abs(cents - math.floor(cents) - 0.5) > 1e-6 + 1e-8 * abs(cents):
        return kept
    row = db.execute(
        "SELECT CASE WHEN SUM(cost_n) > 0 THEN SUM(cost_sum) END FROM task_counts WHERE run = ?",
        [run],
    ).fetchone()
    exact = row[0] if row else None
    return exact if exact is None or math.isfinite(exact) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def run_outcomes(db: Store, run: str) -> dict[str, int]:
    """How many trials of ``run`` ended each way (pass, fail, infra, unscored)."""
    return {
        str(o): int(n)
        for o, n in db.execute(
            "SELECT outcome, COUNT(*) FROM trials WHERE run = ? GROUP BY outcome ORDER BY outcome",
            [run],
        ).fetchall()
    }


def run_pass_rule(db: Store, run: str) -> str | None:
    """The pass rule (JSON) ``run`` was imported with, None when none was recorded."""
    row = db.execute("SELECT pass_rule FROM runs WHERE name = ?", [run]).fetchone()
    return None if row is None else row[0]


def judged_task_counts(
    db: Store, run: str, source: str, include_infra: bool = False
) -> list[tuple[str, int, int]]:
    """(task_id, n, c) of ``run`` with a human label (``source`` "human": the standing label a trial
    shows, skip aside) or the latest judge verdict (``source`` "judge": pass or fail, error aside)
    as the outcome where one exists, the harness's otherwise; infrastructure errors stay out, and
    an unscored trial counts only once judged."""
    if source == "human":
        other = (
            "(SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id "
            "AND l.verdict IN ('pass', 'fail'))"
        )
    else:  # the latest verdict of any judge (m016's table when it has taken in every verdict)
        other = latest_verdict_sql(db, scored_only=True)
    rows = db.execute(
        f"""
        SELECT task_id, SUM(o IN ('pass', 'fail') OR (o = 'infra' AND ? = 1)), SUM(o = 'pass') FROM (
            SELECT t.task_id, t.seq,
                   CASE WHEN t.outcome = 'infra' THEN 'infra'
                        ELSE COALESCE({other}, t.outcome) END AS o
            FROM trials t WHERE t.run = ?)
        GROUP BY task_id ORDER BY MIN(seq)
        """,
        [int(include_infra), run],
    ).fetchall()
    return [(str(r[0]), int(r[1] or 0), int(r[2] or 0)) for r in rows]


def count_groups(db: Store, run: str) -> list[tuple[int, int, int]]:
    """(n, c, how many tasks) of ``run``: all that run-level pass@k / pass^k averages need
    (``task_counts`` grouped by n and c, kept as ``run_groups`` by m016's triggers)."""
    return [
        (int(n), int(c), int(times))
        for n, c, times in db.execute(
            "SELECT n, c, tasks FROM run_groups WHERE run = ? AND tasks > 0 ORDER BY n, c", [run]
        ).fetchall()
    ]


def run_names(db: Store) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM runs ORDER BY imported_at, name").fetchall()]


def task_counts(db: Store, run: str, include_infra: bool = False) -> list[tuple[str, int, int]]:
    """(task_id, n, c) for every task of ``run``, in first-seen order; n counts the scored trials
    (with ``include_infra``, the infrastructure errors too, as failures)."""
    n = "n + infra" if include_infra else "n"
    rows = db.execute(
        f"SELECT task_id, {n}, c FROM task_counts WHERE run = ? ORDER BY first_seq", [run]
    ).fetchall()
    return [(r[0], int(r[1]), int(r[2])) for r in rows]


def task_outcomes(db: Store, run: str) -> dict[str, list[str]]:
    """Trial outcomes (pass, fail, infra, unscored) per task, in trial order (for outcome strips)."""
    out: dict[str, list[str]] = {}
    for task_id, outcome in db.execute(
        "SELECT task_id, outcome FROM trials WHERE run = ? ORDER BY task_id, trial", [run]
    ).fetchall():
        out.setdefault(task_id, []).append(str(outcome))
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
    outcome: str = "fail"  # pass | fail | infra | unscored


_HEADER_COLUMNS = (
    "id, seq, run, task_id, trial, success, reward, reason, steps, n_messages, tool_errors, cost_usd, "
    "latency_s, error_type, error_message, termination, source_file, source_line, outcome"
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
    outcomes: list[bool]  # every trial in trial order: passed or not
    kinds: str = ""  # every trial in trial order: p(ass) f(ail) i(nfra) u(nscored)
    infra: int = 0
    unscored: int = 0


#: A task's mean of a trial column over the trials the harness did not crash (a crash measured
#: no agent, as in the report's distributions); the kept sums hold every trial, so a task with a
#: crashed trial reads its own rows (the outcome strip beside reads them anyway).
_MEASURED_MEAN = """CASE WHEN s.infra = 0 THEN s.{kept} ELSE (SELECT AVG(t.{column}) FROM trials t
    WHERE t.run = s.run AND t.task_id = s.task_id AND t.outcome <> 'infra') END"""


def task_table(db: Store, run: str) -> list[TaskRow]:
    """Per-task counts (n: scored trials), average steps and cost over the trials the harness did
    not crash, and the outcome of every trial in trial order."""
    rows = db.execute(
        f"""
        SELECT s.task_id, s.n, s.c, {_MEASURED_MEAN.format(kept="avg_steps", column="steps")},
               {_MEASURED_MEAN.format(kept="avg_cost", column="cost_usd")},
               (SELECT GROUP_CONCAT(SUBSTR(outcome, 1, 1), '') FROM (
                    SELECT outcome FROM trials t WHERE t.run = s.run AND t.task_id = s.task_id
                    ORDER BY t.trial)),
               s.infra, s.unscored
        FROM task_counts s WHERE s.run = ? ORDER BY s.first_seq
        """,
        [run],
    ).fetchall()
    return [
        TaskRow(
            r[0],
            int(r[1]),
            int(r[2]),
            r[3],
            r[4],
            [ch == "p" for ch in (r[5] or "")],
            r[5] or "",
            int(r[6]),
            int(r[7]),
        )
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


def short_ids(db: Store, ids: Iterable[str], least: int = 8) -> dict[str, str]:
    """Each of ``ids`` (stored trial ids) cut to its first ``least`` characters, or more where
    another stored trial's id starts the same: a prefix `reviewer show` takes as that trial alone
    (at 100,000 trials, two ids share their first 8 hex digits about once)."""
    out = {}
    for tid in ids:
        need = least
        for sql in (
            "SELECT id FROM trials WHERE id < ? ORDER BY id DESC LIMIT 1",
            "SELECT id FROM trials WHERE id > ? ORDER BY id LIMIT 1",
        ):
            row = db.execute(sql, [tid]).fetchone()
            if row is not None:
                other = str(row[0])
                same = next(
                    (i for i, (a, b) in enumerate(zip(tid, other, strict=False)) if a != b),
                    min(len(tid), len(other)),
                )
                need = max(need, same + 1)
        out[tid] = tid[:need]
    return out


def task_rewards(db: Store, run: str) -> dict[str, float]:
    """Each task's mean reward over its scored trials with a reward, when the run has a reward
    strictly between 0 and 1 (else empty: a run of 0s and 1s says nothing pass@1 does not)."""
    partial = db.execute(
        "SELECT 1 FROM trials WHERE run = ? AND reward > 0 AND reward < 1 LIMIT 1", [run]
    ).fetchone()
    if partial is None:
        return {}
    rows = db.execute(
        "SELECT task_id, AVG(reward) FROM trials WHERE run = ? AND outcome IN ('pass', 'fail') "
        "AND reward IS NOT NULL GROUP BY task_id",
        [run],
    ).fetchall()
    return {task: float(mean) for task, mean in rows}
