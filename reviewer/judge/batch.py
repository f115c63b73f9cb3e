"""Large runs on the Message Batches API: submit now, collect later, across restarts.

``submit`` sends every job the cache cannot answer as one or more batches (at most 10,000 requests
and ``MAX_BATCH_BYTES`` each) and records each batch id with its items in SQLite before returning,
so nothing is lost if the process ends. ``collect`` (run by ``reviewer judge --collect`` and at the
start of every ``reviewer judge``) polls the open batches; for each ended one it stores every
succeeded result through the same path as a direct reply (cache + outcome) and marks the batch
collected. A request the API refused outright is stored as an ``error`` outcome; one that errored
for a passing reason (api_error, overloaded) or expired is resubmitted in a new batch, at most
``MAX_RESUBMITS`` times, then stored as ``error``; a canceled one goes out again on the next run.
A batch the API no longer knows (404) is marked ``unknown`` and its requests can be sent again; a
batch the API cannot answer for now (5xx, no connection) stays open for the next collect.
Batches are billed at half price.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from reviewer.judge.claims import store_problem
from reviewer.judge.reply import Job, Outcome, outcome_from_body
from reviewer.judge.retry import RetryPolicy, TooLongWait, api_message, status_of
from reviewer.judge.runner import JudgeAbort, import_sdk, require_key
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.sinks import store_outcome
from reviewer.store.db import Store
from reviewer.store.judging import (
    add_batch,
    batch_attempts,
    batch_items,
    cache_get,
    open_batches,
    pending_batch_keys,
    set_batch_status,
)

MAX_PER_BATCH = 10_000
#: The API takes at most 256 MB per batch; this leaves room for the envelope.
MAX_BATCH_BYTES = 250_000_000
#: How often a request that errored for a passing reason or expired is submitted again.
MAX_RESUBMITS = 2

Sleep = Callable[[float], None]


class BatchGone(Exception):
    """The API does not know this batch (404): expired from its records, or never there."""


class BatchCallFailed(Exception):
    """A Batches API call still failed after its retries (5xx, no connection, a long retry-after)."""


def make_sync_client(settings: JudgeSettings) -> Any:
    """The SDK's client for the Batches API (its import, a second, is nothing beside a batch)."""
    require_key()
    anthropic = import_sdk()
    return anthropic.Anthropic(max_retries=0, timeout=settings.timeout_s)


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
    """One batch as a collect found it: ``status`` is the API's processing status, ``collected``,
    ``unknown`` (the API no longer knows it) or ``unreachable`` (try again later, ``detail`` says
    why)."""

    id: str
    status: str
    stored: int = 0
    errors: int = 0
    retry_later: int = 0
    resubmitted: int = 0
    resubmitted_in: list[str] = field(default_factory=list)
    requests: int = 0
    detail: str = ""
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
        return [b for b in self.batches if b.status not in ("collected", "unknown")]

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
    sleep: Sleep = time.sleep,
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
        for batch_id, n in _send(db, client, to_send, settings, sleep):
            out.batch_ids.append(batch_id)
            out.requests += n
    except (BatchGone, BatchCallFailed) as e:
        sent = f" ({out.requests} requests were submitted before it)" if out.requests else ""
        raise JudgeAbort(f"cannot submit the batch: {e}{sent}") from e
    finally:
        client.close()
    return out


Item = tuple[str, str, dict[str, Any]]


def chunks(items: Sequence[Item], max_bytes: int | None = None) -> Iterator[list[Item]]:
    """The items in batches of at most MAX_PER_BATCH requests and ``max_bytes`` of JSON (a
    request larger than that alone goes in a batch of its own, for the API to judge)."""
    limit = MAX_BATCH_BYTES if max_bytes is None else max_bytes
    chunk: list[Item] = []
    size = 0
    for item in items:
        cid, _, job = item
        n = len(json.dumps({"custom_id": cid, "params": job["params"]}).encode()) + 1
        if chunk and (len(chunk) >= MAX_PER_BATCH or size + n > limit):
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += n
    if chunk:
        yield chunk


def _send(
    db: Store, client: Any, jobs: Sequence[Job], settings: JudgeSettings, sleep: Sleep
) -> Iterator[tuple[str, int]]:
    """Submit ``jobs`` as batches; each is recorded with its items before the next is sent."""
    items = [(f"r{i:06d}", job.key, job.to_dict()) for i, job in enumerate(jobs)]
    for chunk in chunks(items):
        requests = [{"custom_id": cid, "params": job["params"]} for cid, _, job in chunk]
        batch = _api(partial(client.messages.batches.create, requests=requests), settings, sleep)
        first = Job.from_dict(chunk[0][2])
        add_batch(db, batch.id, first.kind, first.judge, settings.model, chunk)
        yield batch.id, len(chunk)


def has_open_batches(db: Store) -> bool:
    return bool(open_batches(db))


def collect(
    db: Store,
    settings: JudgeSettings,
    *,
    client_factory: Callable[[JudgeSettings], Any] = make_sync_client,
    on_outcome: Callable[[Outcome], None] | None = None,
    sleep: Sleep = time.sleep,
) -> Collected:
    """Poll every open batch; store the results of the ended ones (see the module docstring)."""
    out = Collected()
    rows = open_batches(db)
    if not rows:
        return out
    client = client_factory(settings)
    try:
        for row in rows:
            state = BatchState(row.id, row.status, requests=row.n_requests)
            out.batches.append(state)
            try:
                _collect_one(db, client, row.id, state, settings, sleep, out, on_outcome)
            except BatchGone as e:
                set_batch_status(db, row.id, "unknown", collected=True)
                state.status, state.detail = "unknown", str(e)
            except BatchCallFailed as e:
                state.status, state.detail = "unreachable", str(e)
            except sqlite3.OperationalError as e:
                raise JudgeAbort(
                    f"cannot store judge replies: {store_problem(e)}; batch {row.id} stays open "
                    "and is collected by the next run"
                ) from e
    finally:
        client.close()
    return out


