"""Where an outcome is stored: a verdict in ``verdicts``, a preference (one order of a pair) in the
pair judgements, each with its reply in the response cache in one transaction."""

from __future__ import annotations

from collections.abc import Callable

from reviewer.judge.reply import Outcome, map_winner
from reviewer.store.db import Store
from reviewer.store.judging import VerdictWrite, cache_put, write_verdict
from reviewer.store.pairs import record_order

Sink = Callable[[Store, Outcome], None]

#: The ``source`` column of a stored outcome, by where its reply came from.
SOURCES = {"api": "judge", "cache": "judge-cache", "batch": "judge-batch"}


def store_verdict(db: Store, o: Outcome) -> None:
    j = o.job
    write_verdict(
        db,
        VerdictWrite(
            trial_id=j.target,
            judge=j.judge,
            verdict=o.value,
            rationale=o.rationale,
            model=str(j.params.get("model", "")),
            rubric=j.rubric,
            input_tokens=o.input_tokens,
            output_tokens=o.output_tokens,
            cost_usd=o.cost_usd,
            raw=o.raw,
            source=SOURCES[o.source],
            cache_key=j.key,
            latency_s=o.latency_s,
        ),
    )


def store_preference(db: Store, o: Outcome) -> None:
    """One order of a pair, its winner mapped back to the pair's own a / b."""
    j = o.job
    order = j.order or "ab"
    record_order(
        db,
        pair_id=j.target,
        judge=j.judge,
        order=order,
        winner=None if o.is_error else map_winner(order, o.value),
        rationale=o.rationale,
        task_id=j.meta.get("task_id"),
        a_trial=str(j.meta.get("a_trial", "")),
        b_trial=str(j.meta.get("b_trial", "")),
        source=SOURCES[o.source],
    )


SINKS: dict[str, Sink] = {"verdict": store_verdict, "preference": store_preference}


def store_outcome(db: Store, o: Outcome) -> None:
    """The reply in the cache and the outcome in its table, in one transaction."""
    sink = SINKS[o.job.kind]
    with db.transaction():
        if o.cacheable and o.source != "cache":
            cache_put(db, o.job.key, o.job.params, o.raw)
        sink(db, o)
