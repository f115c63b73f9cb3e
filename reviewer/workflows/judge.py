"""Judge these trials: the one call behind `reviewer judge` and the app's judge window.

It reads the [judge] settings (with the caller's overrides), picks the rubric, collects Message
Batches that have ended, selects and plans the trials, then runs them directly (progress and cancel
callbacks, the cost cap) or submits them as batches. Every failure a user can cause or fix comes out
as one ``JudgeFailed`` line; the result carries the counts, the summary line and the JSON.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer.judge.batch import Collected, Submitted
from reviewer.judge.jobs import BUILTIN_RUBRIC

# re-exported for the faces (they import workflows only)
from reviewer.judge.reply import Outcome as Outcome
from reviewer.judge.runner import Progress as Progress
from reviewer.judge.runner import RunStats as RunStats
from reviewer.judge.settings import JudgeSettings
from reviewer.models import Rubric
from reviewer.store.db import Store
from reviewer.store.judging import select_trials as select_trials
from reviewer.text import unknown_queue, unknown_run


class JudgeFailed(Exception):
    """The run could not start or had to stop; the message is one line for the user."""


@dataclass(frozen=True)
class JudgeRequest:
    """Which trials to judge and how. Empty ``runs`` means every run; ``trial_ids`` narrows further.

    ``overrides`` are [judge] settings given for this run (model, temperature, max_tokens,
    prompt_version, concurrency, max_cost); ``rubric`` a rubric file instead of the config's."""

    runs: Sequence[str] = ()
    trial_ids: Sequence[str] | None = None
    labeled: bool = False
    queue: str | None = None
    only_unjudged: bool = False
    retry_errors: bool = False
    limit: int | None = None
    rubric: Path | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    batch: bool = False
    collect_only: bool = False


@dataclass
class JudgeResult:
    """What a judge run did: batches collected, then trials run directly or submitted as batches
    (``mode`` "direct", "batch", or "collect" when collecting was all that was asked)."""

    judge: str
    rubric: str
    mode: str = "direct"
    planned: int = 0
    #: how to raise the default cost cap, said when the run stopped at it
    cap_note: str = ""
    collected: Collected | None = None
    stats: RunStats | None = None
    submitted: Submitted | None = None

    @property
    def incomplete(self) -> bool:
        """Trials were left: the cost cap, requests that failed after retries, a cancel."""
        if self.submitted is not None:
            return self.submitted.skipped_for_cost > 0
        return self.stats is not None and self.stats.left > 0

    @property
    def summary(self) -> str:
        """One plain line: what was judged (or submitted) with which judge, at what cost."""
        if self.mode == "collect":
            got = self.collected
            return f"collected {got.stored} results" if got else "no batches await collection"
        if self.submitted is not None:
            return "; ".join(submitted_lines(self.submitted)) or "nothing to submit"
        return summary_line(self.judge, self.stats or RunStats(), self.cap_note)

    def lines(self) -> list[str]:
        """The end-of-run report: the summary and up to five failures, or what was submitted."""
        if self.mode == "collect" or (self.stats is None and self.submitted is None):
            return []  # nothing was planned: the plan note said so
        if self.submitted is not None:
            return submitted_lines(self.submitted)
        stats = self.stats or RunStats()
        return [
            summary_line(self.judge, stats, self.cap_note),
            *(f"  {f}" for f in stats.failures[:5]),
        ]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.collected is not None:
            out["collected"] = self.collected.to_dict()
        if self.mode == "collect":
            return out
        if self.submitted is not None:
            return {**out, "judge": self.judge, "submitted": self.submitted.to_dict()}
        if self.stats is None:
            return {**out, "judge": self.judge, "trials": 0}
        return {**out, "judge": self.judge, "rubric": self.rubric, **self.stats.to_dict()}


Note = Callable[[str], None]
Start = Callable[[str, str, int], None]