def _collect_one(
    db: Store,
    client: Any,
    batch_id: str,
    state: BatchState,
    settings: JudgeSettings,
    sleep: Sleep,
    out: Collected,
    on_outcome: Callable[[Outcome], None] | None,
) -> None:
    batch = _api(partial(client.messages.batches.retrieve, batch_id), settings, sleep)
    state.status = str(batch.processing_status)
    counts = getattr(batch, "request_counts", None)
    if counts is not None:
        state.counts = {
            k: int(getattr(counts, k, 0) or 0)
            for k in ("processing", "succeeded", "errored", "canceled", "expired")
        }
    if batch.processing_status != "ended":
        set_batch_status(db, batch_id, state.status)
        return
    items = batch_items(db, batch_id)
    results = _api(lambda: list(client.messages.batches.results(batch_id)), settings, sleep)
    again: list[tuple[Job, str]] = []
    for result in results:
        item = items.get(result.custom_id)
        if item is None:
            continue
        job = Job.from_dict(item[1])
        o, why = _outcome(job, result.result, settings)
        if o is None and why:
            again.append((job, why))
            continue
        if o is None:
            state.retry_later += 1
            continue
        store_outcome(db, o)
        state.stored += 1
        state.errors += o.is_error
        out.cost_usd += o.cost_usd or 0.0
        if on_outcome:
            on_outcome(o)
    resend: list[Job] = []
    tries = batch_attempts(db, [job.key for job, _ in again])
    for job, why in again:
        if tries.get(job.key, 1) <= MAX_RESUBMITS:
            resend.append(job)
            continue
        o = Outcome(
            job,
            "error",
            f"the batch request failed {tries.get(job.key, 1)} times: {why}",
            json.dumps({"error": why}, ensure_ascii=False),
            "batch",
            cacheable=False,
        )
        store_outcome(db, o)
        state.stored += 1
        state.errors += 1
        if on_outcome:
            on_outcome(o)
    set_batch_status(db, batch_id, "collected", collected=True)
    state.status = "collected"
    if resend:
        try:
            for new_id, n in _send(db, client, resend, settings, sleep):
                state.resubmitted += n
                state.resubmitted_in.append(new_id)
        except (BatchGone, BatchCallFailed):
            state.retry_later += len(resend) - state.resubmitted  # sent by the next run


def _outcome(job: Job, result: Any, settings: JudgeSettings) -> tuple[Outcome | None, str]:
    """The outcome to store; else (None, why) for a request to submit again, or (None, "") for
    one to leave to the next run (canceled)."""
    kind = getattr(result, "type", None)
    if kind == "succeeded":
        body = json.dumps(result.message.model_dump(mode="json"), ensure_ascii=False)
        return outcome_from_body(job, body, "batch", settings), ""
    if kind == "expired":
        return None, "expired before it was processed"
    if kind == "errored":
        err: Any = getattr(result, "error", None)
        detail: dict[str, Any] = (
            err.model_dump(mode="json") if hasattr(err, "model_dump") else {"error": str(err)}
        )
        inner = detail.get("error") if isinstance(detail.get("error"), dict) else detail
        message = str(inner.get("message", "")) if isinstance(inner, dict) else ""
        if isinstance(inner, dict) and inner.get("type") == "invalid_request_error":
            return (
                Outcome(
                    job,
                    "error",
                    f"the API refused the request: {message[:300]}",
                    json.dumps(detail, ensure_ascii=False),
                    "batch",
                    cacheable=False,
                ),
                "",
            )
        kind_name = inner.get("type", "error") if isinstance(inner, dict) else "error"
        return None, f"{kind_name}: {message[:200]}".rstrip(": ")
    return None, ""  # canceled: sent again by the next run


def _api(call: Callable[[], Any], settings: JudgeSettings, sleep: Sleep) -> Any:
    """One Batches API call with the request's retries (``judge.retry``). A refused key or billing
    stops the run (JudgeAbort); a 404 is BatchGone; anything else left after the retries is
    BatchCallFailed."""
    import anthropic

    policy = RetryPolicy(retries=settings.max_retries, max_wait_s=settings.max_wait_s)
    retry = 0
    while True:
        try:
            return call()
        except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as e:
            raise JudgeAbort(f"the API refused the key ({e.status_code})") from e
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as e:
            code = status_of(e)
            if code == 402:
                raise JudgeAbort(
                    f"the API refused to bill the request (402): {api_message(e)} — check the "
                    "account's credit or plan"
                ) from e
            if code == 404:
                raise BatchGone(f"the Batches API answered 404: {api_message(e)}") from e
            try:
                decision = policy.decide(e, retry)
            except TooLongWait as w:
                raise BatchCallFailed(str(w)) from e
            if decision.wait_s is None:
                what = f"answered {code}" if code else "cannot be reached"
                raise BatchCallFailed(f"the Batches API {what}: {api_message(e)}") from e
            sleep(decision.wait_s)
            retry += 1
