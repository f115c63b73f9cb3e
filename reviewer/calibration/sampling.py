"""Stratified calibration samples: balanced across judge verdicts, covering tasks and failure clusters.

Strata are (judge verdict, task, cluster; "none" when not clustered). ``n`` is shared out between
the verdict classes (pass, fail, none) as evenly as the data allows; within a class items are drawn
one at a time from the stratum that covers the most tasks and clusters not drawn yet, then from the
least drawn task, cluster and stratum (ties in a seeded random order): a round-robin that covers
every task and cluster as early as it can. Deterministic under the seed: the same data and seed
give the same queue, in the same (shuffled) order.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from reviewer.store.db import Store
from reviewer.store.labels import labeled_trial_ids
from reviewer.store.queues import (
    Candidate,
    Queue,
    QueueExists,
    QueueItem,
    candidates,
    fully_labeled,
    judges_by_verdicts,
    queue_exists,
    save_queue,
)

#: Classes in the order they receive the remainder of an uneven share.
VERDICT_CLASSES = ("fail", "pass", "none")
SPLITS = ("dev", "test")


class NothingToSample(ValueError):
    """Every trial in scope is labeled already (or there are none); no queue is stored."""


class NoJudgeVerdicts(ValueError):
    """An active queue was asked for where no unlabeled trial in scope has a judge verdict."""


def allocate(available: dict[str, int], n: int) -> dict[str, int]:
    """How many to draw from each class: equal shares, capped by what each class has, the rest
    passed on to the classes that have more (e.g. 22 fail + 66 pass, n=50 -> 22 / 28)."""
    quota = {c: 0 for c in available}
    left = min(n, sum(available.values()))
    while left > 0:
        open_classes = [c for c in _ordered(available) if quota[c] < available[c]]
        share, extra = divmod(left, len(open_classes))
        for i, c in enumerate(open_classes):
            take = min(share + (1 if i < extra else 0), available[c] - quota[c])
            quota[c] += take
            left -= take
    return quota


def _ordered(classes: Iterable[str]) -> list[str]:
    rank = {c: i for i, c in enumerate(VERDICT_CLASSES)}
    return sorted(classes, key=lambda c: (rank.get(c, len(rank)), c))


def stratified_sample(
    pool: Sequence[Candidate], n: int, seed: int, *, split: bool = False
) -> list[QueueItem]:
    """Up to ``n`` items of ``pool`` in queue order (positions from 1), with dev/test when ``split``."""
    rng = random.Random(seed)
    by_class: dict[str, dict[tuple[str, str], list[Candidate]]] = {}
    for c in sorted(pool, key=lambda c: c.trial_id):
        by_class.setdefault(c.verdict, {}).setdefault((c.task_id, c.cluster or ""), []).append(c)
    quota = allocate({k: sum(len(m) for m in v.values()) for k, v in by_class.items()}, n)
    chosen: list[tuple[Candidate, str, tuple[str, str], int]] = []  # (item, class, stratum, order)
    for verdict in _ordered(by_class):
        for stratum, item, order in _draw(by_class[verdict], quota[verdict], rng):
            chosen.append((item, verdict, stratum, order))
    splits: dict[str, str] = {}
    if split:
        # Alternate along (class, stratum, draw order): each stratum and class splits within one.
        ranked = sorted(chosen, key=lambda x: (VERDICT_CLASSES.index(x[1]), x[2], x[3]))
        for i, (item, *_rest) in enumerate(ranked):
            splits[item.trial_id] = SPLITS[i % 2]
    items = [c for c, *_rest in chosen]
    rng.shuffle(items)
    return [
        QueueItem(
            position=i,
            trial_id=c.trial_id,
            split=splits.get(c.trial_id),
            verdict=c.verdict,
            cluster=c.cluster,
            run=c.run,
            task_id=c.task_id,
            trial=c.trial,
        )
        for i, c in enumerate(items, 1)
    ]


def _draw(
    strata: dict[tuple[str, str], list[Candidate]], k: int, rng: random.Random
) -> list[tuple[tuple[str, str], Candidate, int]]:
    """``k`` members of one verdict class: each draw takes the stratum that brings the most tasks
    and clusters not drawn yet, then the least drawn task, cluster and stratum."""
    keys = sorted(strata)
    rng.shuffle(keys)
    rank = {key: i for i, key in enumerate(keys)}
    remaining = {}
    for key in sorted(strata):
        members = list(strata[key])
        rng.shuffle(members)
        remaining[key] = members
    per_task: dict[str, int] = {}
    per_cluster: dict[str, int] = {}
    per_stratum: dict[tuple[str, str], int] = {}
    out: list[tuple[tuple[str, str], Candidate, int]] = []
    for order in range(k):
        open_keys = [key for key in keys if remaining[key]]
        if not open_keys:
            break
        best = min(
            open_keys,
            key=lambda s: (
                -(s[0] not in per_task) - (bool(s[1]) and s[1] not in per_cluster),  # new ones
                per_task.get(s[0], 0),
                per_cluster.get(s[1], 0),
                per_stratum.get(s, 0),
                rank[s],
            ),
        )
        out.append((best, remaining[best].pop(0), order))
        per_task[best[0]] = per_task.get(best[0], 0) + 1
        per_cluster[best[1]] = per_cluster.get(best[1], 0) + 1  # "" (not clustered) counts too
        per_stratum[best] = per_stratum.get(best, 0) + 1
    return out


def active_reserve(pool: Sequence[Candidate], n: int, seed: int) -> list[QueueItem]:
    """The trials an active queue picks from: up to ``n`` of each judge verdict (pass, fail), each
    verdict's own in a seeded order that covers tasks and clusters early (as ``stratified_sample``
    draws them); positions alternate fail, pass while both last. The queue decides which verdict
    to label next as labels arrive (``calibration.active``), then takes that verdict's first
    unlabeled trial in this order."""
    rng = random.Random(seed)
    by_class: dict[str, dict[tuple[str, str], list[Candidate]]] = {}
    for c in sorted(pool, key=lambda c: c.trial_id):
        if c.verdict in ("pass", "fail"):
            by_class.setdefault(c.verdict, {}).setdefault((c.task_id, c.cluster or ""), []).append(
                c
            )
    drawn = {
        v: [item for _, item, _ in _draw(by_class.get(v, {}), n, rng)] for v in ("fail", "pass")
    }
    order: list[Candidate] = []
    for i in range(max(len(d) for d in drawn.values())):
        order += [drawn[v][i] for v in ("fail", "pass") if i < len(drawn[v])]
    return [
        QueueItem(
            position=i,
            trial_id=c.trial_id,
            split=None,
            verdict=c.verdict,
            cluster=c.cluster,
            run=c.run,
            task_id=c.task_id,
            trial=c.trial,
        )
        for i, c in enumerate(order, 1)
    ]


def make_queue(
    db: Store,
    name: str,
    n: int,
    seed: int = 0,
    run: str | None = None,
    *,
    labeler: str,
    split: str | None = None,
    judge: str | None = None,
    replace: bool = False,
    trial_ids: Collection[str] | None = None,
    runs: Sequence[str] = (),
    active: bool = False,
    per_trial: int = 0,
) -> Queue:
    """Sample ``n`` trials the labeler has not labeled yet and store them as the queue ``name``;
    ``trial_ids`` narrows the pool to those trials (the monitor's flagged conversations).

    ``split="half"`` gives every item a dev or test half. ``active`` makes an active queue: one
    judge's verdicts (``judge``, else the one with the most verdicts in scope) sort the trials, and
    the next to label is decided as labels arrive (``active_reserve``); trials without that judge's
    verdict cannot inform kappa and are left out (counted). Raises QueueExists (unless
    ``replace``), NothingToSample when no unlabeled trial is left, NoJudgeVerdicts for an active
    queue with no judged trial, and ValueError for a bad ``n`` or ``split``; a queue holds fewer
    than ``n`` items when fewer trials are left. ``runs`` samples several runs. ``per_trial`` (1 or
    more) makes a shared queue: several labelers split it, each trial leased to one at a time until
    ``per_trial`` different labelers have labeled it (``store.queues.claim_next``).
    """
    if per_trial and active:
        raise ValueError("a shared queue is stratified: --shared does not go with --active")
    if per_trial < 0:
        raise ValueError(f"labels per trial is 1 or more, not {per_trial}")
    scope = sorted({*runs, *([run] if run is not None else [])})
    if n < 1:
        raise ValueError("n must be 1 or more")
    if split not in (None, "half"):
        raise ValueError(f"split must be 'half' or None, got {split!r}")
    if active and split is not None:
        raise ValueError("an active queue has no dev/test split: it decides its trials as it goes")
    if not name.strip():
        raise ValueError("a queue needs a name")
    if not replace and queue_exists(db, name):
        raise QueueExists(name)
    if active and judge is None:
        judge = next(iter(judges_by_verdicts(db, scope)), None)
    every = candidates(db, run=scope[0] if len(scope) == 1 else None, judge=judge)
    if len(scope) > 1:
        every = [c for c in every if c.run in scope]
    # a crash of the harness says nothing about the agent: not a trial to calibrate on
    infra = sum(1 for c in every if c.outcome == "infra")
    every = [c for c in every if c.outcome != "infra"]
    if trial_ids is not None:
        keep = set(trial_ids)
        every = [c for c in every if c.trial_id in keep]
    done = labeled_trial_ids(db, labeler)
    if per_trial:  # a shared queue: nor the trials others have already given all their labels
        done |= fully_labeled(db, per_trial)
    pool = [c for c in every if c.trial_id not in done]
    if not pool:
        where = f" of {'run' if len(scope) == 1 else 'runs'} {', '.join(scope)}" if scope else ""
        crashed = f" ({infra} ended by infrastructure errors, left out)" if infra else ""
        raise NothingToSample(
            f"nothing to sample: {labeler} has labeled all {len(every)} trials{where}{crashed}"
            if every
            else f"nothing to sample: no trials{where}{crashed}"
        )
    available = {v: sum(1 for c in pool if c.verdict == v) for v in VERDICT_CLASSES}
    if active:
        items = active_reserve(pool, n, seed)
        if not items:
            raise NoJudgeVerdicts(_no_verdicts(len(pool), judge))
    else:
        items = stratified_sample(pool, n, seed, split=split == "half")
    params: dict[str, Any] = {
        "n": n,
        "run": scope[0] if len(scope) == 1 else None,
        "runs": scope,
        "in_scope": len(every),
        "judge": judge,
        "available": {k: v for k, v in available.items() if v},
        "already_labeled": len(every) - len(pool),
        "infra_left_out": infra,
        "tasks": sorted({c.task_id for c in pool}),
        "clusters": sorted({c.cluster for c in pool if c.cluster}),
    }
    if active:
        params["active"] = True
        params["no_verdict_left_out"] = available.get("none", 0)
    if per_trial:
        params["shared"] = True
        params["per_trial"] = per_trial
    queue = Queue(
        name=name,
        labeler=labeler,
        seed=seed,
        created_at="",
        split=split,
        params=params,
        items=items,
    )
    return save_queue(db, queue, replace=replace)


def _no_verdicts(unlabeled: int, judge: str | None) -> str:
    whose = f"judge {judge!r}" if judge is not None else "any judge"
    return (
        f"an active queue needs judge verdicts on the trials it picks from (kappa compares the"
        f" labels with them): none of the {unlabeled} unlabeled trials in scope has a verdict of"
        f" {whose}; grade them first (`reviewer judge`) or sample without --active"
    )


def queue_summary(queue: Queue) -> dict[str, Any]:
    """What a queue holds: n per verdict class (and what was available), tasks and clusters covered."""
    p = queue.params
    per_class = {v: sum(1 for it in queue.items if it.verdict == v) for v in VERDICT_CLASSES}
    tasks = {it.task_id for it in queue.items}
    clusters = {it.cluster for it in queue.items if it.cluster}
    out: dict[str, Any] = {
        "name": queue.name,
        "labeler": queue.labeler,
        "seed": queue.seed,
        "run": p.get("run"),
        "runs": p.get("runs", [p["run"]] if p.get("run") else []),
        "judge": p.get("judge"),
        "requested": p.get("n"),
        "n": len(queue.items),
        "verdicts": {k: v for k, v in per_class.items() if v},
        "available": p.get("available", {}),
        "already_labeled": p.get("already_labeled", 0),
        "infra_left_out": p.get("infra_left_out", 0),
        "tasks_covered": len(tasks),
        "tasks_total": len(p.get("tasks", tasks)),
        "clusters_covered": len(clusters),
        "clusters_total": len(p.get("clusters", clusters)),
        "split": None,
        "shared": bool(p.get("shared")),
        "labels_per_trial": int(p.get("per_trial") or 1),
    }
    if queue.split:
        out["split"] = {s: sum(1 for it in queue.items if it.split == s) for s in SPLITS}
    if p.get("active"):
        # an active queue holds a reserve; it labels up to ``requested`` of it
        out["active"] = True
        out["n"] = min(int(p.get("n") or len(queue.items)), len(queue.items))
        out["reserve"] = len(queue.items)
        out["no_verdict_left_out"] = p.get("no_verdict_left_out", 0)
    return out


__all__ = [
    "NoJudgeVerdicts",
    "NothingToSample",
    "active_reserve",
    "QueueExists",
    "allocate",
    "make_queue",
    "queue_summary",
    "stratified_sample",
]
