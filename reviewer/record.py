"""The trial record codec: a Trial as the native JSON record and back, shared by ingest and store.

A stored record holds everything about a trial except its identity: run, task and trial number live in
the store's columns only, and :func:`decode` takes them from there. Records written by older versions
still carry them; they are ignored.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from json.decoder import scanstring  # type: ignore[attr-defined]
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any

import msgspec

from reviewer.models import Message, ToolCall, Trial, TrialError, Usage, Verdict

ROLES = frozenset({"system", "user", "assistant", "tool"})
#: The members of a native record that name the trial; the store keeps them in columns instead.
IDENTITY = ("run", "task_id", "trial")
_ERROR_PREFIXES = ("error", "exception", "traceback", "failed", "failure")


class RecordError(ValueError):
    """A record that does not follow the native format; the message says which field."""


# --- reading untrusted JSON ----------------------------------------------------------------------------

#: Deepest nesting of arrays and objects a record may have: far above any transcript, far below the
#: depth where Python's own JSON code (and every later reader of the stored record) gives up.
MAX_DEPTH = 200
_INT64 = 1 << 63
# A surrogate escape in the text: the only way a JSON string can hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE = "has a lone surrogate \\u{:04x}, which is not Unicode text"
_FINITE = "is not a number reviewer stores (finite numbers only)"
_RANGE = "integer out of range (reviewer stores 64-bit integers)"


class _Constant(ValueError):
    """A number the store cannot keep: NaN or ±Infinity (Python's json reads them, JSON does not
    have them), an integer beyond 64 bits, a float that overflows (``1e400``)."""


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


#: Characters of the longest integer text that can be 64-bit (``-9223372036854775808``); a longer
#: one is out of range without converting it (Python refuses to convert more than 4,300 digits).
_INT64_CHARS = 20


def _checked_int(text: str) -> int:
    if len(text) > _INT64_CHARS:
        raise _Constant(text)
    value = int(text)
    if not -_INT64 <= value < _INT64:
        raise _Constant(text)
    return value


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Constant(text)
    return value


def _capped_int(text: str) -> int:
    """An integer for the second, naming pass: one too long to convert stands as the first
    integer out of range (its sign kept), which :func:`json_problem` then names."""
    if len(text) > _INT64_CHARS:
        return -_INT64 - 1 if text.startswith("-") else _INT64
    return int(text)


# Numbers are checked as they are parsed (a call per number is far cheaper than scanning the text).
_STRICT = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_checked_int, parse_float=_checked_float
)
# Parses what the strict decoder refused, to find and name the field (never converts a huge integer).
_NAMING = json.JSONDecoder(parse_int=_capped_int)


#: A text's bytes mapped for the two checks :func:`fast_loads` makes before parsing, in one pass
#: (bytes.translate, then a substring search and a count, all in C; a regular expression takes
#: three times a parse): a digit stays a digit ("0"), "[" and "{" become "[", the rest a space.
_NUMBERS_AND_NESTING = bytes(
    48 if 48 <= c <= 57 else 91 if c in (91, 123) else 32 for c in range(256)
)
#: An integer of this many digits may be beyond 64 bits: such a text takes the standard library's
#: path, which names it (msgspec would read it whole).
_LONG_DIGITS = b"0" * 19
#: msgspec's JSON decoder, untyped: as fast as orjson on a record, and it builds the Python objects
#: as it reads (orjson builds its own tree first: 7x a big document's size at its peak).
_DECODER_C = msgspec.json.Decoder()
#: The longest text (characters or bytes) :func:`fast_loads` reads.
FAST_MAX = 1 << 20


def fast_loads(text: str | bytes) -> Any:
    """TEXT parsed in C (msgspec; twice Python's own parser on a record) when the value is what
    the checked decoder would give and fit to store; ``_SLOW`` when it is not or may not be
    (invalid JSON, NaN, a lone surrogate, an integer of 19 digits or more, nesting past MAX_DEPTH):
    the caller then takes the standard library's path, which decides and names the problem. A
    text over ``FAST_MAX`` takes that path too: on a whole document the C parser is no faster (the
    time goes to making the objects) and its checks would copy the text twice."""
    if len(text) > FAST_MAX:
        return _SLOW
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    mapped = data.translate(_NUMBERS_AND_NESTING)
    if _LONG_DIGITS in mapped:
        return _SLOW
    try:
        value = _DECODER_C.decode(data)
    except (msgspec.DecodeError, RecursionError):
        return _SLOW
    if mapped.count(b"[") > MAX_DEPTH and _too_deep(value):
        return _SLOW
    return value


class _Slow:
    """What :func:`fast_loads` returns for a text the standard library's path must read."""


_SLOW: Any = _Slow()


def _too_deep(value: Any) -> bool:
    """Whether VALUE nests arrays and objects deeper than MAX_DEPTH: its containers taken a level
    at a time, each level in one comprehension (half the time of a walk with a stack of them)."""
    level = [value]
    for _ in range(MAX_DEPTH):
        level = [
            x
            for v in level
            for x in (v.values() if type(v) is dict else v)
            if type(x) is dict or type(x) is list
        ]
        if not level:
            return False
    return True


def depth_problem(value: Any) -> str | None:
    """:func:`json_problem` of a part of a document :func:`loads_unchecked` found clean: only its
    nesting can be unfit."""
    if (type(value) is dict or type(value) is list) and _too_deep(value):
        return _TOO_DEEP
    return None


def loads(text: str, raw: bytes | None = None) -> Any:
    """``json.loads`` for input from outside: RecordError (one line, naming the field) for what the
    store cannot keep: NaN or ±Infinity, an integer beyond 64 bits, a lone surrogate ``\\ud800``,
    nesting deeper than MAX_DEPTH. Invalid JSON raises ``json.JSONDecodeError`` as usual. RAW, when
    given, is TEXT's UTF-8 (a line as read: the C parser reads it without encoding TEXT again)."""
    value = fast_loads(text if raw is None else raw)
    if value is not _SLOW:
        return value
    start = _ws(text, 0)
    value, end, problem = decode_at(text, start)
    if problem:
        raise RecordError(problem)
    if _ws(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def loads_unchecked(text: str, clean: list[bool] | None = None) -> Any:
    """``json.loads`` for a document whose parts are checked one by one afterwards with
    :func:`json_problem` (a tau2-bench or Inspect ``.json`` file: one bad value skips only its
    sample): NaN and ±Infinity kept, and an integer too long to convert (Python refuses more than
    4,300 digits) read as one out of range, which ``json_problem`` then names.

    ``clean``, when given, gets one bool: True when nothing in the document can be unfit to store
    but its nesting (no NaN or ±Infinity, written so or by a number too big for a float such as
    ``1e400``, no integer beyond 64 bits: seen as they are parsed; no
    lone surrogate: no escape of one in the text), so that its parts need only
    :func:`depth_problem` (a tenth of the walk of each that :func:`json_problem` makes)."""
    value = fast_loads(text)
    if value is not _SLOW:
        if clean is not None:
            clean.append(True)  # the C parser's checks passed: every value fit, nesting too
        return value
    if clean is None:
        return _NAMING.decode(text)
    unfit: list[str] = []

    def constant(name: str) -> float:
        unfit.append(name)
        return float(name)

    def integer(digits: str) -> int:
        number = _capped_int(digits)
        if not -_INT64 <= number < _INT64:
            unfit.append(digits[:20])
        return number

    def real(digits: str) -> float:
        number = float(digits)
        if number - number != 0.0:  # 1e400 reads as Infinity without a constant
            unfit.append(digits[:20])
        return number

    decoder = json.JSONDecoder(parse_int=integer, parse_float=real, parse_constant=constant)
    value = decoder.decode(text)
    clean.append(not unfit and _SURROGATE_ESCAPE.search(text) is None)
    return value


def decode_at(text: str, pos: int) -> tuple[Any, int, str | None]:
    """The JSON value starting at ``text[pos]``, where it ends, and what makes it unfit to store
    (the value is None then). ``json.JSONDecodeError`` when no complete value starts there."""
    try:
        value, end = _STRICT.raw_decode(text, pos)
    except _Constant:
        try:
            value, end = _NAMING.raw_decode(text, pos)
        except RecursionError:
            return None, _end_or_raise(text, pos), _TOO_DEEP
        return None, end, json_problem(value) or "a number reviewer cannot store"
    except RecursionError:
        return None, _end_or_raise(text, pos), _TOO_DEEP
    problem = json_problem(value, text, pos, end)
    return (None if problem else value), end, problem


_TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels"
_SPECIAL = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def value_end(text: str, pos: int) -> int | None:
    """Where the array, object or string starting at ``text[pos]`` ends, found without parsing (so
    without recursion, at any depth); None when ``text`` ends first."""
    depth, i = 0, pos
    while m := _SPECIAL.search(text, i):
        if m.group() == '"':
            rest = _STRING_REST.match(text, m.end())
            if rest is None:
                return None
            i = rest.end()
        else:
            depth += 1 if m.group() in "[{" else -1
            i = m.end()
        if depth <= 0:
            return i
    return None


def _end_or_raise(text: str, pos: int) -> int:
    end = value_end(text, pos)
    if end is None:
        raise json.JSONDecodeError("Unterminated value", text, pos)
    return end


def json_problem(
    value: Any, text: str | None = None, start: int = 0, end: int | None = None
) -> str | None:
    """What makes a parsed JSON value unfit to store, as ``field: reason``, or None. With the
    ``text`` it was parsed from, a value whose text shows nothing suspect is passed without a walk."""
    if text is not None:
        # numbers were checked by the strict decoder; strings and depth show in the text
        end = len(text) if end is None else end
        if (
            _SURROGATE_ESCAPE.search(text, start, end) is None
            and text.count("[", start, end) + text.count("{", start, end) <= MAX_DEPTH
        ):
            return None
    if (type(value) is dict or type(value) is list) and not _suspect(value):
        return None
    return _named_problem(value)


def _named_problem(value: Any) -> str | None:
    """:func:`json_problem`'s walk that names the field of the first problem in VALUE."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        v, path, depth = stack.pop()
        t = type(v)
        if t is dict or t is list:
            if depth >= MAX_DEPTH:
                return f"JSON nested deeper than {MAX_DEPTH} levels"
            if t is dict:
                for k, x in v.items():
                    where = f"{path}.{k}" if path else str(k)
                    if found := _SURROGATE.search(k):
                        return f"{_visible(where)}: key {_LONE.format(ord(found.group()))}"
                    stack.append((x, where, depth + 1))
            else:
                stack.extend((x, f"{path}[{i}]", depth + 1) for i, x in enumerate(v))
        elif t is str:
            if found := _SURROGATE.search(v):
                return f"{_visible(path or 'the record')}: {_LONE.format(ord(found.group()))}"
        elif t is float:
            if not math.isfinite(v):
                return f"{_visible(path or 'the record')}: {_float_name(v)} {_FINITE}"
        elif t is int and not -_INT64 <= v < _INT64:
            return f"{_visible(path or 'the record')}: {_RANGE}"
    return None


def _suspect(value: dict[str, Any] | list[Any]) -> bool:
    """Whether :func:`json_problem` may find something in the array or object VALUE: the same
    checks without the paths that name a field (a string's own check only when it is not
    ASCII), so that a document's many clean samples are passed at a fraction of the cost; the
    walk that names the field is made only when this finds something."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth = pop()
        if depth >= MAX_DEPTH:
            return True
        if type(v) is dict:
            for k in v:
                if not k.isascii() and _SURROGATE.search(k):
                    return True
            v = v.values()
        for x in v:
            t = type(x)
            if t is str:
                if not x.isascii() and _SURROGATE.search(x):
                    return True
            elif t is dict or t is list:
                push((x, depth + 1))
            elif t is float:
                if x - x != 0.0:  # NaN or ±Infinity
                    return True
            elif t is int and not -_INT64 <= x < _INT64:
                return True
    return False


def _float_name(v: float) -> str:
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def _visible(path: str) -> str:
    """A field path fit for a one-line message: surrogates and control characters escaped, cut short."""
    out = path.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
    out = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in out)
    return out if len(out) <= 80 else out[:79] + "…"


#: The largest size a summed or measured number may have: far beyond any real run, far below where
#: a sum of a million of them would overflow a float (``fsum``) or a 64-bit integer (SQLite's SUM).
MAX_MONEY = 1e12  # dollars (cost_usd), seconds (latency_s), points (reward)
MAX_TOKENS = 10**15


def trial_problem(trial: Trial) -> str | None:
    """What keeps a parsed trial out of the store, or None: a number that is not finite, not 64-bit
    or beyond the sane bounds (MAX_MONEY, MAX_TOKENS) of the fields that are summed, and tool-call
    arguments given as a JSON string holding what a record may not (:func:`parse_arguments`).
    Every format's trials pass here before they are checked or written."""
    numbers: tuple[tuple[str, Any, float | None], ...] = (
        ("trial", trial.trial, None),
        ("outcome.reward", trial.reward, MAX_MONEY),
        ("usage.input_tokens", trial.usage.input_tokens, MAX_TOKENS),
        ("usage.output_tokens", trial.usage.output_tokens, MAX_TOKENS),
        ("usage.cost_usd", trial.usage.cost_usd, MAX_MONEY),
        ("latency_s", trial.latency_s, MAX_MONEY),
        ("judge.cost_usd", trial.judge.cost_usd if trial.judge else None, MAX_MONEY),
    )
    for name, v, bound in numbers:
        if v is None or isinstance(v, bool) or not isinstance(v, int | float):
            continue
        if isinstance(v, float) and not math.isfinite(v):
            return f"{name}: {_float_name(v)} {_FINITE}"
        if isinstance(v, int) and not -_INT64 <= v < _INT64:
            return f"{name}: {_RANGE}"
        if bound is not None and not -bound <= v <= bound:
            shown = f"{v:g}" if isinstance(v, float) else str(v)
            limit = f"at most {_power(bound)}" if v > 0 else f"at least -{_power(bound)}"
            return f"{name}: {shown} is out of range ({limit})"
    for i, m in enumerate(trial.messages):
        if m.tool_calls:
            for j, c in enumerate(m.tool_calls):
                if type(c.arguments) is UnfitArguments:
                    return f"messages[{i}].tool_calls[{j}].arguments: {c.arguments.problem}"
    return None


def negatives_as_unknown(trial: Trial) -> list[str]:
    """Read a negative token count, cost or latency as unknown (None) and name each field it was
    in: a harness writes -1 for "not measured", and averaged or summed it would make a cost
    negative and pass any budget. A reward may be negative and stays as it is."""
    found: list[str] = []
    u = trial.usage
    if isinstance(u.input_tokens, int | float) and u.input_tokens < 0:
        u.input_tokens, found = None, [*found, "usage.input_tokens"]
    if isinstance(u.output_tokens, int | float) and u.output_tokens < 0:
        u.output_tokens, found = None, [*found, "usage.output_tokens"]
    if isinstance(u.cost_usd, int | float) and u.cost_usd < 0:
        u.cost_usd, found = None, [*found, "usage.cost_usd"]
    if isinstance(trial.latency_s, int | float) and trial.latency_s < 0:
        trial.latency_s, found = None, [*found, "latency_s"]
    j = trial.judge
    if j is not None and isinstance(j.cost_usd, int | float) and j.cost_usd < 0:
        j.cost_usd, found = None, [*found, "judge.cost_usd"]
    return found


def _power(bound: float) -> str:
    return f"{bound:.0e}".replace("e+", "e")  # 1e12


# --- small coercions every format uses -----------------------------------------------------------------


def as_text(value: Any) -> str:
    """Message content as plain text: strings as they are, lists of content parts joined, rest as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("reasoning"), str):
                    parts.append(part["reasoning"])
                else:
                    parts.append(json.dumps(part, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(value, ensure_ascii=False, default=str)


class UnfitArguments(str):
    """Tool-call arguments given as a JSON string that parses to what a record may not hold (NaN, an
    integer beyond 64 bits, a lone surrogate, nesting too deep): kept as the raw text, and the
    import gate (:func:`trial_problem`) skips the trial, naming the call and ``problem``."""

    problem: str


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments: OpenAI gives a JSON *string*; keep the raw text when it is not JSON.
    The string is parsed by the same checked decoder as a record (:func:`decode_at`); what it holds
    that a record may not becomes :class:`UnfitArguments`."""
    if not isinstance(raw, str):
        return raw
    try:
        value, end, problem = decode_at(raw, _ws(raw, 0))
    except ValueError:  # not JSON (json.JSONDecodeError): the raw text
        return raw
    if _ws(raw, end) != len(raw):
        return raw
    if problem:
        unfit = UnfitArguments(raw)
        unfit.problem = problem
        return unfit
    return value


def looks_like_error(text: str) -> bool:
    """A tool result that reads like an error even when the format has no error flag."""
    head = text.lstrip()[:40].lower()
    return head.startswith(_ERROR_PREFIXES)


# --- reading a native record ---------------------------------------------------------------------------


def trial_from_dict(obj: Any) -> Trial:
    """A native record as a Trial, checking every field (RecordError names the first bad one)."""
    if not isinstance(obj, dict):
        raise RecordError(f"expected a JSON object, got {type(obj).__name__}")
    task_id = obj.get("task_id")
    if task_id is None:
        raise RecordError("missing task_id")
    if task_id == "":
        raise RecordError("task_id is empty")
    if not isinstance(task_id, str | int):
        raise RecordError("task_id must be a string")
    raw_messages = obj.get("messages")
    if not isinstance(raw_messages, list):
        raise RecordError(
            "missing messages (a list)" if raw_messages is None else "messages must be a list"
        )
    outcome = obj.get("outcome")
    if outcome is None and "outcome" in obj:
        outcome = {}  # "outcome": null is an unscored trial
    elif not isinstance(outcome, dict):
        raise RecordError(
            "missing outcome (an object with passed or reward, or null for an unscored trial)"
        )
    elif (
        outcome.get("passed") is None
        and outcome.get("reward") is None
        and outcome.get("infra_error") is not True
    ):
        raise RecordError(
            "outcome needs passed or reward (or infra_error: true; or outcome: null for an "
            "unscored trial)"
        )
    infra = outcome.get("infra_error")
    if infra is not None and not isinstance(infra, bool):
        raise RecordError("outcome.infra_error must be true or false")
    passed = outcome.get("passed")
    reward = outcome.get("reward")
    if passed is not None and not isinstance(passed, bool):
        raise RecordError("outcome.passed must be true or false")
    if reward is not None and (isinstance(reward, bool) or not isinstance(reward, int | float)):
        raise RecordError("outcome.reward must be a number")
    trial_no = obj.get("trial")
    if trial_no is not None and (isinstance(trial_no, bool) or not isinstance(trial_no, int)):
        raise RecordError("trial must be an integer")
    run = obj.get("run")
    if run is not None and not isinstance(run, str):
        raise RecordError("run must be a string")
    judge = obj.get("judge")
    if isinstance(judge, dict) and judge.get("verdict") is not None:
        v = str(judge.get("verdict")).lower()
        if v not in ("pass", "fail", "error"):
            raise RecordError(
                f"judge.verdict must be pass, fail or error, got {judge.get('verdict')!r}"
            )
    trial = _build(obj, _messages(raw_messages, strict=True))
    trial.task_id, trial.run, trial.trial = str(task_id), run, trial_no
    return trial


def decode(text: str | bytes, *, run: str, task_id: str, trial: int) -> Trial:
    """A stored record as a Trial, its identity from the store's columns; no checks (it was checked
    when it was imported)."""
    try:  # parsed in C without fast_loads' checks: the import made them
        obj = _DECODER_C.decode(text)
    except (ValueError, RecursionError):  # a record written by hand (NaN, a lone surrogate)
        obj = json.loads(text)
    raw_messages = obj.get("messages")
    out = _build(obj, _messages(raw_messages if isinstance(raw_messages, list) else [], False))
    out.task_id, out.run, out.trial = task_id, run, trial
    return out


def tool_arguments(text: str | bytes) -> list[Any]:
    """Every tool call's arguments in a stored record, as :func:`decode` reads them (text holding
    JSON parsed), without making the rest of the trial; ValueError when the record does not
    read."""
    try:
        obj = _DECODER_C.decode(text)
    except (ValueError, RecursionError):
        obj = json.loads(text)
    messages = obj.get("messages") if type(obj) is dict else None
    out = []
    for m in messages if type(messages) is list else ():
        calls = m.get("tool_calls") if type(m) is dict else None
        for c in calls if type(calls) is list else ():
            if type(c) is dict and type(c.get("name")) is str:
                args = c.get("arguments")
                out.append(parse_arguments(args) if type(args) is str else args)
    return out


def native_text(text: str | bytes, *, run: str, task_id: str, trial: int) -> str:
    """A stored record as the whole native record again, identity first (for $PAGER and $EDITOR)."""
    obj = json.loads(text)
    body = {k: v for k, v in obj.items() if k not in IDENTITY} if isinstance(obj, dict) else {}
    return json.dumps(
        {"run": run, "task_id": task_id, "trial": trial, **body}, ensure_ascii=False, default=str
    )


def _build(obj: dict[str, Any], messages: list[Message]) -> Trial:
    """Every field but the identity, from a record whose shape is known to be right."""
    outcome = obj.get("outcome")
    outcome = outcome if isinstance(outcome, dict) else {}
    passed = outcome.get("passed")
    reward = outcome.get("reward")
    judge = obj.get("judge")
    verdict = None
    if isinstance(judge, dict) and judge.get("verdict") is not None:
        verdict = Verdict(
            verdict=str(judge.get("verdict")).lower(),
            judge=str(judge.get("id") or _judge_id(judge)),
            rationale=as_text(judge.get("rationale")),
            model=_str(judge.get("model")),
            rubric=_str(judge.get("rubric")),
            cost_usd=_num(judge.get("cost_usd")),
        )
    usage: dict[str, Any] = obj["usage"] if isinstance(obj.get("usage"), dict) else {}
    err = obj.get("error")
    error = None
    if isinstance(err, dict):
        error = TrialError(type=_str(err.get("type")), message=_str(err.get("message")))
    elif isinstance(err, str):
        error = TrialError(message=err)
    metadata: dict[str, Any] = obj["metadata"] if isinstance(obj.get("metadata"), dict) else {}
    return Trial(
        task_id="",
        messages=messages,
        passed=passed if isinstance(passed, bool) else None,
        reward=float(reward) if isinstance(reward, int | float) else None,
        infra_error=outcome.get("infra_error") is True,
        reason=_str(outcome.get("reason") if "reason" in outcome else obj.get("reason")),
        judge=verdict,
        usage=Usage(
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cost_usd=_num(usage.get("cost_usd")),
        ),
        latency_s=_num(obj.get("latency_s")),
        error=error,
        metadata=metadata,
        instruction=_str(obj.get("instruction")),
        termination=_str(obj.get("termination")),
    )


def _judge_id(judge: dict[str, Any]) -> str:
    model = _str(judge.get("model")) or "imported"
    rubric = _str(judge.get("rubric"))
    return f"{model}:{rubric}" if rubric else str(model)


def _messages(raw_messages: list[Any], strict: bool) -> list[Message]:
    # The hot loop of every import: plain type checks and positional construction on purpose.
    out: list[Message] = []
    append = out.append
    roles = ROLES
    for i, m in enumerate(raw_messages):
        if type(m) is not dict:
            if strict:
                raise RecordError(f"messages[{i}] must be an object")
            continue
        get = m.get
        role = get("role")
        if type(role) is not str or role not in roles:  # a list or object is unhashable
            if strict:
                raise RecordError(
                    f"messages[{i}].role must be one of system, user, assistant, tool; got {role!r}"
                )
            role = str(role)
        raw_calls = get("tool_calls")
        content = get("content")
        if type(content) is not str:
            content = as_text(content)
        is_error = get("is_error")
        if is_error is None:
            is_error = role == "tool" and looks_like_error(content)
        tool_call_id = get("tool_call_id")
        if tool_call_id is not None and type(tool_call_id) is not str:
            tool_call_id = _str(tool_call_id)
        name = get("name")
        if name is not None and type(name) is not str:
            name = _str(name)
        append(
            Message(
                role,
                content,
                _calls(raw_calls, i, strict) if raw_calls else [],
                tool_call_id,
                name,
                bool(is_error),
            )
        )
    return out


def _calls(raw_calls: Any, i: int, strict: bool) -> list[ToolCall]:
    if not isinstance(raw_calls, list):
        if strict:
            raise RecordError(f"messages[{i}].tool_calls must be a list")
        return []
    calls = []
    for j, c in enumerate(raw_calls):
        if type(c) is not dict or type(c.get("name")) is not str:
            if strict:
                raise RecordError(f"messages[{i}].tool_calls[{j}] needs a name")
            continue
        args = c.get("arguments")
        if type(args) is str:
            args = parse_arguments(args)
        calls.append(ToolCall(c["name"], args, _str(c.get("id"))))
    return calls


def text_or_none(v: Any) -> str | None:
    """``v`` as text: None stays None, a string as it is, anything else (a number, a list, an
    object: an id a harness wrote oddly) as its JSON, never an unhashable value in a str field."""
    if v is None:
        return None
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


_str = text_or_none


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v)


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return int(v)


