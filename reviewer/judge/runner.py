"""The judge runner: jobs in, stored outcomes out, with bounded concurrency, retries, a cost cap,
the response cache, claims and cancellation.

A *job* is one Messages API request (a trial to grade, or one order of a pair to compare) with its
cache key. Jobs are taken a round (``concurrency`` jobs) at a time: the runner first looks them up
in the cache (a hit costs nothing and makes no request), then claims the rest in the database (a
request another live process has claimed is skipped and counted), one query and one transaction per
round, then sends each through ``judge.api``'s client as a slot frees (no retries of its own:
``judge.retry`` decides every retry and wait), counts its cost the moment the reply arrives, parses
the forced tool call and stores the outcome and the reply on the event loop's next turn, in one
transaction with the replies that arrived with it — so a run killed halfway resumes where it
stopped. Claimed jobs a stopped run did not send are let go.

A reply that parses but holds no valid tool call is stored as an ``error`` outcome with the raw reply.
A request the API refuses for good (400, 413, 422) is stored as ``error`` with the API's message, and
not cached. A request that still fails after every retry (429 or 5xx) is not stored: it is counted as
failed and the next run sends it again. A refused key (401, 403), a billing refusal (402), an unknown
model (404) or a retry-after over the allowed wait stops the run; so does a reply that cannot be stored
(a full disk, a database locked too long). Stopping (those, a cancel, ^C) sends nothing more, but the
replies already on their way are waited for and stored; replies that cannot be stored are kept in the
side file of ``judge.pending``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sized
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reviewer.judge.api import APIReplyTooLarge, connection_error, status_error, timed_out
from reviewer.judge.claims import CLAIM_TTL_S, HEARTBEAT_S, new_owner, owner_gone, store_problem
from reviewer.judge.prompt import prompt_chars
from reviewer.judge.reply import Job, Outcome, outcome_from_body
from reviewer.judge.retry import (
    SAY_WAIT_S,
    RetryPolicy,
    TooLongWait,
    api_message,
    describe_wait,
    retryable,
    status_of,
)
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.sinks import store_outcomes
from reviewer.store.db import Store
from reviewer.store.judging import (
    cache_get,
    cache_get_many,
    claim_many,
    pending_batch_keys,
    release_claims,
    release_keys,
    renew_claims,
)


class JudgeAbort(Exception):
    """The run cannot go on (the key was refused, the model does not exist): one line for the user."""


class NoApiKey(JudgeAbort):
    pass


@dataclass
class RunStats:
    total: int = 0
    done: int = 0
    cached: int = 0
    requests: int = 0
    errors: int = 0
    failed: int = 0
    skipped_for_cost: int = 0
    skipped_claimed: int = 0
    in_batch: int = 0
    unstored: int = 0
    cancelled: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    stopped_at_cap: bool = False
    failures: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def left(self) -> int:
        return self.total - self.done

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cost_usd"] = round(self.cost_usd, 6) if self.cost_known else None
        return d


#: Request fields the SDK no longer has a parameter for; sent in the body only when configured.
_BODY_ONLY = ("temperature",)


def sdk_args(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` as SDK keyword arguments (fields without a parameter go through ``extra_body``)."""
    args = {k: v for k, v in params.items() if k not in _BODY_ONLY}
    extra = {k: params[k] for k in _BODY_ONLY if k in params}
    if extra:
        args["extra_body"] = extra
    return args


# --- the runner ---------------------------------------------------------------------------------

#: Pause before the one retry of a write that failed, before replies go to the side file.
STORE_RETRY_S = 1.0
#: The most disk set aside for replies that may have to go to the side file.
ROOM_MAX = 64 * 1024 * 1024


#: The claim owners of the runs going on in this process. A claim held in this process's name by
#: any other owner was left by a run that stopped (say on a locked database, with claims it could
#: not let go): it is taken over at once, as a dead process's claim is.
_LIVE_OWNERS: set[str] = set()


def holder_gone(holder: str) -> bool:
    """A claim's holder no longer runs: a dead process of this host, or a finished run of this one."""
    if owner_gone(holder):
        return True
    here = f"{socket.gethostname()}:{os.getpid()}:"
    return holder.startswith(here) and holder not in _LIVE_OWNERS


