"""OpenHands output.jsonl and saved trajectories, on OpenHands' own files (tests/fixtures/openhands).

Numbers checked by hand against the files: the resolver's output.jsonl line 1 (issue neubig/pr-viewer#5)
has 8 history events (the task message, 3 actions run / run_ipython / run each followed by its
observation, a finish action), success true, accumulated_cost 0.070713. basic.json is a list of 4
events (user message, an edit action and its observation, a finish action). The multi_swe_bench
output.jsonl (corpus only) has 3 lines: ponylang__ponyc-4595 with 49 events (2 of them recall
events), ponyc-4593 with 70, ponyc-4588 with 103 and an error "RuntimeError: Agent reached maximum
iteration…"; none carries a SWE-bench report, so all are unscored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest import openhands
from reviewer.models import Skip, Trial
from reviewer.store import open_store
from tests.conftest import CORPORA, FIXTURES, real_data

HERE = FIXTURES / "openhands"
REAL = CORPORA / "realworld" / "openhands"


def trials(path: Path) -> list[Trial]:
    out = list(openhands.parse(path))
    assert all(isinstance(t, Trial) for t in out), out
    return [t for t in out if isinstance(t, Trial)]


@pytest.mark.parametrize(
    "path",
    real_data(
        HERE / "output.jsonl",
        "realworld",
        "openhands",
        "tests__unit__resolver__mock_output__output.jsonl",
    ),
)
def test_resolver_output_takes_its_own_success_as_the_outcome(path: Path) -> None:
    first = trials(path)[0]
    assert first.task_id == "neubig/pr-viewer#5"
    assert first.passed is True
    assert [m.role for m in first.messages] == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]
    assert [c.name for m in first.messages for c in m.tool_calls] == [
        "run",
        "run_ipython",
        "run",
        "finish",
    ]
    assert first.messages[1].tool_calls[0].arguments["command"] == "touch LICENSE"
    assert first.messages[2].name == "run"
    assert first.usage.cost_usd == pytest.approx(0.070713)


@pytest.mark.parametrize(
    "path",
    real_data(HERE / "basic.json", "realworld", "openhands", "tests__runtime__trajs__basic.json"),
)
def test_a_saved_trajectory_is_one_unscored_trial(path: Path) -> None:
    (trial,) = trials(path)
    assert trial.passed is None and trial.reward is None
    assert [m.role for m in trial.messages] == ["user", "assistant", "tool", "assistant"]
    (edit,) = trial.messages[1].tool_calls
    assert (edit.name, edit.id) == ("str_replace_editor", "toolu_017nBp7UfiGqyrA7j77HgtFP")
    assert edit.arguments["command"] == "create"
    assert trial.messages[2].tool_call_id == "toolu_017nBp7UfiGqyrA7j77HgtFP"
    assert trial.messages[3].tool_calls[0].name == "finish"


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/corpora is not beside the checkout")
def test_the_multi_swe_bench_output_is_three_unscored_trials() -> None:
    got = trials(REAL / "evaluation__benchmarks__multi_swe_bench__examples__output.jsonl")
    assert [t.task_id for t in got] == [
        "ponylang__ponyc-4595",
        "ponylang__ponyc-4593",
        "ponylang__ponyc-4588",
    ]
    assert all(t.passed is None and t.reward is None for t in got)
    # 49 events less the recall action and its observation
    assert len(got[0].messages) == 47
    assert (got[0].usage.input_tokens, got[0].usage.output_tokens) == (565158, 2558)
    assert got[0].metadata["model"] == "openai/openrouter-llama-4-maverick"
    assert got[2].error is not None and got[2].error.type == "RuntimeError"
    assert "maximum iteration" in (got[2].error.message or "")
    # error observations carry no tool_call_metadata: they answer the call their cause names
    errors = [m for m in got[0].messages if m.role == "tool" and m.is_error]
    assert errors and all(m.tool_call_id for m in errors)


def test_a_swe_bench_report_in_the_record_is_the_outcome(tmp_path: Path) -> None:
    line = {
        "instance_id": "django__django-1",
        "history": [{"id": 1, "source": "user", "action": "message", "args": {"content": "fix"}}],
        "test_result": {"git_patch": "diff", "report": {"resolved": False}},
    }
    f = tmp_path / "output.jsonl"
    f.write_text(json.dumps(line) + "\n")
    (trial,) = trials(f)
    assert trial.passed is False and trial.metadata["git_patch"] == "diff"


def test_bad_lines_are_skips_with_file_and_line(tmp_path: Path) -> None:
    good = {"instance_id": "a", "history": []}
    f = tmp_path / "output.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps(good),
                '{"instance_id": ',
                "[]",
                json.dumps({"history": []}),
                json.dumps({"instance_id": "b", "history": "x"}),
                json.dumps(
                    {
                        "instance_id": "c",
                        "history": [None, {"action": 5}, {"observation": "run", "cause": []}],
                    }
                ),
            ]
        )
        + "\n"
    )
    items = list(openhands.parse(f))
    skips = [(i.line, i.reason) for i in items if isinstance(i, Skip)]
    assert [s[0] for s in skips] == [2, 3, 4, 5]
    assert "no instance_id" in skips[2][1] and "no history list" in skips[3][1]
    assert [t.task_id for t in items if isinstance(t, Trial)] == ["a", "c"]


def test_every_fixture_is_sniffed_as_openhands() -> None:
    for path in (HERE / "output.jsonl", HERE / "basic.json"):
        assert ingest.sniff(path) is openhands, path


def test_reviewer_import_stores_the_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "r.db"), "import", str(HERE / "output.jsonl")]
    )
    assert result.exit_code == 0, result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute("SELECT task_id, n_messages, success FROM trials").fetchall()
    finally:
        db.close()
    assert [tuple(r) for r in rows] == [("neubig/pr-viewer#5", 8, 1)]