# --- writing a record ----------------------------------------------------------------------------------


def trial_to_dict(trial: Trial) -> dict[str, Any]:
    """A Trial as a native-format record; ``trial_from_dict`` reads it back to an equal Trial."""
    rec: dict[str, Any] = {"task_id": trial.task_id}
    if trial.run is not None:
        rec["run"] = trial.run
    if trial.trial is not None:
        rec["trial"] = trial.trial
    rec.update(_body(trial))
    return rec


def _body(trial: Trial) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    outcome: dict[str, Any] = {}
    if trial.passed is not None:
        outcome["passed"] = trial.passed
    if trial.reward is not None:
        outcome["reward"] = trial.reward
    if trial.infra_error:
        outcome["infra_error"] = True
    if trial.reason is not None:
        outcome["reason"] = trial.reason
    # an unscored trial: "outcome": null (a reason alone would not make it scored)
    rec["outcome"] = outcome if outcome.keys() - {"reason"} else None
    if rec["outcome"] is None and trial.reason is not None:
        rec["reason"] = trial.reason
    messages = []
    for m in trial.messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in m.tool_calls
            ]
        if m.tool_call_id is not None:
            d["tool_call_id"] = m.tool_call_id
        if m.name is not None:
            d["name"] = m.name
        d["is_error"] = m.is_error
        messages.append(d)
    rec["messages"] = messages
    if trial.judge is not None:
        j = trial.judge
        rec["judge"] = {
            "verdict": j.verdict,
            "rationale": j.rationale,
            "model": j.model,
            "rubric": j.rubric,
        }
        if j.judge:
            rec["judge"]["id"] = j.judge
    u = trial.usage
    if u.input_tokens is not None or u.output_tokens is not None or u.cost_usd is not None:
        rec["usage"] = {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cost_usd": u.cost_usd,
        }
    if trial.latency_s is not None:
        rec["latency_s"] = trial.latency_s
    if trial.error is not None:
        rec["error"] = {"type": trial.error.type, "message": trial.error.message}
    if trial.instruction is not None:
        rec["instruction"] = trial.instruction
    if trial.termination is not None:
        rec["termination"] = trial.termination
    if trial.metadata:
        rec["metadata"] = trial.metadata
    return rec