def judge_trials(
    db: Store,
    request: JudgeRequest,
    *,
    cfg: Any = None,
    on_note: Note | None = None,
    on_start: Start | None = None,
    on_progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> JudgeResult:
    """Judge the requested trials and store the verdicts as they arrive.

    ``on_note`` gets diagnostic lines as they happen (batches collected, the plan); ``on_start`` the
    judge id, rubric ref and number of trials before the first request; ``on_progress`` the runner's
    stats after every stored outcome; ``cancel`` stops sending (what arrived is kept). Raises JudgeFailed
    with one line."""
    from reviewer.judge.runner import JudgeAbort

    note = on_note or (lambda line: None)
    settings, rubric = _setup(db, request, cfg)
    judge = settings.judge_id(rubric.ref)
    mode = "collect" if request.collect_only else "batch" if request.batch else "direct"
    result = JudgeResult(judge, rubric.ref, mode)
    if settings.cap_is_default:
        result.cap_note = cap_words(settings)
    store_kept_replies(db, note)
    try:
        result.collected = collect_open_batches(db, settings, request.collect_only, note)
        if request.collect_only:
            return result
        ids = plan(db, judge, request)
        result.planned = len(ids)
        note(
            f"judge {judge}: {len(ids)} trial{'' if len(ids) == 1 else 's'} (rubric {rubric.ref}); "
            + cap_words(settings)
        )
        if on_start is not None:
            on_start(judge, rubric.ref, len(ids))
        if ids:
            _send(db, result, ids, rubric, settings, request.batch, on_progress, cancel, note)
    except JudgeAbort as e:
        raise JudgeFailed(str(e)) from e
    return result


@dataclass
class JudgeEstimate:
    """What a judge run would cost before anything is sent: the trials planned, how many the cache
    answers, the tokens of the rest (input from the prompts, output from this judge's stored replies
    or a typical verdict) and dollars at the model's price (expected, and at most if every reply
    used all of max_tokens), under the run's cost cap."""

    judge: str
    rubric: str
    trials: int
    cached: int
    to_send: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: no price known for the model
    cost_max_usd: float | None
    cap_usd: float | None
    cap_note: str
    sampled: int  # prompts built to estimate (all of them up to ESTIMATE_SAMPLE)

    def lines(self) -> list[str]:
        s = "" if self.trials == 1 else "s"
        head = f"judge {self.judge}: {self.trials} trial{s}"
        if not self.trials:
            return [f"{head}: nothing to judge"]
        # beyond ESTIMATE_SAMPLE trials both counts are scaled from the sample, not counted
        est = "about " if self.sampled < self.trials else ""
        out = [f"{head}: {est}{self.to_send} to send, {est}{self.cached} answered by the cache"]
        if self.to_send:
            about = "" if self.sampled >= self.trials else f" (from {self.sampled} of them)"
            out.append(
                f"about {self.input_tokens:,} input and {self.output_tokens:,} output tokens"
                + about
            )
            if self.cost_usd is None:
                out.append("cost unknown: no price for the model ([judge.prices])")
            else:
                out.append(
                    f"about ${self.cost_usd:.2f}, at most ${self.cost_max_usd or 0:.2f} if every "
                    "reply used all of max_tokens"
                )
            out.append(self.cap_note)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "cap_note"} | {
            "cap_note": self.cap_note
        }


#: At most this many prompts are built to estimate a run (the rest are scaled from them).
ESTIMATE_SAMPLE = 400
#: Output tokens of a typical verdict (a tool call and a short rationale) when none is stored.
TYPICAL_OUTPUT_TOKENS = 150


