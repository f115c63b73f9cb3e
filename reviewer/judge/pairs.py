"""Pairs of trials of the same task for the position-bias re-run, sampled reproducibly under a seed.

Two modes:

- *pass/fail* (default): per task, one trial judged pass and one judged fail. A trial's side is its
  latest verdict in the ``verdicts`` table (of ``judge`` when given, else of any judge); a trial with
  no verdict, or whose latest verdict is ``error``, falls back to its own outcome (``success``).
- *runs* (``runs=(OLD, NEW)``): per task found in both runs, one trial of OLD and one of NEW.

Trials of a task are shuffled under the seed and paired off without reuse; pairs are taken round by
round (one per task, tasks in a seeded order, then a second per task, ...) until ``n``, so a small
sample spreads over tasks. Which trial is ``a`` is a seeded coin, so ``a`` is not always the pass (or
the old run). ``pair_id`` hashes the mode and the a and b trial ids, so the same pair gets the same id.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.store.db import Store
from reviewer.store.pairs import PairCandidate, pair_candidates

__all__ = ["MODES", "SampledPair", "make_pair_id", "sample_pairs"]

MODES = ("pass-fail", "runs")


@dataclass(frozen=True)
class SampledPair:
    """Two stored trials of one task; ``a_trial`` / ``b_trial`` are trial ids."""

    pair_id: str
    task_id: str
    a_trial: str
    b_trial: str


def make_pair_id(mode: str, a_trial: str, b_trial: str) -> str:
    """A stable id for the pair (a, b) drawn in ``mode``; swapping a and b gives another id."""
    digest = hashlib.sha256(f"{mode}\0{a_trial}\0{b_trial}".encode()).hexdigest()
    return f"pair-{digest[:16]}"


def sample_pairs(
    db: Store,
    n: int,
    seed: int = 0,
    runs: tuple[str, str] | None = None,
    judge: str | None = None,
) -> list[SampledPair]:
    """Up to ``n`` pairs; the same data, seed and arguments give the same pairs in the same order."""
    if n < 0:
        raise ValueError(f"n must be 0 or more, got {n}")
    if runs is not None and runs[0] == runs[1]:
        raise ValueError(f"the two runs must differ, got {runs[0]!r} twice")
    rng = random.Random(seed)
    if runs is None:
        mode = "pass-fail"
        sides = _pass_fail_sides(pair_candidates(db, judge=judge))
    else:
        mode = "runs"
        sides = _run_sides(pair_candidates(db, runs=list(runs)), runs)
    per_task = {
        task: _pair_off(rng, first, second) for task, (first, second) in sorted(sides.items())
    }
    tasks = sorted(per_task)
    rng.shuffle(tasks)
    out: list[SampledPair] = []
    for rnd in range(max((len(v) for v in per_task.values()), default=0)):
        for task in tasks:
            if len(out) >= n:
                return out
            if rnd < len(per_task[task]):
                out.append(_assign(rng, mode, task, *per_task[task][rnd]))
    return out


Sides = dict[str, tuple[list[str], list[str]]]


def _side(c: PairCandidate) -> bool | None:
    """Pass (True) or fail (False): the latest verdict, else the trial's own outcome; None for an
    infrastructure error or an unscored trial that no judge has judged (neither side)."""
    if c.verdict in ("pass", "fail"):
        return c.verdict == "pass"
    if c.outcome in ("infra", "unscored"):
        return None
    return c.success


def _pass_fail_sides(candidates: Sequence[PairCandidate]) -> Sides:
    sides: Sides = {}
    for c in candidates:
        side = _side(c)
        if side is None:
            continue
        passed, failed = sides.setdefault(c.task_id, ([], []))
        (passed if side else failed).append(c.trial_id)
    return {t: s for t, s in sides.items() if s[0] and s[1]}


def _run_sides(candidates: Sequence[PairCandidate], runs: tuple[str, str]) -> Sides:
    sides: Sides = {}
    for c in candidates:
        old, new = sides.setdefault(c.task_id, ([], []))
        (old if c.run == runs[0] else new).append(c.trial_id)
    return {t: s for t, s in sides.items() if s[0] and s[1]}


def _pair_off(rng: random.Random, first: list[str], second: list[str]) -> list[tuple[str, str]]:
    """Seeded shuffles of both sides, zipped: every trial is in at most one pair."""
    first, second = sorted(first), sorted(second)
    rng.shuffle(first)
    rng.shuffle(second)
    return list(zip(first, second, strict=False))


def _assign(rng: random.Random, mode: str, task: str, x: str, y: str) -> SampledPair:
    a, b = (x, y) if rng.random() < 0.5 else (y, x)
    return SampledPair(make_pair_id(mode, a, b), task, a, b)
