"""OpenTelemetry GenAI spans exported as OTLP JSON: ``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``,
one ExportTraceServiceRequest per file, or one per line (OTLP JSON lines, as the collector's file
exporter writes).

Conventions followed: the GenAI semantic conventions of open-telemetry/semantic-conventions after
v1.37.0 (the "gen_ai_latest_experimental" conventions, status Development): docs/gen-ai/gen-ai-spans.md
and gen-ai-agent-spans.md (``gen_ai.operation.name`` chat / invoke_agent / execute_tool,
``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``,
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``,
``gen_ai.usage.input_tokens`` / ``output_tokens``, ``gen_ai.request.model``), the message schemas
gen-ai-input-messages.json / gen-ai-output-messages.json (``role`` + ``parts`` of type text, tool_call,
tool_call_response, reasoning, blob, file_data, uri), and the ``gen_ai.evaluation.result`` event
(``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.value``, ``gen_ai.evaluation.score.label``,
``gen_ai.evaluation.explanation``). The pre-1.37 attributes (``gen_ai.prompt``, ``gen_ai.completion``,
per-message events) are not read.

One trace (``traceId``) is one trial, its task id the trace id. Messages: the spans in time order; a
chat span's input messages are the history so far (only the new ones are added) followed by its
output messages; an invoke_agent span adds its input at its start and its output at its end; an
execute_tool span adds a tool message (and the assistant's call, when no chat span showed it) unless
the conversation already holds that call's result. Usage: the chat spans' token counts summed (the
invoke_agent spans' when no chat span has any). Outcome: the ``gen_ai.evaluation.result`` event of
the root span, else the last one: a pass/fail label (pass, correct, true, yes, … / fail, incorrect,
false, no, …), else the score value as the reward; no evaluation means unscored. Every evaluation is
in ``metadata["evaluations"]``. A span with status ERROR is the trial's error (a tool span's, a tool
error).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.ingest.base import (
    IngestError,
    Kind,
    Record,
    as_dict,
    as_text,
    canonical,
    parse_arguments,
    read_file,
)
from reviewer.ingest.reading import holds_last_line, place
from reviewer.models import Message, Skip, ToolCall, Trial, TrialError, Usage
from reviewer.record import MAX_DEPTH, RecordError, decode_at, json_problem, loads_unchecked
from reviewer.text import json_error

NAME = "otel-genai"
KIND: Kind = "trials"

_RESOURCE_SPANS = re.compile(rb'^\s*\{\s*"resourceSpans"\s*:|"resourceSpans"\s*:\s*\[')
_PASS = {"pass", "passed", "correct", "true", "yes", "success", "succeeded", "resolved", "good"}
_FAIL = {"fail", "failed", "incorrect", "false", "no", "failure", "unresolved", "bad"}
_CHAT_OPS = {"chat", "generate_content", "text_completion"}
_AGENT_OPS = {"invoke_agent"}
_TOOL_OPS = {"execute_tool"}
_ERROR = {2, "STATUS_CODE_ERROR", "ERROR"}
_IN, _OUT = "gen_ai.input.messages", "gen_ai.output.messages"
_ARGS, _RESULT = "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"


def sniff(path: Path, head: bytes) -> bool:
    """A JSON object (or JSON lines) with ``resourceSpans`` near the top and ``spans`` in them."""
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    return (
        text.startswith(b"{") and bool(_RESOURCE_SPANS.search(text[:4096])) and b'"spans"' in text
    )


def _json_lines(text: str, least: int = 2) -> bool:
    """Whether a file that is not one JSON document is JSON lines (every non-blank line a JSON
    object's, at least ``least``): a damaged line then skips its request, not the file."""
    lines = (ln.lstrip() for ln in text.splitlines() if ln.strip())
    opened = 0
    for ln in lines:
        if not ln.startswith("{") or ln.rstrip() == "{":
            return False
        opened += 1
    return opened >= least


def parse(path: Path) -> Iterator[Record]:
    """One trial per trace id, in order of first appearance."""
    file = str(path)
    raw = read_file(path, file)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestError(file, f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    requests: list[tuple[int | None, Any]] = []
    try:
        # unchecked: each trace's spans are checked apart below, so a bad value skips one trace
        requests.append((None, loads_unchecked(text)))
    except RecursionError:
        raise IngestError(file, f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as whole:
        cut = text[: text.rfind("\n") + 1]
        if holds_last_line() and cut != text and _json_lines(cut, least=0):
            text = cut  # JSON lines whose last is still being written: read it once it ends
        elif whole.msg != "Extra data" and not _json_lines(text):
            raise IngestError(file, json_error(whole), line=whole.lineno) from None
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                requests.append((lineno, loads_unchecked(line)))
            except RecursionError:
                yield Skip(file, lineno, f"JSON nested deeper than {MAX_DEPTH} levels")
            except json.JSONDecodeError as exc:
                yield Skip(file, lineno, json_error(exc))
    traces: dict[str, list[dict[str, Any]]] = {}
    first_line: dict[str, int | None] = {}
    for where, request in requests:
        if not isinstance(request, dict) or not isinstance(request.get("resourceSpans"), list):
            yield Skip(file, where, "not an OTLP trace export (no resourceSpans list)")
            continue
        for span in _spans(request):
            if not isinstance(span, dict):
                yield Skip(file, where, "a span is not a JSON object")
                continue
            trace_id = span.get("traceId")
            if not isinstance(trace_id, str) or not trace_id:
                yield Skip(file, where, f"span {span.get('name')!r} has no traceId")
                continue
            traces.setdefault(trace_id, []).append(span)
            first_line.setdefault(trace_id, where)
    reached = place()
    reached.total = len(traces)
    for trace_id, spans in traces.items():
        reached.done += 1
        if problem := json_problem(
            [{k: v for k, v in s.items() if k != "_resource"} for s in spans]
        ) or _resource_problem(spans):
            yield Skip(file, first_line[trace_id], f"trace {trace_id}: {problem}")
            continue
        try:
            yield _trace(file, first_line[trace_id], trace_id, spans)
        except RecordError as exc:
            yield Skip(file, first_line[trace_id], f"trace {trace_id}: {exc}")
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            yield Skip(file, first_line[trace_id], f"trace {trace_id}: malformed spans: {exc!r}")


def _resource_problem(spans: list[dict[str, Any]]) -> str | None:
    """What in the resources of a trace's spans the store cannot keep (``resource.KEY: why``): a
    resource attribute (``service.name``) goes into the trial's metadata as it is."""
    resources = {id(r): r for s in spans if isinstance(r := s.get("_resource"), dict)}
    for resource in resources.values():
        if problem := json_problem({"resource": resource}):
            return problem
    return None


def _spans(request: dict[str, Any]) -> Iterator[Any]:
    for resource_spans in request["resourceSpans"]:
        resource = _attrs(as_dict(as_dict(resource_spans).get("resource")).get("attributes"))
        for scope_spans in as_dict(resource_spans).get("scopeSpans") or []:
            for span in as_dict(scope_spans).get("spans") or []:
                if isinstance(span, dict):
                    span = dict(span, _resource=resource)
                yield span


def _value(v: Any) -> Any:
    """An OTLP JSON AnyValue as a Python value (intValue is a string in OTLP JSON)."""
    v = as_dict(v)
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        try:
            n = int(v["intValue"])
        except (TypeError, ValueError):
            return None
        return n if -(1 << 63) <= n < (1 << 63) else None  # the store keeps 64-bit integers
    if "doubleValue" in v:
        d = v["doubleValue"]
        try:
            x = float(d) if isinstance(d, int | float | str) and not isinstance(d, bool) else None
        except ValueError:
            return None
        return (
            x if x is not None and math.isfinite(x) else None
        )  # "NaN", "Infinity" are not numbers
    if "boolValue" in v:
        return bool(v["boolValue"])
    if "arrayValue" in v:
        return [_value(x) for x in as_dict(v["arrayValue"]).get("values") or []]
    if "kvlistValue" in v:
        return _attrs(as_dict(v["kvlistValue"]).get("values"))
    if "bytesValue" in v:
        return v["bytesValue"]
    return None


def _attrs(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _value(kv.get("value"))
    return out


def _json(value: Any, key: str) -> Any:
    """A structured attribute, recorded as a JSON string or as structured OTLP values; a string
    that is not JSON stays text. The string is parsed by the checked decoder of a record: what a
    record may not hold (NaN, an integer beyond 64 bits, a lone surrogate, nesting too deep) is a
    RecordError naming the attribute, which skips the trace."""
    if not isinstance(value, str):
        return value
    start = len(value) - len(value.lstrip(" \t\n\r"))
    try:
        parsed, end, problem = decode_at(value, start)
    except ValueError:  # not JSON
        return value
    if value[end:].strip(" \t\n\r"):
        return value  # JSON followed by more text: text
    if problem:
        raise RecordError(f"{key}: {problem}")
    return parsed


def _ns(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


class _Conversation:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.keys: list[tuple[Any, ...]] = []
        self.results: set[str] = set()
        self.calls: set[str] = set()

    def add(self, msg: Message) -> None:
        self.messages.append(msg)
        self.keys.append(_key(msg))
        if msg.role == "tool" and msg.tool_call_id:
            self.results.add(msg.tool_call_id)
        for c in msg.tool_calls:
            if c.id:
                self.calls.add(c.id)

    def history(self, msgs: list[Message]) -> None:
        """Input messages of a model call: those the conversation does not hold yet. The input is the
        history so far, so the longest overlap of the conversation's end with its start is dropped;
        system messages are compared on their own."""
        held = [k for k in self.keys if k[0] != "system"]
        for m in msgs:
            if m.role == "system" and _key(m) not in self.keys:
                self.messages.insert(0, m)
                self.keys.insert(0, _key(m))
        rest = [m for m in msgs if m.role != "system"]
        keys = [_key(m) for m in rest]
        overlap = next(
            (k for k in range(min(len(held), len(keys)), 0, -1) if held[-k:] == keys[:k]), 0
        )
        if held and keys[: len(held)] == held:
            overlap = len(held)
        for m in rest[overlap:]:
            if m.role == "tool" and m.tool_call_id in self.results:
                continue
            self.add(m)

    def system(self, msgs: list[Message]) -> None:
        for m in reversed(msgs):
            if _key(m) not in self.keys:
                self.messages.insert(0, m)
                self.keys.insert(0, _key(m))


def _key(m: Message) -> tuple[Any, ...]:
    return (m.role, m.content, m.tool_call_id, tuple((c.name, c.id) for c in m.tool_calls))


def _messages(raw: Any, key: str, role_default: str = "user") -> list[Message]:
    raw = _json(raw, key)
    out: list[Message] = []
    for m in raw if isinstance(raw, list) else []:
        if not isinstance(m, dict):
            continue
        role = str(m.get("role") or role_default)
        parts = m.get("parts")
        if not isinstance(parts, list):
            out.append(Message(role=role, content=as_text(m.get("content"))))
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        results: list[Message] = []
        for p in parts:
            if not isinstance(p, dict):
                continue
            kind = p.get("type")
            if kind == "text":
                texts.append(as_text(p.get("content")))
            elif kind == "reasoning":
                texts.append(f"[thinking] {as_text(p.get('content'))}")
            elif kind == "tool_call":
                calls.append(
                    ToolCall(
                        name=str(p.get("name", "")),
                        arguments=parse_arguments(p.get("arguments")),
                        id=str(p["id"]).strip() if p.get("id") is not None else None,
                    )
                )
            elif kind == "tool_call_response":
                response = p.get("response", p.get("result"))
                results.append(
                    Message(
                        role="tool",
                        content=as_text(response),
                        tool_call_id=str(p["id"]).strip() if p.get("id") is not None else None,
                    )
                )
            elif kind in ("blob", "file_data", "uri", "file"):
                texts.append(f"[{p.get('modality') or kind}]")
        if results and not texts and not calls:
            out.extend(results)
            continue
        out.append(Message(role=role, content="\n".join(t for t in texts if t), tool_calls=calls))
        out.extend(results)
    return out


def _system(raw: Any) -> list[Message]:
    raw = _json(raw, "gen_ai.system_instructions")
    if isinstance(raw, str):
        return [Message(role="system", content=raw)]
    texts = [as_text(as_dict(p).get("content")) for p in raw] if isinstance(raw, list) else []
    return [Message(role="system", content="\n".join(texts))] if any(texts) else []


def _trace(file: str, lineno: int | None, trace_id: str, spans: list[dict[str, Any]]) -> Record:
    prepared = []
    for span in spans:
        attrs = _attrs(span.get("attributes"))
        prepared.append((span, attrs, str(attrs.get("gen_ai.operation.name") or "")))
    genai = [p for p in prepared if p[2] or any(k.startswith("gen_ai.") for k in p[1])]
    if not genai:
        return Skip(file, lineno, f"trace {trace_id}: no gen_ai spans")
    ids = {s.get("spanId") for s, _, _ in prepared}
    roots = [p for p in prepared if not p[0].get("parentSpanId") or p[0]["parentSpanId"] not in ids]
    roots.sort(key=lambda p: _ns(p[0].get("startTimeUnixNano")))
    root = roots[0] if roots else prepared[0]

    # (time, order, kind, span, attrs): the moments at which a span adds to the conversation
    moments: list[tuple[int, int, str, dict[str, Any], dict[str, Any]]] = []
    for i, (span, attrs, op) in enumerate(prepared):
        start, end = _ns(span.get("startTimeUnixNano")), _ns(span.get("endTimeUnixNano"))
        if op in _AGENT_OPS:
            moments.append((start, i, "agent_in", span, attrs))
            moments.append((end, i, "agent_out", span, attrs))
        elif op in _TOOL_OPS:
            moments.append((end, i, "tool", span, attrs))
        elif (
            "gen_ai.input.messages" in attrs or "gen_ai.output.messages" in attrs or op in _CHAT_OPS
        ):
            moments.append((start, i, "chat", span, attrs))
    moments.sort(key=lambda m: (m[0], m[1], m[2] != "agent_in"))

    conv = _Conversation()
    for _, _, kind, span, attrs in moments:
        if kind in ("agent_in", "chat"):
            conv.system(_system(attrs.get("gen_ai.system_instructions")))
            conv.history(_messages(attrs.get(_IN), _IN))
            if kind == "chat":
                for m in _messages(attrs.get(_OUT), _OUT, "assistant"):
                    conv.add(m)
        elif kind == "agent_out":
            for m in _messages(attrs.get(_OUT), _OUT, "assistant"):
                if not conv.keys or _key(m) not in conv.keys[-3:]:
                    conv.add(m)
        else:
            _tool(conv, span, attrs)

    usage = _usage([(a, op) for _, a, op in prepared])
    models: list[str] = []
    for _, attrs, _ in prepared:
        for key in ("gen_ai.response.model", "gen_ai.request.model"):
            model = attrs.get(key)
            if isinstance(model, str) and model and model not in models:
                models.append(model)
                break
    evaluations = _evaluations(prepared, root[0])
    passed, reward, reason = _outcome(evaluations, root[0].get("spanId"))
    error = None
    for span, attrs, op in [root, *prepared]:
        status = as_dict(span.get("status"))
        if status.get("code") in _ERROR and op not in _TOOL_OPS:
            error = TrialError(
                type=str(attrs.get("error.type") or "error"),
                message=str(status.get("message") or "") or None,
            )
            break
    root_attrs = root[1]
    resource = as_dict(root[0].get("_resource"))
    metadata: dict[str, Any] = {
        k: v
        for k, v in {
            "trace_id": trace_id,
            "service": resource.get("service.name"),
            "agent": next(
                (a["gen_ai.agent.name"] for _, a, _ in prepared if a.get("gen_ai.agent.name")), None
            ),
            "conversation_id": next(
                (
                    a["gen_ai.conversation.id"]
                    for _, a, _ in prepared
                    if a.get("gen_ai.conversation.id")
                ),
                None,
            ),
            "provider": root_attrs.get("gen_ai.provider.name"),
            "model": ", ".join(models) or None,
            "root_span": root[0].get("name"),
            # when the conversation started, for `reviewer monitor`'s windows
            "started_at": _iso(_ns(root[0].get("startTimeUnixNano"))),
            "evaluations": evaluations or None,
        }.items()
        if v is not None
    }
    start, end = _ns(root[0].get("startTimeUnixNano")), _ns(root[0].get("endTimeUnixNano"))
    return Trial(
        task_id=trace_id,
        messages=conv.messages,
        passed=passed,
        reward=reward,
        reason=reason,
        usage=usage,
        latency_s=(end - start) / 1e9 if start and end >= start else None,
        error=error,
        metadata=metadata,
        instruction=next((m.content for m in conv.messages if m.role == "user"), None),
        source_line=lineno,
        fingerprint=canonical([{k: v for k, v in s.items() if k != "_resource"} for s in spans]),
    )


def _iso(ns: int) -> str | None:
    """A span time (ns since the epoch) as ISO-8601 UTC, or None when unset."""
    from datetime import UTC, datetime

    if ns <= 0:
        return None
    try:
        return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds")
    except (OverflowError, OSError, ValueError):
        return None


def _tool(conv: _Conversation, span: dict[str, Any], attrs: dict[str, Any]) -> None:
    call_id = attrs.get("gen_ai.tool.call.id")
    call_id = str(call_id) if call_id is not None else None
    name = str(attrs.get("gen_ai.tool.name") or span.get("name") or "")
    if call_id and call_id in conv.results:
        return
    if not call_id or call_id not in conv.calls:
        conv.add(
            Message(
                role="assistant",
                tool_calls=[
                    ToolCall(
                        name=name,
                        arguments=parse_arguments(_json(attrs.get(_ARGS), _ARGS)),
                        id=call_id,
                    )
                ],
            )
        )
    status = as_dict(span.get("status"))
    failed = status.get("code") in _ERROR
    result = attrs.get(_RESULT)
    content = as_text(_json(result, _RESULT)) if result is not None else ""
    if failed and not content:
        content = str(status.get("message") or attrs.get("error.type") or "error")
    conv.add(
        Message(role="tool", content=content, tool_call_id=call_id, name=name, is_error=failed)
    )


def _usage(spans: list[tuple[dict[str, Any], str]]) -> Usage:
    def total(ops: set[str] | None) -> tuple[int | None, int | None]:
        ins = outs = None
        for attrs, op in spans:
            if ops is None and op in _AGENT_OPS | _TOOL_OPS:
                continue
            if ops is not None and op not in ops:
                continue
            i, o = attrs.get("gen_ai.usage.input_tokens"), attrs.get("gen_ai.usage.output_tokens")
            if isinstance(i, int) and not isinstance(i, bool):
                ins = (ins or 0) + i
            if isinstance(o, int) and not isinstance(o, bool):
                outs = (outs or 0) + o
        return ins, outs

    ins, outs = total(None)
    if ins is None and outs is None:
        ins, outs = total(_AGENT_OPS)
    return Usage(input_tokens=ins, output_tokens=outs)


def _evaluations(
    prepared: list[tuple[dict[str, Any], dict[str, Any], str]], root: dict[str, Any]
) -> list[dict[str, Any]]:
    found: list[tuple[int, dict[str, Any]]] = []
    for span, _, _ in prepared:
        for event in span.get("events") or []:
            if not isinstance(event, dict) or event.get("name") != "gen_ai.evaluation.result":
                continue
            a = _attrs(event.get("attributes"))
            entry = {
                "name": a.get("gen_ai.evaluation.name"),
                "score": a.get("gen_ai.evaluation.score.value"),
                "label": a.get("gen_ai.evaluation.score.label"),
                "explanation": a.get("gen_ai.evaluation.explanation"),
                "span_id": span.get("spanId"),
            }
            found.append(
                (_ns(event.get("timeUnixNano")), {k: v for k, v in entry.items() if v is not None})
            )
    found.sort(key=lambda x: x[0])
    return [e for _, e in found]


def _outcome(
    evaluations: list[dict[str, Any]], root_id: Any
) -> tuple[bool | None, float | None, str | None]:
    if not evaluations:
        return None, None, None
    on_root = [e for e in evaluations if e.get("span_id") == root_id]
    chosen = (on_root or evaluations)[-1]
    label = str(chosen.get("label", "")).strip().lower()
    score = chosen.get("score")
    reward = (
        float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
    )
    passed = True if label in _PASS else False if label in _FAIL else None
    explanation = chosen.get("explanation")
    failed = passed is False or (passed is None and reward is not None and reward < 1 - 1e-6)
    reason = None
    if failed:
        name = chosen.get("name")
        reason = (
            str(explanation) if explanation else f"evaluation {name or ''} {label or score}".strip()
        )
    return passed, reward, reason
