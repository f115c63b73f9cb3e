"""Error signatures: the kind of a failure, with every instance-specific part masked.

``signature("Error: flight HAT030 not available on date 2024-05-13", tool="book_reservation")`` is
``"book_reservation: flight <id> not available on date <date>"``. ``evidence_of`` gathers a failed
trial's error evidence and picks its primary signature. Stdlib only: importing this module is cheap.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.clustering.behaviour import behaviour_of
from reviewer.clustering.masking import (
    _CLOSE,
    _EXIT_CODE,
    _KEEP,
    _OPEN,
    _STATUS_AFTER,
    _STATUS_BEFORE,
    mask,
)
from reviewer.clustering.outcomes import is_detail, outcome_facts
from reviewer.models import Message, Trial

__all__ = [
    "FailureDoc",
    "FailureEvidence",
    "evidence_of",
    "is_error_text",
    "line_templates",
    "mask",
    "signature",
    "signatures_of_lines",
    "termination_cause",
    "trial_key",
]

#: Words of a signature's message kept after the prefix; long tails rarely tell kinds apart.
MAX_SIGNATURE_WORDS = 24
#: Characters of a message read for its signature (the signature keeps far fewer).
MAX_SIGNATURE_CHARS = 600
#: Characters of each piece of a failure's free text, and of all of it.
MAX_PIECE_CHARS = 600
MAX_TEXT_CHARS = 2400

_EXC_WORDS = (
    "Error|Exception|Exit|Interrupt|Warning|Timeout|Fault|Failure|Refused|Denied|NotFound|"
    "Unavailable|Invalid|Exceeded|Expired|Abort|Aborted|Panic|Cancelled|Canceled|Iteration|Overflow"
)
_EXC_NAME = rf"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:{_EXC_WORDS})|Http404)"
_EXC_LINE = re.compile(rf"^(?P<type>{_EXC_NAME})(?:\s*:\s*(?P<msg>.*)|\s*\((?P<arg>.*)\)\s*)?$")
_GENERIC_PREFIX = re.compile(r"(?i)^(?:error|err|exception|fatal)\s*[:!]\s*|^\[?error\]\s*")
_HAS_DIGIT = re.compile(r"\d")
_TB_HEAD = re.compile(r"^Traceback \(most recent call last\):\s*$", re.M)
_TB_FRAME = re.compile(r'^\s+File "[^"]*", line \d+, in (?P<func>\S+)')
_ERROR_HEAD = re.compile(
    r"(?i)^\s*(?:error|exception|traceback|failed|failure|fatal|panic)\b"
    rf"|^\s*{_EXC_NAME}\s*[:(]"
    r"|^\s*\{\s*\"(?:error|errors|exception|fault)\"\s*:(?!\s*(?:null\b|false\b|\[\s*\]|\"\"))"
)
_ERROR_ANYWHERE = re.compile(
    r"(?i)traceback \(most recent call last\)"
    r"|\b(?:https?(?:/\d(?:\.\d)?)?|http ?error|status(?:[ _-]?code)?)\s*[:=]?\s*[45]\d\d\b"
    r"|\b[45]\d\d\s*[:-]?\s*(?:client error|server error|bad request|unauthorized|forbidden|not found|"
    r"method not allowed|conflict|too many requests|internal server error|bad gateway|"
    r"service unavailable|gateway timeout|unprocessable)"
    r"|\btimed out\b|\btime ?out ?(?:error|exception|exceeded|expired)"
    r"|\b(?:read|connect|connection|request|gateway|operation|socket) ?time ?out\b|\bdeadline exceeded\b"
    r"|\bconnection (?:refused|reset|aborted)\b"
)
_TERMINATIONS = (
    (
        "max tokens",
        re.compile(
            r"(?i)max[_ -]?tokens|context[_ -](?:length|window)|token[_ -]limit|length[_ -]limit"
        ),
    ),
    (
        "max steps",
        re.compile(
            r"(?i)max[_ -]?(?:steps?|turns?|iterations?|actions?|messages?|num[_ -]?steps)|"
            r"(?:step|turn|iteration|action)[_ -]?limit|too many (?:steps|turns|iterations)"
        ),
    ),
    (
        "user gave up",
        re.compile(
            r"(?i)user[_ -]?(?:quit|gave[_ -]?up|give[_ -]?up|abandon)|gave up|give up|abandon"
        ),
    ),
    ("transfer to human", re.compile(r"(?i)transfer|hand[_ -]?off|escalat|human[_ -]agent")),
    ("time limit", re.compile(r"(?i)time[_ -]?limit|timeout|timed[_ -]out|deadline")),
    ("agent error", re.compile(r"(?i)agent[_ -]?error|crash|exception")),
)
_NORMAL_END = re.compile(
    r"(?i)^\s*(?:user[_ -]?stop|stop|###stop###|done|complete|completed|finished|end|ended|success|"
    r"normal|agent[_ -]?stop|user[_ -]?ended|eos|end[_ -]?turn|stop[_ -]?sequence)\s*$"
)
_TRANSFER_TOOL = re.compile(r"(?i)transfer.*(?:human|agent|operator)|escalate")


def _short_type(exc_type: str) -> str:
    return exc_type.strip().rsplit(".", 1)[-1]


def _parse_traceback(text: str) -> tuple[str, str, str | None] | None:
    """(exception type, message, innermost function) of the last Python traceback in ``text``."""
    if "Traceback" not in text:
        return None
    heads = list(_TB_HEAD.finditer(text))
    if not heads:
        return None
    func: str | None = None
    for line in text[heads[-1].end() :].splitlines():
        frame = _TB_FRAME.match(line)
        if frame:
            func = frame.group("func")
            continue
        if not line.strip() or line[:1].isspace():
            continue  # source lines and ^^^^ markers of a frame
        m = _EXC_LINE.match(line.strip())
        if m:
            return m.group("type"), _exc_message(m), func
        head, _, rest = line.strip().partition(":")
        return head, rest, func
    return None


def _json_error(text: str) -> tuple[str | None, str] | None:
    """(type, message) of a JSON error body such as ``{"error": {"type": ..., "message": ...}}``."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    inner: Any = obj.get("error", obj.get("errors", obj.get("exception", obj.get("fault"))))
    if isinstance(inner, list) and inner:
        inner = inner[0]
    if isinstance(inner, str):
        kind = obj.get("type") if obj.get("type") not in (None, "error") else obj.get("code")
        return (kind if isinstance(kind, str) else None), inner
    source = inner if isinstance(inner, dict) else obj
    for key in ("message", "detail", "msg", "error_description", "reason", "description"):
        value = source.get(key)
        if isinstance(value, str):
            kind = source.get("type") or source.get("code")
            if kind == "error":
                kind = source.get("code")
            return (kind if isinstance(kind, str) else None), value
    return None


