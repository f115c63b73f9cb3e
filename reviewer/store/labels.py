"""Human labels: append-only rows, committed one by one; the latest per (trial, labeler) counts.

Undo appends a retraction: a row with the same (trial, labeler, at) as the label it cancels and
``retracted = 1``, so a retraction travels between machines with the label it belongs to and the
label before it counts again. Which label stands is defined once, by the views of migration m006
(``effective_labels``, ``standing_labels``, ``trial_labels``); every read here goes through them. Every write is one short transaction; writes that read first take the
write lock up front (``BEGIN IMMEDIATE``), so two processes labeling at once wait for each other
(busy timeout) instead of failing with "database is locked".
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

from reviewer.models import Label, Rubric
from reviewer.store.db import Store

VERDICTS = ("pass", "fail", "skip")
_COLUMNS = "trial_id, labeler, verdict, criteria, note, rubric, at, retracted, queue, override, tag"
_INSERT = f"INSERT INTO labels ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
_FIELDS = (
    "l.trial_id, l.labeler, l.verdict, l.criteria, l.note, l.rubric, l.at, l.retracted, l.queue, "
    "l.override, l.tag"
)
_SELECT = f"SELECT {_FIELDS} FROM labels l"
_EFFECTIVE = f"SELECT {_FIELDS} FROM effective_labels l"
_STANDING = f"SELECT {_FIELDS} FROM standing_labels l"

_clock_lock = threading.Lock()
_last_at: datetime | None = None


class RubricVersionError(ValueError):
    """A rubric whose criteria changed while its name@version stayed the same."""


def now_at() -> str:
    """UTC ISO-8601 with microseconds, strictly increasing within this process."""
    global _last_at
    with _clock_lock:
        t = datetime.now(UTC)
        if _last_at is not None and t <= _last_at:
            t = _last_at + timedelta(microseconds=1)
        _last_at = t
    return format_at(t)


def format_at(t: datetime) -> str:
    """The one spelling of a label time, so times sort as text and merge keys match."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=UTC)
    return t.astimezone(UTC).isoformat(timespec="microseconds")


def normalize_at(value: str) -> str:
    """Any ISO-8601 time (``Z``, offsets, no zone = UTC) in the stored spelling; ValueError if not one."""
    return format_at(datetime.fromisoformat(value.strip()))


def _row_label(row: Any) -> Label:
    return Label(
        trial_id=row[0],
        labeler=row[1],
        verdict=row[2],
        criteria=json.loads(row[3]) if row[3] else {},
        note=row[4] or "",
        rubric=row[5],
        at=row[6],
        retracted=bool(row[7]),
        queue=row[8],
        override=bool(row[9]),
        tag=row[10],
    )


def _params(label: Label) -> list[Any]:
    return [
        label.trial_id,
        label.labeler,
        label.verdict,
        json.dumps(label.criteria, sort_keys=True, ensure_ascii=False),
        label.note,
        label.rubric,
        label.at,
        int(label.retracted),
        label.queue,
        int(label.override),
        label.tag,
    ]


class LabelConflict(ValueError):
    """The labeler's standing label of the trial changed since the caller read it (another window or
    process labeled it): nothing was written. ``verdict`` / ``at`` are the label standing now
    (None when it was undone)."""

    def __init__(self, trial_id: str, labeler: str, verdict: str | None, at: str | None) -> None:
        now = f"{verdict} at {at}" if verdict is not None else "no label (undone)"
        super().__init__(
            f"{labeler}'s label of {trial_id} changed since it was read: it is now {now}"
        )
        self.trial_id, self.labeler, self.verdict, self.at = trial_id, labeler, verdict, at


