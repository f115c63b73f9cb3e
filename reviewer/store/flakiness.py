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
    """Per task of ``run``, in order of first appearance: (task_id, trials, passed, infra, judge,
    rule, agent), what ``metrics.flakiness.attribute`` makes of :func:`trial_sources`, counted in
    one pass with no tuple per trial kept (a report of a million trials): unscored trials are not
    counted; a failure counts for the first of: the label the trial shows (else its latest judge
    verdict) says pass, it broke a rule, the agent."""
    broken = broken_rules(db, run)
    labels = shown_labels(db, run)
    verdict = latest_verdict_sql(db, scored_only=True)
    tasks: dict[str, list[int]] = {}
    for tid, task_id, outcome, judged in db.execute(
        f"SELECT t.id, t.task_id, t.outcome, CASE WHEN t.outcome = 'fail' THEN {verdict} END "
        "FROM trials t WHERE t.run = ? AND t.outcome <> 'unscored' ORDER BY t.seq",
        [run],
    ):
        c = tasks.get(task_id)
        if c is None:
            c = tasks[task_id] = [0, 0, 0, 0, 0, 0]
        c[0] += 1
        if outcome == "pass":
            c[1] += 1
        elif outcome == "infra":
            c[2] += 1
        elif labels.get(tid, judged) == "pass":
            c[3] += 1
        elif tid in broken:
            c[4] += 1
        else:
            c[5] += 1
    return [(str(t), *c) for t, c in tasks.items()]  # type: ignore[misc]
