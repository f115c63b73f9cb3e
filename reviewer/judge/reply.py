"""Requests and replies of the judge: a job (one Messages API request), the forced tool call read
from a reply body, and the outcome to store. Shared by the runner, Message Batches and pairwise judging.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from reviewer.judge.cluster_reply import TOOLS as CLUSTER_TOOLS
from reviewer.judge.cluster_reply import input_problem
from reviewer.judge.prompt import PREFERENCE_TOOL, VERDICT_TOOL
from reviewer.judge.settings import JudgeSettings

KINDS = {"verdict": VERDICT_TOOL, "preference": PREFERENCE_TOOL}
_VALUES = {"verdict": ("pass", "fail"), "preference": ("A", "B", "tie")}
_FIELD = {"verdict": "verdict", "preference": "winner"}


@dataclass(frozen=True)
class Job:
    """One request: ``target`` is a trial id (verdicts) or ``pair_id`` (preferences, with ``order``)."""

    kind: str
    target: str
    judge: str
    rubric: str
    key: str
    params: dict[str, Any]
    order: str | None = None  # "ab" | "ba" for preferences
    meta: dict[str, Any] = field(default_factory=dict)  # preferences: task_id, a_trial, b_trial

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Job:
        return cls(**d)


@dataclass
class Parsed:
    value: str  # pass | fail | A | B | tie | error
    rationale: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    problem: str | None = None  # why the reply is an error
    cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None
    usage_problem: str | None = None  # a token count that cannot be true, counted as 0


@dataclass
class Outcome:
    job: Job
    value: str
    rationale: str
    raw: str
    source: str  # api | cache | batch
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cacheable: bool = True
    cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None
    #: something wrong with the reply's usage (a negative token count), said once by the run
    warning: str | None = None

    @property
    def is_error(self) -> bool:
        return self.value == "error"


def parse_reply(kind: str, body: str) -> Parsed:
    """The forced tool call of a Messages API reply body, with its token usage (prompt-cache writes
    and reads too); ``error`` with the reason when there is no valid call."""
    p = _parse_call(kind, body)
    usage = _usage(body)
    p.cache_write_tokens = _int(usage.get("cache_creation_input_tokens"))
    p.cache_read_tokens = _int(usage.get("cache_read_input_tokens"))
    bad = [
        f"{key} {usage[key]}"
        for key in _USAGE_KEYS
        if _int(usage.get(key)) is not None and not 0 <= usage[key] <= MAX_TOKENS
    ]
    if bad:
        # a negative (or impossible) count would store a negative cost: counted as 0, said once
        p.usage_problem = (
            f"a reply's usage has an impossible token count ({', '.join(bad)}): counted as 0"
        )
        p.input_tokens = _sane(p.input_tokens)
        p.output_tokens = _sane(p.output_tokens)
        p.cache_write_tokens = _sane(p.cache_write_tokens)
        p.cache_read_tokens = _sane(p.cache_read_tokens)
    return p


_USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
#: More tokens than any reply can hold: a count above this is as impossible as a negative one.
MAX_TOKENS = 10**9


def _sane(n: int | None) -> int | None:
    return None if n is None else (n if 0 <= n <= MAX_TOKENS else 0)


def _usage(body: str) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, TypeError, RecursionError):
        return {}
    usage = data.get("usage") if isinstance(data, dict) else None
    return usage if isinstance(usage, dict) else {}


def _parse_call(kind: str, body: str) -> Parsed:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, TypeError):
        return Parsed("error", "", problem="the reply is not JSON")
    except RecursionError:  # a reply of 3,000 nested arrays: an answer, not a failure to retry
        return Parsed("error", "", problem="the reply's JSON is nested too deep to read")
    if not isinstance(data, dict):
        return Parsed("error", "", problem="the reply is not a JSON object")
    raw_usage = data.get("usage")
    usage: dict[str, Any] = raw_usage if isinstance(raw_usage, dict) else {}
    in_tok, out_tok = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    tool = KINDS.get(kind) or CLUSTER_TOOLS[kind]
    content = data.get("content")
    blocks = content if isinstance(content, list) else []
    call = next(
        (
            b
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == tool
        ),
        None,
    )
    if call is None:
        return Parsed(
            "error", _text_of(blocks), in_tok, out_tok, f"no {tool} tool call in the reply"
        )
    args = call.get("input")
    if not isinstance(args, dict):
        return Parsed("error", "", in_tok, out_tok, f"{tool} input is not an object")
    if kind in CLUSTER_TOOLS:  # cluster names and merges: read by their own module, kept as "ok"
        kept, problem = input_problem(kind, args)
        if kept is None:
            return Parsed("error", "", in_tok, out_tok, problem)
        return Parsed("ok", kept, in_tok, out_tok)
    name = _FIELD[kind]
    value = args.get(name)
    value = _normal(kind, value) if isinstance(value, str) else None
    if value is None:
        allowed = " or ".join(_VALUES[kind])
        return Parsed(
            "error", "", in_tok, out_tok, f"{tool}.{name} must be {allowed}, got {args.get(name)!r}"
        )
    rationale = args.get("rationale")
    if not isinstance(rationale, str):
        return Parsed("error", "", in_tok, out_tok, f"{tool}.rationale must be a string")
    return Parsed(value, rationale.strip(), in_tok, out_tok)


def _normal(kind: str, value: str) -> str | None:
    v = value.strip()
    if kind == "verdict":
        v = v.lower()
    elif v.lower() == "tie":
        v = "tie"
    else:
        v = v.upper()
    return v if v in _VALUES[kind] else None


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _text_of(blocks: list[Any]) -> str:
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return " ".join(t for t in texts if isinstance(t, str)).strip()[:2000]


def outcome_from_body(
    job: Job, body: str, source: str, settings: JudgeSettings, **extra: Any
) -> Outcome:
    p = parse_reply(job.kind, body)
    price = settings.price()
    cost = None
    if price is not None and source != "cache":
        cost = price.cost(
            p.input_tokens or 0,
            p.output_tokens or 0,
            cache_write=p.cache_write_tokens or 0,
            cache_read=p.cache_read_tokens or 0,
            batch=source == "batch",
        )
    rationale = (
        p.rationale
        if p.problem is None
        else f"malformed reply: {p.problem}" + (f" — {p.rationale}" if p.rationale else "")
    )
    if job.kind in CLUSTER_TOOLS and p.problem is not None:
        # a cluster answer that cannot be used is asked again by the next run, not served from
        # the cache for ever
        extra = {"cacheable": False, **extra}
    return Outcome(
        job,
        p.value,
        rationale,
        body,
        source,
        p.input_tokens,
        p.output_tokens,
        cost,
        cache_write_tokens=p.cache_write_tokens,
        cache_read_tokens=p.cache_read_tokens,
        warning=p.usage_problem,
        **extra,
    )


def map_winner(order: str, winner: str) -> str | None:
    """The judge's A / B / tie in ``order`` ("ab": a shown first) as the pair's a / b / tie; None for
    an error."""
    if winner == "tie":
        return "tie"
    if winner not in ("A", "B"):
        return None
    first_is_a = order == "ab"
    return "a" if (winner == "A") == first_is_a else "b"
