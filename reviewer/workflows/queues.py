"""Make a calibration queue: the one path behind `reviewer sample` and the app's `a` form.

Both faces get the same default name, size and run checks, and the same answer when a queue of
that name exists already: it is handed back to resume (unless ``replace``), never sampled again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
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

    @property
    def shortfall(self) -> str | None:
        """Why the queue holds fewer than asked: "asked for 50, the run has 48 trials: the queue
        holds 48" (and how many of them the labeler had labeled already); None when it does not."""
        if not self.short:
            return None
        p = self.queue.params
        runs = p.get("runs") or ([p["run"]] if p.get("run") else [])
        scope = (
            "the run has"
            if len(runs) == 1
            else f"the {len(runs)} runs have"
            if runs
            else "the database has"
        )
        in_scope = p.get("in_scope", len(self.queue.items) + p.get("already_labeled", 0))
        labeled = p.get("already_labeled", 0)
        mine = f" ({labeled} labeled by {self.queue.labeler} already)" if labeled else ""
        return (
            f"asked for {self.requested}, {scope} {in_scope} trials{mine}: "
            f"the queue holds {len(self.queue.items)}"
        )


def default_queue_name(
    labeler: str, run: str | None = None, seed: int = DEFAULT_SEED, runs: Sequence[str] = ()
) -> str:
    """``LABELER-sSEED``, ``LABELER-RUN-sSEED`` for one run, ``LABELER-RUN1+RUN2-sSEED`` for
    several: the same data, labeler and seed give the same name, so asking again finds the queue
    to resume."""
    scope = sorted({*runs, *([run] if run else [])})
    return f"{labeler}-{'+'.join(scope)}-s{seed}" if scope else f"{labeler}-s{seed}"


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
    runs: Sequence[str] = (),
) -> QueueMade:
    """Sample ``n`` trials ``labeler`` has not labeled (of ``run``) as a stratified queue, or hand back
    the stored queue of that name to resume.

    Raises QueueScopeError for an unknown run or judge, NothingToSample when every trial in scope is
    labeled, and ValueError for a bad ``n``.
    """
    if n < 1:
        raise ValueError(f"a queue holds 1 trial or more, not {n}")
    wanted = sorted({*runs, *([run] if run is not None else [])})
    known = run_names(db)
    for one in wanted:
        if one not in known:
            raise QueueScopeError(f"no run named {one!r}; runs: {', '.join(known) or 'none'}")
    if judge is not None and judge not in (judges := judge_ids(db)):
        raise QueueScopeError(
            f"no verdicts by judge {judge!r}; judges: {', '.join(map(repr, judges)) or 'none'}"
        )
    queue_name = name or default_queue_name(labeler, None, seed, wanted)
    try:
        queue = sample_queue(
            db,
            queue_name,
            n,
            seed,
            None,
            runs=wanted,
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