def _exc_message(m: re.Match[str]) -> str:
    msg = m.group("msg")
    if msg is not None:
        return msg
    arg = (m.group("arg") or "").strip()
    if len(arg) >= 2 and arg[0] == arg[-1] and arg[0] in "'\"":
        arg = arg[1:-1].replace("\\" + arg[0], arg[0])  # ValueError('...') repr: the message itself
    return arg


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def signature(message: str, tool: str | None = None, exc_type: str | None = None) -> str:
    """The kind of an error message: ``[tool: ][ExcType[ in func]: ]masked message``.

    Python tracebacks are reduced to their final exception line and innermost function; JSON error
    bodies to their message and type; a generic ``Error:`` prefix is dropped. Pure and deterministic.
    """
    text = message or ""
    where: str | None = None
    found_type: str | None = None
    tb = _parse_traceback(text)
    if tb is not None:
        found_type, body, where = tb
    else:
        js = _json_error(text)
        if js is not None:
            found_type, body = js
        else:
            body = _first_line(text)
            m = _EXC_LINE.match(body)
            if m:
                found_type, body = m.group("type"), _exc_message(m)
    kind = _short_type(exc_type) if exc_type and exc_type.strip() else None
    if kind is None and found_type:
        kind = _short_type(found_type)
    if kind in ("Error", "Exception"):
        kind = None
    body = _first_line(body)[:MAX_SIGNATURE_CHARS]
    body = _GENERIC_PREFIX.sub("", body, count=1).strip()
    if kind and body.startswith(kind):
        body = re.sub(rf"^{re.escape(kind)}\s*:\s*", "", body)
    words = mask(body).lower().split()
    masked = " ".join(words[:MAX_SIGNATURE_WORDS]).rstrip(" .!:;,")
    if len(words) > MAX_SIGNATURE_WORDS:
        masked += " …"
    prefix = ""
    if tool and tool.strip():
        prefix += f"{tool.strip()}: "
    if kind:
        prefix += f"{kind} in {where}: " if where else f"{kind}: "
    return (prefix + masked).strip().rstrip(":")