def estimate_judging(db: Store, request: JudgeRequest, *, cfg: Any = None) -> JudgeEstimate:
    """The cost of ``request`` before anything is sent (JudgeFailed for what judge_trials would
    refuse); nothing is written."""
    import random

    from reviewer.judge.jobs import verdict_jobs
    from reviewer.judge.prompt import prompt_chars
    from reviewer.store.judging import cache_get_many, mean_output_tokens

    settings, rubric = _setup(db, request, cfg)
    judge = settings.judge_id(rubric.ref)
    ids = (
        plan(db, judge, replace(request, retry_errors=False))
        if not request.retry_errors
        else (_errored(db, judge, request))
    )
    sample = ids if len(ids) <= ESTIMATE_SAMPLE else random.Random(0).sample(ids, ESTIMATE_SAMPLE)
    jobs = list(verdict_jobs(db, sample, rubric, settings))
    hits = cache_get_many(db, [j.key for j in jobs]) if not request.retry_errors else {}
    sent = [j for j in jobs if j.key not in hits]
    scale = len(ids) / len(jobs) if jobs else 0.0
    to_send = round(len(sent) * scale)
    tokens_in = sum(prompt_chars(j.params) // 3 + 200 for j in sent) * scale
    typical = mean_output_tokens(db, judge) or TYPICAL_OUTPUT_TOKENS
    tokens_out = to_send * min(typical, settings.max_tokens)
    price = settings.price()
    cost = cost_max = None
    if price is not None:
        cost = price.cost(round(tokens_in), round(tokens_out), batch=request.batch)
        cost_max = price.cost(round(tokens_in), to_send * settings.max_tokens, batch=request.batch)
    return JudgeEstimate(
        judge,
        rubric.ref,
        len(ids),
        len(ids) - to_send,
        to_send,
        round(tokens_in),
        round(tokens_out),
        cost,
        cost_max,
        settings.max_cost,
        cap_words(settings),
        len(jobs),
    )


def _errored(db: Store, judge: str, request: JudgeRequest) -> list[str]:
    """The trials ``--retry-errors`` would send again (without forgetting their cached replies)."""
    from reviewer.store.judging import judged, select_trials

    errored = judged(db, judge, errors=True)
    ids = select_trials(
        db, request.runs, labeled=request.labeled, queue=request.queue, trial_ids=request.trial_ids
    )
    ids = [t for t in ids if t in errored]
    return ids[: request.limit] if request.limit is not None else ids


def _setup(db: Store, request: JudgeRequest, cfg: Any) -> tuple[JudgeSettings, Rubric]:
    """The run's judge settings (the config's with the request's overrides) and rubric; every
    problem with them is one JudgeFailed line."""
    from reviewer.config import ConfigError, resolve_config
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.labeling.rubric import RubricError
    from reviewer.store.labels import RubricVersionError

    try:
        cfg = resolve_config(cfg)
        return load_settings(cfg, **request.overrides), pick_rubric(
            db, request.rubric or cfg.rubric
        )
    except (
        ConfigError,
        JudgeConfigError,
        RubricError,
        RubricVersionError,
        ValueError,
        OSError,
    ) as e:
        raise JudgeFailed(str(e)) from e


def _send(
    db: Store,
    result: JudgeResult,
    ids: Sequence[str],
    rubric: Rubric,
    settings: JudgeSettings,
    batch: bool,
    on_progress: Progress | None,
    cancel: threading.Event | None,
    note: Note,
) -> None:
    from reviewer.judge.batch import submit
    from reviewer.judge.jobs import verdict_jobs
    from reviewer.judge.runner import Runner

    jobs = verdict_jobs(db, ids, rubric, settings)
    if batch:
        result.submitted = submit(db, jobs, settings)
        return
    runner = Runner(db, settings, on_progress=on_progress, on_note=note, cancel=cancel)
    result.stats = runner.run(jobs, len(ids))


def store_kept_replies(db: Store, note: Note) -> None:
    """Store the replies an earlier run received but could not store (its side file), before any
    request is sent; JudgeFailed when they still cannot be stored."""
    import sqlite3

    from reviewer.judge.claims import store_problem
    from reviewer.judge.pending import pending_path, restore, shown_path

    try:
        stored, bad, path = restore(db, note)
    except sqlite3.OperationalError as e:
        where = pending_path(db)
        raise JudgeFailed(
            f"cannot store judge replies: {store_problem(e)}; the replies of an earlier run "
            f"still wait in {shown_path(where) if where else 'the side file'}"
        ) from e
    except OSError as e:
        raise JudgeFailed(f"cannot read the judge replies kept by an earlier run: {e}") from e
    if path is not None and (stored or bad):
        unread = f" ({bad} left out: unreadable, or their trial is gone)" if bad else ""
        note(f"stored {stored} judge replies an earlier run kept in {shown_path(path)}{unread}")


def collect_open_batches(
    db: Store, settings: JudgeSettings, required: bool, note: Note
) -> Collected | None:
    """Store the results of every ended batch; None when none is open. Without a key this says so
    in a note and goes on, unless collecting is all that was asked (``required``)."""
    from reviewer.judge.batch import collect, has_open_batches
    from reviewer.judge.runner import NoApiKey

    if not has_open_batches(db):
        if required:
            note("no batches await collection")
        return None
    try:
        got = collect(db, settings)
    except NoApiKey as e:
        if required:
            raise
        note(f"batches await collection, but {e}")
        return None
    for b in got.batches:
        note(batch_line(b))
    return got


def batch_line(b: Any) -> str:
    """One collected (or still running) batch as a line."""
    if b.status == "collected":
        extra = f", {b.retry_later} to send again" if b.retry_later else ""
        if b.resubmitted:
            extra += f", {b.resubmitted} resubmitted in batch {', '.join(b.resubmitted_in)}"
        return f"batch {b.id}: collected {b.stored} results ({b.errors} errors{extra})"
    if b.status == "unknown":
        return (
            f"batch {b.id}: the API no longer knows it ({b.detail}); its {b.requests} requests "
            "will be sent again by the next run"
        )
    if b.status == "unreachable":
        return f"batch {b.id}: {b.detail}; collect later"
    counts = ", ".join(f"{k} {v}" for k, v in b.counts.items() if v)
    return f"batch {b.id}: {b.status}{f' ({counts})' if counts else ''}; collect later"


def submitted_lines(sub: Submitted) -> list[str]:
    """What a batch submission sent, answered from the cache, found pending or left over the cap."""
    out = []
    if sub.batch_ids:
        out.append(
            f"submitted {sub.requests} requests in batch {', '.join(sub.batch_ids)} (estimated "
            f"≤ ${sub.estimated_cost:.4f}); `reviewer judge --collect` stores the results when "
            "they are ready"
        )
    if sub.cached:
        out.append(f"{sub.cached} answered from the cache and stored")
    if sub.already_pending:
        out.append(f"{sub.already_pending} already in a submitted batch")
    if sub.skipped_for_cost:
        out.append(f"{sub.skipped_for_cost} not submitted: over the cost cap")
    return out


# --- settings, rubric, plan -----------------------------------------------------------------------


def load_settings(cfg: Any, **overrides: Any) -> JudgeSettings:
    """[judge] of the config with the overrides; JudgeConfigError naming the file and line."""
    from reviewer.judge.settings import JudgeConfigError, settings_from_config, validate

    sources = list(getattr(cfg, "sources", None) or [])
    base = sources[-1].parent if sources else None
    try:
        settings = settings_from_config(cfg.judge, base)
    except JudgeConfigError as e:
        raise JudgeConfigError(f"{_where(sources, str(e))}: {e}") from e
    settings = settings.with_overrides(**overrides)
    validate(settings)
    if settings.max_cost is None and settings.price() is not None:
        # a model with no known price cannot be capped: it runs without, and the plan says so
        from reviewer.judge.settings import DEFAULT_MAX_COST

        settings = replace(settings, max_cost=DEFAULT_MAX_COST, cap_is_default=True)
    return settings


def _where(sources: Sequence[Path], message: str) -> str:
    """``file:line`` of the [judge] setting a message names, in the config file that sets it."""
    from reviewer.judge.settings import KNOWN_SETTINGS

    named = [k for k in KNOWN_SETTINGS if re.search(rf"\b{k}\b", message)]
    for path in reversed(sources):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        in_judge = False
        for n, line in enumerate(lines, 1):
            head = line.strip()
            if head.startswith("["):
                in_judge = head.startswith("[judge")
            elif in_judge and any(re.match(rf'"?{k}"?\s*=', head) for k in named):
                return f"{path}:{n}"
        if any(ln.strip().startswith("[judge") for ln in lines):
            return str(path)
    return str(sources[-1]) if sources else "config"


def pick_rubric(db: Store, configured: Path | None) -> Rubric:
    """The active rubric (``workflows.rubric.active_rubric``), else the built-in one."""
    from reviewer.workflows.rubric import active_rubric

    return active_rubric(db, configured) or BUILTIN_RUBRIC


def plan(db: Store, judge: str, req: JudgeRequest) -> list[str]:
    """The trial ids to send, in a stable order; JudgeFailed for an unknown run or queue.

    ``only_unjudged`` leaves out trials this judge already gave pass or fail. ``retry_errors`` keeps
    only the trials it gave ``error`` and forgets their cached replies, so they are asked again.
    """
    from reviewer.store.judging import (
        cache_drop,
        error_cache_keys,
        judged,
        queue_names,
        select_trials,
    )
    from reviewer.store.queries import run_names

    known = run_names(db)
    for r in req.runs:
        if r not in known:
            raise JudgeFailed(unknown_run(r, known))
    if req.queue is not None:
        names = queue_names(db)
        if req.queue not in names:
            raise JudgeFailed(unknown_queue(req.queue, names, "none (reviewer sample)"))
    if req.trial_ids:
        from reviewer.store.queries import record_of

        unknown = [t for t in req.trial_ids if record_of(db, t) is None]
        if unknown:
            raise JudgeFailed(
                f"no trial with id {unknown[0]!r}"
                + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else "")
            )
    ids = select_trials(db, req.runs, labeled=req.labeled, queue=req.queue, trial_ids=req.trial_ids)
    if req.retry_errors:
        errored = judged(db, judge, errors=True)
        ids = [t for t in ids if t in errored]
        with db.transaction():
            cache_drop(db, error_cache_keys(db, judge))
    elif req.only_unjudged:
        done = judged(db, judge)
        ids = [t for t in ids if t not in done]
    return ids[: req.limit] if req.limit is not None else ids


