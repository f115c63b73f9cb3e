"""What the independence audit needs from one trial, read once: identifiers its write-like tool calls
created, what its reads returned before it wrote anything, fingerprints for spotting copies, and the
shape of its final answer.

An *identifier* is a token of an id, number or code: letters with digits (``W5521``,
``certificate_7504069``), six digits or more, or a code of five capitals or more (``HATHAT``);
dates and times are not identifiers. A tool is *write-like* when a word of its name says it changes
something (create, book, cancel, update, ...).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from reviewer.models import PASS, Trial
from reviewer.record import looks_like_error

WRITE_WORDS = frozenset(
    "create add insert new make generate register issue book reserve place submit post put send "
    "pay charge refund return exchange transfer cancel delete remove update modify edit change "
    "upgrade set reset assign apply write".split()
)
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-#.:/]*[A-Za-z0-9]")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ].*)?$|\d{1,2}:\d{2}(?::\d{2})?$")
_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_WORD_SPLIT = re.compile(r"[^A-Za-z0-9]+")
#: Assistant output shorter than this (with no tool call and one turn) is too little to call two
#: identical repeats a copy: a multiple-choice letter is the same every time from a sound agent.
MIN_COPY_CHARS = 200


def is_write_tool(name: str | None) -> bool:
    """Whether a tool's name says it changes state (``book_reservation``, ``cancelOrder``)."""
    if not name:
        return False
    words = _WORD_SPLIT.split(_CAMEL.sub(r"\1_\2", name).lower())
    return any(w in WRITE_WORDS for w in words)


def is_identifier(token: str) -> bool:
    if not 4 <= len(token) <= 100 or _DATE.match(token):
        return False
    digits = sum(ch.isdigit() for ch in token)
    letters = sum(ch.isalpha() for ch in token)
    if digits and letters:
        return True
    if digits:
        return digits >= 6
    core = token.replace("_", "").replace("-", "")
    return len(core) >= 5 and core.isalpha() and core.isupper()


def identifiers(text: str | None) -> set[str]:
    """The identifier tokens of ``text`` (see the module docstring)."""
    if not text:
        return set()
    return {t for t in _TOKEN.findall(text) if is_identifier(t)}


def _args_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def _digest(parts: Any) -> str:
    body = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Creation:
    """Where a trial first saw an identifier: in the result of its write-like call ``tool``."""

    message: int
    tool: str


@dataclass(frozen=True, slots=True)
class Read:
    """A successful read made before the trial's first write: the query (tool and arguments, as
    a fingerprint), where it is and the identifiers its result held."""

    query: str
    tool: str
    message: int
    values: frozenset[str]


@dataclass(slots=True)
class TrialDigest:
    """One trial as the audit sees it (kept small: the transcript itself is not kept)."""

    id: str
    task_id: str
    trial: int
    outcome: str
    assistant_turns: int
    tool_calls: int
    final_empty: bool  # the last assistant turn has no text and no tool call
    copy_key: str | None  # fingerprint of every assistant turn (None: too little to tell)
    replay_key: str | None  # fingerprint of tool results, latency and tokens (None: no timings)
    created: dict[str, Creation] = field(default_factory=dict)
    reads: list[Read] = field(default_factory=list)
    given: frozenset[str] = frozenset()  # identifiers in the instruction and system prompt

    @property
    def passed(self) -> bool:
        return self.outcome == PASS


def digest_trial(trial_id: str, trial: Trial) -> TrialDigest:
    """Read ``trial`` once for the audit."""
    given = identifiers(trial.instruction)
    seen = set(given)
    calls: dict[str, tuple[str, Any]] = {}
    created: dict[str, Creation] = {}
    reads: list[Read] = []
    wrote = False
    assistant: list[Any] = []
    tool_results: list[str] = []
    chars = 0
    last_assistant = None
    for i, m in enumerate(trial.messages):
        if m.role == "system":
            found = identifiers(m.content)
            given |= found
            seen |= found
            continue
        if m.role == "assistant":
            last_assistant = m
            assistant.append([m.content, [[c.name, c.arguments] for c in m.tool_calls]])
            chars += len(m.content)
            for c in m.tool_calls:
                text = _args_text(c.arguments)
                chars += len(c.name) + len(text)
                seen |= identifiers(text)
                if c.id:
                    calls[c.id] = (c.name, c.arguments)
            seen |= identifiers(m.content)
            continue
        if m.role != "tool":
            seen |= identifiers(m.content)
            continue
        tool_results.append(m.content)
        name, arguments = calls.get(m.tool_call_id or "", (m.name or "", None))
        name = m.name or name
        values = identifiers(m.content)
        ok = not m.is_error and not looks_like_error(m.content)
        if is_write_tool(name):
            if ok:
                for v in values - seen - identifiers(_args_text(arguments)):
                    created.setdefault(v, Creation(i, name))
                wrote = True
        elif ok and not wrote and m.tool_call_id in calls:
            reads.append(Read(_digest([name, arguments]), name, i, frozenset(values)))
        seen |= values
    substantial = trial.tool_call_count > 0 or len(assistant) > 1 or chars >= MIN_COPY_CHARS
    copy_key = _digest(assistant) if assistant and substantial else None
    replay_key = None
    if tool_results and trial.latency_s is not None:
        usage = trial.usage
        replay_key = _digest(
            [tool_results, trial.latency_s, usage.input_tokens, usage.output_tokens]
        )
    final_empty = last_assistant is not None and not (
        last_assistant.content.strip() or last_assistant.tool_calls
    )
    return TrialDigest(
        id=trial_id,
        task_id=trial.task_id,
        trial=trial.trial if trial.trial is not None else 0,
        outcome=trial.outcome,
        assistant_turns=len(assistant),
        tool_calls=trial.tool_call_count,
        final_empty=final_empty,
        copy_key=copy_key,
        replay_key=replay_key,
        created=created,
        reads=reads,
        given=frozenset(given),
    )