#: A word position where lines otherwise equal take at least this many values is a variable
#: (``reviewer signatures``: a user, host, table or method name with no digit to give it away).
#: Three, not four: `user bob/alice/carol not found` is one kind, and on tests/clustering/logs.py
#: grouping accuracy is 0.943 / 0.956 / 0.944 (seeds 0, 1, 7; 3,000 lines) against 0.932 / 0.946 /
#: 0.937 with four. Two values would merge pairs of real kinds that differ in one word.
LINE_VARIABLE_VALUES = 3
#: Passes of that rule: each pass can find one more variable position in a line.
LINE_TEMPLATE_PASSES = 3


def line_templates(signatures: Sequence[str]) -> list[str]:
    """Each signature, or the template it shares with lines that differ from it in words that vary
    like instances (see ``templates.templates_of``), found over the whole batch: no tuning per
    dataset, linear in the number of distinct signatures per pass."""
    from collections import Counter

    from reviewer.clustering.templates import VARIABLE, pair_templates_of, templates_of

    out = list(signatures)
    for _ in range(LINE_TEMPLATE_PASSES):
        counts = Counter(s for s in out if s)
        found = templates_of(
            counts, min_values=LINE_VARIABLE_VALUES, max_per_value=float("inf"), log_lines=True
        )
        if not found:
            break
        out = [found.get(s, s) for s in out]
    # what no single word explains: lines whose instances sit in two words
    alone = {s for s in out if s and VARIABLE not in s}
    pairs = pair_templates_of(alone, LINE_VARIABLE_VALUES)
    return [pairs.get(s, s) for s in out] if pairs else out


def signatures_of_lines(lines: Iterable[str], templates: bool = True) -> Iterator[str]:
    """One signature per input line (``reviewer signatures``); a blank line gives a blank line.
    With ``templates`` the lines are read whole first and words that vary across otherwise equal
    lines become ``<*>`` (``line_templates``)."""
    sigs = _batch_signatures(line.rstrip("\r\n") for line in lines)
    if not templates:
        yield from sigs
        return
    yield from line_templates(list(sigs))


#: A text's shape is its digits as zeros, with where a number starts with a zero (``_shape``).
_ZEROS = str.maketrans("123456789", "000000000")
#: Words with digits that masking keeps (utf8, sha256, int64 ...), with their digits as zeros
_KEPT_SHAPES = frozenset(k.translate(_ZEROS) for k in _KEEP)
# the words, those with a 0 kept by the caller: "[A-Za-z0-9_]*0[A-Za-z0-9_]*" found the same words
# but tried every position of a word without a 0 to its end, quadratic in its length (a 200,000
# character error line took 47 s)
_WORDS = re.compile(r"[A-Za-z0-9_]+")


# a status code's place in a shape (its digits as zeros): _STATUS with any first digit
_STATUS_SHAPE = re.compile(r"(?<![\w.,])0\d\d(?![\w.,]\d)(?!\w)")


