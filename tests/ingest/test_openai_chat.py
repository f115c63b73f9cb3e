"""OpenAI chat JSONL importer: the hand-made fixture and broken lines written in tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.ingest import inspect_log, openai_chat, tau2_bench, tau_bench
from reviewer.ingest.base import IngestError
from reviewer.models import Skip, Trial

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "openai_chat" / "support.jsonl"


def head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(64 * 1024)


def convo(user: str = "Refund order #W5521 please", **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "messages": [{"role": "user", "content": user}, {"role": "assistant", "content": "Done."}],
        "passed": True,
    }
    rec.update(extra)
    return rec


def trials_of(path: Path) -> list[Trial]:
    out = list(openai_chat.parse(path))
    assert all(isinstance(r, Trial) for r in out), out
    return [r for r in out if isinstance(r, Trial)]


def test_fixture_trials() -> None:
    trials = trials_of(FIXTURE)
    assert len(trials) == 5
    t1, t2, t3, t4, t5 = trials
    assert (t1.task_id, t1.run, t1.trial, t1.passed, t1.reward) == (
        "refund_simple",
        "support-v2",
        1,
        True,
        None,
    )
    assert t1.usage.input_tokens == 812 and t1.usage.output_tokens == 64
    assert t1.usage.cost_usd == pytest.approx(0.0031) and t1.latency_s == pytest.approx(3.2)
    assert not t2.success and t2.reason == "refunded 40.00, expected 25.00"
    assert t3.task_id == "order_status" and t3.metadata["model"] == "gpt-4o-mini"
    assert t3.reward == 0.0 and t3.error is not None and t3.error.type == "ToolError"
    assert t3.tool_errors == 1  # "Error: ..." tool content reads as an error
    assert t4.task_id == t5.task_id  # same first user message, same derived task
    assert t4.task_id.startswith("can-i-change-the-shipping-address-")
    assert len(t4.task_id.rsplit("-", 1)[1]) == 8
    assert t4.success and not t5.success and t5.reward == 0.5
    assert t4.run is None and t4.trial is None


def test_fingerprint_is_the_raw_line_and_source_line_its_number() -> None:
    lines = FIXTURE.read_bytes().splitlines()
    trials = trials_of(FIXTURE)
    assert [t.fingerprint for t in trials] == lines
    assert [t.source_line for t in trials] == [1, 2, 3, 4, 5]


def test_tool_call_arguments_are_dicts() -> None:
    calls = [c for t in trials_of(FIXTURE) for m in t.messages for c in m.tool_calls]
    assert len(calls) == 5
    assert all(isinstance(c.arguments, dict) and c.name == "get_order" for c in calls)
    assert calls[0].arguments == {"order_id": "W5521"} and calls[0].id == "call_1"


def test_bad_lines_become_skips_and_parsing_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        json.dumps(convo(task_id="a")).encode(),
        b"",
        b'{"messages": [oops',
        '{"messages": [], "passed": true, "note": "caf\u00e9"}'.encode("latin-1"),
        json.dumps({"passed": True}).encode(),
        json.dumps(convo(passed=None)).encode(),
        json.dumps(convo(passed="yes")).encode(),
        b"[1, 2]",
        json.dumps(convo(task_id="a", trial=2)).encode(),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = list(openai_chat.parse(path))
    # "passed": null is an unscored conversation (line 6), not a bad line
    assert [type(r).__name__ for r in out] == ["Trial"] + ["Skip"] * 3 + ["Trial"] + [
        "Skip"
    ] * 2 + ["Trial"]
    assert isinstance(out[4], Trial) and out[4].outcome == "unscored"
    skips = [r for r in out if isinstance(r, Skip)]
    assert [s.line for s in skips] == [3, 4, 5, 7, 8]
    assert skips[0].reason.startswith("invalid JSON: ")
    assert skips[1].reason == "not UTF-8: byte 0xe9 at column 46"
    assert skips[2].reason == "no messages list"
    assert skips[3].reason == "passed must be true or false, got 'yes'"
    assert skips[4].reason == "not a JSON object (list)"
    # a conversation with neither passed nor reward (a fine-tuning or production log) is unscored
    (no_field,) = openai_chat.parse(write_lines(tmp_path, {"messages": convo()["messages"]}))
    assert isinstance(no_field, Trial) and no_field.outcome == "unscored"
    assert str(skips[0]).startswith(f"{path}:3: invalid JSON")
    last = out[-1]
    assert isinstance(last, Trial) and last.source_line == 9 and last.trial == 2


def write_lines(tmp_path: Path, *recs: dict[str, Any]) -> Path:
    path = tmp_path / "more.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_task_id_fallbacks(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    recs = [
        convo(task_id=7),
        convo(metadata={"task_id": "from-meta"}),
        convo("  Hello, World!  "),
        {"messages": [{"role": "system", "content": "only a system prompt"}], "reward": 1},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    *trials, skip = list(openai_chat.parse(path))
    ids = [t.task_id for t in trials if isinstance(t, Trial)]
    assert ids[:2] == ["7", "from-meta"]
    assert ids[2].startswith("hello-world-") and len(ids[2]) == len("hello-world-") + 8
    assert isinstance(skip, Skip)
    assert skip.reason == "no task_id and no user message to derive one from"


def test_unreadable_file_raises(tmp_path: Path) -> None:
    with pytest.raises(IngestError, match="cannot read"):
        list(openai_chat.parse(tmp_path / "missing.jsonl"))


def test_sniff_own_format_and_not_the_others(tmp_path: Path) -> None:
    assert openai_chat.sniff(FIXTURE, head(FIXTURE))
    native = tmp_path / "native.jsonl"
    native.write_text(json.dumps(convo(task_id="t", outcome={"passed": True})) + "\n")
    assert not openai_chat.sniff(native, head(native))
    no_outcome = tmp_path / "plain.jsonl"
    no_outcome.write_text(json.dumps({"messages": []}) + "\n")
    assert not openai_chat.sniff(no_outcome, head(no_outcome))
    # chat messages with neither passed nor reward: unscored conversations, read here
    unscored = tmp_path / "unscored.jsonl"
    unscored.write_text(json.dumps({"messages": convo()["messages"]}) + "\n")
    assert openai_chat.sniff(unscored, head(unscored))
    txt = tmp_path / "chat.txt"
    txt.write_bytes(FIXTURE.read_bytes())
    assert not openai_chat.sniff(txt, head(txt))
    long = tmp_path / "long.jsonl"
    long.write_text(json.dumps({"reward": 1.0, **convo("x" * 100_000)}) + "\n")
    assert openai_chat.sniff(long, head(long))  # a first line cut by the head: judged by its keys
    blank_first = tmp_path / "blank.jsonl"
    blank_first.write_text("\n\n" + json.dumps(convo()) + "\n")
    assert openai_chat.sniff(blank_first, head(blank_first))
    for mod in (tau_bench, tau2_bench, inspect_log):
        assert not mod.sniff(FIXTURE, head(FIXTURE)), mod.NAME
    others = [FIXTURES / "tau2" / "airline-small.json"]
    real = FIXTURES
    others += [
        real / "tau_bench" / "gpt-4o-airline-5-tasks.json",
        real / "inspect" / "support.json",
        real / "inspect" / "support.eval",
    ]
    for other in others:
        assert not openai_chat.sniff(other, head(other)), other
