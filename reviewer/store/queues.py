"""Calibration queues: named, stored samples of trials to label, in a fixed order.

A queue survives restarts; its progress is read from the labels, so labeling resumes at the first
item the labeler has no current label for.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.store.db import Store
from reviewer.store.labels import now_at


@dataclass
class Candidate:
    """A trial that may be sampled, with its stratum: latest judge verdict, task, failure cluster."""

    trial_id: str
    run: str
    task_id: str
    trial: int
    verdict: str  # pass | fail | none (no verdict, or the judge erred)
    cluster: str | None  # cluster id in the newest clustering that holds the trial
    outcome: str = ""  # pass | fail | infra | unscored (the harness's)


@dataclass
class QueueItem:
    position: int
    trial_id: str
    split: str | None  # dev | test | None
    verdict: str  # the stratum it was drawn from
    cluster: str | None
    run: str = ""
    task_id: str = ""
    trial: int = 0


@dataclass
class Queue:
    name: str
    labeler: str
    seed: int
    created_at: str
    split: str | None = None  # "half" when items carry a dev/test split
    params: dict[str, Any] = field(default_factory=dict)
    items: list[QueueItem] = field(default_factory=list)


class QueueExists(ValueError):
    """A queue of that name is already stored."""


class NoSuchQueue(KeyError):
    def __str__(self) -> str:
        return f"no queue named {self.args[0]!r}"


def candidates(db: Store, run: str | None = None, judge: str | None = None) -> list[Candidate]:
    """Every trial (of ``run``) in seq order with its stratum.

    The verdict is the latest one (by time) of any judge, or of ``judge`` when given.
    """
    latest = (
        "SELECT trial_id, verdict FROM latest_trial_verdicts"
        if judge is None
        else "SELECT trial_id, verdict FROM latest_judge_verdicts WHERE judge = ?"
    )
    sql = f"""
        WITH latest AS ({latest}),
        membership AS (
            SELECT trial_id, cluster_id FROM (
                SELECT m.trial_id, m.cluster_id, ROW_NUMBER() OVER (
                    PARTITION BY m.trial_id ORDER BY m.clustering_id DESC) AS n
                FROM cluster_members m)
            WHERE n = 1)
        SELECT t.id, t.run, t.task_id, t.trial, latest.verdict, membership.cluster_id, t.outcome
        FROM trials t
        LEFT JOIN latest ON latest.trial_id = t.id
        LEFT JOIN membership ON membership.trial_id = t.id
        {"WHERE t.run = ?" if run is not None else ""}
        ORDER BY t.seq
    """
    args: list[Any] = []
    if judge is not None:
        args.append(judge)
    if run is not None:
        args.append(run)
    return [
        Candidate(
            trial_id=r[0],
            run=r[1],
            task_id=r[2],
            trial=r[3],
            verdict=r[4] if r[4] in ("pass", "fail") else "none",
            cluster=r[5],
            outcome=str(r[6]),
        )
        for r in db.conn.execute(sql, args)
    ]


def judges_by_verdicts(db: Store, runs: Sequence[str] = ()) -> dict[str, int]:
    """judge id -> its latest pass and fail verdicts on the trials of ``runs`` (every run when
    empty), most first, then by id."""
    scope = (
        "AND trial_id IN (SELECT id FROM trials WHERE run IN (SELECT value FROM json_each(?)))"
        if runs
        else ""
    )
    rows = db.conn.execute(
        "SELECT judge, COUNT(*) AS n FROM latest_judge_verdicts "
        f"WHERE verdict IN ('pass', 'fail') {scope} GROUP BY judge ORDER BY n DESC, judge",
        [json.dumps(list(runs))] if runs else [],
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def judge_ids(db: Store) -> list[str]:
    """Every judge with a stored verdict."""
    return [r[0] for r in db.conn.execute("SELECT DISTINCT judge FROM verdicts ORDER BY judge")]


def queue_exists(db: Store, name: str) -> bool:
    return db.conn.execute("SELECT 1 FROM queues WHERE name = ?", [name]).fetchone() is not None


def save_queue(db: Store, queue: Queue, *, replace: bool = False) -> Queue:
    """Store ``queue`` (its items in position order) in one transaction."""
    if not queue.created_at:
        queue.created_at = now_at()
    with db.transaction():
        if queue_exists(db, queue.name):
            if not replace:
                raise QueueExists(queue.name)
            _delete(db, queue.name)
        db.conn.execute(
            "INSERT INTO queues (name, labeler, seed, params, created_at, split) VALUES (?, ?, ?, ?, ?, ?)",
            [
                queue.name,
                queue.labeler,
                queue.seed,
                json.dumps(queue.params, sort_keys=True),
                queue.created_at,
                queue.split,
            ],
        )
        db.conn.executemany(
            "INSERT INTO queue_items (queue, position, trial_id, split, judge_verdict, cluster_id) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                (queue.name, it.position, it.trial_id, it.split, it.verdict, it.cluster)
                for it in queue.items
            ],
        )
    return queue


def delete_queue(db: Store, name: str) -> bool:
    """Remove a queue (its labels stay). False when there was none."""
    with db.transaction():
        if not queue_exists(db, name):
            return False
        _delete(db, name)
    return True


def _delete(db: Store, name: str) -> None:
    db.conn.execute("DELETE FROM queue_items WHERE queue = ?", [name])
    db.conn.execute("DELETE FROM queues WHERE name = ?", [name])


def _queue_row(row: Sequence[Any]) -> Queue:
    return Queue(
        name=row[0],
        labeler=row[1],
        seed=row[2],
        params=json.loads(row[3] or "{}"),
        created_at=row[4],
        split=row[5],
    )


_QUEUE_SQL = "SELECT name, labeler, seed, params, created_at, split FROM queues"


def list_queues(db: Store) -> list[Queue]:
    """Every queue, oldest first, without its items."""
    return [
        _queue_row(r) for r in db.conn.execute(f"{_QUEUE_SQL} ORDER BY created_at, name").fetchall()
    ]


def get_queue(db: Store, name: str) -> Queue:
    """One queue with its items; raises NoSuchQueue."""
    row = db.conn.execute(f"{_QUEUE_SQL} WHERE name = ?", [name]).fetchone()
    if row is None:
        raise NoSuchQueue(name)
    queue = _queue_row(row)
    queue.items = queue_items(db, name)
    return queue


def queue_items(db: Store, name: str) -> list[QueueItem]:
    """The queue's trials in queue order."""
    rows = db.conn.execute(
        "SELECT q.position, q.trial_id, q.split, q.judge_verdict, q.cluster_id, t.run, t.task_id, t.trial "
        "FROM queue_items q LEFT JOIN trials t ON t.id = q.trial_id "
        "WHERE q.queue = ? ORDER BY q.position",
        [name],
    ).fetchall()
    return [
        QueueItem(
            position=r[0],
            trial_id=r[1],
            split=r[2],
            verdict=r[3] or "none",
            cluster=r[4],
            run=r[5] or "",
            task_id=r[6] or "",
            trial=r[7] or 0,
        )
        for r in rows
    ]


def queue_progress(db: Store, name: str, labeler: str | None = None) -> tuple[int, int, int | None]:
    """(done, total, next position): done counts items with a current label by ``labeler`` (the
    queue's own labeler by default), given in any queue; next is the first item without one."""
    if labeler is None:
        row = db.conn.execute("SELECT labeler FROM queues WHERE name = ?", [name]).fetchone()
        if row is None:
            raise NoSuchQueue(name)
        labeler = str(row[0])
    rows = db.conn.execute(
        "SELECT q.position, EXISTS (SELECT 1 FROM standing_labels l WHERE l.trial_id = q.trial_id "
        "AND l.labeler = ?) FROM queue_items q WHERE q.queue = ? ORDER BY q.position",
        [labeler, name],
    ).fetchall()
    done = sum(1 for r in rows if r[1])
    next_position = next((int(r[0]) for r in rows if not r[1]), None)
    return done, len(rows), next_position