def prepare_group(concurrency: int) -> int:
    """How many jobs are looked up in the cache and claimed together: one round of requests."""
    return max(1, min(concurrency, 256))


def require_key() -> None:
    """NoApiKey unless the environment holds a key (the SDK reads it, and ANTHROPIC_BASE_URL, itself)."""
    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise NoApiKey(
            "ANTHROPIC_API_KEY is not set (set ANTHROPIC_BASE_URL too for another "
            "Anthropic-compatible endpoint)"
        )


def import_sdk() -> Any:
    """The anthropic package, imported with the cycle collector paused: the import makes about a
    million objects in some 3,000 modules, and the collections it would set off cost about a tenth
    of its time (a process that ends with the run can then ``gc.freeze()`` them, see
    ``commands/judge.py``)."""
    if "anthropic" not in sys.modules:
        was_on = gc.isenabled()
        gc.disable()
        try:
            import anthropic  # noqa: F401
        finally:
            if was_on:
                gc.enable()
    return sys.modules["anthropic"]


def make_client(settings: JudgeSettings) -> Any:
    """The live judge's Messages API client (``judge.api``: the SDK's wire protocol without its
    second of start-up), no retries of its own (``judge.retry`` decides them, one budget), its
    connection pool sized to the concurrency so every request in flight keeps its connection."""
    from reviewer.judge.api import MessagesClient, endpoint_problem, settings_problem

    require_key()
    base = os.environ.get("ANTHROPIC_BASE_URL")
    if base and (problem := endpoint_problem(base)) is not None:
        raise JudgeAbort(f"ANTHROPIC_BASE_URL {base!r} {problem}")
    if (problem := settings_problem()) is not None:
        raise JudgeAbort(problem)
    return MessagesClient(
        timeout_s=settings.timeout_s, max_connections=max(100, settings.concurrency)
    )


Progress = Callable[[RunStats, Outcome | None], None]
Sleep = Callable[[float], Awaitable[None]]


