"""Reading trials back: a stored record as a Trial, and the per-trial numbers metrics need."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from reviewer.models import Trial, TrialStats
from reviewer.record import decode, native_text
from reviewer.store.db import Store

_SELECT = "SELECT t.id, t.seq, t.run, t.task_id, t.trial, t.record FROM trials t"


def _to_trial(row: Sequence[Any]) -> Trial:
    _tid, _seq, run, task_id, trial_no, record = row
    return decode(record, run=run, task_id=task_id, trial=trial_no)


def load_trial(db: Store, trial_id: str) -> Trial | None:
    """One stored trial, decoded once; its run, task and trial number come from the columns."""
    row = db.execute(f"{_SELECT} WHERE t.id = ?", [trial_id]).fetchone()
    return None if row is None else _to_trial(row)


def native_record(db: Store, trial_id: str) -> str | None:
    """A trial's stored record as one whole native JSON record, its identity from the columns."""
    row = db.execute(
        "SELECT run, task_id, trial, record FROM trials WHERE id = ?", [trial_id]
    ).fetchone()
    return None if row is None else native_text(row[3], run=row[0], task_id=row[1], trial=row[2])


def failure_condition(include_infra: bool = False) -> str:
    """SQL over ``trials t``: the trials that count as failures (the ones clustering reads): a
    harness fail, or an unscored trial whose standing label is fail (or, unlabeled, whose latest
    judge verdict is fail); infrastructure errors only with ``include_infra``."""
    unscored_fail = (
        "(t.outcome = 'unscored' AND COALESCE("
        "(SELECT CASE l.verdict WHEN 'skip' THEN NULL ELSE l.verdict END FROM trial_labels l "
        "WHERE l.trial_id = t.id), "
        "(SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id)) = 'fail')"
    )
    infra = " OR t.outcome = 'infra'" if include_infra else ""
    return f"(t.outcome = 'fail' OR {unscored_fail}{infra})"


def iter_trials(
    db: Store,
    *,
    run: str | None = None,
    ids: Sequence[str] | None = None,
    failed_only: bool = False,
    include_infra: bool = False,
) -> Iterator[tuple[str, Trial]]:
    """(id, Trial) in import order, read in pages so memory stays flat on big databases.
    ``failed_only``: the failures of :func:`failure_condition`."""
    where, params = [], []
    if run is not None:
        where.append("t.run = ?")
        params.append(run)
    if failed_only:
        where.append(failure_condition(include_infra))
    if ids is not None:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            sql = f"{_SELECT} WHERE t.id IN ({','.join('?' * len(chunk))})"
            for row in db.execute(sql, chunk).fetchall():
                yield row[0], _to_trial(row)
        return
    last = 0
    clause = (" AND " + " AND ".join(where)) if where else ""
    while True:
        rows = db.execute(
            f"{_SELECT} WHERE t.seq > ?{clause} ORDER BY t.seq LIMIT 500", [last, *params]
        ).fetchall()
        if not rows:
            return
        for row in rows:
            yield row[0], _to_trial(row)
        last = rows[-1][1]


def broken_rules(db: Store, run: str) -> dict[str, frozenset[str]]:
    """The ids of the rules each trial of ``run`` broke, for the trials that broke one."""
    broken: dict[str, set[str]] = {}
    for tid, rule_id in db.execute(
        "SELECT v.trial_id, v.rule_id FROM violations v JOIN trials t ON t.id = v.trial_id WHERE t.run = ?",
        [run],
    ).fetchall():
        broken.setdefault(tid, set()).add(rule_id)
    return {tid: frozenset(rules) for tid, rules in broken.items()}


_NONE: frozenset[str] = frozenset()


#: Where a trial's outcome comes from: the harness, the standing human label or the latest judge
#: verdict (pass or fail) where there is one, the harness's otherwise (``report --outcome``).
OUTCOME_SOURCES = ("harness", "human", "judge")


def outcome_coverage(db: Store, run: str, source: str) -> tuple[int, int]:
    """(trials of ``run`` whose outcome ``source`` gives, trials it could give one: every trial
    but the infrastructure errors): a standing human pass / fail label, or a latest judge verdict
    of pass or fail. For "harness", every such trial."""
    if source not in OUTCOME_SOURCES:
        raise ValueError(f"outcome source must be one of {', '.join(OUTCOME_SOURCES)}")
    if source == "harness":
        other = "1"
    elif source == "judge":
        from reviewer.store.summaries import latest_verdict_sql

        other = latest_verdict_sql(db, scored_only=True)
    else:
        other = (
            "(SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id "
            "AND l.verdict IN ('pass', 'fail'))"
        )
    given, total = db.execute(
        f"SELECT COUNT({other}), COUNT(*) FROM trials t WHERE t.run = ? AND t.outcome != 'infra'",
        [run],
    ).fetchone()
    return int(given or 0), int(total or 0)


