"""The monitor's per-conversation pieces: times, the built-in checks, signals, the seeded sample,
windows and the Wilson interval."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviewer.metrics.monitor import (
    Facts,
    build_windows,
    closing,
    in_sample,
    lookup,
    parse_time,
    record_time,
    signal_value,
    unresolved,
    user_repeated,
    wilson,
    window_start,
)
from reviewer.models import Message, ToolCall, Trial
from tests.conftest import REPO, run_cli


def _msgs(*pairs: tuple[str, str]) -> list[Message]:
    return [Message(role=r, content=c) for r, c in pairs]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-06-10T14:03:00Z", datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),
        ("2025-06-10T16:03:00+02:00", datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),
        ("2025-06-10 14:03:00", datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),  # naive: UTC
        ("2025-06-10", datetime(2025, 6, 10, tzinfo=UTC)),
        (1749564180, datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),
        (1749564180000, datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),  # milliseconds
        (1749564180000000000, datetime(2025, 6, 10, 14, 3, tzinfo=UTC)),  # nanoseconds
        ("yesterday", None),
        (True, None),
        (float("nan"), None),
        (-5, None),
        (None, None),
    ],
)
def test_parse_time(value: object, expected: datetime | None) -> None:
    assert parse_time(value) == expected


def test_record_time_top_level_then_metadata() -> None:
    assert record_time({"started_at": "2025-06-01T00:00:00Z"}) == datetime(2025, 6, 1, tzinfo=UTC)
    assert record_time({"metadata": {"timestamp": 1748736000}}) == datetime(2025, 6, 1, tzinfo=UTC)
    assert record_time({"started_at": "bad", "metadata": {"started_at": "2025-06-02"}}) == datetime(
        2025, 6, 2, tzinfo=UTC
    )
    assert record_time({"metadata": {}}) is None


def test_user_repeat_check() -> None:
    ask = "I want a refund for order #W5521, the jacket arrived torn"
    again = _msgs(
        ("user", ask),
        ("assistant", "Which order?"),
        ("user", "Like I said: refund order #W5521, the jacket arrived torn"),
    )
    assert user_repeated(again)
    different = _msgs(
        ("user", ask),
        ("assistant", "Done."),
        ("user", "Thanks! Could you also update my shipping address to Elm street?"),
    )
    assert not user_repeated(different)
    assert not user_repeated(_msgs(("user", "yes"), ("user", "yes")))  # too short to say


def test_unresolved_check() -> None:
    assert unresolved(_msgs(("user", "hi"), ("assistant", "Done, refunded."), ("user", "no!")))
    assert not unresolved(_msgs(("user", "refund"), ("assistant", "Done, refunded.")))
    assert unresolved(
        _msgs(("user", "cancel"), ("assistant", "I'm transferring you to a specialist."))
    )
    assert unresolved(_msgs(("user", "x"), ("assistant", "System's down, please try later.")))
    calls = [Message(role="assistant", tool_calls=[ToolCall("get_order")])]
    assert unresolved(_msgs(("user", "x")) + calls)
    assert unresolved([])


@pytest.mark.parametrize(
    "last",
    [
        "Thanks!",
        "Perfect, thank you so much for your help.",
        "Great, that's all I needed. Have a good day!",
        "ok bye",
        "Thank you for your help! ###STOP###",  # tau-bench's simulated user, done
        "No, that's all. Thank you!",
        "ok thanks, will do",
        "Thanks so much, have a great weekend",
        "###STOP###",
    ],
)
def test_a_thank_you_after_the_answer_leaves_it_resolved(last: str) -> None:
    """A user's closing words after the agent's answer do not make the conversation unresolved:
    the agent's last turn decides (a thank-you after a hand-over is still unresolved)."""
    done = _msgs(("user", "refund #W1"), ("assistant", "Done, refunded."), ("user", last))
    assert closing(last) and not unresolved(done)
    handed = _msgs(
        ("user", "refund #W1"),
        ("assistant", "I'm transferring you to a specialist."),
        ("user", last),
    )
    assert unresolved(handed)
    assert unresolved(_msgs(("user", last)))  # no answer at all


@pytest.mark.parametrize(
    "last",
    [
        "no!",
        "Thanks, but it still doesn't work",
        "thanks. can you also change my address?",
        "Great, what about my other order",
        "I want to speak to a human ###TRANSFER###",
        "That is not what I asked for, thanks for nothing",
        "Thanks! " + "I also need my flight moved to Friday and my seat changed. " * 4,
        "Great, now cancel my other order too.",  # a request said with thanks (found by a review)
        "Perfect. Refund it to my card.",
        "Thanks. Cancel W2.",
    ],
)
def test_a_request_or_complaint_last_is_unresolved(last: str) -> None:
    assert not closing(last)
    assert unresolved(
        _msgs(("user", "refund #W1"), ("assistant", "Done, refunded."), ("user", last))
    )


