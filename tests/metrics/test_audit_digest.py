"""The audit's fingerprint of a trial (``metrics.audit_trial.digest_trial``), which reads only the
texts whose identifiers it keeps and looks up the rest by substring, against the straightforward
version that reads every message for identifiers (``tests/support/audit_reference.py``), on the
sample runs, the fixtures of every format, random trials full of identifiers and the real-world
corpus when it is there."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from reviewer.metrics.audit_trial import TrialDigest, digest_trial
from reviewer.models import Message, ToolCall, Trial, Usage
from tests.conftest import CORPORA
from tests.support.audit_reference import reference_digest


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