def encode(trial: Trial) -> str:
    """The record the store keeps: the native record without run, task and trial (the columns hold
    them). A record that arrived as native text keeps its own text, those members cut out."""
    if trial.raw is not None:
        present = [
            k
            for k, v in zip(IDENTITY, (trial.run, trial.task_id, trial.trial), strict=True)
            if v is not None
        ]
        cut = _without_members(trial.raw, present)
        if cut is not None:
            return cut
    return dumps(_body(trial))


#: ``json.dumps(..., ensure_ascii=False, default=str)`` made once (each import encodes every trial).
_RECORD_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
#: msgspec's encoder: a record of an Inspect sample in a fifth of the time of the one above.
_ENCODER_C = msgspec.json.Encoder(enc_hook=str)


def dumps(value: Any) -> str:
    """VALUE as JSON text to store (a record, metadata): written in C by msgspec, compact, text
    as it is (not escaped to ASCII), what JSON has no type for as ``str()`` makes it (msgspec's own
    forms for sets, dates and bytes); a value that UTF-8 cannot hold (a lone surrogate) as
    ``json.dumps(value, ensure_ascii=False, default=str)`` writes it."""
    try:
        return _ENCODER_C.encode(value).decode()
    except (TypeError, ValueError, OverflowError):
        return _RECORD_JSON.encode(value)


