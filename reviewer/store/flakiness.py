"""What flakiness attribution reads of a run: each trial's outcome, the rules it broke, the latest
judge verdict (m016's ``trial_verdicts``) and the label it shows (the m006 views)."""

from __future__ import annotations

from reviewer.store.db import Store
from reviewer.store.summaries import latest_verdict_sql
from reviewer.store.trials import broken_rules


def shown_labels(db: Store, run: str) -> dict[str, str]:
    """trial id -> the pass or fail label each trial of ``run`` shows: labels are few next to
    trials, so the run's are read at once, not looked up per trial."""
    return dict(
        db.execute(
            "SELECT l.trial_id, l.verdict FROM trial_labels l JOIN trials t ON t.id = l.trial_id "
            "WHERE t.run = ? AND l.verdict IN ('pass', 'fail')",
            [run],
        ).fetchall()
    )


def trial_sources(
    db: Store, run: str
) -> list[tuple[str, str, frozenset[str], str | None, str | None]]:
    """(task_id, outcome, rule ids broken, latest judge verdict, standing human label) per trial
    of ``run`` in import order; verdicts and labels other than pass / fail are None (a ``skip``
    label leaves the decision to the judge)."""
    broken = broken_rules(db, run)
    labels = shown_labels(db, run)
    # the latest verdict of any judge (m016's table when it has taken in every verdict)
    rows = db.execute(
        f"SELECT t.id, t.task_id, t.outcome, {latest_verdict_sql(db, scored_only=True)} "
        "FROM trials t WHERE t.run = ? ORDER BY t.seq",
        [run],
    )
    none: frozenset[str] = frozenset()
    return [
        (str(task_id), str(outcome), broken.get(tid, none), verdict, labels.get(tid))
        for tid, task_id, outcome, verdict in rows
    ]


def task_sources(db: Store, run: str) -> list[tuple[str, int, int, int, int, int, int]]:
    """Per task of ``run``, in the pass^k table's order (each task's first trial, scored or not):
    (task_id, trials, passed, infra, judge, rule, agent), what ``metrics.flakiness.attribute``
    makes of :func:`trial_sources` for a flaky task (some scored trials passed, some failed), read
    without a row per trial (a report of a million trials): the counts are the importer's per-task summary (``task_stats``), and only the failed
    trials of flaky tasks are read, each failure counted for the first of: the label the trial
    shows (else its latest judge verdict) says pass, it broke a rule, the agent. A task that is
    not flaky has its counts and no failure attributed (judge, rule and agent 0): attribution
    says where a flaky task's failures come from, and nothing shows it for the others. A task
    whose every trial is unscored is not listed."""
    verdict = latest_verdict_sql(db, scored_only=True)
    tasks = {
        str(task_id): [int(trials), int(passed), int(infra), 0, 0, 0]
        for task_id, trials, passed, infra in db.execute(
            "SELECT task_id, n - unscored, c, infra FROM task_stats "
            "WHERE run = ? AND n > unscored ORDER BY first_seq",
            [run],
        )
    }
    failed = db.execute(
        f"SELECT t.id, t.task_id, {verdict}, "
        "EXISTS (SELECT 1 FROM violations v WHERE v.trial_id = t.id) "
        "FROM trials t JOIN task_stats s ON s.run = t.run AND s.task_id = t.task_id "
        "WHERE t.run = ? AND t.outcome = 'fail' AND s.c > 0 AND s.c < s.n - s.unscored - s.infra",
        [run],
    ).fetchall()
    labels = shown_labels(db, run) if failed else {}
    for tid, task_id, judged, broke in failed:
        c = tasks[task_id]
        if labels.get(tid, judged) == "pass":
            c[3] += 1
        elif broke:
            c[4] += 1
        else:
            c[5] += 1
    return [(t, *c) for t, c in tasks.items()]  # type: ignore[misc]
