"""Pairwise judging for position bias: every pair is asked twice, in order AB and in order BA.

In order AB the pair's ``a`` trial is shown first (as A); in order BA its ``b`` trial is. The judge's
``A`` / ``B`` answer is mapped back to the pair's own a / b before it is stored (``judge.sinks``), so
a judge without position bias gives the same stored winner in both orders. Both orders go through the
same runner as single-trial grading: the cache, the concurrency bound, retries, the cost cap and
Message Batches.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from reviewer.judge.pairs import SampledPair
from reviewer.judge.prompt import cache_key, preference_params
from reviewer.judge.reply import Job, map_winner
from reviewer.judge.settings import JudgeSettings
from reviewer.models import Rubric
from reviewer.store.db import Store
from reviewer.store.trials import load_trial

__all__ = ["ORDERS", "map_winner", "preference_jobs"]

ORDERS = ("ab", "ba")


def preference_jobs(
    db: Store,
    pairs: Sequence[SampledPair],
    rubric: Rubric,
    settings: JudgeSettings,
) -> Iterator[Job]:
    """Two jobs per pair (order AB, then BA); pairs whose trials left the store are passed over."""
    judge = settings.judge_id(rubric.ref, kind="pair")
    for p in pairs:
        a, b = load_trial(db, p.a_trial), load_trial(db, p.b_trial)
        if a is None or b is None:
            continue
        meta = {"task_id": p.task_id, "a_trial": p.a_trial, "b_trial": p.b_trial}
        for order in ORDERS:
            first, second = (a, b) if order == "ab" else (b, a)
            params = preference_params(first, second, rubric, settings)
            yield Job(
                "preference", p.pair_id, judge, rubric.ref, cache_key(params), params, order, meta
            )
