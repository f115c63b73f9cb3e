"""Online evaluation of production conversations: each conversation's time, cheap checks and outcome
signals; windows (a day or an hour) with each rate; the seeded judge sample; alerts.

Cheap checks, on every conversation: each trajectory rule it broke (``rule:ID``), ``tool_error`` (a
tool call came back as an error; the window's tool error rate is errors / calls), ``user_repeat`` (a
user turn restates an earlier one: the user had to repeat themselves) and ``unresolved`` (the
conversation ended without a resolution: the user spoke last with more than thanks or goodbye, the
agent's last act was a tool call, or its last words hand over, give up or apologise for not helping).

The alert rule (a window against its baseline windows, allowing for how the rate wobbles between
windows and for tool errors clustering within conversations; the rates of a window tested
together) is ``metrics.alerts``; ``metrics.monitor_alerts`` applies it to the windows.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from reviewer.models import Message

#: Bump when a check's definition changes: stored results of older versions are recomputed.
CHECKS_VERSION = "2"
DEFAULT_SAMPLE = 0.02
TIME_KEYS = ("started_at", "timestamp", "created_at", "start_time", "time")
BUILTIN_CHECKS = ("tool_error", "user_repeat", "unresolved")
CHECK_WORDS = {
    "tool_error": "tool error",
    "user_repeat": "user repeated",
    "unresolved": "unresolved",
}


# --- one conversation ------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 time (``Z`` or an offset; naive means UTC) or epoch seconds / ms / ns, in UTC."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value) or value <= 0:
            return None
        seconds = float(value)
        for _ in range(3):  # milliseconds, microseconds, nanoseconds; no further
            if seconds <= 1e11:
                break
            seconds /= 1000
        try:
            return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            # beyond year 9999: the last time there is, which `plausible` refuses
            return datetime.max.replace(tzinfo=UTC)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            t = datetime.fromisoformat(text)
        except ValueError:
            return None
        if t.tzinfo is None:
            return t.replace(tzinfo=UTC)
        try:
            return t.astimezone(UTC)
        except OverflowError:  # an offset taking it before year 1 or past 9999: as a number's
            return (datetime.min if t.year == 1 else datetime.max).replace(tzinfo=UTC)
    return None


#: The earliest plausible conversation time; the latest is a day after now.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def plausible(started_at: str, now: datetime | None = None) -> bool:
    """Whether a stored time can be a conversation's: from 1970-01-01 to a day after ``now``."""
    t = datetime.fromisoformat(started_at)
    t = t.replace(tzinfo=UTC) if t.tzinfo is None else t
    return EARLIEST <= t <= (now or datetime.now(UTC)) + timedelta(days=1)


def record_time(record: Mapping[str, Any]) -> datetime | None:
    """When a conversation started: a time key at the top of the record, else in its metadata."""
    meta = record.get("metadata")
    for source in (record, meta if isinstance(meta, dict) else {}):
        for key in TIME_KEYS:
            if key in source:
                t = parse_time(source[key])
                if t is not None:
                    return t
    return None


def lookup(record: Mapping[str, Any], path: str) -> Any:
    """A dotted field of the record's metadata, else of the record itself (None when absent)."""
    meta = record.get("metadata")
    for source in (meta if isinstance(meta, dict) else {}, record):
        cur: Any = source
        for part in path.split("."):
            if not isinstance(cur, dict) or part not in cur:
                cur = None
                break
            cur = cur[part]
        if cur is not None:
            return cur
    return None


