"""The queries behind the gate's judge anchors: which judge graded a run, and one judge's verdicts on
a set of trials."""

from __future__ import annotations

from collections.abc import Sequence

from reviewer.store.db import Store


def run_judge(db: Store, run: str) -> tuple[str | None, int]:
    """The judge whose verdict is the latest (pass or fail) on most trials of ``run`` (the judge
    that decides its judged outcomes) and on how many; (None, 0) when no trial was judged."""
    from reviewer.store.summaries import verdicts_ready

    if verdicts_ready(db):
        sql = (
            "SELECT v.judge, COUNT(*) FROM trial_verdicts lv JOIN verdicts v ON v.id = lv.verdict_id "
            "WHERE lv.run = ? AND lv.verdict IN ('pass', 'fail') "
            "GROUP BY v.judge ORDER BY COUNT(*) DESC, v.judge LIMIT 1"
        )
    else:
        sql = (
            "SELECT v.judge, COUNT(*) FROM latest_trial_verdicts v JOIN trials t ON t.id = v.trial_id "
            "WHERE t.run = ? AND v.verdict IN ('pass', 'fail') "
            "GROUP BY v.judge ORDER BY COUNT(*) DESC, v.judge LIMIT 1"
        )
    row = db.execute(sql, [run]).fetchone()
    return (None, 0) if row is None else (str(row[0]), int(row[1]))


def judge_verdicts(db: Store, judge: str, trial_ids: Sequence[str]) -> dict[str, str]:
    """trial id -> the verdict (pass, fail, error) ``judge`` gave it, for the trials it graded."""
    out: dict[str, str] = {}
    ids = list(trial_ids)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = db.execute(
            "SELECT v.trial_id, v.verdict FROM latest_judge_verdicts v "
            f"WHERE v.judge = ? AND v.trial_id IN ({','.join('?' * len(chunk))})",
            [judge, *chunk],
        ).fetchall()
        out.update({str(t): str(v) for t, v in rows})
    return out
