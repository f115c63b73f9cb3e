"""What flakiness attribution reads of a run: each trial's outcome, the rules it broke, the latest
judge verdict and the label it shows (the m006 views)."""

from __future__ import annotations

from reviewer.store.db import Store


def trial_sources(
    db: Store, run: str
) -> list[tuple[str, str, frozenset[str], str | None, str | None]]:
    """(task_id, outcome, rule ids broken, latest judge verdict, standing human label) per trial
    of ``run`` in import order; verdicts and labels other than pass / fail are None."""
    broken: dict[str, set[str]] = {}
    for tid, rule_id in db.execute(
        "SELECT v.trial_id, v.rule_id FROM violations v JOIN trials t ON t.id = v.trial_id"
        " WHERE t.run = ?",
        [run],
    ).fetchall():
        broken.setdefault(tid, set()).add(rule_id)
    rows = db.execute(
        """
        SELECT t.id, t.task_id, t.outcome,
               (SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id
                AND v.verdict IN ('pass', 'fail')),
               (SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id
                AND l.verdict IN ('pass', 'fail'))
        FROM trials t WHERE t.run = ? ORDER BY t.seq
        """,
        [run],
    ).fetchall()
    return [(str(r[1]), str(r[2]), frozenset(broken.get(r[0], ())), r[3], r[4]) for r in rows]