_WS = re.compile(r"[ \t\n\r]*")
# An identity member with a plain value, at the front of the object: how harnesses write it.
_LEADING = re.compile(
    r'[ \t\n\r]*"(run|task_id|trial)"[ \t\n\r]*:[ \t\n\r]*(?:"(?:[^"\\]|\\.)*"|-?\d+|null)[ \t\n\r]*,'
)
_DECODER = json.JSONDecoder()


def _ws(text: str, i: int) -> int:
    m = _WS.match(text, i)
    return m.end() if m else i


def _without_members(text: str, keys: Iterable[str]) -> str | None:
    """``text`` (one JSON object) with its top-level ``keys`` cut out, scanning only as far as the last
    of them; None when that cannot be done by cutting (the caller re-serialises instead)."""
    want = set(keys)
    if not want:
        return text
    if text.startswith("{"):  # the fast path: the identity leads
        i, left = 1, set(want)
        while left and (m := _LEADING.match(text, i)) and m.group(1) in left:
            left.discard(m.group(1))
            i = m.end()
        if not left:
            return "{" + text[i:]
    spans: list[tuple[int, int]] = []
    try:
        i = _ws(text, 0)
        if text[i] != "{":
            return None
        i = _ws(text, i + 1)
        while want:
            start = i
            if text[i] != '"':
                return None
            key, i = scanstring(text, i + 1)
            i = _ws(text, i)
            if text[i] != ":":
                return None
            _, i = _DECODER.raw_decode(text, _ws(text, i + 1))
            i = _ws(text, i)
            sep = text[i]
            if key in want:
                if sep != ",":
                    return None  # the last member: cutting it would leave a dangling comma
                want.discard(key)
                spans.append((start, _ws(text, i + 1)))
            if sep == "}":
                return None  # a key not at the top level after all
            i = _ws(text, i + 1)
    except (ValueError, IndexError):
        return None
    out, last = [], 0
    for a, b in spans:
        out.append(text[last:a])
        last = b
    out.append(text[last:])
    return "".join(out)


def flat_args_json(args: Any, *, sort_keys: bool = False, ensure_ascii: bool = True) -> str | None:
    """``json.dumps(args, sort_keys=..., ensure_ascii=...)`` of a flat object of text and whole
    numbers (most tool calls' arguments), written directly without the encoder's set-up for each
    call (the same text); None for anything else (the caller's encoder writes it)."""
    if type(args) is not dict or not all(type(k) is str for k in args):
        return None
    text = encode_basestring_ascii if ensure_ascii else encode_basestring
    parts = []
    for k, v in sorted(args.items()) if sort_keys else args.items():
        if type(v) is str:
            parts.append(f"{text(k)}: {text(v)}")
        elif type(v) is int:
            parts.append(f"{text(k)}: {int.__repr__(v)}")
        else:
            return None
    return "{" + ", ".join(parts) + "}"
