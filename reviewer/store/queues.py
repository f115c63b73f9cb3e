"""Calibration queues: named, stored samples of trials to label, in a fixed order.

A queue survives restarts; its progress is read from the labels, so labeling resumes at the first
item the labeler has no current label for.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
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
    db.conn.execute("DELETE FROM queue_leases WHERE queue = ?", [name])
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
    return _items(db, "WHERE q.queue = ? ORDER BY q.position", [name])


def _items(db: Store, where: str, args: Sequence[Any]) -> list[QueueItem]:
    rows = db.conn.execute(
        "SELECT q.position, q.trial_id, q.split, q.judge_verdict, q.cluster_id, t.run, t.task_id, t.trial "
        f"FROM queue_items q LEFT JOIN trials t ON t.id = q.trial_id {where}",
        list(args),
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


#: How long a labeler holds a shared queue's trial without labeling it (seconds): long enough to
#: read a long transcript, short enough that a labeler who walked away frees it the same hour.
LEASE_S = 20 * 60


@dataclass(frozen=True)
class Lease:
    """A trial of a shared queue held by one labeler until ``expires`` (Unix seconds, by the
    database's clock: ``clock``), ``left`` seconds after it was read."""

    trial_id: str
    position: int
    labeler: str
    expires: float
    left: float = 0.0


def clock(db: Store) -> float:
    """Now in Unix seconds by the clock every labeler of DB shares, which leases are taken,
    renewed and expired by: on PostgreSQL the server's (labelers' machines do not agree: one whose
    clock ran 25 minutes fast took every lease held by others as expired, took their trials,
    and held its own for 45 minutes), on a SQLite file this machine's."""
    if db.dialect == "sqlite":
        return time.time()
    row = db.conn.execute("SELECT EXTRACT(EPOCH FROM clock_timestamp())").fetchone()
    return float(row[0])


def claim_next(
    db: Store,
    name: str,
    labeler: str,
    per_trial: int,
    *,
    lease_s: float = LEASE_S,
    now: float | None = None,
) -> QueueItem | None:
    """The trial of the shared queue ``name`` that ``labeler`` labels next, leased to them for
    ``lease_s`` seconds; None when nothing is left for them.

    In one write transaction (so two labelers never take the same place): expired leases go; the
    labeler's own lease stands (renewed) while its trial still waits for their label; otherwise the
    first trial in queue order that they have not labeled and whose standing labels by others plus
    live leases of others are fewer than ``per_trial`` is leased to them. A label given anywhere
    counts, as in :func:`queue_progress`.
    """
    at = clock(db) if now is None else now
    with db.transaction():
        conn = db.conn
        conn.execute("DELETE FROM queue_leases WHERE queue = ? AND expires <= ?", [name, at])
        held = conn.execute(
            "SELECT k.trial_id FROM queue_leases k WHERE k.queue = ? AND k.labeler = ? AND NOT "
            "EXISTS (SELECT 1 FROM standing_labels l WHERE l.trial_id = k.trial_id "
            "AND l.labeler = k.labeler) ORDER BY k.expires DESC LIMIT 1",
            [name, labeler],
        ).fetchone()
        conn.execute(
            "DELETE FROM queue_leases WHERE queue = ? AND labeler = ? AND trial_id IS NOT ?",
            [name, labeler, None if held is None else held[0]],
        )
        if held is not None:
            conn.execute(
                "UPDATE queue_leases SET expires = ? WHERE queue = ? AND labeler = ?",
                [at + lease_s, name, labeler],
            )
            return _item(db, name, str(held[0]))
        row = _open_item(db, name, labeler, per_trial, at)
        if row is None:
            return None
        conn.execute(
            "INSERT INTO queue_leases (queue, trial_id, labeler, expires) VALUES (?, ?, ?, ?)",
            [name, row[0], labeler, at + lease_s],
        )
        return _item(db, name, str(row[0]))


def peek_next(
    db: Store, name: str, labeler: str, per_trial: int, *, now: float | None = None
) -> QueueItem | None:
    """The trial :func:`claim_next` would give ``labeler`` now, without leasing it (for listings):
    their live lease's trial, else the first open one."""
    at = clock(db) if now is None else now
    held = db.conn.execute(
        "SELECT k.trial_id FROM queue_leases k WHERE k.queue = ? AND k.labeler = ? "
        "AND k.expires > ? AND NOT EXISTS (SELECT 1 FROM standing_labels l "
        "WHERE l.trial_id = k.trial_id AND l.labeler = k.labeler) ORDER BY k.expires DESC LIMIT 1",
        [name, labeler, at],
    ).fetchone()
    row = held or _open_item(db, name, labeler, per_trial, at)
    return None if row is None else _item(db, name, str(row[0]))


def _open_item(db: Store, name: str, labeler: str, per_trial: int, at: float) -> Any:
    """The first trial in queue order ``labeler`` has not labeled (a skip included) whose pass and
    fail labels and live leases (of others, in any queue: queues may share trials, and a label
    counts wherever it was given) are fewer than ``per_trial``: a one-column row, or None. A skip
    fills no place: the trial waits for another labeler's verdict."""
    return db.conn.execute(
        "SELECT q.trial_id FROM queue_items q WHERE q.queue = ? "
        "AND NOT EXISTS (SELECT 1 FROM standing_labels l WHERE l.trial_id = q.trial_id "
        "AND l.labeler = ?) "
        f"AND {_FILLED} "
        "+ (SELECT COUNT(DISTINCT k.labeler) FROM queue_leases k "
        "WHERE k.trial_id = q.trial_id AND k.labeler <> ? AND k.expires > ? AND NOT EXISTS ("
        "SELECT 1 FROM standing_labels m WHERE m.trial_id = k.trial_id AND m.labeler = k.labeler"
        ")) < ? "
        "ORDER BY q.position LIMIT 1",
        [name, labeler, labeler, at, per_trial],
    ).fetchone()


#: The places of trial ``q.trial_id`` its standing pass and fail labels fill (SQL).
_FILLED = (
    "(SELECT COUNT(*) FROM standing_labels l WHERE l.trial_id = q.trial_id "
    "AND l.verdict IN ('pass', 'fail'))"
)


class PlaceTaken(ValueError):
    """A label for a shared queue's trial whose places are filled by other labelers' labels and
    leases (it was labeled or taken while this labeler read it): nothing was written."""

    def __init__(self, trial_id: str, queue: str, by: list[str], per_trial: int) -> None:
        who = ", ".join(by)
        labels = f"{per_trial} label{'s' if per_trial > 1 else ''}"
        super().__init__(
            f"trial {trial_id} of shared queue {queue!r} has its {labels} or is held ({who}): "
            "not labeled; take the next trial"
        )
        self.trial_id, self.queue, self.by = trial_id, queue, by


def label_guard(
    db: Store,
    name: str | None,
    trial_id: str,
    labeler: str,
    verdict: str | None = "pass",
    *,
    now: float | None = None,
) -> Callable[[], None]:
    """What a label of ``trial_id`` checks in its write transaction. Given in the queue ``name``:
    ValueError when the trial is not in it, and the labeler's lease on it is given back. Whatever
    queue it is given in, or none: a pass or fail raises PlaceTaken when the trial is in a shared
    queue whose places are filled by others' pass and fail labels and live leases, and the labeler
    holds no live lease on it and no pass or fail of their own on it (changing their verdict
    takes no new place; a skip takes none). The places are those of the shared queue it is given
    in; given elsewhere, the most any shared queue holding the trial asks for."""

    def check() -> None:
        at = clock(db) if now is None else now
        conn = db.conn
        if name is not None:
            row = conn.execute("SELECT 1 FROM queues WHERE name = ?", [name]).fetchone()
            if row is None:
                raise NoSuchQueue(name)
            inside = conn.execute(
                "SELECT 1 FROM queue_items WHERE queue = ? AND trial_id = ?", [name, trial_id]
            ).fetchone()
            if inside is None:
                raise ValueError(f"trial {trial_id} is not in queue {name!r}")
        if verdict in ("pass", "fail") and not _holds_a_place(db, trial_id, labeler):
            shared = _shared_queues_of(db, trial_id)
            given_in = [(q, n) for q, n in shared if q == name]
            # in a shared queue, its own places; elsewhere, the most places any shared queue
            # holding the trial asks for (a queue of 2 labels each may hand out a trial another
            # of 1 already has: it stays labelable there)
            checked = given_in or sorted(shared, key=lambda qn: (-qn[1], qn[0]))[:1]
            for queue, per_trial in checked:
                held = conn.execute(
                    "SELECT 1 FROM queue_leases WHERE trial_id = ? AND labeler = ? AND expires > ?",
                    [trial_id, labeler, at],
                ).fetchone()
                if held is not None:
                    continue  # handed out to them (a lease in any queue holds a place)
                others = [
                    str(r[0])
                    for r in conn.execute(
                        "SELECT labeler FROM standing_labels WHERE trial_id = ? "
                        "AND verdict IN ('pass', 'fail') AND labeler <> ? "
                        "UNION SELECT k.labeler FROM queue_leases k "
                        "WHERE k.trial_id = ? AND k.labeler <> ? AND k.expires > ? AND NOT EXISTS ("
                        "SELECT 1 FROM standing_labels m WHERE m.trial_id = k.trial_id "
                        "AND m.labeler = k.labeler) ORDER BY 1",
                        [trial_id, labeler, trial_id, labeler, at],
                    ).fetchall()
                ]
                if len(others) >= per_trial:
                    raise PlaceTaken(trial_id, queue, others, per_trial)
        if name is not None:
            conn.execute(
                "DELETE FROM queue_leases WHERE queue = ? AND trial_id = ? AND labeler = ?",
                [name, trial_id, labeler],
            )

    return check


def _holds_a_place(db: Store, trial_id: str, labeler: str) -> bool:
    """Whether ``labeler``'s standing label of the trial is a pass or a fail (a place of its own)."""
    return (
        db.conn.execute(
            "SELECT 1 FROM standing_labels WHERE trial_id = ? AND labeler = ? "
            "AND verdict IN ('pass', 'fail')",
            [trial_id, labeler],
        ).fetchone()
        is not None
    )


def _shared_queues_of(db: Store, trial_id: str) -> list[tuple[str, int]]:
    """The shared queues holding the trial, with their labels per trial."""
    out = []
    for queue, params in db.conn.execute(
        "SELECT q.name, q.params FROM queues q WHERE EXISTS (SELECT 1 FROM queue_items i "
        "WHERE i.queue = q.name AND i.trial_id = ?) ORDER BY q.name",
        [trial_id],
    ).fetchall():
        p = json.loads(params or "{}")
        if p.get("shared"):
            out.append((str(queue), max(1, int(p.get("per_trial") or 1))))
    return out


def _item(db: Store, name: str, trial_id: str) -> QueueItem | None:
    items = _items(db, "WHERE q.queue = ? AND q.trial_id = ?", [name, trial_id])
    return items[0] if items else None


def release_leases(db: Store, name: str, labeler: str) -> int:
    """Give back what ``labeler`` holds in the queue ``name`` (they closed the label screen), so
    the next labeler gets it at once; how many leases were released."""
    with db.transaction():
        cur = db.conn.execute(
            "DELETE FROM queue_leases WHERE queue = ? AND labeler = ?", [name, labeler]
        )
    return int(cur.rowcount or 0)


def live_leases(db: Store, name: str, *, now: float | None = None) -> list[Lease]:
    """The queue's unexpired leases of trials their holders have not labeled yet, by position."""
    at = clock(db) if now is None else now
    rows = db.conn.execute(
        "SELECT k.trial_id, q.position, k.labeler, k.expires FROM queue_leases k "
        "JOIN queue_items q ON q.queue = k.queue AND q.trial_id = k.trial_id "
        "WHERE k.queue = ? AND k.expires > ? AND NOT EXISTS (SELECT 1 FROM standing_labels l "
        "WHERE l.trial_id = k.trial_id AND l.labeler = k.labeler) ORDER BY q.position, k.labeler",
        [name, at],
    ).fetchall()
    return [Lease(str(r[0]), int(r[1]), str(r[2]), float(r[3]), float(r[3]) - at) for r in rows]


def item_labels(db: Store, name: str) -> dict[str, dict[str, str]]:
    """trial id -> {labeler: verdict} of the standing pass and fail labels on the queue's trials
    (skips are no verdict), every labeler, given in any queue."""
    out: dict[str, dict[str, str]] = {}
    rows = db.conn.execute(
        "SELECT l.trial_id, l.labeler, l.verdict FROM standing_labels l "
        "JOIN queue_items q ON q.trial_id = l.trial_id WHERE q.queue = ? "
        "AND l.verdict IN ('pass', 'fail') ORDER BY q.position, l.labeler",
        [name],
    ).fetchall()
    for trial_id, who, verdict in rows:
        out.setdefault(str(trial_id), {})[str(who)] = str(verdict)
    return out


def labeler_counts(db: Store, name: str) -> dict[str, int]:
    """labeler -> how many of the queue's trials they have a standing label on (skips count: the
    trial was looked at and decided), most first, then by name."""
    rows = db.conn.execute(
        "SELECT l.labeler, COUNT(*) AS n FROM standing_labels l "
        "JOIN queue_items q ON q.trial_id = l.trial_id WHERE q.queue = ? "
        "GROUP BY l.labeler ORDER BY n DESC, l.labeler",
        [name],
    ).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def team_done(db: Store, name: str, per_trial: int) -> int:
    """How many of the queue's trials have pass or fail labels by ``per_trial`` labelers or more
    (a skip leaves its place to another labeler)."""
    row = db.conn.execute(
        f"SELECT COUNT(*) FROM queue_items q WHERE q.queue = ? AND {_FILLED} >= ?",
        [name, per_trial],
    ).fetchone()
    return int(row[0])


def fully_labeled(db: Store, per_trial: int) -> set[str]:
    """The trials with pass or fail labels by ``per_trial`` labelers or more (a new shared queue
    leaves them out: they would be done before anyone opened it)."""
    return {
        str(r[0])
        for r in db.conn.execute(
            "SELECT trial_id FROM standing_labels WHERE verdict IN ('pass', 'fail') "
            "GROUP BY trial_id HAVING COUNT(*) >= ?",
            [per_trial],
        )
    }