class Runner:
    """Runs jobs against the Messages API; see the module docstring for what happens to each reply."""

    def __init__(
        self,
        db: Store,
        settings: JudgeSettings,
        *,
        client_factory: Callable[[JudgeSettings], Any] = make_client,
        on_progress: Progress | None = None,
        on_note: Callable[[str], None] | None = None,
        cancel: threading.Event | None = None,
        backoff_s: float = 1.0,
        sleep: Sleep | None = None,
        rand: Callable[[], float] | None = None,
        clock: Callable[[], float] = time.time,
        owner: str | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.client_factory = client_factory
        self.on_progress = on_progress or (lambda stats, outcome: None)
        self.on_note = on_note or (lambda line: None)
        self._warned = False  # a reply's impossible usage was said
        self._unsaid_told = False  # a reply without usage was said (counted at its estimate)
        self.cancel = cancel or threading.Event()
        self.sleep: Sleep = sleep or asyncio.sleep
        self.clock = clock
        self.owner = owner or new_owner()
        self.policy = RetryPolicy(
            retries=settings.max_retries, base_s=backoff_s, max_wait_s=settings.max_wait_s
        )
        if rand is not None:
            self.policy.rand = rand
        self.stats = RunStats()
        self._reserved = 0.0
        self._abort: str | None = None
        self._store_problem: str | None = None
        self._unstored: list[Outcome] = []
        self._waiting: set[asyncio.Task[None]] = set()
        self._renewed = 0.0
        self._room: Path | None = None
        #: where requests go (for the line that says it cannot be reached), and whether any
        #: request of this run got an answer from it
        self._endpoint = "the API"
        self._reached = False
        self._arrivals: list[Outcome] = []
        self._store_soon: asyncio.Handle | None = None
        self._in_batch: set[str] = set()
        self._count_jobs = False

    # cost cap ------------------------------------------------------------------------------------
    def estimate(self, job: Job) -> float:
        """An upper-end cost of one request: 1 token per 3 prompt characters, all of max_tokens out."""
        price = self.settings.price()
        if price is None:
            return 0.0
        return price.cost(prompt_chars(job.params) // 3 + 200, int(job.params.get("max_tokens", 0)))

    def _reserve(self, job: Job) -> float | None:
        """Room under the cap for this request: money spent (stored or not) plus every request in
        flight at its upper-end estimate plus this one."""
        cap = self.settings.max_cost
        est = self.estimate(job)
        if cap is None:
            return est
        if self.stats.stopped_at_cap or self.stats.cost_usd + self._reserved + est > cap:
            self.stats.stopped_at_cap = True
            return None
        self._reserved += est
        return est

    def _stopping(self) -> bool:
        return self.cancel.is_set() or self._abort is not None or self._store_problem is not None

    # the run -------------------------------------------------------------------------------------
    def run(self, jobs: Iterable[Job], total: int | None = None) -> RunStats:
        return asyncio.run(self.run_async(jobs, total))

    async def run_async(self, jobs: Iterable[Job], total: int | None = None) -> RunStats:
        """Stream ``jobs``: cache hits are stored at once, the rest sent ``concurrency`` at a time.

        Jobs are built lazily by the caller's iterator and prepared a group at a time (one cache
        query and one claim transaction per group), so a run of any size holds only about two
        groups of requests in memory, and a freed slot sends its next request at once. Replies
        arriving together are stored in one transaction. Cancelling this coroutine
        (^C) stops sending, stores the replies on their way, then cancels."""
        if total is None and isinstance(jobs, Sized):
            total = len(jobs)
        self.stats = RunStats(total=total or 0)
        self._count_jobs = total is None
        self._renewed = self.clock()
        _LIVE_OWNERS.add(self.owner)
        try:
            return await self._run(jobs, total)
        finally:
            _LIVE_OWNERS.discard(self.owner)

    async def _run(self, jobs: Iterable[Job], total: int | None) -> RunStats:
        stats = self.stats
        self._in_batch = pending_batch_keys(self.db)
        client: Any = None
        in_flight: set[asyncio.Task[None]] = set()
        source = iter(jobs)
        ready: deque[Job] = deque()
        more = True
        try:
            try:
                while True:
                    if not ready and more:
                        more = self._prepare(source, ready)
                        continue
                    if not ready or self._stopping():
                        break
                    if client is None:
                        client = self._client()
                    while len(in_flight) >= self.settings.concurrency:
                        _, in_flight = await asyncio.wait(
                            in_flight, timeout=HEARTBEAT_S, return_when=asyncio.FIRST_COMPLETED
                        )
                        self._heartbeat()
                    if self._stopping():
                        break
                    reserved = self._reserve(ready[0])
                    if reserved is None:
                        break
                    job = ready.popleft()
                    in_flight.add(asyncio.create_task(self._one(client, job, reserved)))
                in_flight = await self._drain(in_flight)
            except asyncio.CancelledError:
                self.cancel.set()
                if in_flight:
                    self.on_note(
                        f"interrupted: storing the {len(in_flight)} replies on their way "
                        "(interrupt again to stop at once)"
                    )
                in_flight = await self._drain(in_flight)
                raise
        finally:
            for t in in_flight:
                t.cancel()
            if in_flight:
                await asyncio.wait(in_flight)
            self._store_arrived()
            if ready:
                self._release_unsent([j.key for j in ready])
            if client is not None:
                await client.close()
            kept = await self._flush_unstored()
        stats.skipped_for_cost = (
            stats.total
            - stats.done
            - stats.failed
            - stats.cancelled
            - stats.skipped_claimed
            - stats.in_batch
            - stats.unstored
        )
        if not stats.stopped_at_cap:
            stats.cancelled += stats.skipped_for_cost
            stats.skipped_for_cost = 0
        if self._store_problem is not None:
            raise JudgeAbort(f"cannot store judge replies: {self._store_problem}{kept}")
        if self._abort:
            raise JudgeAbort(self._abort)
        return stats

    def _prepare(self, source: Iterator[Job], ready: deque[Job]) -> bool:
        """Take the next group of jobs: cache hits are stored (in one transaction), jobs waiting in
        a batch are counted, the rest are claimed (in one transaction) and queued in ``ready``.
        False once ``source`` is exhausted or the run stops."""
        group: list[Job] = []
        size = prepare_group(self.settings.concurrency)
        for job in source:
            if self._count_jobs:
                self.stats.total += 1
            group.append(job)
            if len(group) >= size:
                break
        if not group:
            return False
        self._store_arrived()  # a write that fails now stops the run before more is claimed
        self._heartbeat()
        if self._stopping():
            return False
        try:
            hits = cache_get_many(self.db, [j.key for j in group])
        except sqlite3.OperationalError as e:
            self._store_problem = store_problem(e)
            return False
        to_claim: list[Job] = []
        for job in group:
            hit = hits.get(job.key)
            if hit is not None:
                self._from_cache(job, hit.body)
            elif job.key in self._in_batch:  # its reply is on its way in a batch: not paid twice
                self.stats.in_batch += 1
            else:
                to_claim.append(job)
        if to_claim:
            try:
                states = claim_many(
                    self.db,
                    [j.key for j in to_claim],
                    self.owner,
                    self.clock(),
                    CLAIM_TTL_S,
                    holder_gone,
                )
            except sqlite3.OperationalError as e:
                self._store_problem = store_problem(e)
                states = {}
            for job in to_claim:
                state = states.get(job.key)
                if state == "claimed":
                    ready.append(job)
                elif state == "taken":
                    self.stats.skipped_claimed += 1
                elif state == "cached":
                    hit = cache_get(self.db, job.key)
                    if hit is not None:
                        self._from_cache(job, hit.body)
        self._store_arrived()
        return len(group) == size and not self._stopping()

    async def _drain(self, in_flight: set[asyncio.Task[None]]) -> set[asyncio.Task[None]]:
        """Wait for the requests in flight; once stopping, those waiting to retry are cancelled (a
        request already sent is waited for: its reply is paid for)."""
        while in_flight:
            if self._stopping():
                for t in self._waiting & in_flight:
                    t.cancel()
            _, in_flight = await asyncio.wait(in_flight, timeout=0.05)
            self._heartbeat()
        return in_flight

    def _client(self) -> Any:
        if self.settings.max_cost is not None and self.settings.price() is None:
            raise JudgeAbort(
                f"no price known for model {self.settings.model!r}, so --max-cost cannot be "
                "enforced; add it under [judge.prices] in reviewer.toml"
            )
        from reviewer.judge.pending import NoRoom, reserve_room

        s = self.settings
        size = min(ROOM_MAX, s.concurrency * (2 * s.max_chars + 8 * s.max_tokens + 32_768))
        try:
            self._room = reserve_room(self.db, size)
        except NoRoom as e:
            # nothing is sent that could be neither stored nor kept: a reply is paid for
            raise JudgeAbort(str(e)) from None
        client = self.client_factory(self.settings)
        self._endpoint = str(getattr(client, "url", None) or self._endpoint)
        return client

    # claims --------------------------------------------------------------------------------------
    def _heartbeat(self) -> None:
        now = self.clock()
        if now - self._renewed < HEARTBEAT_S or self._store_problem is not None:
            return
        self._renewed = now
        try:
            renew_claims(self.db, self.owner, now + CLAIM_TTL_S)
        except sqlite3.OperationalError as e:
            self._store_problem = store_problem(e)

    def _release_unsent(self, keys: list[str]) -> None:
        """Let go of the requests claimed with their group but not sent (the run stopped), even
        when replies could not be stored: nobody has paid for these."""
        with contextlib.suppress(sqlite3.Error):  # else they expire CLAIM_TTL_S after renewal
            release_keys(self.db, keys, self.owner)

    def _release_all(self) -> None:
        with contextlib.suppress(sqlite3.Error):  # else they expire CLAIM_TTL_S after renewal
            release_claims(self.db, self.owner)

    # one request ---------------------------------------------------------------------------------
    async def _one(self, client: Any, job: Job, reserved: float) -> None:
        """Send one request; its outcome is stored on the loop's next turn (``_arrive``)."""
        try:
            outcome = await self._call(client, job)
            if outcome is not None:
                self._arrived(outcome, sent_under=reserved)
                self._arrive(outcome)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # never lose the run to one request: count it and go on
            self.stats.failed += 1
            self._note_failure(f"{job.target}: {type(e).__name__}: {e}")
        finally:
            if self.settings.max_cost is not None:
                self._reserved -= reserved

    async def _call(self, client: Any, job: Job) -> Outcome | None:
        """One request with its retries; None when there is nothing to store."""
        retry = 0
        while True:
            started = time.monotonic()
            try:
                self.stats.requests += 1
                resp = await client.messages.with_raw_response.create(**sdk_args(job.params))
                body = resp.http_response.text
                self._reached = True
            except APIReplyTooLarge as e:  # retrying would pay for it again
                return _uncached_error(job, str(e), e, started)
            except Exception as e:
                answered = status_error(e)  # this client's errors or an SDK client's
                if not answered and not connection_error(e):
                    raise
                self._reached = self._reached or answered
                if answered and status_of(e) in (401, 403):
                    self._abort = f"the API refused the key ({status_of(e)}): {api_message(e)}"
                    return None
                if answered and status_of(e) == 404:
                    check = (
                        "ANTHROPIC_BASE_URL (it ends in /v1; the client adds /v1/messages)"
                        if "/v1/v1/" in self._endpoint
                        else "the model name"
                    )
                    self._abort = f"not found at the API (404) — check {check}: {api_message(e)}"
                    return None
                if status_of(e) == 402:
                    self._abort = (
                        f"the API refused to bill the request (402): {api_message(e)} — check the "
                        "account's credit or plan"
                    )
                    return None
                try:
                    decision = self.policy.decide(e, retry)
                except TooLongWait as w:
                    self._abort = str(w)
                    return None
                if decision.wait_s is None:
                    return self._given_up(job, e, retry, started)
                if self._stopping():
                    self.stats.failed += 1
                    self._note_failure(f"{job.target}: {_describe(e)} (the run stopped)")
                    return None
                if decision.wait_s > SAY_WAIT_S:
                    self.on_note(describe_wait(decision.wait_s, e))
                await self._wait(decision.wait_s)
                retry += 1
                continue
            latency = time.monotonic() - started
            return outcome_from_body(job, body, "api", self.settings, latency_s=latency)

    def _given_up(self, job: Job, e: Exception, retry: int, started: float) -> Outcome | None:
        """A transient failure that is not retried (any more) is not stored: the next run sends it
        again. Any other refusal is an uncached ``error`` outcome."""
        if connection_error(e) and not self._reached and not timed_out(e):
            # no request of this run ever reached the endpoint, and this one did not in all its
            # tries: every other request would wait through the same retries
            self.stats.failed += 1
            self._abort = f"cannot connect to {self._endpoint}: {api_message(e)}"
            return None
        if retryable(e) or connection_error(e) or _transient(e):
            self.stats.failed += 1
            why = (
                f"gave up after {retry + 1} tries" if retryable(e) else "the API said not to retry"
            )
            self._note_failure(f"{job.target}: {_describe(e)} ({why})")
            return None
        return _uncached_error(
            job, f"the API refused the request ({status_of(e)}): {api_message(e)}", e, started
        )

    async def _wait(self, seconds: float) -> None:
        """Sleep before a retry; a stopping run cancels this wait (nothing is on its way)."""
        task = asyncio.current_task()
        if task is not None:
            self._waiting.add(task)
        try:
            await self.sleep(seconds)
        finally:
            if task is not None:
                self._waiting.discard(task)

    # storing -------------------------------------------------------------------------------------
    def _arrived(self, o: Outcome, sent_under: float = 0.0) -> None:
        """Money is counted the moment a reply arrives, whether or not it can be stored. A priced
        reply that does not say what it used (no usage, or an impossible count) counts toward the
        cap at the upper-end estimate it was sent under (``sent_under``): counted as $0, an
        endpoint that leaves usage out let every request through any cap."""
        s = self.stats
        if o.cost_usd is None and o.input_tokens is not None:
            s.cost_known = False
        cost = o.cost_usd or 0.0
        unsaid = o.cost_usd is not None and (o.input_tokens is None or o.warning is not None)
        if unsaid and sent_under > cost:
            cost = sent_under
            if not self._unsaid_told:
                self._unsaid_told = True
                self.on_note(
                    "warning: a reply does not say how many tokens it used: for the cost cap it "
                    "counts as its upper-end estimate"
                )
        s.cost_usd += cost
        if o.warning and not self._warned:
            self._warned = True  # once a run: the next replies' counts are clamped the same way
            self.on_note(f"warning: {o.warning}")

    def _from_cache(self, job: Job, body: str) -> None:
        self.stats.cached += 1
        self._arrivals.append(outcome_from_body(job, body, "cache", self.settings))

    def _arrive(self, o: Outcome) -> None:
        """Queue a reply for storing on the event loop's next turn, in one transaction with every
        reply that arrived in the same turn."""
        self._arrivals.append(o)
        if self._store_soon is None:
            self._store_soon = asyncio.get_running_loop().call_soon(self._store_arrived)

    def _store_arrived(self) -> None:
        """Store the queued replies in one transaction; after a failed write, keep them in memory
        (and stop sending). A reply that cannot be stored for another reason (its trial was
        deleted meanwhile) is counted as failed, the others stored one by one."""
        if self._store_soon is not None:
            self._store_soon.cancel()
            self._store_soon = None
        group, self._arrivals = self._arrivals, []
        if not group:
            return
        if self._store_problem is None:
            try:
                store_outcomes(self.db, group, self.owner)
            except sqlite3.OperationalError as e:
                self._store_problem = store_problem(e)
            except Exception as e:
                if len(group) > 1:
                    for o in group:
                        self._arrivals = [o]
                        self._store_arrived()
                    return
                self.stats.failed += 1
                self._note_failure(f"{group[0].job.target}: {type(e).__name__}: {e}")
                return
            else:
                for o in group:
                    self._finish(o)
                return
        self._unstored.extend(group)
        self.stats.unstored += len(group)

    async def _flush_unstored(self) -> str:
        """Retry the write of the replies kept in memory once; what still fails goes to the side
        file. Returns what to add to the stop line. Then lets go of this run's claims."""
        from reviewer.judge.pending import free_room, pending_path, save, shown_path

        kept = ""
        writable = self._store_problem is None
        if self._unstored:
            await self.sleep(STORE_RETRY_S)
            try:
                store_outcomes(self.db, self._unstored, self.owner)
            except sqlite3.OperationalError:
                path = pending_path(self.db)
                n = len(self._unstored)
                try:
                    if path is None:
                        raise OSError("the database has no file")
                    free_room(self._room)  # the room set aside for this
                    self._room = None
                    path.parent.mkdir(parents=True, exist_ok=True)
                    save(path, self._unstored)
                    kept = (
                        f"; {n} replies kept in {shown_path(path)}, stored by the next "
                        "`reviewer judge`"
                    )
                except OSError as e:
                    kept = f"; {n} replies could not be kept ({e})"
            else:
                for o in self._unstored:
                    self._finish(o)
                self.stats.unstored = 0
                kept = "; the replies received were stored on a second try"
                writable = True
            self._unstored = []
        free_room(self._room)
        self._room = None
        if writable:  # else the claims expire CLAIM_TTL_S after the last renewal
            self._release_all()
        if self._store_problem is not None:
            kept += f"; ${self.stats.cost_usd:.4f} spent this run"
        return kept

    def _note_failure(self, text: str) -> None:
        if len(self.stats.failures) < 20:
            self.stats.failures.append(text)

    def _finish(self, o: Outcome) -> None:
        s = self.stats
        s.done += 1
        s.counts[o.value] = s.counts.get(o.value, 0) + 1
        if o.is_error:
            s.errors += 1
        self.on_progress(s, o)


def _uncached_error(job: Job, text: str, e: Exception, started: float) -> Outcome:
    """The ``error`` outcome of a request that asking again would not mend: stored, not cached."""
    return Outcome(
        job,
        "error",
        text,
        _error_body(e),
        "api",
        latency_s=time.monotonic() - started,
        cacheable=False,
    )


def _transient(e: Exception) -> bool:
    code = status_of(e)
    return code is not None and (code in (408, 409, 429) or code >= 500)


def _describe(e: Exception) -> str:
    code = getattr(e, "status_code", None)
    return f"{type(e).__name__}{f' {code}' if code else ''}: {api_message(e)}"


def _error_body(e: Any) -> str:
    try:
        return str(e.response.text)
    except Exception:
        return json.dumps({"error": api_message(e)})
