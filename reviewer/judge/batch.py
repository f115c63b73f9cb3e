"""Large runs on the Message Batches API: submit now, collect later, across restarts.

``submit`` sends every job the cache cannot answer as one or more batches (at most 10,000 requests
each) and records each batch id with its items in SQLite before returning, so nothing is lost if the
process ends. ``collect`` (run by ``reviewer judge --collect`` and at the start of every
``reviewer judge``) polls the open batches; for each ended one it stores every succeeded result through
the same path as a direct reply (cache + outcome) and marks the batch collected. Requests that errored
for a passing reason (overloaded, expired, canceled) are not stored and go out again on the next run;
a request the API refused outright is stored as an ``error`` outcome. Batches are billed at half price.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from reviewer.judge.reply import Job, Outcome, outcome_from_body
from reviewer.judge.runner import JudgeAbort, require_key
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.sinks import store_outcome
from reviewer.store.db import Store
from reviewer.store.judging import (
    add_batch,
    batch_items,
    cache_get,
    open_batches,
    pending_batch_keys,
    set_batch_status,
)

MAX_PER_BATCH = 10_000


def make_sync_client(settings: JudgeSettings) -> Any:
    import anthropic

    require_key()
    return anthropic.Anthropic(max_retries=settings.max_retries, timeout=settings.timeout_s)


@dataclass
class Submitted:
    batch_ids: list[str] = field(default_factory=list)
    requests: int = 0
    cached: int = 0
    already_pending: int = 0
    skipped_for_cost: int = 0
    estimated_cost: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "estimated_cost": round(self.estimated_cost, 6)}


@dataclass
class BatchState:
    id: str
    status: str
    stored: int = 0
    errors: int = 0
    retry_later: int = 0
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class Collected:
    batches: list[BatchState] = field(default_factory=list)
    cost_usd: float = 0.0

    @property
    def stored(self) -> int:
        return sum(b.stored for b in self.batches)

    @property
    def still_open(self) -> list[BatchState]:
        return [b for b in self.batches if b.status != "collected"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "batches": [b.__dict__ for b in self.batches],
            "stored": self.stored,
            "cost_usd": round(self.cost_usd, 6),
        }


def _estimate(job: Job, settings: JudgeSettings) -> float:
    from reviewer.judge.prompt import prompt_chars

    price = settings.price()
    if price is None:
        return 0.0
    tokens_in = prompt_chars(job.params) // 3 + 200
    return price.cost(tokens_in, int(job.params.get("max_tokens", 0)), batch=True)


def submit(
    db: Store,
    jobs: Iterable[Job],
    settings: JudgeSettings,
    *,
    client_factory: Callable[[JudgeSettings], Any] = make_sync_client,
    on_cached: Callable[[Outcome], None] | None = None,
) -> Submitted:
    """Store what the cache answers, send the rest as batches, record the batch ids."""
    out = Submitted()
    pending = pending_batch_keys(db)
    to_send: list[Job] = []
    cap = settings.max_cost
    if cap is not None and settings.price() is None:
        raise JudgeAbort(
            f"no price known for model {settings.model!r}, so --max-cost cannot be enforced; "
            "add it under [judge.prices] in reviewer.toml"
        )
    for job in jobs:
        hit = cache_get(db, job.key)
        if hit is not None:
            o = outcome_from_body(job, hit.body, "cache", settings)
            store_outcome(db, o)
            out.cached += 1
            if on_cached:
                on_cached(o)
            continue
        if job.key in pending:
            out.already_pending += 1
            continue
        est = _estimate(job, settings)
        if cap is not None and out.estimated_cost + est > cap:
            out.skipped_for_cost += 1
            continue
        out.estimated_cost += est
        pending.add(job.key)
        to_send.append(job)
    if not to_send:
        return out
    client = client_factory(settings)
    try:
        for start in range(0, len(to_send), MAX_PER_BATCH):
            chunk = to_send[start : start + MAX_PER_BATCH]
            items = [(f"r{start + i:06d}", job.key, job.to_dict()) for i, job in enumerate(chunk)]
            requests = [{"custom_id": cid, "params": job["params"]} for cid, _, job in items]
            batch = _api(partial(client.messages.batches.create, requests=requests))
            add_batch(db, batch.id, chunk[0].kind, chunk[0].judge, settings.model, items)
            out.batch_ids.append(batch.id)
            out.requests += len(chunk)
    finally:
        client.close()
    return out


def has_open_batches(db: Store) -> bool:
    return bool(open_batches(db))


def collect(
    db: Store,
    settings: JudgeSettings,
    *,
    client_factory: Callable[[JudgeSettings], Any] = make_sync_client,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> Collected:
    """Poll every open batch; store the results of the ended ones."""
    out = Collected()
    rows = open_batches(db)
    if not rows:
        return out
    client = client_factory(settings)
    try:
        for row in rows:
            batch = _api(partial(client.messages.batches.retrieve, row.id))
            state = BatchState(row.id, str(batch.processing_status))
            counts = getattr(batch, "request_counts", None)
            if counts is not None:
                state.counts = {
                    k: int(getattr(counts, k, 0) or 0)
                    for k in ("processing", "succeeded", "errored", "canceled", "expired")
                }
            out.batches.append(state)
            if batch.processing_status != "ended":
                set_batch_status(db, row.id, str(batch.processing_status))
                continue
            items = batch_items(db, row.id)
            for result in _api(partial(client.messages.batches.results, row.id)):
                item = items.get(result.custom_id)
                if item is None:
                    continue
                o = _outcome(Job.from_dict(item[1]), result.result, settings)
                if o is None:
                    state.retry_later += 1
                    continue
                store_outcome(db, o)
                state.stored += 1
                state.errors += o.is_error
                out.cost_usd += o.cost_usd or 0.0
                if on_outcome:
                    on_outcome(o)
            set_batch_status(db, row.id, "collected", collected=True)
            state.status = "collected"
    finally:
        client.close()
    return out


def _outcome(job: Job, result: Any, settings: JudgeSettings) -> Outcome | None:
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        body = json.dumps(result.message.model_dump(mode="json"), ensure_ascii=False)
        return outcome_from_body(job, body, "batch", settings)
    if kind == "errored":
        err: Any = getattr(result, "error", None)
        detail: dict[str, Any] = (
            err.model_dump(mode="json") if hasattr(err, "model_dump") else {"error": str(err)}
        )
        inner = detail.get("error") if isinstance(detail.get("error"), dict) else detail
        if isinstance(inner, dict) and inner.get("type") == "invalid_request_error":
            message = str(inner.get("message", ""))[:300]
            return Outcome(
                job,
                "error",
                f"the API refused the request: {message}",
                json.dumps(detail, ensure_ascii=False),
                "batch",
                cacheable=False,
            )
    return None  # expired, canceled or a passing error: sent again next run


def _api(call: Callable[[], Any]) -> Any:
    """One Batches API call, its failures as one-line JudgeAbort messages."""
    import anthropic

    try:
        return call()
    except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as e:
        raise JudgeAbort(f"the API refused the key ({e.status_code})") from e
    except anthropic.APIStatusError as e:
        raise JudgeAbort(f"the Batches API answered {e.status_code}: {e.message}") from e
    except anthropic.APIConnectionError as e:
        raise JudgeAbort(f"cannot reach the Batches API: {e}") from e