def cap_words(settings: JudgeSettings) -> str:
    """The run's cost cap in words, saying how to raise the default one."""
    if settings.max_cost is None:
        if settings.price() is None:
            return f"no cost cap: no price known for model {settings.model!r} ([judge.prices])"
        return "no cost cap"
    if settings.cap_is_default:
        return (
            f"cost cap ${settings.max_cost:g} (the default; raise it with --max-cost or "
            "[judge] max_cost)"
        )
    return f"cost cap ${settings.max_cost:g}"


def summary_line(judge: str, stats: RunStats, cap_note: str = "") -> str:
    """One plain line for the end of a run (CLI) or a notification (app)."""
    keys = ["pass", "fail"] if not set(stats.counts) - {"pass", "fail", "error"} else []
    keys += sorted(k for k in stats.counts if k not in keys and k != "error") + ["error"]
    counts = ", ".join(f"{k} {stats.counts.get(k, 0)}" for k in keys)
    cost = f"${stats.cost_usd:.4f}" if stats.cost_known else "cost unknown (no price for model)"
    parts = [
        f"judged {stats.done} of {stats.total} with {judge}: {counts}",
        f"{stats.cached} from cache, {stats.requests} requests, {cost}",
    ]
    if stats.failed:
        parts.append(f"{stats.failed} failed after retries (run again to retry)")
    if stats.in_batch:
        parts.append(f"{stats.in_batch} wait in a submitted batch (`reviewer judge --collect`)")
    if stats.skipped_claimed:
        parts.append(f"{stats.skipped_claimed} skipped: another process is judging them")
    if stats.stopped_at_cap:
        parts.append(f"stopped at the cost cap: {stats.skipped_for_cost} not sent")
        if cap_note:
            parts.append(cap_note)
    if stats.cancelled:
        parts.append(f"{stats.cancelled} cancelled")
    return "; ".join(parts)
