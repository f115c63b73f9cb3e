"""SWE-agent ``.traj`` files and the ``all_preds.jsonl`` beside them, on SWE-agent's own test data.

Numbers checked by hand against the files: swe-agent__test-repo-i1.traj has 5 trajectory steps and
12 history entries (system, a demonstration, the issue, 5 assistant actions and the 4 observations
between them: the final submit has none),
info.exit_status "submitted", model_stats tokens_sent 52861, tokens_received 326, instance_cost
0.53839. pydicom__pydicom-1458.traj (corpus only): 12 steps, 26 history entries (one demonstration),
122612 / 1369 tokens, $1.26719. marshmallow-code__marshmallow-1867.traj (corpus only, function
calling): 11 steps, 24 history entries with tool_calls and role "tool" replies.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest import swe_agent
from reviewer.models import Trial
from reviewer.store import open_store
from tests.conftest import CORPORA, FIXTURES, real_data

HERE = FIXTURES / "swe_agent"
RUN = "tests__test_data__trajectories__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__"
DEV = "tests__test_data__trajectories__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__"
REAL = CORPORA / "realworld" / "swe_agent"


def only_trial(path: Path) -> Trial:
    items = list(swe_agent.parse(path))
    assert len(items) == 1 and isinstance(items[0], Trial), items
    return items[0]


@pytest.mark.parametrize(
    "path",
    real_data(
        HERE / "swe-agent__test-repo-i1.traj",
        "realworld",
        "swe_agent",
        RUN + "swe-agent__test-repo-i1.traj",
    ),
)
def test_a_traj_is_one_unscored_trial_from_its_history(path: Path) -> None:
    trial = only_trial(path)
    assert trial.passed is None and trial.reward is None
    # system, issue, 4 × (assistant, observation), the final submit; the demonstration left out
    roles = ["system", "user"] + ["assistant", "tool"] * 4 + ["assistant"]
    assert [m.role for m in trial.messages] == roles
    assert trial.tool_call_count == 5
    first = trial.messages[2].tool_calls[0]
    assert (first.name, first.arguments) == (
        "find_file",
        {"command": 'find_file "missing_colon.py"'},
    )
    assert trial.messages[3].name == "find_file"
    assert trial.termination == "submitted"
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (52861, 326)
    assert trial.usage.cost_usd == pytest.approx(0.53839)
    assert "missing_colon.py" in trial.metadata["submission"]
    assert trial.task_id.endswith("swe-agent__test-repo-i1")


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/corpora is not beside the checkout")
def test_the_other_real_trajectories_parse_with_their_step_counts() -> None:
    pydicom = only_trial(REAL / (DEV + "pydicom__pydicom-1458.traj"))
    assert pydicom.tool_call_count == 12 and pydicom.assistant_turns == 12
    assert (pydicom.usage.input_tokens, pydicom.usage.output_tokens) == (122612, 1369)
    (marsh,) = [only_trial(p) for p in REAL.glob("*marshmallow-code__marshmallow-1867.traj")]
    assert marsh.tool_call_count == 11
    tool = marsh.messages[3]
    assert tool.role == "tool" and tool.tool_call_id == "call_cyI71DYnRdoLHWwtZgIaW2wr"
    assert tool.name == "create"


@pytest.mark.parametrize(
    "path", real_data(HERE / "all_preds.jsonl", "realworld", "swe_agent", DEV + "all_preds.jsonl")
)
def test_all_preds_is_refused_as_predictions_not_read_as_another_format(path: Path) -> None:
    assert ingest.sniff(path) is swe_agent
    with pytest.raises(ingest.IngestError, match="predictions .* not trajectories"):
        list(swe_agent.parse(path))


def test_a_trajectory_without_history_uses_its_steps(tmp_path: Path) -> None:
    f = tmp_path / "t-1.traj"
    f.write_text(
        json.dumps(
            {
                "trajectory": [
                    {"response": "look", "action": "ls -la", "observation": "a b"},
                    {"thought": "done", "action": "submit", "observation": None},
                ],
                "info": {"exit_status": "exit_cost", "model_stats": {"instance_cost": "x"}},
            }
        )
    )
    trial = only_trial(f)
    assert [m.role for m in trial.messages] == ["assistant", "tool", "assistant"]
    assert trial.task_id == "t-1" and trial.termination == "exit cost"
    assert trial.usage.cost_usd is None


def test_damaged_and_hostile_files(tmp_path: Path) -> None:
    f = tmp_path / "x.traj"
    f.write_text('{"trajectory": [')
    with pytest.raises(ingest.IngestError, match="invalid JSON"):
        list(swe_agent.parse(f))
    f.write_text(
        json.dumps(
            {"trajectory": [None], "history": [None, {"role": "assistant", "tool_calls": [3]}]}
        )
    )
    assert isinstance(only_trial(f), Trial)
    f.write_text(json.dumps({"trajectory": {}}))
    with pytest.raises(ingest.IngestError, match="no trajectory list"):
        list(swe_agent.parse(f))


def test_every_fixture_is_sniffed_as_swe_agent() -> None:
    for path in (HERE / "swe-agent__test-repo-i1.traj", HERE / "all_preds.jsonl"):
        assert ingest.sniff(path) is swe_agent, path


def test_reviewer_import_stores_the_traj_and_refuses_the_predictions(tmp_path: Path) -> None:
    # a .traj is imported by naming the file: the folder walk looks for .eval/.json/.jsonl/.ndjson only
    traj = shutil.copy(HERE / "swe-agent__test-repo-i1.traj", tmp_path)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(traj)])
    assert result.exit_code == 0, result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute("SELECT task_id, n_messages FROM trials").fetchall()
    finally:
        db.close()
    assert [tuple(r) for r in rows] == [("swe-agent__test-repo-i1", 11)]

    preds = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "r.db"), "import", str(HERE / "all_preds.jsonl")]
    )
    assert preds.exit_code != 0
    assert "not trajectories" in preds.output and "Traceback" not in preds.output


def test_a_run_folder_with_its_all_preds_imports_its_trajectories_and_exits_0(
    tmp_path: Path,
) -> None:
    # SWE-agent writes all_preds.jsonl into every run folder beside the .traj files; walking the
    # folder (the documented `reviewer import trajectories/me/RUN`) once failed the import (exit 1,
    # "1 file failed", the app opening on its problems panel) for a file that is part of the run
    run = tmp_path / "gpt4__run1"
    run.mkdir()
    shutil.copy(HERE / "swe-agent__test-repo-i1.traj", run)
    shutil.copy(HERE / "all_preds.jsonl", run)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(run)])
    assert result.exit_code == 0, result.output
    assert "1 file failed" not in result.output
    assert "ignored" in result.output and "all_preds.jsonl" in result.output
    db = open_store(tmp_path / "r.db")
    try:
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1
    finally:
        db.close()
