"""The audit's fingerprint of a trial (``metrics.audit_trial.digest_trial``), which reads only the
texts whose identifiers it keeps and looks up the rest by substring, against the straightforward
version that reads every text before the trial's last write (kept here as the oracle), on the
sample runs, the fixtures of every format, random trials full of identifiers and the real-world
corpus when it is there."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from reviewer.metrics.audit_trial import (
    MIN_COPY_CHARS,
    Creation,
    Read,
    TrialDigest,
    _args_text,
    _hash,
    _last_write,
    digest_trial,
    identifiers,
    is_write_tool,
)
from reviewer.models import Message, ToolCall, Trial, Usage
from reviewer.record import looks_like_error
from tests.conftest import CORPORA


def reference_digest(trial_id: str, trial: Trial) -> TrialDigest:
    """``digest_trial`` as it was written first: every text before the last write read for
    identifiers (the oracle the faster one is checked against)."""
    given = identifiers(trial.instruction)
    seen = set(given)
    calls: dict[str, tuple[str, str]] = {}  # call id -> (tool, arguments as text)
    created: dict[str, Creation] = {}
    reads: list[Read] = []
    wrote = False
    said: list[str] = []  # every assistant turn, in order, to fingerprint
    returned: list[str] = []  # every tool result, in order, to fingerprint
    turns = results = chars = 0
    last_assistant = None
    messages = trial.messages
    # what is seen matters only up to the last write: past it, only reads (before any write) and
    # the system prompt are read for identifiers
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
            seen |= found
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
                    seen |= identifiers(text)
                if c.id:
                    calls[c.id] = (c.name, text)
            add_said("\x03")
            if see:
                seen |= identifiers(content)
            continue
        if role != "tool":
            if see:
                seen |= identifiers(content)
            continue
        results += 1
        add_returned(content)
        add_returned("\x00")
        call_id = m.tool_call_id
        name, arguments = calls.get(call_id or "", (m.name or "", ""))
        name = m.name or name
        if is_write_tool(name):
            ok = not m.is_error and not looks_like_error(content)
            if ok:  # the call's own arguments are already in seen
                values = identifiers(content)
                for v in values - seen:
                    created.setdefault(v, Creation(i, name))
                wrote = True
                if see:
                    seen |= values
            elif see:
                seen |= identifiers(content)
        elif not wrote and call_id in calls:
            if not m.is_error and not looks_like_error(content):
                values = identifiers(content)
                reads.append(Read(f"{name}\x00{arguments}", name, i, values))
                if see:
                    seen |= values
            elif see:
                seen |= identifiers(content)
        elif see:
            seen |= identifiers(content)
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


def _same(a: TrialDigest, b: TrialDigest) -> None:
    assert a == b, (a, b)  # created is compared as a mapping: its order is no part of it


def _trials_of(paths: list[Path]) -> list[Trial]:
    from reviewer.ingest import parse

    out: list[Trial] = []
    for path in paths:
        try:
            items = list(parse(path))
        except Exception:  # a fixture of another kind (pairs, labels, a broken file on purpose)
            continue
        out += [t for t in items if isinstance(t, Trial)]
    return out


REPO = Path(__file__).resolve().parents[2]
FIXTURE_FILES = sorted(
    p
    for p in [*(REPO / "tests" / "fixtures").rglob("*"), *(REPO / "sample_runs").glob("*.jsonl")]
    if p.is_file() and p.suffix in {".jsonl", ".json", ".eval", ".traj"}
)


def test_the_sample_runs_and_every_formats_fixtures_digest_as_the_oracle_does() -> None:
    trials = _trials_of(FIXTURE_FILES)
    assert len(trials) > 500
    wrote = 0
    for t in trials:
        d = digest_trial("x", t)
        _same(d, reference_digest("x", t))
        wrote += bool(d.created)
    assert wrote  # writes that create identifiers were there to check


@pytest.mark.skipif(not CORPORA.is_dir(), reason="../shared/corpora is not beside the clone")
def test_the_real_world_corpus_digests_as_the_oracle_does() -> None:
    files = sorted(p for p in CORPORA.rglob("*") if p.is_file() and p.suffix != ".md")
    trials = _trials_of(files)
    assert trials
    for t in trials:
        _same(digest_trial("x", t), reference_digest("x", t))


def _random_trial(rng: random.Random) -> Trial:
    """A trial dense with identifiers that overlap: ids cut from one another's text (W12345 inside
    W123456, W12345-x, x-W12345), reads and writes, errors, calls without ids, tools without
    names."""
    pool = [f"W{rng.randint(10000, 10099)}" for _ in range(6)] + ["ORDER-AB", "HATHAT", "123456"]
    seps = [" ", "-", "_", ".", ":", "/", "#", "\n", ",", "é", ""]

    def text() -> str:
        parts = []
        for _ in range(rng.randint(0, 6)):
            word = rng.choice(pool) if rng.random() < 0.7 else rng.choice(["ok", "x", "ab9"])
            parts.append(word + rng.choice(seps))
        return "".join(parts)

    tools = ["get_order", "cancel_order", "book_flight", "lookup", "update_user", ""]
    messages = [Message("system", text())]
    for n in range(rng.randint(1, 14)):
        if rng.random() < 0.5:
            calls = [
                ToolCall(rng.choice(tools), {"id": text(), "n": rng.randint(0, 9)}, f"c{n}")
                if rng.random() < 0.8
                else ToolCall(rng.choice(tools), text(), None)
                for _ in range(rng.randint(0, 2))
            ]
            messages.append(Message("assistant", text(), calls))
            for c in calls:
                messages.append(
                    Message(
                        "tool",
                        rng.choice(["Error: no", ""]) + text(),
                        tool_call_id=c.id if rng.random() < 0.9 else "other",
                        name=c.name if rng.random() < 0.5 else None,
                        is_error=rng.random() < 0.1,
                    )
                )
        else:
            messages.append(Message(rng.choice(["user", "system"]), text()))
    trial = Trial(task_id="t", messages=messages, instruction=text())
    trial.usage = Usage(input_tokens=5, output_tokens=3)
    trial.latency_s = 1.5
    return trial


@pytest.mark.parametrize("seed", range(4))
def test_random_trials_full_of_overlapping_identifiers_digest_as_the_oracle_does(
    seed: int,
) -> None:
    rng = random.Random(seed)
    created = 0
    for _ in range(1500):
        t = _random_trial(rng)
        d = digest_trial("x", t)
        _same(d, reference_digest("x", t))
        created += len(d.created)
    assert created > 100
