"""The judge runner: jobs in, stored outcomes out, with bounded concurrency, retries, a cost cap,
the response cache and cancellation.

A *job* is one Messages API request (a trial to grade, or one order of a pair to compare) with its
cache key. For each job the runner first looks in the cache (a hit costs nothing and makes no request),
else sends it through the anthropic SDK (its own retries with backoff on 429, 5xx, overloaded and
timeouts, then a few rounds of our own backoff), parses the forced tool call and stores the outcome and
the reply in one transaction the moment it arrives — so a run killed halfway resumes where it stopped.

A reply that parses but holds no valid tool call is stored as an ``error`` outcome with the raw reply.
A request the API refuses for good (400, 413, 422) is stored as ``error`` with the API's message, and
not cached. A request that still fails after every retry (429 or 5xx) is not stored: it is counted as
failed and the next run sends it again. A refused key (401, 403) or an unknown model (404) stops the run.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterable, Sized
from dataclasses import asdict, dataclass, field
from typing import Any

from reviewer.judge.prompt import prompt_chars
from reviewer.judge.reply import Job, Outcome, outcome_from_body
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.sinks import store_outcome
from reviewer.store.db import Store
from reviewer.store.judging import cache_get


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


def require_key() -> None:
    """NoApiKey unless the environment holds a key (the SDK reads it, and ANTHROPIC_BASE_URL, itself)."""
    import os

    if not (os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")):
        raise NoApiKey(
            "ANTHROPIC_API_KEY is not set (set ANTHROPIC_BASE_URL too for another "
            "Anthropic-compatible endpoint)"
        )


def make_client(settings: JudgeSettings) -> Any:
    """The SDK's async client."""
    import anthropic

    require_key()
    return anthropic.AsyncAnthropic(max_retries=settings.max_retries, timeout=settings.timeout_s)


Progress = Callable[[RunStats, Outcome | None], None]


