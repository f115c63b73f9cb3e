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
from functools import lru_cache
from typing import Any

import msgspec

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


@lru_cache(maxsize=4096)
def is_write_tool(name: str | None) -> bool:
    """Whether a tool's name says it changes state (``book_reservation``, ``cancelOrder``)."""
    if not name:
        return False
    words = _WORD_SPLIT.split(_CAMEL.sub(r"\1_\2", name).lower())
    return any(w in WRITE_WORDS for w in words)


def is_identifier(token: str) -> bool:
    if not 4 <= len(token) <= 100:
        return False
    known = _KNOWN.get(token)
    if known is None:
        known = _is_identifier(token)
        if len(_KNOWN) > 500_000:
            _KNOWN.clear()
        _KNOWN[token] = known
    return known


_KNOWN: dict[str, bool] = {}
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")
_NOT_DIGIT = re.compile(r"\D+")


def _is_identifier(token: str) -> bool:
    if _DATE.match(token):
        return False
    if _DIGIT.search(token):
        return _LETTER.search(token) is not None or len(_NOT_DIGIT.sub("", token)) >= 6
    core = token.replace("_", "").replace("-", "")
    return len(core) >= 5 and core.isalpha() and core.isupper()


#: Tokens already sorted into identifiers and not (kept apart so a text's tokens are sorted with set
#: operations, not a call per token); both cleared together past ``_CAP`` entries.
_IDS: set[str] = set()
_NOT_IDS: set[str] = set()
_CAP = 500_000


@lru_cache(maxsize=512)
def _identifiers(text: str) -> frozenset[str]:
    if not _maybe_id(text):
        return _NONE
    tokens = set(_TOKEN.findall(text))
    new = tokens - _IDS
    new -= _NOT_IDS
    if new:
        if len(_IDS) + len(_NOT_IDS) > _CAP:
            _IDS.clear()
            _NOT_IDS.clear()
            new = tokens
        found = identifiers_among(new)
        _IDS.update(found)
        _NOT_IDS.update(new - found)
    return frozenset(tokens & _IDS)


#: A line that is one identifier (``is_identifier``'s rules, for a token of ``_TOKEN``): 4 to 100
#: characters, not a date or a time, and a digit with a letter, six digits, or five capitals
#: alone (with ``_`` and ``-``).
_IDENTIFIER_LINE = re.compile(
    r"^(?=[^\n]{4,100}$)"
    r"(?!\d{4}-\d{2}-\d{2}(?:[T ][^\n]*)?$|\d{1,2}:\d{2}(?::\d{2})?$)"
    r"(?:(?=[^\n\d]*\d)(?:(?=[^\n]*[A-Za-z])|(?:[^\n\d]*\d){6})"
    r"|(?=(?:[^\nA-Z]*[A-Z]){5})[A-Z_\-]+$)"
    r"[^\n]*",
    re.MULTILINE,
)


def identifiers_among(tokens: set[str]) -> set[str]:
    """The identifiers among TOKENS (words of ``_TOKEN``), sorted out by one expression over
    them all (a call per token was a third of reading a text full of new identifiers)."""
    return set(_IDENTIFIER_LINE.findall("\n".join(tokens)))


def identifiers(text: str | None) -> frozenset[str]:
    """The identifier tokens of ``text`` (see the module docstring); a text seen lately (a system
    prompt, the same profile read by every trial of a task) is read once."""
    if not text:
        return _NONE
    return _identifiers(text)


_NONE: frozenset[str] = frozenset()
#: What every text holding an identifier has: a digit, or a run of five capitals (with ``_``, ``-``).
_MAYBE_ID = re.compile(r"\d|[A-Z_\-]{5}")
#: ASCII text's bytes mapped so that ``_MAYBE_ID``'s two cases are two substring searches (several
#: times faster than the expression on prose, which it must read to the end): a digit as "0", a
#: capital, "_" or "-" as "A", any other byte as a space.
_MAYBE_MAP = bytes(
    48 if 48 <= c <= 57 else 65 if 65 <= c <= 90 or c in (45, 95) else 32 for c in range(256)
)


def _maybe_id(text: str) -> bool:
    """Whether ``text`` may hold an identifier (``_MAYBE_ID`` finds something in it)."""
    if not text.isascii():  # \d is any Unicode digit
        return _MAYBE_ID.search(text) is not None
    mapped = text.encode().translate(_MAYBE_MAP)
    return b"0" in mapped or b"AAAAA" in mapped


_ARGS_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _args_text(arguments: Any) -> str:
    """A tool call's arguments as text: compact JSON with sorted keys (msgspec's, five times the
    standard library's speed), the standard library's for what msgspec does not write (keys that
    are not text, a lone surrogate), else ``str``."""
    if isinstance(arguments, str):
        return arguments
    try:
        return _ARGS_ENCODER.encode(arguments).decode()
    except (TypeError, ValueError, OverflowError, RecursionError):
        pass
    try:
        return _ARGS_JSON.encode(arguments)
    except (TypeError, ValueError, RecursionError):
        return str(arguments)