def _value_may_matter(key: str) -> bool:
    """Whether a digit's value, not only its place, can show in the signature of a text of shape
    ``key`` (its digits as zeros): a protected status code, an exit code, errno or signal number,
    or a word masking keeps (sha256); or a text where a digit can become another character or
    change a parsed value: an escape (``\\u00e9``, ``\\042``), masking's private sentinels, a JSON
    body (``1e-400`` is a false 0.0). Decided once per shape, for every value its digits take."""
    if "\\" in key or _OPEN in key or _CLOSE in key or key.lstrip().startswith("{"):
        return True
    for m in _STATUS_SHAPE.finditer(key):
        if _STATUS_BEFORE.search(key, max(0, m.start() - 24), m.start()) or _STATUS_AFTER.match(
            key, m.end()
        ):
            return True
    low = key.lower()
    if ("exit" in low or "errno" in low or "signal" in low) and _EXIT_CODE.search(key):
        return True
    return any(
        w.lower() in _KEPT_SHAPES for w in _WORDS.findall(key) if "0" in w and not w.isdigit()
    )


def _shape(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` with its digits as zeros, and where a zero starts a run of digits: what masking
    makes of a digit depends on its place, and on its value only where a number starts with a
    zero (``0x1f`` is hex, ``1x1f`` an id; JSON reads ``10`` and not ``01``) or where
    ``_value_may_matter`` looks (a status or exit code, a word masking keeps)."""
    key = text.translate(_ZEROS)
    if "0" not in text:
        return key, ()
    return key, tuple(m.start() for m in _LEADING_ZERO.finditer(text))


_LEADING_ZERO = re.compile(r"(?<![0-9])0")


def _batch_signatures(texts: Iterable[str]) -> Iterator[str]:
    """``signature`` of each text, computed once per shape (``_signed``, with this batch's own
    memory), so log lines that differ in numbers, ids and times are masked once. The same output
    as calling ``signature`` on each."""
    cache: _ShapeMemory = {}
    for text in texts:
        yield _signed(cache, text) if text.strip() else ""


def shape_signature(message: str, tool: str | None = None, exc_type: str | None = None) -> str:
    """``signature(message, tool, exc_type)``, computed once per shape as ``_batch_signatures``
    does, the shapes remembered across calls (bounded): a failure's evidence asks for the same
    error with other ids thousands of times."""
    if len(_SHAPES) >= _SHAPES_MAX:
        _SHAPES.clear()
    return _signed(_SHAPES, message, tool, exc_type)


#: A shape (and the tool and type signed with it) -> its signature, or None: a shape whose texts
#: are each signed on their own.
_ShapeMemory = dict[tuple[tuple[str, tuple[int, ...]], str | None, str | None], str | None]


def _signed(
    cache: _ShapeMemory, message: str, tool: str | None = None, exc_type: str | None = None
) -> str:
    """``signature(message, tool, exc_type)``, shared by every text of its shape when no digit's
    value can show in it (``_value_may_matter``)."""
    key = (_shape(message), tool, exc_type)
    sig = cache.get(key, _UNSEEN)
    if isinstance(sig, str):
        return sig
    out = signature(message, tool, exc_type)
    if sig is _UNSEEN:
        shared = not _HAS_DIGIT.search(out) and not _value_may_matter(key[0][0])
        cache[key] = out if shared else None
    return out


_SHAPES: _ShapeMemory = {}
_SHAPES_MAX = 4096
_UNSEEN = object()


def is_error_text(text: str) -> bool:
    """A tool result that reads like an error: ``Error: …``, a traceback, HTTP 4xx/5xx, a timeout."""
    if not text:
        return False
    head = text[:400]
    return bool(_ERROR_HEAD.search(head) or _ERROR_ANYWHERE.search(head))


def termination_cause(termination: str | None) -> str | None:
    """A termination reason as one of a few causes (max steps, user gave up, transfer to human …);
    None for a normal end (tau-bench's user ``###STOP###`` ends successful and failed episodes alike)."""
    if not termination or not termination.strip() or _NORMAL_END.match(termination):
        return None
    for cause, pattern in _TERMINATIONS:
        if pattern.search(termination):
            return cause
    return signature(termination) or None


@dataclass(frozen=True)
class FailureEvidence:
    """One piece of error evidence of a failed trial."""

    kind: str  # violation | harness_error | outcome | tool_error | termination | reason
    text: str
    signature: str
    tool: str | None = None


@dataclass(frozen=True)
class FailureDoc:
    """A failed trial as the clustering sees it: its primary signature and its masked free text."""

    trial_id: str
    signature: str
    text: str
    run: str = ""
    task_id: str = ""
    evidence: tuple[FailureEvidence, ...] = field(default=())
    #: statements true of this trial (what its source says went wrong, broken rules, how it ended,
    #: errors it did not recover from), worded alike across trials: clusters are named by them
    facts: tuple[str, ...] = field(default=())
    #: what the agent did, from its trajectory (``behaviour.behaviour_of``): features for a vector,
    #: statements for names, and a key that groups failures whose only evidence is free text
    behaviour: tuple[str, ...] = field(default=())
    behaviour_facts: tuple[str, ...] = field(default=())
    behaviour_key: str = ""


def trial_key(trial: Trial) -> str:
    """A readable id for a trial when the caller has no stored id: ``run/task_id/trial``."""
    index = "?" if trial.trial is None else str(trial.trial)
    return f"{trial.run or ''}/{trial.task_id}/{index}"


def _tool_names(messages: Sequence[Message]) -> dict[str, str]:
    names: dict[str, str] = {}
    for m in messages:
        for call in m.tool_calls:
            if call.id:
                names[call.id] = call.name
    return names


def _violation_signature(violations: Sequence[str]) -> str:
    ids = []
    for v in violations:
        v = v.strip()
        if v:
            ids.append(v if re.fullmatch(r"[\w.:@/-]+", v) else signature(v))
    return "rule: " + ", ".join(sorted(set(ids))) if ids else ""


def evidence_of(
    trial: Trial,
    violations: Sequence[str] = (),
    *,
    trial_id: str | None = None,
    max_tool_errors: int = 5,
    weak_violations: Sequence[str] = (),
    tools_called: bool = True,
) -> FailureDoc:
    """Gather a failed trial's error evidence and pick its primary signature.

    Priority: rule violation ids > harness error > first error-like tool result (with its tool name) >
    termination cause > outcome reason > ``weak_violations`` (policy and budget rules: usually a
    symptom of the failure, such as a timeout that also broke the latency budget). ``text`` (for the embedder) is masked: the evidence (outcome
    reason included), the judge's rationale, the last two assistant turns with the tools they called.
    ``tools_called``: some trial of its run called a tool (else no trial is told apart by calling
    none: an eval that offers no tool).
    """
    evidence: list[FailureEvidence] = []
    rule_sig = _violation_signature(violations)
    if rule_sig:
        evidence.append(
            FailureEvidence("violation", "; ".join(v for v in violations if v.strip()), rule_sig)
        )
    if trial.error is not None and (trial.error.message or trial.error.type):
        msg = trial.error.message or ""
        sig = shape_signature(msg, exc_type=trial.error.type) or (trial.error.type or "")
        evidence.append(
            FailureEvidence("harness_error", f"{trial.error.type or ''}: {msg}".strip(": "), sig)
        )
    facts = outcome_facts(trial)
    key_facts = [f for f in facts if not is_detail(f)]
    if facts:
        evidence.append(FailureEvidence("outcome", "; ".join(facts), "; ".join(sorted(key_facts))))
    names = _tool_names(trial.messages)
    tool_errors = 0
    recovered: list[FailureEvidence] = []
    # each tool result is read for error text once: here, for "a later call succeeded" and for the
    # behaviour features (which take the same answers through ``looks_failed``)
    failed_of: dict[int, bool] = {}

    def looks_failed(text: str) -> bool:
        known = failed_of.get(id(text))
        if known is None:
            known = failed_of[id(text)] = is_error_text(text)
        return known

    tool_results = [
        (m, m.name or names.get(m.tool_call_id or "")) for m in trial.messages if m.role == "tool"
    ]
    failed = [m.is_error or looks_failed(m.content) for m, _ in tool_results]
    # each tool's last result that is not an error
    last_ok = {tool: i for i, (_, tool) in enumerate(tool_results) if not failed[i]}
    for i, (m, tool) in enumerate(tool_results):
        if tool_errors >= max_tool_errors:
            break
        if failed[i]:
            piece = FailureEvidence(
                "tool_error", m.content, shape_signature(m.content, tool=tool), tool
            )
            # an error the agent got past (a later call of the same tool succeeded) is not the
            # failure: it stays in the text but does not name or group the trial
            later_ok = last_ok.get(tool, -1) > i
            if later_ok:
                recovered.append(
                    FailureEvidence("recovered_error", m.content, piece.signature, tool)
                )
            else:
                evidence.append(piece)
            tool_errors += 1
    termination = trial.termination
    if not termination:
        called = [c.name for m in trial.messages for c in m.tool_calls]
        if any(_TRANSFER_TOOL.search(name) for name in called):
            termination = "transfer to human"
    cause = termination_cause(termination)
    if cause:
        evidence.append(FailureEvidence("termination", termination or "", f"terminated: {cause}"))
    if trial.reason and trial.reason.strip():
        evidence.append(FailureEvidence("reason", trial.reason, shape_signature(trial.reason)))
    evidence.extend(recovered)
    weak_sig = _violation_signature(weak_violations)
    if weak_sig:
        evidence.append(
            FailureEvidence(
                "weak_violation", "; ".join(v for v in weak_violations if v.strip()), weak_sig
            )
        )

    primary = ""
    for kind in (
        "violation",
        "harness_error",
        "outcome",
        "tool_error",
        "termination",
        "reason",
        "weak_violation",
    ):
        primary = next((e.signature for e in evidence if e.kind == kind and e.signature), "")
        if primary:
            break

    did = behaviour_of(trial, looks_failed, termination_cause, tools_called=tools_called)
    return FailureDoc(
        trial_id=trial_id if trial_id is not None else trial_key(trial),
        signature=primary,
        text=_failure_text(trial, evidence),
        run=trial.run or "",
        task_id=trial.task_id,
        evidence=tuple(evidence),
        facts=tuple(_facts(evidence, facts, violations)),
        behaviour=did.tokens,
        behaviour_facts=did.facts,
        behaviour_key=did.key,
    )


def _facts(
    evidence: Sequence[FailureEvidence], outcome: Sequence[str], violations: Sequence[str]
) -> list[str]:
    """The statements a cluster may be named by: outcome facts, broken rules, how the episode
    ended, harness and unrecovered tool errors, and the reason's signature."""
    out: list[str] = list(outcome)
    out.extend(f"rule: {v.strip()}" for v in violations if v.strip())
    for e in evidence:
        if not e.signature or e.kind in (
            "violation",
            "outcome",
            "recovered_error",
            "weak_violation",
        ):
            continue
        out.append(e.signature)
    return list(dict.fromkeys(out))


def _failure_text(trial: Trial, evidence: Sequence[FailureEvidence]) -> str:
    """The masked free text of a failure, most telling first, within ``MAX_TEXT_CHARS``: the
    evidence, the judge's rationale, then the last two assistant turns and the tools they called."""
    pieces = [e.text for e in evidence]
    if trial.judge is not None and trial.judge.rationale:
        pieces.append(trial.judge.rationale)
    for m in [m for m in trial.messages if m.role == "assistant"][-2:]:
        calls = " ".join(f"calls {c.name}" for c in m.tool_calls)
        pieces.append(f"{m.content} {calls}".strip())
    kept: list[str] = []
    room = MAX_TEXT_CHARS
    for piece in pieces:
        piece = piece.strip()[: min(MAX_PIECE_CHARS, room)]
        if piece:
            kept.append(piece)
            room -= len(piece) + 1
        if room <= 0:
            break
    return mask("\n".join(kept))
