"""Harbor ATIF trajectories, on real files (inspect_scout's fixtures, tests/fixtures/atif).

Numbers checked by hand against the files: openhands_hello-world has 6 steps (system, user, system,
system, agent with a str_replace_editor call and its observation, agent with a finish call) and
final_metrics 220 prompt / 80 completion tokens, $0.00135. The Terminus trajectory has 5 steps (user,
3 agent steps each with a terminal observation, a system summarization step pointing at 3
sub-trajectories) and 2252 / 160 tokens, $0.00723; its continuation cont-1 has 8 steps, the first 4
copied (is_copied_context: the original prompt, repeated, and the handoff summary, questions and
answers), then 4 agent steps with observations, and 7802 / 1030 tokens, $0.029805.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest import atif
from reviewer.models import Skip, Trial
from reviewer.store import open_store
from tests.conftest import FIXTURES, real_data

HERE = FIXTURES / "atif"
PREFIX = "tests__sources__atif_source__fixtures__"
OPENHANDS = "openhands_hello-world.trajectory.json"
TERMINUS = "terminus_2_hello-world-context-summarization-linear-history.trajectory.json"
CONT = "terminus_2_hello-world-context-summarization-linear-history.trajectory.cont-1.json"


def corpus(name: str) -> list[Any]:
    return real_data(HERE / name, "realworld", "atif_openhands_terminus", PREFIX + name)


def only_trial(path: Path) -> Trial:
    items = list(atif.parse(path))
    assert len(items) == 1 and isinstance(items[0], Trial), items
    return items[0]


@pytest.mark.parametrize("path", corpus(OPENHANDS))
def test_openhands_steps_become_messages_tool_calls_and_observations(path: Path) -> None:
    trial = only_trial(path)
    assert [m.role for m in trial.messages] == [
        "system",
        "user",
        "system",
        "system",
        "assistant",
        "tool",
        "assistant",
    ]
    assert [(c.name, c.id) for m in trial.messages for c in m.tool_calls] == [
        ("str_replace_editor", "call_fake_1"),
        ("finish", "call_fake_2"),
    ]
    tool = trial.messages[5]
    assert (tool.tool_call_id, tool.name) == ("call_fake_1", "str_replace_editor")
    assert tool.content == "File created successfully at: /app/hello.txt"
    assert trial.passed is None and trial.reward is None  # no result.json: unscored
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (220, 80)
    assert trial.usage.cost_usd == pytest.approx(0.00135)
    assert trial.metadata["agent"] == "openhands"
    assert trial.task_id.endswith("openhands_hello-world")


@pytest.mark.parametrize("path", corpus(TERMINUS))
def test_a_continuation_is_joined_after_a_summarization_marker(path: Path) -> None:
    trial = only_trial(path)
    contents = [m.content for m in trial.messages]
    marker = next(i for i, c in enumerate(contents) if c.startswith("── context summarized"))
    # first file: user + 3 × (assistant, tool) + summarization step + its sub-trajectory marker
    assert marker == 9
    assert contents[8].startswith("▸ sub-trajectories: trajectory.summarization-1-summary.json")
    after = trial.messages[marker + 1 :]
    # cont-1: the repeated prompt is left out; the handoff (3 copied steps) and 4 × (assistant, tool) kept
    assert [m.role for m in after] == ["user", "assistant", "user"] + ["assistant", "tool"] * 4
    assert after[0].content.startswith("You are picking up work from a previous AI agent")
    assert trial.metadata["continuations"] == [path.name.replace(".json", ".cont-1.json")]
    assert (trial.usage.input_tokens, trial.usage.output_tokens) == (2252 + 7802, 160 + 1030)
    assert trial.usage.cost_usd == pytest.approx(0.00723 + 0.029805)
    assert trial.metadata["model"] == "openai/gpt-4o"


@pytest.mark.parametrize("path", corpus(CONT))
def test_a_continuation_beside_its_first_file_is_skipped_with_the_reason(path: Path) -> None:
    (item,) = list(atif.parse(path))
    assert isinstance(item, Skip)
    assert "continuation of" in item.reason and "read with that file" in item.reason


def test_a_continuation_alone_is_a_trial_of_its_own(tmp_path: Path) -> None:
    shutil.copy(HERE / CONT, tmp_path / CONT)
    trial = only_trial(tmp_path / CONT)
    assert len(trial.messages) == 4 + 8  # 4 copied steps + 4 × (assistant, tool)


def harbor_trial(tmp_path: Path, result: Any) -> Path:
    """Harbor's layout: <trial>/agent/trajectory.json and <trial>/result.json."""
    trial_dir = tmp_path / "hello-world__AbC123"
    (trial_dir / "agent").mkdir(parents=True)
    shutil.copy(HERE / OPENHANDS, trial_dir / "agent" / "trajectory.json")
    if result is not None:
        (trial_dir / "result.json").write_text(json.dumps(result))
    return trial_dir / "agent" / "trajectory.json"