def test_tau_bench_conversations_are_not_all_unresolved() -> None:
    """Every tau-bench conversation ends with the simulated user's ###STOP### or a transfer: the
    check fired on all of them (the user spoke last), a rate that could never alert. Now the
    agent's last turn decides: on the 5-task subset the 6 trials handed to a human or ended by
    a tool call, of 20."""
    from reviewer.ingest import parse

    path = REPO / "tests" / "fixtures" / "tau_bench" / "gpt-4o-airline-5-tasks.json"
    trials = [t for t in parse(path) if isinstance(t, Trial)]
    fired = [t for t in trials if unresolved(t.messages)]
    assert len(trials) == 20 and len(fired) == 6
    for t in trials:
        talk = [m for m in t.messages if m.role in ("user", "assistant", "tool")]
        if talk[-1].role == "tool":  # "Transfer successful": handed over
            assert t in fired


def test_signals_and_lookup() -> None:
    rec = {"metadata": {"escalated": True, "csat": {"thumbs_down": 0}}, "reopened": "yes"}
    assert signal_value(lookup(rec, "escalated")) is True
    assert signal_value(lookup(rec, "csat.thumbs_down")) is False
    assert signal_value(lookup(rec, "reopened")) is True
    assert signal_value(lookup(rec, "missing")) is None
    assert signal_value("maybe") is None and signal_value(2.5) is True


def test_sample_is_seeded_stable_and_near_its_share() -> None:
    ids = [f"{i:020x}" for i in range(20000)]
    first = [t for t in ids if in_sample(t, 0.02, 0)]
    assert first == [t for t in ids if in_sample(t, 0.02, 0)]  # the same every time
    assert first == [t for t in reversed(ids) if in_sample(t, 0.02, 0)][::-1]  # any order
    assert 0.016 < len(first) / len(ids) < 0.024
    other = [t for t in ids if in_sample(t, 0.02, 1)]
    assert len(set(first) & set(other)) < len(first) / 4  # another seed, another sample


def test_windows_fill_gaps_and_count_rates() -> None:
    facts = [
        Facts("a", "2025-06-01T10:00:00+00:00", ("tool_error",), 4, 1, {"escalated": True}),
        Facts("b", "2025-06-01T23:59:59+00:00", (), 2, 0, {"escalated": None}),
        Facts("c", "2025-06-03T00:00:00+00:00", ("unresolved",), 0, 0, {"escalated": False}),
        Facts("d", None, ("unresolved",), 0, 0, {}),
    ]
    ws = build_windows(
        facts, "day", {"a": "fail", "b": "pass"}, ["tool_error", "unresolved", "signal:escalated"]
    )
    assert [w.start for w in ws] == ["2025-06-01", "2025-06-02", "2025-06-03"]
    one = ws[0]
    assert one.conversations == 2 and ws[1].conversations == 0
    assert (one.rates["tool_error"].bad, one.rates["tool_error"].n) == (1, 2)
    assert (one.rates["signal:escalated"].bad, one.rates["signal:escalated"].n) == (1, 1)
    assert (one.rates["tool_error_rate"].bad, one.rates["tool_error_rate"].n) == (1, 6)
    assert (one.judge_pass.bad, one.judge_pass.n) == (1, 2)
    assert one.flagged == 1  # a: tool error, judge fail, escalated; b: nothing
    assert window_start("2025-06-01T10:59:00+00:00", "hour") == "2025-06-01T10:00"


def test_wilson_interval_against_known_values() -> None:
    # Wilson (1927) / Newcombe (1998) table: 8 of 10 -> 0.490 .. 0.943; 0 of 10 -> 0 .. 0.278
    lo, hi = wilson(8, 10) or (0, 0)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    lo, hi = wilson(0, 10) or (0, 0)
    assert (round(lo, 3), round(hi, 3)) == (0.0, 0.278)
    assert wilson(0, 0) is None


def test_otel_traces_carry_their_start_time_for_the_monitor() -> None:
    from reviewer.ingest import otel_genai
    from tests.conftest import FIXTURES

    files = sorted((FIXTURES / "otel_genai").glob("*.json*"))
    trials = [t for f in files for t in otel_genai.parse(f) if hasattr(t, "metadata")]
    assert trials
    for t in trials:
        started = t.metadata.get("started_at")
        assert started is not None and record_time({"metadata": t.metadata}) is not None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0001-01-01T00:00:00+14:00", datetime.min.replace(tzinfo=UTC)),
        ("9999-12-31T23:59:59-14:00", datetime.max.replace(tzinfo=UTC)),
    ],
)
def test_an_offset_past_the_first_or_last_year_is_a_time_refused_not_a_crash(
    value: str, expected: datetime, tmp_path: Path
) -> None:
    """A time of year 1 or 9999 whose offset takes it past the calendar ('0001-01-01T00:00:00+14:00')
    stopped `reviewer monitor` with an internal error (OverflowError: date value out of range, exit
    70) on every run of the store: it is the first or last time there is, which no window takes."""
    assert parse_time(value) == expected
    src = tmp_path / "m.jsonl"
    src.write_text(
        "".join(
            json.dumps(
                {
                    "run": "prod",
                    "task_id": f"c{i}",
                    "outcome": None,
                    "messages": [{"role": "user", "content": "hi"}],
                    "started_at": t,
                }
            )
            + "\n"
            for i, t in enumerate([value, "2026-01-02T10:00:00Z"])
        )
    )
    db = str(tmp_path / "x.db")
    assert run_cli("--db", db, "import", str(src))[0] == 0
    code, out, err = run_cli("--db", db, "monitor", "--json")
    assert code == 0, err
    assert json.loads(out)["conversations"] == 1
