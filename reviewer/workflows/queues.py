"""Make a calibration queue: the one path behind `reviewer sample` and the app's `a` key.

Both faces get the same default name, size and run checks, and the same answer when a queue of
that name exists already: it is handed back to resume (unless ``replace``), never sampled again.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from reviewer.calibration.sampling import make_queue as sample_queue
from reviewer.store.db import Store
from reviewer.store.queries import run_names
from reviewer.store.queues import Queue, QueueExists, get_queue, judge_ids, queue_progress

#: How many trials a queue holds unless told otherwise (the usual calibration sample).
DEFAULT_SIZE = 50
DEFAULT_SEED = 0


class QueueScopeError(ValueError):
    """A run or judge to sample from that the store does not hold."""


@dataclass(frozen=True)
class QueueMade:
    """The queue asked for: sampled now (``created``) or found stored under that name (to resume)."""

    queue: Queue
    created: bool
    requested: int
    done: int
    total: int

    @property
    def infra_left_out(self) -> int:
        """Trials in scope ended by infrastructure errors: never sampled."""
        return int(self.queue.params.get("infra_left_out", 0) or 0)

    @property
    def short(self) -> bool:
        """Fewer trials were left to sample than were asked for."""
        return self.created and len(self.queue.items) < self.requested


def default_queue_name(labeler: str, run: str | None = None, seed: int = DEFAULT_SEED) -> str:
    """``LABELER-sSEED``, or ``LABELER-RUN-sSEED`` for one run: the same data, labeler and seed give
    the same name, so asking again finds the queue to resume."""
    return f"{labeler}-{run}-s{seed}" if run else f"{labeler}-s{seed}"


def make_queue(
    db: Store,
    labeler: str,
    *,
    n: int = DEFAULT_SIZE,
    seed: int = DEFAULT_SEED,
    run: str | None = None,
    name: str | None = None,
    judge: str | None = None,
    split: bool = False,
    replace: bool = False,
    trial_ids: Collection[str] | None = None,
) -> QueueMade:
    """Sample ``n`` trials ``labeler`` has not labeled (of ``run``) as a stratified queue, or hand back
    the stored queue of that name to resume.

    Raises QueueScopeError for an unknown run or judge, NothingToSample when every trial in scope is
    labeled, and ValueError for a bad ``n``.
    """
    if run is not None and run not in (known := run_names(db)):
        raise QueueScopeError(f"no run named {run!r}; runs: {', '.join(known) or 'none'}")
    if judge is not None and judge not in (judges := judge_ids(db)):
        raise QueueScopeError(
            f"no verdicts by judge {judge!r}; judges: {', '.join(map(repr, judges)) or 'none'}"
        )
    queue_name = name or default_queue_name(labeler, run, seed)
    try:
        queue = sample_queue(
            db,
            queue_name,
            n,
            seed,
            run,
            labeler=labeler,
            split="half" if split else None,
            judge=judge,
            replace=replace,
            trial_ids=trial_ids,
        )
    except QueueExists:
        stored = get_queue(db, queue_name)
        done, total, _ = queue_progress(db, queue_name)
        return QueueMade(stored, created=False, requested=n, done=done, total=total)
    return QueueMade(queue, created=True, requested=n, done=0, total=len(queue.items))