def standing_label_of(db: Store, trial_id: str, labeler: str) -> tuple[str, str] | None:
    """(verdict, at) of the labeler's standing label of the trial, or None."""
    row = db.conn.execute(
        "SELECT verdict, at FROM standing_labels WHERE trial_id = ? AND labeler = ?",
        [trial_id, labeler],
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def add_label(
    db: Store,
    trial_id: str,
    labeler: str,
    verdict: str,
    criteria: dict[str, bool | None] | None = None,
    note: str = "",
    rubric_ref: str | None = None,
    queue: str | None = None,
    at: str | None = None,
    override: bool = False,
    expect_at: str | None = None,
    tag: str | None = None,
    guard: Callable[[], None] | None = None,
) -> Label:
    """Append one label and commit it. Raises ValueError for a bad verdict or an unknown trial.

    ``expect_at`` is the time of the labeler's standing label of the trial as the caller read it
    ("" for none): when it changed meanwhile, LabelConflict and nothing is written (checked in the
    write transaction, so two windows cannot both think they labeled first). ``guard`` runs in the
    same transaction before the write (a shared queue's place check): what it raises stops it."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    if not labeler:
        raise ValueError("a label needs a labeler")
    label = Label(
        trial_id=trial_id,
        labeler=labeler,
        verdict=verdict,
        criteria=dict(criteria or {}),
        note=note or "",
        rubric=rubric_ref,
        at=normalize_at(at) if at else now_at(),
        queue=queue,
        override=override,
        tag=tag,
    )
    for _ in range(5):
        try:
            with db.transaction():
                if guard is not None:
                    guard()
                if expect_at is not None:
                    now = standing_label_of(db, trial_id, labeler)
                    if (now[1] if now else "") != expect_at:
                        raise LabelConflict(trial_id, labeler, *(now if now else (None, None)))
                db.conn.execute(_INSERT, _params(label))
            return label
        except sqlite3.IntegrityError as e:
            if "foreign key" in str(e).lower():  # SQLite: FOREIGN KEY; PostgreSQL: foreign key
                raise ValueError(f"no trial with id {trial_id!r}") from None
            if at is not None:
                raise ValueError(f"{labeler} already labeled {trial_id} at {label.at}") from None
            label.at = now_at()  # another process took this microsecond
    raise ValueError(f"could not find a free time for a label of {trial_id}")


def undo_last(
    db: Store, labeler: str, queue: str | None = None, trial_id: str | None = None
) -> Label | None:
    """Retract the labeler's latest effective label (in ``queue``, of ``trial_id`` when given); None
    if there is none.

    Returns the retraction row. Reads the database, so it works the same after a restart.
    """
    where = "l.labeler = ?"
    args: list[Any] = [labeler]
    if queue is not None:
        where += " AND l.queue = ?"
        args.append(queue)
    if trial_id is not None:
        where += " AND l.trial_id = ?"
        args.append(trial_id)
    with db.transaction():
        row = db.conn.execute(
            f"{_EFFECTIVE} WHERE {where} ORDER BY l.at DESC, l.id DESC LIMIT 1", args
        ).fetchone()
        if row is None:
            return None
        retraction = _row_label(row)
        retraction.retracted = True
        db.conn.execute(_INSERT, _params(retraction))
    return retraction


def current_labels(
    db: Store, labeler: str | None = None, rubric: str | None = None
) -> dict[tuple[str, str], Label]:
    """(trial id, labeler) -> the standing label; with ``rubric``, the latest effective label under
    that name@version (so versions are never mixed)."""
    where: list[str] = []
    args: list[Any] = []
    if labeler is not None:
        where.append("l.labeler = ?")
        args.append(labeler)
    if rubric is not None:
        where.append("l.rubric = ?")
        args.append(rubric)
        sql = (
            f"{_EFFECTIVE} WHERE {' AND '.join(where)} AND NOT EXISTS (SELECT 1 FROM effective_labels f "
            "WHERE f.trial_id = l.trial_id AND f.labeler = l.labeler AND f.rubric = l.rubric "
            "AND f.at > l.at)"
        )
    else:
        sql = f"{_STANDING} WHERE {' AND '.join(where) or '1'}"
    out: dict[tuple[str, str], Label] = {}
    for row in db.conn.execute(sql, args):
        label = _row_label(row)
        out[(label.trial_id, label.labeler)] = label
    return out


def standing_by_labeler(db: Store, trial_id: str) -> dict[str, Label]:
    """labeler -> their standing label on one trial."""
    rows = db.conn.execute(f"{_STANDING} WHERE l.trial_id = ? ORDER BY l.labeler", [trial_id])
    return {label.labeler: label for label in map(_row_label, rows.fetchall())}


def shown_labels(db: Store, labeler: str | None = None) -> dict[str, Label]:
    """trial id -> the label the trial shows: the latest standing label of any labeler (``trial_labels``),
    or the standing label of ``labeler`` when given."""
    if labeler is None:
        rows = db.conn.execute(f"SELECT {_FIELDS} FROM trial_labels l").fetchall()
    else:
        rows = db.conn.execute(f"{_STANDING} WHERE l.labeler = ?", [labeler]).fetchall()
    return {label.trial_id: label for label in map(_row_label, rows)}


def history(db: Store, trial_id: str) -> list[Label]:
    """Every label and retraction of one trial, by every labeler, oldest first."""
    rows = db.conn.execute(
        f"{_SELECT} WHERE l.trial_id = ? ORDER BY l.at, l.retracted, l.id", [trial_id]
    ).fetchall()
    return [_row_label(r) for r in rows]


def labeled_trial_ids(db: Store, labeler: str) -> set[str]:
    """Trials the labeler has a current label for (pass, fail or skip)."""
    rows = db.conn.execute(
        "SELECT DISTINCT trial_id FROM standing_labels WHERE labeler = ?",
        [labeler],
    ).fetchall()
    return {r[0] for r in rows}


def labelers(db: Store) -> list[str]:
    return [r[0] for r in db.conn.execute("SELECT DISTINCT labeler FROM labels ORDER BY labeler")]


def rubric_counts(db: Store, labeler: str | None = None) -> dict[str | None, int]:
    """rubric name@version -> how many current labels were given under it."""
    counts: dict[str | None, int] = {}
    for label in current_labels(db, labeler).values():
        counts[label.rubric] = counts.get(label.rubric, 0) + 1
    return counts


def ensure_rubric_version(db: Store, rubric: Rubric) -> bool:
    """Record ``rubric`` under its name@version; True when it is new.

    Raises RubricVersionError when that name@version was recorded with other criteria or pass rule,
    so labels under two different rubrics never share one version.
    """
    fields = asdict(rubric)
    if not fields["categories"]:  # a rubric without categories is recorded as it always was
        del fields["categories"]
    definition = json.dumps(fields, sort_keys=True, ensure_ascii=False)
    with db.transaction():
        row = db.conn.execute("SELECT digest FROM rubrics WHERE ref = ?", [rubric.ref]).fetchone()
        if row is None:
            db.conn.execute(
                "INSERT INTO rubrics (ref, digest, definition, first_seen) VALUES (?, ?, ?, ?)",
                [rubric.ref, rubric.digest, definition, now_at()],
            )
            return True
    if row[0] != rubric.digest:
        raise RubricVersionError(
            f"rubric {rubric.ref} changed (criteria or pass rule) since labels were first given "
            f"under it; bump its version so old and new labels are not mixed"
        )
    return False


def iter_label_rows(
    db: Store, labeler: str | None = None
) -> Iterator[tuple[Label, str | None, str | None, int | None]]:
    """Every label and retraction, oldest first, with its trial's (run, task id, trial number)."""
    where, args = ("WHERE l.labeler = ?", [labeler]) if labeler is not None else ("", [])
    sql = (
        "SELECT l.trial_id, l.labeler, l.verdict, l.criteria, l.note, l.rubric, l.at, l.retracted, "
        "l.queue, l.override, l.tag, t.run, t.task_id, t.trial FROM labels l "
        f"LEFT JOIN trials t ON t.id = l.trial_id {where} ORDER BY l.at, l.retracted, l.id"
    )
    for row in db.conn.execute(sql, args):
        yield _row_label(row), row[11], row[12], row[13]


def find_trial_id(
    db: Store,
    trial_id: str | None = None,
    run: str | None = None,
    task_id: str | None = None,
    trial: int | None = None,
) -> str | None:
    """The stored id of a TRIAL_REF: the id itself when stored, else by (run, task id, trial)."""
    if trial_id is not None:
        row = db.conn.execute("SELECT id FROM trials WHERE id = ?", [trial_id]).fetchone()
        if row is not None:
            return str(row[0])
    if run is not None and task_id is not None and trial is not None:
        row = db.conn.execute(
            "SELECT id FROM trials WHERE run = ? AND task_id = ? AND trial = ?",
            [run, task_id, trial],
        ).fetchone()
        if row is not None:
            return str(row[0])
    return None


def merge_labels(db: Store, labels: Sequence[Label]) -> list[bool]:
    """Insert what is not stored yet, keyed by (trial, labeler, at, retracted), in one transaction;
    per label, whether it was added."""
    added: list[bool] = []
    with db.transaction():
        for label in labels:
            cur = db.conn.execute(_INSERT.replace("INSERT", "INSERT OR IGNORE", 1), _params(label))
            added.append(cur.rowcount == 1)
    return added


def stored_rubric_digest(db: Store, ref: str) -> str | None:
    """The digest recorded for a rubric name@version, if labels were ever given under it."""
    row = db.conn.execute("SELECT digest FROM rubrics WHERE ref = ?", [ref]).fetchone()
    return None if row is None else str(row[0])