def signal_value(value: Any) -> bool | None:
    """An outcome signal as bad (True) / fine (False): true or a number above 0 is bad; absent or
    anything else is unknown (None, counted in no rate)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float) and math.isfinite(value):
        return value > 0
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "0"):
        return False
    return None


_WORD = re.compile(r"[a-z0-9#]+")
_STOP = frozenset(
    "a an the i me my we you your it is are was to of and or for on in at this that with be "
    "can could please hi hello hey just so do did have has not".split()
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1}


def user_repeated(messages: Sequence[Message]) -> bool:
    """A user turn restates an earlier user turn: at least 4 content words and 60% of them (by the
    shorter turn, Jaccard ≥ 0.5) the same."""
    seen: list[set[str]] = []
    for m in messages:
        if m.role != "user":
            continue
        words = _words(m.content)
        if len(words) >= 4:
            for earlier in seen:
                shared = len(words & earlier)
                if (
                    shared / min(len(words), len(earlier)) >= 0.6
                    and shared / len(words | earlier) >= 0.5
                ):
                    return True
            seen.append(words)
    return False


_UNRESOLVED = re.compile(
    r"transfer(?:ring)? you|hand(?:ing)? (?:you )?over|human agent|specialist|escalat|"
    r"someone (?:from our team )?will|in the queue|a colleague will|unable to|"
    r"can(?:no|')t (?:help|resolve|access|do that)|try (?:again )?later|contact us again|"
    r"could(?:n't| not) (?:complete|resolve|find a way)|(?:system|service)(?:'s| is) down",
    re.IGNORECASE,
)


#: A user's last words that close a conversation rather than leave it open: thanks, a goodbye,
#: "that's all" (and a simulated user's ``###STOP###``: tau-bench's says so when it is done) ...
_CLOSING = re.compile(
    r"\b(?:thanks?|thank(?:s| you)|thx|ty|cheers|bye|goodbye|appreciate|"
    r"that'?s (?:all|it|everything)|have a (?:good|great|nice|lovely)|all (?:set|good)|"
    r"(?:sounds|looks) good|perfect|great|awesome|wonderful)\b",
    re.IGNORECASE,
)
#: ... unless they ask again or complain ("thanks, but it still doesn't work")
_STILL_OPEN = re.compile(
    r"\?|\b(?:but|still|not|no longer|never|wrong|again|problem|issue|broken|useless|"
    r"cannot|also|what about|how about|(?:can|could|would|will) you|please|why|how do)\b|"
    r"n['’]t\b|###[A-Z-]+###",
    re.IGNORECASE,
)
CLOSING_MAX = 200  # a longer last message says more than goodbye
#: the words a thank-you or goodbye is made of: a closing holds at most one word besides them, so
#: "Thanks. Cancel W2." or "Great, now cancel my other order too." is a request, not a goodbye
_CLOSING_WORDS = frozenset(
    "thanks thank thx ty you so much very for your the help helping all that that's thats it "
    "is was i i'm im i've ive have a an good great nice lovely wonderful awesome perfect day "
    "evening weekend one again ok okay alright right yes yeah yep sure no nope nothing else "
    "everything needed need just what wanted got it's sounds looks set cheers bye goodbye "
    "appreciate appreciated really will do done too take care".split()
)
_WORDS = re.compile(r"[a-z0-9'’]+")


def closing(text: str) -> bool:
    """TEXT (a user's last message) closes the conversation: thanks or goodbye, no new request."""
    if "###STOP###" in text:  # a simulated user ending the conversation: the agent's turn decides
        return True
    if len(text) > CLOSING_MAX or _CLOSING.search(text) is None or _STILL_OPEN.search(text):
        return False
    words = _WORDS.findall(text.lower().replace("’", "'"))
    return sum(w not in _CLOSING_WORDS for w in words) <= 1


def unresolved(messages: Sequence[Message]) -> bool:
    """The conversation ended without a resolution: the user spoke last with a request or a
    complaint (not a thank-you or goodbye), the agent's last act was a tool call (no closing
    answer), or its last words hand over, give up or cannot help."""
    talk = [m for m in messages if m.role in ("user", "assistant", "tool")]
    while talk and talk[-1].role == "user" and closing(talk[-1].content):
        talk.pop()  # the agent's turn before a thank-you decides
    if not talk:
        return True
    last = talk[-1]
    if last.role == "user" or last.role == "tool":
        return True
    if last.tool_calls and not last.content.strip():
        return True
    return bool(_UNRESOLVED.search(last.content))


@dataclass(frozen=True)
class Facts:
    """What the monitor keeps of one conversation (stored once per checks version)."""

    trial_id: str
    started_at: str | None
    fired: tuple[str, ...]  # the checks that fired
    tool_calls: int
    tool_errors: int
    signals: dict[str, bool | None] = field(default_factory=dict)


def conversation_facts(
    trial_id: str,
    record: Mapping[str, Any],
    messages: Sequence[Message],
    broken_rules: Iterable[str],
    tool_calls: int,
    tool_errors: int,
    signals: Sequence[str],
) -> Facts:
    t = record_time(record)
    fired = [f"rule:{r}" for r in sorted(set(broken_rules))]
    if tool_errors:
        fired.append("tool_error")
    if user_repeated(messages):
        fired.append("user_repeat")
    if unresolved(messages):
        fired.append("unresolved")
    return Facts(
        trial_id,
        None if t is None else t.isoformat(timespec="seconds"),
        tuple(fired),
        tool_calls,
        tool_errors,
        {s: signal_value(lookup(record, s)) for s in signals},
    )


def in_sample(trial_id: str, share: float, seed: int) -> bool:
    """The seeded sample: a conversation is in it when a hash of (seed, id) falls under ``share``;
    the same conversation is always in or out, whenever and in whatever order it arrives."""
    digest = hashlib.sha256(f"{seed}:{trial_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


# --- windows ----------------------------------------------------------------------------------------


def window_start(started_at: str, size: str) -> str:
    """The window a time falls in: ``2025-06-10`` (day) or ``2025-06-10T14:00`` (hour), UTC."""
    t = datetime.fromisoformat(started_at).astimezone(UTC)
    return t.date().isoformat() if size == "day" else t.strftime("%Y-%m-%dT%H:00")


def window_position(start: str, size: str) -> int:
    """A window's number in time (days or hours since 0001-01-01): how far apart two windows are."""
    t = datetime.fromisoformat(start)
    return t.toordinal() if size == "day" else t.toordinal() * 24 + t.hour


def next_window(start: str, size: str) -> str:
    if size == "day":
        return (datetime.fromisoformat(start) + timedelta(days=1)).date().isoformat()
    return (datetime.fromisoformat(start) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:00")


@dataclass
class Rate:
    """A count of bad outcomes out of n (bad = the check fired, the judge failed, the signal was
    bad); ``rate`` None when n is 0. A ratio over conversations (tool errors per call) also keeps
    its conversations and their sums of squares, so its variance counts the conversation as the
    unit (``clustered``)."""

    bad: int = 0
    n: int = 0
    clustered: bool = False
    units: int = 0
    bad_sq: float = 0.0
    n_sq: float = 0.0
    cross: float = 0.0

    @property
    def rate(self) -> float | None:
        return self.bad / self.n if self.n else None

    def add_cluster(self, bad: int, n: int) -> None:
        """One conversation with ``bad`` of its ``n`` (e.g. tool errors of its calls)."""
        self.bad += bad
        self.n += n
        if n:
            self.units += 1
            self.bad_sq += bad * bad
            self.n_sq += n * n
            self.cross += bad * n

    def to_dict(self) -> dict[str, Any]:
        return {"bad": self.bad, "n": self.n, "rate": self.rate}


@dataclass
class Window:
    start: str
    conversations: int = 0
    rates: dict[str, Rate] = field(default_factory=dict)  # metric -> counts
    judge_pass: Rate = field(default_factory=Rate)  # bad = passed here: the pass rate
    flagged: int = 0
    alerts: list[str] = field(default_factory=list)  # metrics that alerted

    @property
    def judge_interval(self) -> tuple[float, float] | None:
        return wilson(self.judge_pass.bad, self.judge_pass.n)

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "conversations": self.conversations,
            "rates": {k: v.to_dict() for k, v in self.rates.items()},
            "judge": {
                "judged": self.judge_pass.n,
                "passed": self.judge_pass.bad,
                "pass_rate": self.judge_pass.rate,
                "ci95": list(self.judge_interval) if self.judge_interval else None,
            },
            "flagged": self.flagged,
            "alerts": list(self.alerts),
        }


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float] | None:
    """The 95% Wilson score interval of k successes in n."""
    if n <= 0:
        return None
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def metric_words(metric: str) -> str:
    if metric.startswith("rule:"):
        return f"rule {metric[5:]}"
    if metric.startswith("signal:"):
        return metric[7:]
    if metric == "judge_fail":
        return "judge fail"
    if metric == "tool_error_rate":
        return "tool error rate"
    return CHECK_WORDS.get(metric, metric)


#: The most windows ``build_windows`` lists with empty ones filled in; a longer span lists only the
#: windows that have conversations (one stray time must not print every hour in between).
MAX_FILLED_WINDOWS = 2000


def window_span(starts: Sequence[str], size: str) -> int:
    """How many windows from the first of ``starts`` (sorted) to the last, both included."""
    first, last = datetime.fromisoformat(starts[0]), datetime.fromisoformat(starts[-1])
    step = timedelta(days=1) if size == "day" else timedelta(hours=1)
    return (last - first) // step + 1


def _window(start: str, metrics: Sequence[str]) -> Window:
    rates = {m: Rate() for m in metrics}
    rates["tool_error_rate"] = Rate(clustered=True)
    return Window(start, rates=rates)


def build_windows(
    facts: Iterable[Facts],
    size: str,
    judged: Mapping[str, str],
    metrics: Sequence[str],
) -> list[Window]:
    """Windows in time order, every window between the first and the last (empty ones too, so a
    silent hour shows) when they are at most MAX_FILLED_WINDOWS, else only those with
    conversations. ``judged`` maps a sampled conversation's id to its verdict (pass / fail);
    ``metrics`` are the check and signal rates to show (``signal:NAME``)."""
    by_start: dict[str, Window] = {}
    for f in facts:
        if f.started_at is None:
            continue
        start = window_start(f.started_at, size)
        w = by_start.get(start)
        if w is None:
            w = by_start[start] = _window(start, metrics)
        w.conversations += 1
        flagged = False
        for m in metrics:
            if m.startswith("signal:"):
                value = f.signals.get(m[7:])
                if value is None:
                    continue
                w.rates[m].n += 1
                w.rates[m].bad += value
                flagged |= value
            else:
                w.rates[m].n += 1
                hit = m in f.fired
                w.rates[m].bad += hit
                flagged |= hit
        w.rates["tool_error_rate"].add_cluster(f.tool_errors, f.tool_calls)
        verdict = judged.get(f.trial_id)
        if verdict in ("pass", "fail"):
            w.judge_pass.n += 1
            w.judge_pass.bad += verdict == "pass"
            flagged |= verdict == "fail"
        w.flagged += flagged
    if not by_start:
        return []
    starts = sorted(by_start)
    if window_span(starts, size) > MAX_FILLED_WINDOWS:
        return [by_start[s] for s in starts]
    out, cur = [], starts[0]
    while cur <= starts[-1]:
        out.append(by_start.get(cur) or _window(cur, metrics))
        cur = next_window(cur, size)
    return out