_ARGS_ENCODER = msgspec.json.Encoder(order="sorted")


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _hash(parts: list[str]) -> str:
    """The fingerprint of ``parts`` in order (hashed whole: the same bytes as one by one)."""
    return hashlib.blake2b(_bytes("".join(parts)), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Creation:
    """Where a trial first saw an identifier: in the result of its write-like call ``tool``."""

    message: int
    tool: str


@dataclass(frozen=True, slots=True)
class Read:
    """A successful read made before the trial's first write: the query (tool and arguments as
    text), where it is and the identifiers its result held."""

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
    replay_key: str | None  # fingerprint of tool results, latency and tokens (None: one unknown)
    created: dict[str, Creation] = field(default_factory=dict)
    reads: list[Read] = field(default_factory=list)
    given: frozenset[str] = frozenset()  # identifiers in the instruction and system prompt

    @property
    def passed(self) -> bool:
        return self.outcome == PASS


def _last_write(messages: list[Any]) -> tuple[int, int]:
    """The index of the trial's last result of a write-like call (-1: none): what the trial saw
    after it makes no creation, so its identifiers need not be gathered; and its tool calls."""
    names: dict[str, str] = {}
    last = -1
    n_calls = 0
    for i, m in enumerate(messages):
        if m.tool_calls:
            n_calls += len(m.tool_calls)
        if m.role == "assistant":
            for c in m.tool_calls:
                if c.id:
                    names[c.id] = c.name
        elif m.role == "tool" and is_write_tool(m.name or names.get(m.tool_call_id or "", "")):
            last = i
    return last, n_calls


#: The characters an identifier token is made of (``_TOKEN``), and those it may not start or end with.
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-#.:/")
_TOKEN_INNER = frozenset("_-#.:/")


def _has_token(text: str, token: str) -> bool:
    """Whether ``token`` (a token ``_TOKEN`` finds, so one starting and ending with a letter or
    digit) is one of the tokens of ``text``: an occurrence whose run of token characters around it
    holds no other letter or digit (``_TOKEN`` takes a run whole, less its ends that are not)."""
    start = text.find(token)
    end_of_text = len(text)
    while start >= 0:
        k = start - 1
        while k >= 0 and text[k] in _TOKEN_INNER:
            k -= 1
        if k < 0 or text[k] not in _TOKEN_CHARS:
            e = start + len(token)
            while e < end_of_text and text[e] in _TOKEN_INNER:
                e += 1
            if e == end_of_text or text[e] not in _TOKEN_CHARS:
                return True
        start = text.find(token, start + 1)
    return False


class _Seen:
    """The identifiers a trial showed before a point: those of the texts read for their own sake
    (the prompt, reads, writes' results) as a set, and the other texts kept whole, looked up only
    for an identifier a write returns (most texts are never looked up at all)."""

    __slots__ = ("exact", "texts", "_joined", "_n")

    def __init__(self, exact: set[str]) -> None:
        self.exact = exact
        self.texts: list[str] = []
        self._joined = ""
        self._n = 0

    def add(self, text: str) -> None:
        if text:
            self.texts.append(text)

    def __contains__(self, value: str) -> bool:
        if value in self.exact:
            return True
        if self._n != len(self.texts):  # texts are kept apart by a character no token holds
            self._joined = "\x00".join(self.texts)
            self._n = len(self.texts)
        return value in self._joined and _has_token(self._joined, value)


def digest_trial(trial_id: str, trial: Trial) -> TrialDigest:
    """Read ``trial`` once for the audit. What it saw matters only before its last write (an
    identifier a write returns is its creation when nothing before showed it), so past the last
    write only reads (before any write) and the system prompt are read for identifiers; before
    it, a text read only to know what was seen is kept whole and looked up by substring when a
    write returns an identifier."""
    given = identifiers(trial.instruction)
    seen = _Seen(set(given))
    exact = seen.exact
    keep = seen.add
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool, arguments as text)
    created: dict[str, Creation] = {}
    reads: list[Read] = []
    wrote = False
    said: list[str] = []  # every assistant turn, in order, to fingerprint
    returned: list[str] = []  # every tool result, in order, to fingerprint
    turns = results = chars = 0
    last_assistant = None
    messages = trial.messages
    last_write, n_calls = _last_write(messages)
    # the hot loop of every import's fingerprints: locals and plain appends on purpose
    add_said = said.append
    add_returned = returned.append
    for i, m in enumerate(messages):
        see = i < last_write
        role = m.role
        content = m.content
        if role == "system":
            found = identifiers(content)
            given |= found
            exact |= found
            continue
        if role == "assistant":
            last_assistant = m
            turns += 1
            chars += len(content)
            add_said(content)
            add_said("\x00")
            for c in m.tool_calls:
                text = _args_text(c.arguments)
                chars += len(c.name) + len(text)
                add_said(f"{c.name}\x01{text}\x02")
                if see:
                    keep(text)
                if c.id:
                    calls[c.id] = (c.name, text)
            add_said("\x03")
            if see:
                keep(content)
            continue
        if role != "tool":
            if see:
                keep(content)
            continue
        results += 1
        add_returned(content)
        add_returned("\x00")
        call_id = m.tool_call_id
        name, arguments = calls.get(call_id or "", (m.name or "", ""))
        name = m.name or name
        if is_write_tool(name):
            ok = not m.is_error and not looks_like_error(content)
            if ok:  # the call's own arguments are already seen
                values = identifiers(content)
                for v in sorted(v for v in values if v not in seen):
                    created.setdefault(v, Creation(i, name))
                wrote = True
                if see:
                    exact |= values
            elif see:
                keep(content)
        elif not wrote and call_id in calls:
            if not m.is_error and not looks_like_error(content):
                values = identifiers(content)
                reads.append(Read(f"{name}\x00{arguments}", name, i, values))
                if see:
                    exact |= values
            elif see:
                keep(content)
        elif see:
            keep(content)
    substantial = n_calls > 0 or turns > 1 or chars >= MIN_COPY_CHARS
    copy_key = _hash(said) if turns and substantial else None
    replay_key = None
    usage = trial.usage
    # a millisecond latency alone collides by chance in big runs; with both token counts it cannot
    timed = None not in (trial.latency_s, usage.input_tokens, usage.output_tokens)
    if results and timed:
        returned.append(f"{trial.latency_s!r}/{usage.input_tokens}/{usage.output_tokens}")
        replay_key = _hash(returned)
    final_empty = last_assistant is not None and not (
        last_assistant.content.strip() or last_assistant.tool_calls
    )
    return TrialDigest(
        id=trial_id,
        task_id=trial.task_id,
        trial=trial.trial if trial.trial is not None else 0,
        outcome=trial.outcome,
        assistant_turns=turns,
        tool_calls=n_calls,
        final_empty=final_empty,
        copy_key=copy_key,
        replay_key=replay_key,
        created=created,
        reads=reads,
        given=frozenset(given),
    )


