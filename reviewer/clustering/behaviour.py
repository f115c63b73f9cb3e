"""What the agent did in a failed trial, read from its trajectory rather than from anyone's words.

``behaviour_of(trial)`` gives three things: ``tokens`` (a set of short features for a vector: the
write tools called, the tools used, which status a read showed just before a write, errors and
whether the agent got past them, how the episode ended, budget-like counts), ``facts`` (the same in
words, worded alike across trials so a cluster can be named by what most members did: "called
cancel_order on shipped orders") and ``key`` (the few features that say what the agent *did*, so two
failures whose only other evidence is a grader's free text can be grouped however it was worded).
Stdlib only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.clustering.outcomes import READ_ONLY_PREFIXES
from reviewer.models import Message, ToolCall, Trial

__all__ = ["Behaviour", "behaviour_of", "specificity"]

#: A tool that hands the conversation to a person.
_TRANSFER = re.compile(r"(?i)transfer.*(?:human|agent|operator|support)|escalat|hand_?off")
#: A message that asks the user something before acting.
_ASK = re.compile(
    r"(?i)\?|\bconfirm|\bproceed\b|\bshall i\b|\bwould you like\b|\bdo you want\b|\bgo ahead\b"
)
#: A closing pleasantry is not a question the agent needed answered.
_PLEASANTRY = re.compile(
    r"(?i)anything else|help (?:you )?with (?:anything|something) else|further assistance|"
    r"other questions?\b"
)
_REFUSAL = re.compile(
    r"(?i)\b(?:i(?:'m| am) (?:sorry|afraid)\b[^.?!]{0,80}\b(?:can(?:no|')t|unable|not able|not allowed)"
    r"|i (?:can(?:no|')t|am unable to|am not able to|won't) (?:help|do|assist|process|make|change|"
    r"cancel|modify|book|provide|complete)"
    r"|(?:not (?:able|allowed|permitted) to|unable to) (?:help|assist|process|do|complete|make))"
)
#: Kinds of tool errors, first match wins; the rest are "error".
_ERROR_KINDS = (
    (
        "timeout",
        re.compile(r"(?i)time[ds]?[ _-]?out|deadline exceeded|did not respond|no response"),
    ),
    ("rate limit", re.compile(r"(?i)rate[ _-]?limit|too many requests|\b429\b|quota")),
    (
        "permission error",
        re.compile(r"(?i)permission|forbidden|unauthori[sz]ed|denied|not allowed|\b40[13]\b"),
    ),
    (
        "not-found error",
        re.compile(r"(?i)not[ _-]?found|no such|does not exist|unknown \w+|\b404\b"),
    ),
    (
        "invalid-argument error",
        re.compile(
            r"(?i)invalid|malformed|missing (?:required )?(?:argument|parameter|field)|"
            r"validation|bad request|\b400\b|\b422\b|must be|should (?:be|match)|cannot be"
        ),
    ),
    (
        "server error",
        re.compile(r"(?i)\b5\d\d\b|server error|unavailable|internal error|connection"),
    ),
)
_STATUS_KEYS = ("status", "state", "order_status", "reservation_status")
_STATUS_TEXT = re.compile(
    r"(?i)\b(?:status|state)\b[\"']?\s*(?:[:=]|is|was)\s*[\"']?([a-z][a-z _-]{1,19}?)[\"'.,;}\n]"
)
_STATUS_WORD = re.compile(r"[a-z][a-z_-]*(?: [a-z][a-z_-]*)?")
_NOUN_PREFIX = re.compile(r"^(?:get|find|search|list|lookup|read|fetch|check|show|view)_")
_NOUN_SUFFIX = re.compile(r"_(?:details?|info|information|status|by_\w+|data|record)$")
#: Calls of one tool in a row, with nothing else between, from which the agent is looping.
LOOP_CALLS = 3
#: Tool calls in a trial counted as "many" (a budget-like fact).
MANY_CALLS = 25


@dataclass(frozen=True)
class Behaviour:
    """What a trial's agent did: ``tokens`` for a vector, ``facts`` for names (most specific
    first), ``key`` for grouping ("" when the trajectory shows nothing the agent did that
    could tell failures apart: no write, transfer, unrecovered error or abnormal end)."""

    tokens: tuple[str, ...] = ()
    facts: tuple[str, ...] = ()
    key: str = ""


def _is_write(name: str) -> bool:
    return bool(name) and not name.startswith(READ_ONLY_PREFIXES) and not _TRANSFER.search(name)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _status_in_json(obj: Any, depth: int = 0) -> str | None:
    """The first status-like string value, top level first (an order's own status before its
    fulfilments')."""
    if depth > 3:
        return None
    if isinstance(obj, dict):
        for key in _STATUS_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and value.strip():
                return value
        for value in obj.values():
            if isinstance(value, dict | list):
                found = _status_in_json(value, depth + 1)
                if found:
                    return found
    elif isinstance(obj, list):
        for value in obj[:20]:
            found = _status_in_json(value, depth + 1)
            if found:
                return found
    return None


def status_of(text: str) -> str | None:
    """The status a tool result shows (``"status": "delivered"``, ``Status: shipped``), lowercased
    to a word or two, or None."""
    if not text:
        return None
    raw: str | None = None
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            raw = _status_in_json(json.loads(stripped))
        except ValueError:
            raw = None
    if raw is None:
        m = _STATUS_TEXT.search(text[:4000] + "\n")
        raw = m.group(1) if m else None
    if raw is None:
        return None
    word = _STATUS_WORD.match(" ".join(raw.lower().replace("_", " ").split()))
    return word.group(0) if word else None


def _noun(tool: str | None) -> str:
    """What a read tool reads, plural: ``get_order_details`` -> ``orders``."""
    if not tool:
        return "records"
    base = _NOUN_SUFFIX.sub("", _NOUN_PREFIX.sub("", tool.lower()))
    base = base.rsplit("_", 1)[-1] if base else ""
    if not base or not base.isalpha():
        return "records"
    return base if base.endswith("s") else base + "s"


def _error_kind(text: str) -> str:
    """The first of ``_ERROR_KINDS`` whose pattern is in the text's first 600 characters. A digit's
    value shows only in a number of three digits (429, 403, 5xx), so a head with none is looked
    up by its shape (every digit a 1): one error with other ids is read once."""
    head = text[:600]
    if _THREE_DIGITS.search(head) is not None:
        return _first_kind(head)
    key = head.translate(_ONES)
    kind = _KINDS_SEEN.get(key)
    if kind is None:
        if len(_KINDS_SEEN) >= 2048:
            _KINDS_SEEN.clear()
        kind = _KINDS_SEEN[key] = _first_kind(head)
    return kind


def _first_kind(head: str) -> str:
    for kind, pattern in _ERROR_KINDS:
        if pattern.search(head):
            return kind
    return "error"


_THREE_DIGITS = re.compile(r"\b\d{3}\b")
_ONES = str.maketrans("0123456789", "1111111111")
_KINDS_SEEN: dict[str, str] = {}


def _final_shape(messages: Sequence[Message]) -> str | None:
    """How the agent's last turn reads: question, refusal, empty, tool call, or statement."""
    last = next((m for m in reversed(messages) if m.role == "assistant"), None)
    if last is None:
        return None
    text = last.content.strip()
    if last.tool_calls and not text:
        return "tool call"
    if not text:
        return "empty"
    if _REFUSAL.search(text):
        return "refusal"
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    asks = [s for s in sentences if s.rstrip().endswith("?") and not _PLEASANTRY.search(s)]
    if asks:
        return "question"
    return "statement"


_FINAL_FACT = {
    "question": "ended with a question to the user",
    "refusal": "ended by refusing the request",
    "empty": "ended with an empty reply",
    "tool call": "ended on a tool call",
}


def _ids(args: dict[str, Any]) -> list[str]:
    """The values of a call's id arguments (``order_id``, ``reservation_id``): the record it
    changes."""
    out: list[str] = []
    for key, value in args.items():
        if not (key == "id" or key.endswith(("_id", "_number"))):
            continue
        if isinstance(value, str | int) and not isinstance(value, bool) and len(str(value)) >= 3:
            out.append(str(value))
    return out


def _succeeded(
    messages: Sequence[Message], at: int, call: ToolCall, is_error_text: Callable[[str], bool]
) -> bool:
    """Whether the call made at message ``at`` got a result that is not an error (a write that
    failed changed nothing, so whether it was confirmed says little)."""
    for m in messages[at + 1 :]:
        if m.role != "tool":
            continue
        if (call.id and m.tool_call_id == call.id) or (not m.tool_call_id and m.name == call.name):
            return not (m.is_error or is_error_text(m.content))
    return True


def behaviour_of(
    trial: Trial,
    is_error_text: Callable[[str], bool],
    termination_cause: Callable[[str | None], str | None],
    *,
    tools_called: bool = True,
) -> Behaviour:
    """The behaviour tokens, facts and grouping key of a trial (see the module's docstring).
    ``is_error_text`` tells an error-like tool result and ``termination_cause`` names how an
    episode ended (``signature``'s, passed in: that module builds on this one). ``tools_called``:
    its run's trials call tools (a trial that calls none then only talked, which names it)."""

    messages = trial.messages
    tool_of: dict[str, str] = {}
    for m in messages:
        for call in m.tool_calls:
            if call.id:
                tool_of[call.id] = call.name
    tokens: set[str] = set()
    facts: list[str] = []
    key: list[str] = []

    # one pass in order: calls, the reads' statuses, errors, asks and answers
    calls: list[tuple[int, ToolCall]] = []
    reads: list[tuple[int, str, str, str]] = []  # (index, tool, status, content)
    errors: list[tuple[int, str, str]] = []  # (index, tool, kind)
    results: list[tuple[int, str, bool]] = []  # (index, tool, ok)
    for i, m in enumerate(messages):
        if m.role == "assistant":
            calls.extend((i, c) for c in m.tool_calls)
        elif m.role == "tool":
            tool = m.name or tool_of.get(m.tool_call_id or "") or ""
            failed = m.is_error or is_error_text(m.content)
            results.append((i, tool, not failed))
            if failed:
                errors.append((i, tool, _error_kind(m.content)))
            else:
                status = status_of(m.content)
                if status is not None and not _is_write(tool):
                    reads.append((i, tool, status, m.content))

    names = [c.name for _, c in calls]
    for name in dict.fromkeys(names):
        tokens.add(f"tool:{name}")
    distinct = [n for j, n in enumerate(names) if j == 0 or names[j - 1] != n]
    tokens.update(f"next:{a}>{b}" for a, b in zip(distinct, distinct[1:], strict=False))
    writes = [(i, c) for i, c in calls if _is_write(c.name)]
    written = list(dict.fromkeys(c.name for _, c in writes))
    for name in written:
        tokens.add(f"write:{name}")
        key.append(f"write:{name}")
    if calls and not writes:
        tokens.add("write:none")

    # the status a read showed just before each write: of the write's own record (a read that
    # shows one of its ids) when any result showed that record, else of the last read with one
    said_status: dict[tuple[str, str, str], None] = {}
    last_write = -1
    for i, call in writes:
        before = [r for r in reads if r[0] < i]
        ids = _ids(_arguments(call.arguments))
        own = [r for r in before if any(v in r[3] for v in ids)]
        shown = any(m.role == "tool" and any(v in m.content for v in ids) for m in messages[:i])
        seen = own[-1:] if own or shown else before[-1:]
        for _, tool, status, _content in seen:
            said_status[(call.name, status, _noun(tool))] = None
            tokens.add(f"status:{call.name}@{status}")
            key.append(f"status:{call.name}@{status}")
        # asked before writing: an assistant turn that asks, answered by the user, since the last write
        asked = any(
            m.role == "assistant"
            and _ASK.search(m.content or "")
            and any(u.role == "user" for u in messages[a + 1 : i])
            for a, m in enumerate(messages[last_write + 1 : i], start=last_write + 1)
        )
        if not asked and _succeeded(messages, i, call, is_error_text):
            tokens.add(f"unconfirmed:{call.name}")
            key.append(f"unconfirmed:{call.name}")
        last_write = i
    for name, status, noun in said_status:
        facts.append(f"called {name} on {status} {noun}")
    for name in dict.fromkeys(t.split(":", 1)[1] for t in tokens if t.startswith("unconfirmed:")):
        facts.append(f"called {name} without asking the user to confirm")

    # errors: which kinds, which the agent got past, and whether it gave up after one
    for i, tool, kind in errors:
        got_past = any(j > i and t == tool and ok for j, t, ok in results)
        tokens.add(f"error:{kind}")
        tokens.add(f"error:{tool}:{kind}" + ("" if not got_past else ":recovered"))
    unrecovered = [
        (i, tool, kind)
        for i, tool, kind in errors
        if not any(j > i and t == tool and ok for j, t, ok in results)
    ]
    if unrecovered:
        i, tool, kind = unrecovered[-1]
        later_ok = any(j > i and ok for j, _, ok in results)
        if not later_ok:
            tokens.update(("gave_up", f"gave_up:{kind}"))
            key.append("gave_up")
            article = "an" if kind[0] in "aeiou" else "a"
            facts.append(f"gave up after {article} {kind} from {tool or 'a tool'}")

    # transfers, loops, budget
    transfer = next((j for j, (_, c) in enumerate(calls) if _TRANSFER.search(c.name)), None)
    if transfer is not None:
        before_writes = [c for _, c in calls[:transfer] if _is_write(c.name)]
        tokens.add("transfer")
        key.append("transfer")
        if before_writes:
            facts.append(f"ended in a transfer to human after calling {before_writes[-1].name}")
        else:
            tokens.add("transfer:before_any_write")
            key.append("transfer:before_any_write")
            facts.append("ended in a transfer to human before trying any change")
    run_tool, run_len, best = "", 0, ("", 0)
    for name in names:
        run_len = run_len + 1 if name == run_tool else 1
        run_tool = name
        if run_len > best[1]:
            best = (name, run_len)
    cause = termination_cause(trial.termination)
    if best[1] >= LOOP_CALLS:
        tokens.add(f"loop:{best[0]}")
        facts.append(
            f"{'reached max steps after calling' if cause == 'max steps' else 'called'} "
            f"{best[0]} {LOOP_CALLS}+ times in a row"
        )
    if len(calls) >= MANY_CALLS:
        tokens.add("budget:many_calls")
        facts.append(f"made {MANY_CALLS} or more tool calls")
    shape = _final_shape(messages)
    if not calls:
        tokens.add("tool:none")
        if shape is not None and tools_called:  # a run that never calls one has no tool to call
            # an agent that only talked did nothing but its last turn: that is its behaviour
            key.append(f"talked only:{shape}")
            facts.append("answered without calling any tool")

    # how the episode ended
    if cause:
        tokens.add(f"end:{cause}")
        key.append(f"end:{cause}")
    if shape:
        tokens.add(f"final:{shape}")
        if shape in _FINAL_FACT:
            facts.append(_FINAL_FACT[shape])
    if written and not said_status:
        facts.append("called " + " and ".join(written[:3]))
    elif calls and not writes and transfer is None:
        facts.append("changed nothing (only looked things up)")
    return Behaviour(
        tokens=tuple(sorted(tokens)),
        facts=tuple(dict.fromkeys(facts)),
        key="; ".join(sorted(dict.fromkeys(key))),
    )


_SPECIFIC = (
    (re.compile(r"^called \S+ on .+ \S+$"), 3.0),
    (re.compile(r" without asking the user to confirm$"), 2.8),
    (re.compile(r"^ended in a transfer to human | \d+\+? times in a row$"), 2.5),
    (re.compile(r"^gave up after "), 1.9),
    (re.compile(r"^ended |^made \d+ or more tool calls$|^answered without calling"), 1.1),
)


def specificity(fact: str) -> float:
    """How much a behaviour fact says, on the scale of ``naming``'s facts (1: how an episode ended,
    3: an expected action missed, 4: an argument that differed): a write on a record in a given
    state says more than a write unconfirmed or a give-up, which say more than a transfer or a
    loop, then how the last turn read; the writes alone (what succeeded tasks do too) least."""
    for pattern, value in _SPECIFIC:
        if pattern.search(fact):
            return value
    return 1.0
