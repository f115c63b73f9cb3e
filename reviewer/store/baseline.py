"""The CI gate's baseline: the last good run, set by `reviewer baseline set RUN`.

Every setting is kept (``baseline history``); the latest one is the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.store.db import Store
from reviewer.store.labels import now_at


@dataclass(frozen=True)
class BaselineEntry:
    run: str
    set_at: str
    set_by: str | None
    note: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run, "set_at": self.set_at, "set_by": self.set_by, "note": self.note}


def set_baseline(
    db: Store, run: str, by: str | None = None, note: str | None = None
) -> BaselineEntry:
    """Make ``run`` the baseline (the caller checked that it exists)."""
    entry = BaselineEntry(run, now_at(), by, note)
    with db.transaction():
        db.execute(
            "INSERT INTO baselines (run, set_at, set_by, note) VALUES (?, ?, ?, ?)",
            [entry.run, entry.set_at, entry.set_by, entry.note],
        )
    return entry


def baseline_history(db: Store) -> list[BaselineEntry]:
    """Every baseline set, newest first."""
    rows = db.execute("SELECT run, set_at, set_by, note FROM baselines ORDER BY id DESC").fetchall()
    return [BaselineEntry(*r) for r in rows]


def current_baseline(db: Store) -> BaselineEntry | None:
    """The baseline: the run set last, or None when none was ever set."""
    row = db.execute(
        "SELECT run, set_at, set_by, note FROM baselines ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else BaselineEntry(*row)


def failing_trial_ids(
    db: Store, run: str, task_ids: list[str], per_task: int = 3
) -> dict[str, list[str]]:
    """Up to ``per_task`` ids of failed trials of each task of ``run`` (for links in a report)."""
    out: dict[str, list[str]] = {}
    for task in task_ids:
        rows = db.execute(
            "SELECT id FROM trials WHERE run = ? AND task_id = ? AND outcome = 'fail' "
            "ORDER BY trial LIMIT ?",
            [run, task, per_task],
        ).fetchall()
        out[task] = [r[0] for r in rows]
    return out
