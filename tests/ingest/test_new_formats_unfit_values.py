"""A value the store cannot keep (NaN, ±Infinity, an integer beyond 64 bits) in any of the new
formats is a Skip naming the file and the place, never a stored trial or an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.ingest import IngestError, atif, claude_code, openhands, otel_genai, swe_agent
from reviewer.models import Skip, Trial
from tests.conftest import FIXTURES


def test_nan_in_a_claude_code_line_stops_the_file_with_file_line(tmp_path: Path) -> None:
    lines = (FIXTURES / "claude_code" / "tool_call_conversation.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"output_tokens":50', '"output_tokens":NaN')
    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(lines) + "\n")
    # the session is stored whole or not at all (it was stored cut short at that line)
    with pytest.raises(IngestError) as caught:
        list(claude_code.parse(f))
    assert (caught.value.file, caught.value.line) == (str(f), 2)
    assert "message.usage.output_tokens: NaN" in caught.value.reason


def test_nan_in_an_openhands_line_is_skipped_with_file_line(tmp_path: Path) -> None:
    f = tmp_path / "output.jsonl"
    f.write_text(
        json.dumps({"instance_id": "a", "history": []})
        + "\n"
        + '{"instance_id": "b", "history": [], "metrics": {"accumulated_cost": Infinity}}\n'
    )
    items = list(openhands.parse(f))
    assert isinstance(items[0], Trial)
    assert isinstance(items[1], Skip) and items[1].line == 2 and "Infinity" in items[1].reason


def test_nan_in_a_whole_file_format_is_a_skip_not_a_trial(tmp_path: Path) -> None:
    traj = json.loads((FIXTURES / "atif" / "openhands_hello-world.trajectory.json").read_text())
    traj["final_metrics"]["total_cost_usd"] = float("nan")
    a = tmp_path / "x.trajectory.json"
    a.write_text(json.dumps(traj))
    s = tmp_path / "t.traj"
    s.write_text('{"trajectory": [], "info": {"model_stats": {"tokens_sent": 1e999}}}')
    for fmt, path in ((atif, a), (swe_agent, s)):
        (item,) = list(fmt.parse(path))
        assert isinstance(item, Skip) and item.file == str(path), item


def test_otlp_nan_and_oversized_numbers_never_reach_a_trial(tmp_path: Path) -> None:
    def span(attrs: list[tuple[str, dict[str, str]]]) -> dict[str, object]:
        return {
            "traceId": "t1",
            "spanId": "s1",
            "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]
            + [{"key": k, "value": v} for k, v in attrs],
            "events": [
                {
                    "name": "gen_ai.evaluation.result",
                    "attributes": [
                        {"key": "gen_ai.evaluation.score.value", "value": {"doubleValue": "NaN"}}
                    ],
                }
            ],
        }

    f = tmp_path / "t.json"
    f.write_text(
        json.dumps(
            {
                "resourceSpans": [
                    {
                        "scopeSpans": [
                            {
                                "spans": [
                                    span(
                                        [
                                            (
                                                "gen_ai.usage.input_tokens",
                                                {"intValue": "99999999999999999999999"},
                                            ),
                                            ("gen_ai.usage.output_tokens", {"intValue": "7"}),
                                        ]
                                    )
                                ]
                            }
                        ]
                    }
                ]
            }
        )
    )
    (trial,) = list(otel_genai.parse(f))
    assert isinstance(trial, Trial)
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (None, 7)
    assert trial.reward is None and trial.passed is None
