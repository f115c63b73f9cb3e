"""The audit's reading of one trial as first written, kept as the reference the faster
``reviewer.metrics.audit_trial.digest_trial`` is checked against (tests/metrics/test_audit_trial.py, test_audit_digest.py)."""

from __future__ import annotations

import hashlib

from reviewer.metrics.audit_trial import (
    MIN_COPY_CHARS,
    Creation,
    Read,
    TrialDigest,
    _args_text,
    _bytes,
    identifiers,
    is_write_tool,
)
from reviewer.models import Trial
from reviewer.record import looks_like_error


def reference_digest(trial_id: str, trial: Trial) -> TrialDigest:
    """The audit's reading of a trial as it was first written (every message read for
    identifiers): the faster :func:`digest_trial` must give exactly this."""
    given = identifiers(trial.instruction)
    seen = set(given)
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool, arguments as text)
    created: dict[str, Creation] = {}
    reads: list[Read] = []
    wrote = False
    said = hashlib.blake2b(digest_size=16)  # every assistant turn, in order
    returned = hashlib.blake2b(digest_size=16)  # every tool result, in order
    turns = results = chars = 0
    last_assistant = None
    for i, m in enumerate(trial.messages):
        if m.role == "system":
            found = identifiers(m.content)
            given |= found
            seen |= found
            continue
        if m.role == "assistant":
            last_assistant = m
            turns += 1
            chars += len(m.content)
            said.update(_bytes(m.content) + b"\x00")
            for c in m.tool_calls:
                text = _args_text(c.arguments)
                chars += len(c.name) + len(text)
                said.update(_bytes(f"{c.name}\x01{text}\x02"))
                seen |= identifiers(text)
                if c.id:
                    calls[c.id] = (c.name, text)
            said.update(b"\x03")
            seen |= identifiers(m.content)
            continue
        if m.role != "tool":
            seen |= identifiers(m.content)
            continue
        results += 1
        returned.update(_bytes(m.content) + b"\x00")
        name, arguments = calls.get(m.tool_call_id or "", (m.name or "", ""))
        name = m.name or name
        values = identifiers(m.content)
        ok = not m.is_error and not looks_like_error(m.content)
        if is_write_tool(name):
            if ok:  # the call's own arguments are already in seen
                for v in values - seen:
                    created.setdefault(v, Creation(i, name))
                wrote = True
        elif ok and not wrote and m.tool_call_id in calls:
            reads.append(Read(f"{name}\x00{arguments}", name, i, values))
        seen |= values
    substantial = trial.tool_call_count > 0 or turns > 1 or chars >= MIN_COPY_CHARS
    copy_key = said.hexdigest() if turns and substantial else None
    replay_key = None
    usage = trial.usage
    # a millisecond latency alone collides by chance in big runs; with both token counts it cannot
    timed = None not in (trial.latency_s, usage.input_tokens, usage.output_tokens)
    if results and timed:
        returned.update(_bytes(f"{trial.latency_s!r}/{usage.input_tokens}/{usage.output_tokens}"))
        replay_key = returned.hexdigest()
    final_empty = last_assistant is not None and not (
        last_assistant.content.strip() or last_assistant.tool_calls
    )
    return TrialDigest(
        id=trial_id,
        task_id=trial.task_id,
        trial=trial.trial if trial.trial is not None else 0,
        outcome=trial.outcome,
        assistant_turns=turns,
        tool_calls=trial.tool_call_count,
        final_empty=final_empty,
        copy_key=copy_key,
        replay_key=replay_key,
        created=created,
        reads=reads,
        given=frozenset(given),
    )