def trial_stats(
    db: Store, run: str, source: str = "harness", tasks: Collection[str] | None = None
) -> list[TrialStats]:
    """Per-trial numbers of ``run`` with the ids of the rules each trial broke, in import order
    (read from the covering index ``trials_metrics`` of m016, never from the records' pages).

    ``source`` "human" / "judge": a trial's outcome is its standing label / latest judge verdict
    where it has one (pass or fail), the harness's otherwise; an infrastructure error stays one, and
    an unscored trial counts once labeled or judged (as ``queries.judged_task_counts``).
    ``tasks``: only the trials of these tasks (a shortened report's)."""
    if source not in OUTCOME_SOURCES:
        raise ValueError(f"outcome source must be one of {', '.join(OUTCOME_SOURCES)}")
    broken = broken_rules(db, run)
    outcome = "outcome"
    if source != "harness":
        from reviewer.store.summaries import latest_verdict_sql

        other = (
            latest_verdict_sql(db, scored_only=True)
            if source == "judge"
            else "(SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id "
            "AND l.verdict IN ('pass', 'fail'))"
        )
        outcome = (
            f"CASE WHEN t.outcome = 'infra' THEN 'infra' ELSE COALESCE({other}, t.outcome) END"
        )
    only = "" if tasks is None else " AND task_id IN (SELECT value FROM json_each(?))"
    rows = db.execute(
        "SELECT id, task_id, success, steps, cost_usd, latency_s, tool_calls, tool_errors, "
        f"{outcome} FROM trials t WHERE run = ?{only} ORDER BY seq",
        [run] if tasks is None else [run, json.dumps(sorted(tasks))],
    )
    finite = math.isfinite
    out = []
    # a NaN or ±Infinity stored by an older version reads as unknown (imports refuse them)
    for tid, task_id, success, steps, cost, latency, calls, errors, outcome in rows:
        if cost is not None and not finite(cost):
            cost = None
        if latency is not None and not finite(latency):
            latency = None
        if source != "harness":
            success = outcome == "pass"
        out.append(
            TrialStats(
                task_id,
                bool(success),
                int(steps),
                cost,
                latency,
                int(calls),
                int(errors),
                broken.get(tid, _NONE),
                str(outcome),
            )
        )
    return out


#: A REAL column, or NULL when it holds ±Infinity (an older version's NaN or ±Infinity).
_FINITE = "CASE WHEN {0} BETWEEN -1.7976931348623157e308 AND 1.7976931348623157e308 THEN {0} END"


def run_metric_rows(
    db: Store, run: str
) -> tuple[list[tuple[str, int, int, float | None, float | None, int, int, str]], dict[str, int]]:
    """What a run's distributions need, without an object per trial (a report at a million
    trials): (task_id, success, steps, cost_usd, latency_s, tool_calls, tool_errors, outcome) per
    trial in import order, a NaN or ±Infinity cost or latency (an older version's) as None; and
    rule id -> how many trials broke it (a trial the harness crashed left out, as the
    distributions leave it), the rule first broken first. The harness's outcomes."""
    # ±Infinity fails BETWEEN (and SQLite stores no NaN): the check costs no Python per trial
    rows = db.execute(
        f"SELECT task_id, success, steps, {_FINITE.format('cost_usd')}, "
        f"{_FINITE.format('latency_s')}, tool_calls, tool_errors, outcome FROM trials "
        "WHERE run = ? ORDER BY seq",
        [run],
    ).fetchall()
    broken = {
        str(rule): int(n)
        for rule, n, _ in db.execute(
            "SELECT v.rule_id, COUNT(DISTINCT v.trial_id), MIN(t.seq) AS first FROM violations v "
            "JOIN trials t ON t.id = v.trial_id WHERE t.run = ? AND t.outcome != 'infra' "
            "GROUP BY v.rule_id ORDER BY first, v.rule_id",
            [run],
        )
    }
    return rows, broken


#: How many of a run's trials (its first, in import order) ``reward_grading`` looks at: graded
#: rewards are the harness's habit, seen in any few thousand of them, and reading a million-trial
#: run's rows would cost every report, compare, gate and the runs screen seconds.
GRADING_SAMPLE = 5000


def reward_grading(db: Store, run: str) -> tuple[int, int, list[float], bool]:
    """The rewards among ``run``'s first GRADING_SAMPLE trials that decide their outcome by the
    reward (no passed of their own, no infrastructure error): how many, how many lie strictly
    between 0 and 1, the first three of those (as the import's graded-rewards warning counts
    them), and whether the run has more trials than were looked at."""
    rows = db.execute(
        "SELECT reward, passed, outcome FROM trials WHERE run = ? ORDER BY seq LIMIT ?",
        [run, GRADING_SAMPLE + 1],
    ).fetchall()
    more = len(rows) > GRADING_SAMPLE
    rewards = [
        float(r[0])
        for r in rows[:GRADING_SAMPLE]
        if r[0] is not None and r[1] is None and r[2] != "infra"
    ]
    graded = [r for r in rewards if 0.0 < r < 1.0]
    return len(rewards), len(graded), graded[:3], more