#: The version of :func:`fingerprint`'s form and of what :func:`digest_trial` reads; a stored
#: fingerprint of another version is computed again from the trial's record. 2: tool-call
#: arguments as compact JSON (``_args_text``), identifiers a write creates in sorted order.
FINGERPRINT_VERSION = 2


def fingerprint(d: TrialDigest) -> str:
    """``d`` without its identity (the store's columns hold that), as compact JSON to store."""
    return _FINGERPRINT_JSON.encode(
        [
            d.outcome,
            d.assistant_turns,
            d.tool_calls,
            d.final_empty,
            d.copy_key,
            d.replay_key,
            [[v, c.message, c.tool] for v, c in d.created.items()],
            [[r.query, r.tool, r.message, list(r.values)] for r in d.reads],
            list(d.given),
        ],
    )


#: As ``json.dumps(..., separators=(",", ":"))``, made once (not a call apiece).
_FINGERPRINT_JSON = json.JSONEncoder(separators=(",", ":"))


# a stored fingerprint up to its ``created`` list: outcome, counts, flag and the two copy keys
_BEFORE_CREATED = re.compile(
    r'\[(?:"[a-z]*"|null),\d+,\d+,(?:true|false),(?:"[0-9a-f]*"|null),(?:"[0-9a-f]*"|null),'
)
_DECODER = json.JSONDecoder()


def created_of(text: str | bytes) -> dict[str, tuple[int, str]]:
    """What a stored fingerprint says its trial created (value -> (message, tool)), parsing only
    that part: the audit's first pass reads every trial for this alone."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    m = _BEFORE_CREATED.match(text)
    if m is None:  # not the compact form fingerprint() writes
        created = json.loads(text)[6]
    else:
        created, _ = _DECODER.raw_decode(text, m.end())
    return {v: (message, tool) for v, message, tool in created}


def from_fingerprint(trial_id: str, task_id: str, trial: int, text: str | bytes) -> TrialDigest:
    """The digest :func:`fingerprint` stored, its identity from the store's columns."""
    outcome, turns, calls, final_empty, copy_key, replay_key, created, reads, given = json.loads(
        text
    )
    return TrialDigest(
        id=trial_id,
        task_id=task_id,
        trial=trial,
        outcome=outcome,
        assistant_turns=turns,
        tool_calls=calls,
        final_empty=final_empty,
        copy_key=copy_key,
        replay_key=replay_key,
        created={v: Creation(m, tool) for v, m, tool in created},
        reads=[Read(q, tool, m, frozenset(values)) for q, tool, m, values in reads],
        given=frozenset(given),
    )