class Runner:
    """Runs jobs against the Messages API; see the module docstring for what happens to each reply."""

    def __init__(
        self,
        db: Store,
        settings: JudgeSettings,
        *,
        client_factory: Callable[[JudgeSettings], Any] = make_client,
        on_progress: Progress | None = None,
        cancel: threading.Event | None = None,
        backoff_s: float = 2.0,
        outer_rounds: int = 2,
    ) -> None:
        self.db = db
        self.settings = settings
        self.client_factory = client_factory
        self.on_progress = on_progress or (lambda stats, outcome: None)
        self.cancel = cancel or threading.Event()
        self.backoff_s = backoff_s
        self.outer_rounds = outer_rounds
        self.stats = RunStats()
        self._reserved = 0.0
        self._abort: str | None = None

    # cost cap ------------------------------------------------------------------------------------
    def estimate(self, job: Job) -> float:
        """An upper-end cost of one request: 1 token per 3 prompt characters, all of max_tokens out."""
        price = self.settings.price()
        if price is None:
            return 0.0
        return price.cost(prompt_chars(job.params) // 3 + 200, int(job.params.get("max_tokens", 0)))

    def _reserve(self, job: Job) -> float | None:
        cap = self.settings.max_cost
        est = self.estimate(job)
        if cap is None:
            return est
        if self.stats.stopped_at_cap or self.stats.cost_usd + self._reserved + est > cap:
            self.stats.stopped_at_cap = True
            return None
        self._reserved += est
        return est

    # the run -------------------------------------------------------------------------------------
    def run(self, jobs: Iterable[Job], total: int | None = None) -> RunStats:
        return asyncio.run(self.run_async(jobs, total))

    async def run_async(self, jobs: Iterable[Job], total: int | None = None) -> RunStats:
        """Stream ``jobs``: cache hits are stored at once, the rest sent ``concurrency`` at a time.

        Jobs are built lazily by the caller's iterator, so a run of any size holds only the requests
        in flight in memory."""
        if total is None and isinstance(jobs, Sized):
            total = len(jobs)
        self.stats = stats = RunStats(total=total or 0)
        client: Any = None
        in_flight: set[asyncio.Task[None]] = set()
        try:
            for job in jobs:
                if total is None:
                    stats.total += 1
                if self.cancel.is_set() or self._abort:
                    break
                hit = cache_get(self.db, job.key)
                if hit is not None:
                    self._finish(outcome_from_body(job, hit.body, "cache", self.settings))
                    stats.cached += 1
                    continue
                if client is None:
                    client = self._client()
                reserved = self._reserve(job)
                if reserved is None:
                    break
                while len(in_flight) >= self.settings.concurrency:
                    _, in_flight = await asyncio.wait(
                        in_flight, return_when=asyncio.FIRST_COMPLETED
                    )
                in_flight.add(asyncio.create_task(self._one(client, job, reserved)))
            while in_flight:
                if self.cancel.is_set() or self._abort:
                    for t in in_flight:
                        t.cancel()
                _, in_flight = await asyncio.wait(in_flight, timeout=0.05)
        finally:
            for t in in_flight:
                t.cancel()
            if in_flight:
                await asyncio.wait(in_flight)
            if client is not None:
                await client.close()
        stats.skipped_for_cost = stats.total - stats.done - stats.failed - stats.cancelled
        if not stats.stopped_at_cap:
            stats.cancelled += stats.skipped_for_cost
            stats.skipped_for_cost = 0
        if self._abort:
            raise JudgeAbort(self._abort)
        return stats

    def _client(self) -> Any:
        if self.settings.max_cost is not None and self.settings.price() is None:
            raise JudgeAbort(
                f"no price known for model {self.settings.model!r}, so --max-cost cannot be "
                "enforced; add it under [judge.prices] in reviewer.toml"
            )
        return self.client_factory(self.settings)

    async def _one(self, client: Any, job: Job, reserved: float) -> None:
        try:
            outcome = await self._call(client, job)
            if outcome is not None:
                self._finish(outcome)
        except asyncio.CancelledError:
            pass
        except Exception as e:  # never lose the run to one request: count it and go on
            self.stats.failed += 1
            self._note_failure(f"{job.target}: {type(e).__name__}: {e}")
        finally:
            if self.settings.max_cost is not None:
                self._reserved -= reserved

    async def _call(self, client: Any, job: Job) -> Outcome | None:
        import anthropic

        for attempt in range(self.outer_rounds + 1):
            started = time.monotonic()
            try:
                self.stats.requests += 1
                resp = await client.messages.with_raw_response.create(**sdk_args(job.params))
                body = resp.http_response.text
                latency = time.monotonic() - started
                return outcome_from_body(job, body, "api", self.settings, latency_s=latency)
            except (anthropic.AuthenticationError, anthropic.PermissionDeniedError) as e:
                self._abort = f"the API refused the key ({e.status_code}): {_message(e)}"
                return None
            except anthropic.NotFoundError as e:
                self._abort = f"not found at the API (404) — check the model name: {_message(e)}"
                return None
            except (
                anthropic.RateLimitError,
                anthropic.InternalServerError,
                anthropic.APIConnectionError,
                anthropic.RequestTimeoutError,
                anthropic.ConflictError,
            ) as e:
                if attempt == self.outer_rounds:
                    self.stats.failed += 1
                    self._note_failure(f"{job.target}: {_describe(e)} (gave up after retries)")
                    return None
                await asyncio.sleep(self.backoff_s * 2**attempt)
            except anthropic.APIStatusError as e:
                body = _error_body(e)
                return Outcome(
                    job,
                    "error",
                    f"the API refused the request ({e.status_code}): {_message(e)}",
                    body,
                    "api",
                    latency_s=time.monotonic() - started,
                    cacheable=False,
                )
        return None

    def _note_failure(self, text: str) -> None:
        if len(self.stats.failures) < 20:
            self.stats.failures.append(text)

    def _finish(self, o: Outcome) -> None:
        store_outcome(self.db, o)
        s = self.stats
        s.done += 1
        s.counts[o.value] = s.counts.get(o.value, 0) + 1
        if o.is_error:
            s.errors += 1
        if o.source != "cache":
            if o.cost_usd is None and o.input_tokens is not None:
                s.cost_known = False
            s.cost_usd += o.cost_usd or 0.0
        self.on_progress(s, o)


def _message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"][:300]
    return str(getattr(e, "message", e))[:300]


def _describe(e: Exception) -> str:
    code = getattr(e, "status_code", None)
    return f"{type(e).__name__}{f' {code}' if code else ''}: {_message(e)}"


def _error_body(e: Any) -> str:
    try:
        return str(e.response.text)
    except Exception:
        return json.dumps({"error": _message(e)})