def test_the_reward_comes_from_harbors_result_json(tmp_path: Path) -> None:
    path = harbor_trial(
        tmp_path,
        {
            "trial_name": "hello-world__AbC123",
            "task_name": "hello-world",
            "verifier_result": {"rewards": {"reward": 1.0}},
            "exception_info": None,
        },
    )
    trial = only_trial(path)
    assert (trial.task_id, trial.reward, trial.success) == ("hello-world", 1.0, True)
    assert trial.error is None


def test_an_exception_in_result_json_is_the_trials_error(tmp_path: Path) -> None:
    path = harbor_trial(
        tmp_path,
        {
            "task_name": "hello-world",
            "verifier_result": None,
            "exception_info": {
                "exception_type": "AgentTimeoutError",
                "exception_message": "agent timed out after 600s",
            },
        },
    )
    trial = only_trial(path)
    assert trial.reward is None
    assert trial.error is not None and trial.error.type == "AgentTimeoutError"


def test_without_result_json_the_trial_folder_names_the_task(tmp_path: Path) -> None:
    trial = only_trial(harbor_trial(tmp_path, None))
    assert trial.task_id == "hello-world" and trial.reward is None


def test_a_damaged_file_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "trajectory.json"
    bad.write_text('{"schema_version": "ATIF-v1.5", "steps": [')
    with pytest.raises(ingest.IngestError, match="invalid JSON"):
        list(atif.parse(bad))
    bad.write_text('{"schema_version": "ATIF-v1.5", "steps": {}}')
    with pytest.raises(ingest.IngestError, match="no steps list"):
        list(atif.parse(bad))


def test_hostile_steps_never_raise(tmp_path: Path) -> None:
    f = tmp_path / "x.trajectory.json"
    f.write_text(
        json.dumps(
            {
                "schema_version": "ATIF-v1.5",
                "steps": [
                    None,
                    {"source": "agent", "tool_calls": [None, {"arguments": "{not json"}]},
                    {"source": "agent", "observation": {"results": [None, {"content": 5}]}},
                    {"source": "agent", "metrics": {"prompt_tokens": "many", "cost_usd": True}},
                ],
                "final_metrics": {"total_prompt_tokens": None},
                "continued_trajectory_ref": "missing.json",
            }
        )
    )
    items = list(atif.parse(f))
    assert isinstance(items[0], Skip) and "missing.json" in items[0].reason
    assert isinstance(items[1], Trial)


def test_every_fixture_is_sniffed_as_atif() -> None:
    for path in sorted(HERE.glob("*.json")):
        assert ingest.sniff(path) is atif, path


def test_reviewer_import_stores_the_folder_as_two_trials(tmp_path: Path) -> None:
    folder = tmp_path / "atif"
    shutil.copytree(HERE, folder)
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "r.db"), "import", str(folder)])
    assert result.exit_code == 0, result.output
    db = open_store(tmp_path / "r.db")
    try:
        rows = db.execute("SELECT n_messages FROM trials ORDER BY n_messages").fetchall()
    finally:
        db.close()
    assert [r[0] for r in rows] == [7, 21]
    # the continuation is read with the file it continues: walking the folder, not a word of it
    assert "continuation" not in result.output and "0 skipped" in result.output
    checked = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "c.db"), "import", "--check", str(folder)]
    )
    assert checked.exit_code == 0 and "0 problems" in checked.output, checked.output


def harbor_job(tmp_path: Path, results: dict[str, str | None]) -> Path:
    """A Harbor job folder: per trial, agent/trajectory.json (None: the agent wrote none) and
    result.json (the text given), with Harbor's config.json and the job's own result.json."""
    job = tmp_path / "job"
    for name, result in results.items():
        trial = job / name
        (trial / "agent").mkdir(parents=True)
        (trial / "config.json").write_text("{}")
        if not name.startswith("crashed"):
            shutil.copy(HERE / OPENHANDS, trial / "agent" / "trajectory.json")
        if result is not None:
            (trial / "result.json").write_text(result)
    # a job's own result.json may name its trials: never read as a trial of its own
    (job / "result.json").write_text(
        '{"id": "j", "n_total_trials": 9, "trial_results": [{"trial_name": "t1"}], "stats": {}}'
    )
    (job / "config.json").write_text("{}")
    return job


def _result(name: str, reward: float | None) -> str:
    verifier = None if reward is None else {"rewards": {"reward": reward}}
    return json.dumps({"task_name": "hello", "trial_name": name, "verifier_result": verifier})


