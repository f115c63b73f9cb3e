"""Where an outcome is stored: a verdict in ``verdicts``, a preference (one order of a pair) in the
pair judgements, each with its reply in the response cache in one transaction."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from reviewer.judge.reply import Outcome, map_winner
from reviewer.store.db import Store
from reviewer.store.judging import VerdictWrite, cache_put, release_claim, write_verdict
from reviewer.store.pairs import record_order

Sink = Callable[[Store, Outcome], None]

#: The ``source`` column of a stored outcome, by where its reply came from.
SOURCES = {"api": "judge", "cache": "judge-cache", "batch": "judge-batch"}

#: A lone surrogate: valid in a JSON reply (``"\\ud800"``), never in the UTF-8 the database keeps.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(text: str) -> str:
    """``text`` as the database can keep it: a lone surrogate (a judge can echo one from a hostile
    transcript, and the API's error messages can hold one) becomes U+FFFD, so a paid reply is
    stored instead of failing its write on every run."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def store_verdict(db: Store, o: Outcome) -> None:
    j = o.job
    write_verdict(
        db,
        VerdictWrite(
            trial_id=j.target,
            judge=j.judge,
            verdict=o.value,
            rationale=storable(o.rationale),
            model=str(j.params.get("model", "")),
            rubric=j.rubric,
            input_tokens=o.input_tokens,
            output_tokens=o.output_tokens,
            cost_usd=o.cost_usd,
            raw=o.raw,
            source=SOURCES[o.source],
            cache_key=j.key,
            latency_s=o.latency_s,
            cache_write_tokens=o.cache_write_tokens,
            cache_read_tokens=o.cache_read_tokens,
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
        rationale=storable(o.rationale),
        task_id=j.meta.get("task_id"),
        a_trial=str(j.meta.get("a_trial", "")),
        b_trial=str(j.meta.get("b_trial", "")),
        source=SOURCES[o.source],
    )


def keep_in_cache(db: Store, o: Outcome) -> None:
    """Cluster names and merge proposals: the reply in the cache is all that is stored here (the
    workflow applies what arrived as one undoable cluster edit)."""


SINKS: dict[str, Sink] = {
    "verdict": store_verdict,
    "preference": store_preference,
    "cluster_name": keep_in_cache,
    "cluster_merges": keep_in_cache,
}


def store_outcome(db: Store, o: Outcome, owner: str | None = None) -> None:
    """The reply in the cache and the outcome in its table, in one transaction (which also lets go
    of ``owner``'s claim on the request)."""
    store_outcomes(db, [o], owner)


def store_outcomes(
    db: Store,
    outcomes: Sequence[Outcome],
    owner: str | None = None,
    *,
    release_any_claim: bool = False,
) -> None:
    """Several outcomes in one transaction: all are stored or none. ``owner``'s claims on them are
    let go (anyone's with ``release_any_claim``)."""
    with db.transaction():
        for o in outcomes:
            if o.cacheable and o.source != "cache":
                cache_put(db, o.job.key, o.job.params, o.raw)
            SINKS[o.job.kind](db, o)
            if owner is not None or release_any_claim:
                release_claim(db, o.job.key, owner)
