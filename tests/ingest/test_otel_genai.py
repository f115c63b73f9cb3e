"""OpenTelemetry GenAI spans (OTLP JSON), on a file written from the semantic conventions
(tests/fixtures/otel_genai/two_traces.otlp.json; its SOURCE.md names the documents and the version).

Numbers checked by hand against the file: trace 5b8e… has 4 spans (invoke_agent, chat with a
get_weather call, execute_tool, chat with the answer), chat usage 100+150 input and 20+30 output
tokens, a `pass` evaluation on the root span; trace 0af7… has 3 spans (invoke_agent with status ERROR,
chat with a reasoning part and a book_table call, execute_tool with status ERROR), usage 80/25, a
`fail` evaluation with score 0.0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest import otel_genai
from reviewer.models import Skip, Trial
from reviewer.store import open_store
from tests.conftest import FIXTURES

FILE = FIXTURES / "otel_genai" / "two_traces.otlp.json"
WEATHER = "5b8efff798038103d269b633813fc60c"
BOOKING = "0af7651916cd43dd8448eb211c80319c"


def trials(path: Path) -> list[Trial]:
    out = list(otel_genai.parse(path))
    assert all(isinstance(t, Trial) for t in out), out
    return [t for t in out if isinstance(t, Trial)]


def test_one_trace_is_one_trial_with_the_conversation_in_order() -> None:
    weather, booking = trials(FILE)
    assert (weather.task_id, booking.task_id) == (WEATHER, BOOKING)
    assert [m.role for m in weather.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert weather.messages[0].content == "You are a weather agent. Use the get_weather tool."
    (call,) = weather.messages[2].tool_calls
    assert (call.name, call.id, call.arguments) == (
        "get_weather",
        "call_VSPygqKTWdrhaFErNvMV18Yl",
        {"location": "Paris"},
    )
    tool = weather.messages[3]
    assert (tool.tool_call_id, tool.name, tool.content) == (
        "call_VSPygqKTWdrhaFErNvMV18Yl",
        "get_weather",
        "rainy, 57°F",
    )
    assert weather.messages[4].content.startswith("The weather in Paris is currently rainy")
    assert (weather.usage.input_tokens, weather.usage.output_tokens) == (250, 50)
    assert weather.latency_s == pytest.approx(4.0)
    assert weather.metadata["agent"] == "weather-agent"
    assert weather.metadata["service"] == "agents-demo"
    assert weather.metadata["model"] == "gpt-4o, gpt-4o-2024-08-06"


def test_evaluation_events_are_the_outcome() -> None:
    weather, booking = trials(FILE)
    assert (weather.passed, weather.reward, weather.success) == (True, 1.0, True)
    assert weather.metadata["evaluations"][0]["name"] == "goal_completion"
    assert (booking.passed, booking.reward) == (False, 0.0)
    assert booking.reason == "The table was not booked and the user was not told why."


def test_structured_messages_reasoning_and_a_failed_tool_span() -> None:
    _, booking = trials(FILE)
    assert [m.role for m in booking.messages] == ["user", "assistant", "tool"]
    assert booking.messages[0].content == "Book a table for two at 8pm"  # kvlist/array values
    assert booking.messages[1].content == "[thinking] I should call book_table."
    tool = booking.messages[2]
    assert tool.is_error and tool.content == "restaurant closed"
    assert booking.tool_errors == 1
    assert booking.error is not None and booking.error.message == "tool book_table failed"


def test_without_evaluations_a_trace_is_unscored(tmp_path: Path) -> None:
    data = json.loads(FILE.read_text())
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span.pop("events", None)
    f = tmp_path / "t.json"
    f.write_text(json.dumps(data))
    assert all(t.passed is None and t.reward is None for t in trials(f))


def test_tool_spans_alone_still_show_the_calls(tmp_path: Path) -> None:
    # content capture off: no messages on chat spans, only tool names and ids
    data = json.loads(FILE.read_text())
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [
            a
            for a in span["attributes"]
            if a["key"] not in ("gen_ai.input.messages", "gen_ai.output.messages")
        ]
    f = tmp_path / "t.json"
    f.write_text(json.dumps(data))
    weather, _ = trials(f)
    assert [m.role for m in weather.messages] == ["system", "assistant", "tool"]
    assert weather.tool_call_count == 1


def test_otlp_json_lines_one_request_per_line(tmp_path: Path) -> None:
    data = json.loads(FILE.read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]

    def request(subset: list[Any]) -> str:
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": subset}]}]})

    f = tmp_path / "traces.jsonl"
    f.write_text(
        "\n".join([request(spans[:2]), "{broken", request(spans[2:]), json.dumps({"x": 1})]) + "\n"
    )
    assert ingest.sniff(f) is otel_genai
    items = list(otel_genai.parse(f))
    skips = [(i.line, i.reason) for i in items if isinstance(i, Skip)]
    assert skips == [
        (2, "invalid JSON: Expecting property name enclosed in double quotes at column 2"),
        (4, "not an OTLP trace export (no resourceSpans list)"),
    ]
    got = [i for i in items if isinstance(i, Trial)]
    assert [t.task_id for t in got] == [WEATHER, BOOKING]
    assert len(got[0].messages) == 5  # spans of one trace spread over two lines


def test_hostile_spans_never_raise(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(
        json.dumps(
            {
                "resourceSpans": [
                    None,
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    7,
                                    {"name": "no trace id"},
                                    {"traceId": "t1", "attributes": [{"key": "x"}]},
                                    {
                                        "traceId": "t2",
                                        "attributes": [
                                            {
                                                "key": "gen_ai.operation.name",
                                                "value": {"stringValue": "chat"},
                                            },
                                            {
                                                "key": "gen_ai.input.messages",
                                                "value": {"stringValue": "[{bad"},
                                            },
                                            {
                                                "key": "gen_ai.usage.input_tokens",
                                                "value": {"intValue": "x"},
                                            },
                                        ],
                                        "events": [None, {"name": "gen_ai.evaluation.result"}],
                                    },
                                ]
                            }
                        ]
                    },
                ]
            }
        )
    )
    items = list(otel_genai.parse(f))
    assert any(isinstance(i, Skip) and "no gen_ai spans" in i.reason for i in items)
    assert any(isinstance(i, Trial) and i.task_id == "t2" for i in items)
    f.write_text('{"resourceSpans": [')
    with pytest.raises(ingest.IngestError, match="invalid JSON"):
        list(otel_genai.parse(f))


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("NaN", "resource.service.name: NaN is not a number"),
        ("1e400", "resource.service.name: Infinity is not a number"),
        ("99999999999999999999999", "resource.service.name: integer out of range"),
        ('"\\ud800"', "resource.service.name: has a lone surrogate"),
    ],
)
def test_a_resource_attribute_the_store_cannot_keep_skips_its_trace(
    tmp_path: Path, value: str, why: str
) -> None:
    """A resource attribute goes into every trial's metadata as it is: a value the store cannot
    keep there skips the traces it belongs to, named, as one in a span does (it was stored)."""
    text = FILE.read_text(encoding="utf-8")
    assert text.count('"stringValue": "agents-demo"') == 1
    f = tmp_path / "t.json"
    f.write_text(text.replace('"stringValue": "agents-demo"', f'"stringValue": {value}'))
    items = list(otel_genai.parse(f))
    skips = [i for i in items if isinstance(i, Skip)]
    assert len(skips) == 2 and not any(isinstance(i, Trial) for i in items), items
    assert all(why in s.reason for s in skips), skips


def test_the_fixture_is_sniffed_as_otel() -> None:
    assert ingest.sniff(FILE) is otel_genai


def test_reviewer_import_stores_both_traces(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(FILE)])
    assert result.exit_code == 0, result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute(
            "SELECT task_id, n_messages, success FROM trials ORDER BY task_id"
        ).fetchall()
    finally:
        db.close()
    assert [tuple(r) for r in rows] == [(BOOKING, 3, 0), (WEATHER, 5, 1)]