@pytest.mark.parametrize(
    ("damaged", "problem"),
    [
        (
            '{"task_name": "hello", "trial_name": "t", "verifier_result": {"rewards": {"rew',
            "invalid JSON",
        ),
        ('{"task_name": "hello", "trial_name": "t", "agent_result": {"cost_usd": NaN}}', "NaN"),
        ('{"task_name": "hello", "trial_name": "t\\ud800"}', "surrogate"),
        (
            '{"task_name": "hello", "verifier_result": {"rewards": {"reward": 1180591620717411303424}}}',
            "64",
        ),
        ('{"trial_name": "t", "exception_info": {"exception_message": "x\\udfff"}}', "surrogate"),
    ],
)
def test_a_damaged_result_json_skips_its_trial_naming_it(
    tmp_path: Path, damaged: str, problem: str
) -> None:
    """A result.json cut short by a crash (or holding NaN...) left the trial's outcome unknown:
    it was read as unscored, under the folder's name, without a word (pass@1 1.00 for 0.50)."""
    path = harbor_trial(tmp_path, None)
    (path.parent.parent / "result.json").write_text(damaged)
    items = list(atif.parse(path))
    assert len(items) == 1 and isinstance(items[0], Skip), items
    assert items[0].file.endswith("result.json") and problem in items[0].reason, items[0]
    assert "outcome is unknown" in items[0].reason


def test_a_trial_that_crashed_before_its_trajectory_is_counted(tmp_path: Path) -> None:
    """Harbor writes result.json for a trial whose agent never started (the environment timed
    out): an infrastructure error, as the same trial with a trajectory is; graded, a failure. It
    was 'ignored (not a format reviewer reads)' and the run's pass rate left it out unsaid."""
    crash = json.dumps(
        {
            "task_name": "hello",
            "trial_name": "crashed-1",
            "verifier_result": None,
            "exception_info": {
                "exception_type": "EnvironmentStartTimeoutError",
                "exception_message": "docker build timed out",
            },
            "agent_result": {"n_input_tokens": 12, "cost_usd": 0.25},
        }
    )
    job = harbor_job(
        tmp_path,
        {
            "t1": _result("t1", 1.0),
            "t2": _result("t2", 0.0),
            "crashed-1": crash,
            "crashed-2": _result("crashed-2", 0.0),  # graded although the agent wrote nothing
        },
    )
    items = list(atif.parse(job / "crashed-1" / "result.json"))
    assert len(items) == 1 and isinstance(items[0], Trial)
    t = items[0]
    assert (t.task_id, t.run, t.outcome) == ("hello", "job", "infra")
    assert t.error is not None and t.error.type == "EnvironmentStartTimeoutError"
    assert (t.usage.input_tokens, t.usage.cost_usd) == (12, 0.25)
    assert "no trajectory" in t.messages[0].content
    db = str(tmp_path / "j.db")
    done = CliRunner().invoke(cli, ["--db", db, "import", str(job)])
    assert done.exit_code == 0, done.output
    assert "ignored" not in done.output and "unknown format" not in done.output, done.output
    assert "1 infrastructure error" in done.output and "1 pass, 2 fail" in done.output
    with open_store(tmp_path / "j.db") as store:
        rows = store.execute("SELECT outcome FROM trials ORDER BY outcome").fetchall()
    assert [r[0] for r in rows] == ["fail", "fail", "infra", "pass"]
    checked = CliRunner().invoke(cli, ["--db", db, "import", "--check", str(job)])
    assert checked.exit_code == 0 and "0 problems" in checked.output, checked.output


def test_import_check_of_a_valid_harbor_job_exits_0(tmp_path: Path) -> None:
    """Harbor's side files are passed over without a word: --check said "0 problems" and exited
    1, failing every harness gate on a Harbor job."""
    job = harbor_job(tmp_path, {"t1": _result("t1", 1.0), "t2": _result("t2", 0.0)})
    done = CliRunner().invoke(cli, ["--db", str(tmp_path / "c.db"), "import", "--check", str(job)])
    assert done.exit_code == 0, done.output
    assert "checked 2 files: 2 valid trials" in done.output and "0 problems" in done.output


def test_a_result_json_of_another_program_leaves_the_trajectory_unscored(tmp_path: Path) -> None:
    """A result.json that is not Harbor's (a list, an object with none of its keys) beside a
    trajectory is some other program's: the trajectory is read with no result, not dropped."""
    for other in ('[{"file": "a.trajectory.json", "score": 1}]', '{"score": 1, "runs": 3}'):
        path = harbor_trial(tmp_path / str(len(other)), None)
        (path.parent.parent / "result.json").write_text(other)
        trial = only_trial(path)
        assert trial.reward is None and trial.task_id == "hello-world"


def test_a_trajectory_by_another_name_is_its_folders_only_trial(tmp_path: Path) -> None:
    """A trial folder whose trajectory is agent/<name>.trajectory.json: its result.json grades it
    and is not a second trial "without a trajectory" (found by a review: 3 trials for 2)."""
    job = tmp_path / "job"
    for name, file in (("hello__a", "openhands.trajectory.json"), ("hello__b", "trajectory.json")):
        (job / name / "agent").mkdir(parents=True)
        shutil.copy(HERE / OPENHANDS, job / name / "agent" / file)
        (job / name / "result.json").write_text(_result(name, 1.0))
    db = str(tmp_path / "j.db")
    done = CliRunner().invoke(cli, ["--db", db, "import", str(job)])
    assert done.exit_code == 0, done.output
    assert "imported 2 trials" in done.output, done.output
