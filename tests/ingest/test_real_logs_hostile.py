"""Issue 15, second pass: defects an independent attack found in the real-log importers (Harbor jobs,
SWE-agent run folders, --outcomes, Inspect scores, --success-field), each with its regression test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.models import PassRule
from reviewer.store.db import open_store
from reviewer.store.queries import list_runs, run_outcomes, run_pass_rule
from tests.conftest import CORPORA, FIXTURES
from tests.ingest.test_inspect_log import sample

TRAJECTORY = FIXTURES / "atif" / "openhands_hello-world.trajectory.json"
TRAJ = FIXTURES / "swe_agent" / "swe-agent__test-repo-i1.traj"
GRADED = FIXTURES / "tau_bench" / "grok-3-graded-5-tasks.json"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def runs(db_path: str) -> dict[str, tuple[int, int]]:
    with open_store(db_path) as db:
        return {r.name: (r.trials, r.passed) for r in list_runs(db)}


# --- 1. Harbor jobs ---------------------------------------------------------------------------------


def harbor_job(root: Path, rewards: dict[str, float]) -> Path:
    """``<root>/job-7/<trial>/agent/trajectory.json`` + ``<trial>/result.json`` for each trial (the
    same trajectory in every trial), and the job's own result.json and config.json."""
    job = root / "job-7"
    for trial, reward in rewards.items():
        agent = job / trial / "agent"
        agent.mkdir(parents=True)
        shutil.copy(TRAJECTORY, agent / "trajectory.json")
        result = {
            "trial_name": trial,
            "task_name": "hello-world",
            "verifier_result": {"rewards": {"reward": reward}},
        }
        (job / trial / "result.json").write_text(json.dumps(result))
        (job / trial / "config.json").write_text(json.dumps({"agent": {"name": "openhands"}}))
    (job / "result.json").write_text(json.dumps({"id": "job-7", "n_total_trials": len(rewards)}))
    (job / "config.json").write_text(json.dumps({"job_name": "job-7"}))
    return job


def test_harbor_trials_land_in_one_run_named_after_the_job_not_agent(tmp_path: Path) -> None:
    job = harbor_job(tmp_path, {"hello-world__a1": 1.0, "hello-world__b2": 0.0})
    code, _, err = invoke("--db", "x.db", "import", str(job))
    assert code == 0, err
    assert runs("x.db") == {"job-7": (2, 1)}


def test_harbor_identical_trajectories_graded_apart_are_two_trials(tmp_path: Path) -> None:
    job = harbor_job(tmp_path, {"hello-world__a1": 1.0, "hello-world__b2": 0.0})
    code, _, err = invoke("--db", "x.db", "import", str(job))
    assert "repeats" not in err and "imported 2 trials" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "job-7") == {"pass": 1, "fail": 1}
    # imported again: the same two ids, nothing new
    code, _, err = invoke("--db", "x.db", "import", str(job))
    assert code == 0 and "all 2 trials were already stored" in err


def test_harbor_result_and_config_json_are_not_reported_as_ignored(tmp_path: Path) -> None:
    job = harbor_job(tmp_path, {"hello-world__a1": 1.0})
    code, out, err = invoke("--db", "x.db", "import", "--json", str(job))
    assert code == 0
    assert "ignored" not in err and "result.json" not in err and "config.json" not in err
    assert [Path(f["file"]).name for f in json.loads(out)["files"]] == ["trajectory.json"]
    # a stray result.json with no trajectory near it is still reported
    stray = tmp_path / "other"
    stray.mkdir()
    (stray / "result.json").write_text('{"foo": 1}')
    shutil.copy(TRAJ, stray / TRAJ.name)
    _, _, err = invoke("--db", "y.db", "import", str(stray))
    assert "ignored" in err and "result.json" in err


# --- 2. SWE-agent run folders -------------------------------------------------------------------------


def traj_with_id(src: Path, instance: str, as_string: bool = False) -> dict[str, Any]:
    data = json.loads(src.read_text())
    config: Any = {"problem_statement": {"id": instance, "type": "text"}}
    data["replay_config"] = json.dumps(config) if as_string else config
    data["info"]["submission"] = f"patch of {instance}"  # another attempt: another trial
    return data


def test_swe_agent_run_folder_is_one_run_with_the_instance_ids_as_tasks(tmp_path: Path) -> None:
    flat = tmp_path / "gpt4__default__t-0.00"  # SWE-agent 0.x: <run>/<id>.traj
    flat.mkdir()
    for i in ("repo__a-1", "repo__b-2"):
        (flat / f"{i}.traj").write_text(json.dumps(traj_with_id(TRAJ, i)))
    nested = tmp_path / "run-1x"  # SWE-agent 1.x: <run>/<id>/<id>.traj
    for i in ("repo__a-1", "repo__c-3"):
        (nested / i).mkdir(parents=True)
        (nested / i / f"{i}.traj").write_text(json.dumps(traj_with_id(TRAJ, i, as_string=True)))
    code, out, err = invoke("--db", "x.db", "import", "--json", str(flat), str(nested))
    assert code == 0, err
    assert json.loads(out)["runs"] == ["gpt4__default__t-0.00", "run-1x"]
    with open_store("x.db") as db:
        tasks = {r.name: r.tasks for r in list_runs(db)}
    assert tasks == {"gpt4__default__t-0.00": 2, "run-1x": 2}


def test_swe_agent_task_is_the_instance_id_of_replay_config_not_the_file_name(
    tmp_path: Path,
) -> None:
    from reviewer.ingest import swe_agent
    from reviewer.models import Trial

    renamed = tmp_path / "copied-under-another-name.traj"
    renamed.write_text(json.dumps(traj_with_id(TRAJ, "marshmallow-code__marshmallow-1867")))
    (trial,) = list(swe_agent.parse(renamed))
    assert isinstance(trial, Trial) and trial.task_id == "marshmallow-code__marshmallow-1867"


def test_swe_agent_corpus_trajectory_reads_its_instance_id() -> None:
    name = (
        "trajectories__demonstrations__replay__marshmallow-code__marshmallow-1867__function_"
        "calling_replace__install-1__marshmallow-code__marshmallow-1867.traj"
    )
    path = CORPORA / "realworld" / "swe_agent" / name
    if not path.exists():
        pytest.skip("../shared/corpora is not beside this checkout")
    from reviewer.ingest import swe_agent
    from reviewer.models import Trial

    (trial,) = list(swe_agent.parse(path))
    assert isinstance(trial, Trial) and trial.task_id == "marshmallow-code__marshmallow-1867"


# --- 3. --outcomes ----------------------------------------------------------------------------------


def report(tmp_path: Path, **lists: list[str]) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(lists))
    return path


def test_outcomes_matching_no_trial_says_0_of_n(tmp_path: Path) -> None:
    rep = report(tmp_path, resolved_ids=["django__django-1"], unresolved_ids=[])
    code, _, err = invoke("--db", "x.db", "import", "--outcomes", str(rep), str(TRAJ))
    assert code == 0
    assert f"0 of 1 trials matched {rep}" in err
    assert "django__django-1" in err and "swe-agent__test-repo-i1" in err  # both sides shown


def test_outcomes_matching_some_trials_says_k_of_n(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for i in ("a-1", "b-2", "c-3"):
        (folder / f"{i}.traj").write_text(json.dumps(traj_with_id(TRAJ, i)))
    rep = report(tmp_path, resolved_ids=["a-1"], unresolved_ids=["b-2"])
    code, _, err = invoke("--db", "x.db", "import", "--outcomes", str(rep), str(folder))
    assert code == 0 and f"2 of 3 trials matched {rep}" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "run") == {"pass": 1, "fail": 1, "unscored": 1}


def test_outcomes_id_listed_resolved_and_unresolved_warns_and_is_left_out(tmp_path: Path) -> None:
    rep = report(
        tmp_path,
        resolved_ids=["swe-agent__test-repo-i1"],
        unresolved_ids=["swe-agent__test-repo-i1"],
    )
    code, _, err = invoke("--db", "x.db", "import", "--run", "s", "--outcomes", str(rep), str(TRAJ))
    assert code == 0
    assert "1 instance id listed with two outcomes (e.g. swe-agent__test-repo-i1)" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "s") == {"unscored": 1}


def test_outcomes_given_for_tau_bench_says_it_was_not_applied(tmp_path: Path) -> None:
    rep = report(tmp_path, resolved_ids=["0"], unresolved_ids=[])
    code, _, err = invoke("--db", "x.db", "import", "--outcomes", str(rep), str(GRADED))
    assert code == 0
    assert f"--outcomes not applied to {GRADED} (tau-bench): these formats carry their own" in err
    assert "trials matched" not in err
    # a folder of such files: one line for all of them
    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(3):
        shutil.copy(GRADED, folder / f"r{i}.json")
    _, _, err = invoke("--db", "y.db", "import", "--outcomes", str(rep), str(folder))
    assert [ln for ln in err.splitlines() if "not applied" in ln] == [
        "reviewer: warning: --outcomes not applied to 3 files (tau-bench): these formats carry "
        "their own outcomes; it joins SWE-agent and OpenHands trials"
    ]


# --- 4. Inspect scores ----------------------------------------------------------------------------------


def inspect_file(path: Path, samples: list[dict[str, Any]], eval_id: str = "E1") -> Path:
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "quiz", "model": "m", "eval_id": eval_id},
        "samples": samples,
    }
    path.write_text(json.dumps(log))
    return path


def one_scorer(sid: str, value: Any) -> dict[str, Any]:
    rec = sample(sid, 1, value)
    rec["scores"] = {"match": {"value": value}}
    return rec


@pytest.mark.parametrize("value", [{"accuracy": 1, "f1": 0.5}, [1, 0], None])
def test_inspect_score_dict_list_or_null_is_an_unscored_trial_not_a_skip(
    tmp_path: Path, value: Any
) -> None:
    log = inspect_file(tmp_path / "l.json", [one_scorer("a", value), one_scorer("b", "C")])
    code, _, err = invoke("--db", "x.db", "import", str(log))
    assert code == 0 and "0 skipped" in err
    assert "1 sample unscored: score of scorer 'match' is" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "quiz · m") == {"pass": 1, "unscored": 1}


def test_inspect_dict_score_field_is_chosen_with_success_field(tmp_path: Path) -> None:
    samples = [one_scorer("a", {"accuracy": "C"}), one_scorer("b", {"accuracy": "I"})]
    log = inspect_file(tmp_path / "l.json", samples)
    _, _, err = invoke("--db", "x.db", "import", str(log))
    assert "--success-field scores.<scorer>.value.<field>" in err
    field = "scores.match.value.accuracy"
    assert invoke("--db", "y.db", "import", "--success-field", field, str(log))[0] == 0
    with open_store("y.db") as db:
        assert run_outcomes(db, "quiz · m") == {"pass": 1, "fail": 1}


def test_inspect_partial_counts_as_half_and_passes_at_threshold_half(tmp_path: Path) -> None:
    log = inspect_file(
        tmp_path / "l.json", [one_scorer("a", "P"), one_scorer("b", "I"), one_scorer("c", "C")]
    )
    assert invoke("--db", "x.db", "import", str(log))[0] == 0
    assert invoke("--db", "y.db", "import", "--pass-threshold", "0.5", str(log))[0] == 0
    assert runs("x.db") == {"quiz · m": (3, 1)}
    assert runs("y.db") == {"quiz · m": (3, 2)}


def two_scorers(sid: str, first: str, second: str) -> dict[str, Any]:
    rec = sample(sid, 1, first)
    rec["scores"] = {"includes": {"value": first}, "model_graded": {"value": second}}
    return rec


def test_several_scorers_the_rule_names_the_one_that_decided(tmp_path: Path) -> None:
    log = inspect_file(
        tmp_path / "l.json", [two_scorers("a", "C", "I"), two_scorers("b", "C", "C")]
    )
    code, out, err = invoke("--db", "x.db", "import", str(log))
    assert "samples have several scorers; the first one decided ('includes')" in err
    with open_store("x.db") as db:
        assert PassRule.from_json(run_pass_rule(db, "quiz · m")).scorer == "includes"
    text = invoke("--db", "x.db", "report")[1]
    assert "pass rule: pass means the score of scorer 'includes'" in text
    assert runs("x.db") == {"quiz · m": (2, 2)}


def test_scorer_option_picks_the_deciding_scorer(tmp_path: Path) -> None:
    samples = [two_scorers("a", "C", "I"), two_scorers("b", "C", "C")]
    samples.append(one_scorer("c", "C"))  # no model_graded score
    log = inspect_file(tmp_path / "l.json", samples)
    code, _, err = invoke("--db", "x.db", "import", "--scorer", "model_graded", str(log))
    assert code == 0
    assert "1 sample without a score from scorer 'model_graded': unscored" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "quiz · m") == {"pass": 1, "fail": 1, "unscored": 1}
        assert PassRule.from_json(run_pass_rule(db, "quiz · m")).scorer == "model_graded"
    # the same from reviewer.toml
    Path("reviewer.toml").write_text('[import]\nscorer = "model_graded"\n')
    assert invoke("--db", "y.db", "import", str(log))[0] == 0
    with open_store("y.db") as db:
        assert run_outcomes(db, "quiz · m") == {"pass": 1, "fail": 1, "unscored": 1}


def test_scorer_option_for_tau_bench_says_it_was_not_applied(tmp_path: Path) -> None:
    _, _, err = invoke("--db", "x.db", "import", "--scorer", "match", str(GRADED))
    assert f"--scorer not applied to {GRADED} (tau-bench): these formats carry their own" in err


# --- 5. --success-field -----------------------------------------------------------------------------


def test_success_field_naming_an_object_says_it_is_an_object(tmp_path: Path) -> None:
    field = "reward_info.components"
    code, _, err = invoke("--db", "x.db", "import", "--success-field", field, str(GRADED))
    assert code == 0
    assert f"--success-field {field} is an object, not a number or true/false" in err
    assert "base_success" in err  # the keys inside it are named
    assert "without reward_info.components" not in err


def test_success_field_that_gave_no_value_is_not_the_stored_rule(tmp_path: Path) -> None:
    code, _, err = invoke(
        "--db", "x.db", "import", "--run", "g", "--success-field", "no.such.field", str(GRADED)
    )
    assert code == 0 and "without no.such.field" in err
    with open_store("x.db") as db:
        rule = PassRule.from_json(run_pass_rule(db, "g"))
    assert rule.field is None and rule.is_default
    assert "no.such.field" not in invoke("--db", "x.db", "report")[1]
    # the field that did decide is stored
    field = "reward_info.components.base_success"
    invoke("--db", "y.db", "import", "--run", "g", "--success-field", field, str(GRADED))
    with open_store("y.db") as db:
        assert PassRule.from_json(run_pass_rule(db, "g")).field == field


# --- 6. report, compare, queues, OpenAI chat, Inspect copies -------------------------------------------


def labeled_unscored_db(tmp_path: Path) -> None:
    from tests.conftest import native_trial, write_jsonl

    recs = [
        native_trial("a", passed=True, trial=1, run="r"),
        dict(native_trial("a", trial=2, run="r"), outcome={"infra_error": True}),
        dict(native_trial("b", trial=1, run="r"), outcome=None),
        dict(native_trial("b", trial=2, run="r"), outcome=None),
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    assert invoke("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0


def test_report_outcome_human_json_counts_the_chosen_source(tmp_path: Path) -> None:
    from reviewer.workflows.labels import give_label

    labeled_unscored_db(tmp_path)
    with open_store("x.db") as db:
        (b1,) = [r[0] for r in db.execute("SELECT id FROM trials WHERE task_id='b' AND trial=1")]
        give_label(db, b1, "ann", "fail")
    harness = json.loads(invoke("--db", "x.db", "report", "--json")[1])["runs"][0]
    assert harness["outcomes"] == {"pass": 1, "infra": 1, "unscored": 2}
    human = json.loads(invoke("--db", "x.db", "report", "--json", "--outcome", "human")[1])
    run = human["runs"][0]
    assert run["outcomes"] == {"pass": 1, "fail": 1, "infra": 1, "unscored": 1}
    assert run["harness_outcomes"] == {"pass": 1, "infra": 1, "unscored": 2}


def test_compare_says_when_the_runs_pass_rules_differ(tmp_path: Path) -> None:
    assert invoke("--db", "x.db", "import", "--run", "a", str(GRADED))[0] == 0
    args = ("--db", "x.db", "import", "--run", "b", "--pass-threshold", "0.8", str(GRADED))
    assert invoke(*args)[0] == 0
    code, out, _ = invoke("--db", "x.db", "compare", "a", "b")
    assert code == 0
    warning = [ln for ln in out.splitlines() if "pass rules differ" in ln]
    assert warning == [
        "warning: the runs' pass rules differ: old pass means reward ≥ 1 − 1e-6; "
        "new pass means reward ≥ 0.8 − 1e-6"
    ]
    data = json.loads(invoke("--db", "x.db", "compare", "a", "b", "--json")[1])
    assert data["pass_rules_differ"] is True
    assert data["pass_rules"]["new"] == "pass means reward ≥ 0.8 − 1e-6"
    same = json.loads(invoke("--db", "x.db", "compare", "a", "a", "--json")[1])
    assert same["pass_rules_differ"] is False
    assert "pass rules differ" not in invoke("--db", "x.db", "compare", "a", "a")[1]
    # the gate tells the same, in its text and its markdown (a PASS over two rules is no PASS)
    md = tmp_path / "gate.md"
    code, out, _ = invoke("--db", "x.db", "gate", "b", "--baseline", "a", "--markdown", str(md))
    said = "warning: the runs' pass rules differ: old pass means reward ≥ 1 − 1e-6; new pass"
    assert said in out and said in md.read_text()


@pytest.mark.parametrize("k", ["99999999999999999999", "1001", "0", "1,2000"])
def test_report_and_compare_refuse_k_outside_1_to_1000(tmp_path: Path, k: str) -> None:
    assert invoke("--db", "x.db", "import", "--run", "a", str(GRADED))[0] == 0
    for args in (("report", "--k", k), ("compare", "a", "a", "--k", k.split(",")[-1])):
        code, out, err = invoke("--db", "x.db", *args)
        assert code == 2 and out == ""
        (line,) = [ln for ln in err.splitlines() if ln.startswith("Error:")]
        assert "k must be from 1 to 1000" in line
    assert invoke("--db", "x.db", "report", "--k", "1,1000")[0] == 0


def test_openai_chat_lines_without_passed_or_reward_are_unscored_trials(tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    path = tmp_path / "chats.jsonl"
    lines = [{"messages": msgs, "task_id": "t"}, {"messages": msgs, "task_id": "t", "passed": True}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, _, err = invoke("--db", "x.db", "import", "--run", "c", str(path))
    assert code == 0 and "0 skipped" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "c") == {"pass": 1, "unscored": 1}


def test_calibration_queue_leaves_out_infrastructure_errors_and_says_so(tmp_path: Path) -> None:
    labeled_unscored_db(tmp_path)
    code, out, err = invoke("--db", "x.db", "sample", "--labeler", "ann", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n"] == 3 and data["infra_left_out"] == 1
    with open_store("x.db") as db:
        infra = {r[0] for r in db.execute("SELECT id FROM trials WHERE outcome = 'infra'")}
        queued = {r[0] for r in db.execute("SELECT trial_id FROM queue_items")}
    assert queued and not infra & queued
    code, out, _ = invoke("--db", "x.db", "sample", "--labeler", "bob")
    assert "left out: 1 trial ended by an infrastructure error (not sampled)" in out


def eval_as_json(src: Path, dst: Path) -> Path:
    """The same Inspect log (same eval id) written as .json: its eval header and samples,
    re-serialized (other key order, indented, events left out, a field added), so only the eval
    id, sample id and epoch say they are the same trials."""
    import zipfile

    from reviewer.ingest import inspect_log

    with zipfile.ZipFile(src) as zf, src.open("rb") as raw:

        def member(name: str) -> Any:
            return json.loads(inspect_log._member(zf, raw, zf.getinfo(name)))

        names = [n for n in zf.namelist() if n.startswith("samples/")]
        head = "header.json" if "header.json" in zf.namelist() else "_journal/start.json"
        header = member(head)
        samples = [dict(reversed(list(member(n).items()))) for n in names]
    for sample_ in samples:  # a copy that differs in what does not name the trial
        sample_.pop("events", None)
        sample_["converted"] = True
    log = {"version": 2, "status": "success", "eval": header["eval"], "samples": samples}
    dst.write_text(json.dumps(log, indent=1))
    return dst


INSPECT = CORPORA / "inspect"


def test_inspect_eval_and_json_copies_of_one_log_do_not_double_its_trials(tmp_path: Path) -> None:
    if not (INSPECT / "support.eval").exists():
        pytest.skip("../shared/corpora is not beside this checkout")
    copy = eval_as_json(INSPECT / "support.eval", tmp_path / "support-copy.json")
    code, _, err = invoke("--db", "x.db", "import", str(INSPECT / "support.eval"), str(copy))
    assert code == 0 and "imported 16 trials" in err and "16 already stored" in err
    assert runs("x.db") == {"support · model": (16, 10)}
    # the corpus's .eval and .json are two evaluations (two eval ids): two runs, 16 trials each
    both = (str(INSPECT / "support.eval"), str(INSPECT / "support.json"))
    assert invoke("--db", "y.db", "import", *both)[0] == 0
    assert runs("y.db") == {"support · model": (16, 10), "support · model (2)": (16, 10)}
    code, _, err = invoke("--db", "y.db", "import", *both)
    assert "nothing new: all 32 trials were already stored" in err


# --- attacks on the new fields ------------------------------------------------------------------------


def test_hostile_score_values_and_scorer_names_reach_the_terminal_escaped(tmp_path: Path) -> None:
    esc = "\x1b]52;c;aGk=\x07\x1b[31m"
    bad = sample("esc", 1, esc)
    bad["scores"] = {"\x1b[2Jevil[/]": {"value": esc}, "match": {"value": "C"}}
    samples = [bad, one_scorer("markup", "[red]x[/]"), one_scorer("ok", "C")]
    log = inspect_file(tmp_path / "l.json", samples)
    code, _, err = invoke("--db", "x.db", "import", str(log))
    assert code == 0 and "\x1b" not in err and "\x07" not in err
    assert "2 samples unscored" in err and "[2Jevil[/]" in err
    text = invoke("--db", "x.db", "report")[1]
    assert "\x1b" not in text
    # the one sample with several scorers was decided by its first, named as Python writes it
    assert text.startswith("pass rule: pass means the score of scorer '\\x1b[2Jevil[/]' ≥ 1")
    code, _, err = invoke("--db", "y.db", "import", "--scorer", "[b]x[/]", str(log))
    assert code == 0 and "3 samples without a score from scorer '[b]x[/]': unscored" in err


def test_deep_or_long_success_field_path_is_refused_in_one_line(tmp_path: Path) -> None:
    for path in ("a." * 5000 + "b", "x" * 600):
        code, _, err = invoke("--db", "x.db", "import", "--success-field", path, str(GRADED))
        assert code != 0 and len(err.strip().splitlines()) == 1
        assert "a path of at most 32 parts and 500 characters" in err


@pytest.mark.parametrize("threshold", ["1e308", "nan", "inf", "-0", "1e-400"])
def test_hostile_pass_thresholds_are_refused(tmp_path: Path, threshold: str) -> None:
    code, _, err = invoke("--db", "x.db", "import", "--pass-threshold", threshold, str(GRADED))
    assert code != 0 and "a reward above 0 and at most 1" in err


def test_a_nan_or_huge_inspect_score_is_a_skip_naming_the_field(tmp_path: Path) -> None:
    # Inspect writes a non-finite score as null (an unscored trial); a NaN or a 100-digit integer
    # is a number reviewer does not store: the gate names it, the other samples import
    path = tmp_path / "l.json"
    samples = [one_scorer("nan", 0.0), one_scorer("big", 0), one_scorer("ok", "C")]
    text = json.dumps({"version": 2, "eval": {"task": "q", "eval_id": "E"}, "samples": samples})
    text = text.replace('"value": 0.0', '"value": NaN', 2).replace(
        '"value": 0}', '"value": 1' + "0" * 99 + "}"
    )
    path.write_text(text)
    code, _, err = invoke("--db", "x.db", "import", str(path))
    assert code == 0 and "imported 1 trial" in err
    assert f"{path}: sample 1: scores.match.value: NaN is not a number reviewer stores" in err
    assert f"{path}: sample 2: scores.match.value: integer out of range" in err


def test_samples_whose_first_scorers_differ_name_them_all_in_the_rule(tmp_path: Path) -> None:
    a = two_scorers("a", "C", "I")
    b = two_scorers("b", "I", "C")
    b["scores"] = dict(reversed(list(b["scores"].items())))  # model_graded first
    log = inspect_file(tmp_path / "l.json", [a, b])
    assert invoke("--db", "x.db", "import", str(log))[0] == 0
    with open_store("x.db") as db:
        rule = PassRule.from_json(run_pass_rule(db, "quiz · m"))
    assert rule.describe().startswith(
        "pass means the score of each sample's first scorer (includes, model_graded) ≥ 1"
    )
    assert runs("x.db") == {"quiz · m": (2, 2)}


def test_a_harbor_result_json_named_directly_points_at_the_folder(tmp_path: Path) -> None:
    job = harbor_job(tmp_path, {"hello-world__a1": 1.0})
    result = job / "hello-world__a1" / "result.json"
    code, _, err = invoke("--db", "x.db", "import", str(result))
    assert code == 1
    assert err.splitlines()[0] == (
        f"reviewer: {result}: Harbor's result.json, read with the trajectories it describes: "
        "import the trial or job folder"
    )


def test_real_inspect_log_in_both_forms_without_eval_id_is_one_set_of_trials(
    tmp_path: Path,
) -> None:
    # inspect_ai's own test log, written as .eval and .json by an Inspect older than eval ids: the
    # two copies differ (attachments and events vs transcript) but share run id and task id
    folder = CORPORA / "realworld" / "inspect_ai"
    pair = [folder / f"log__test_eval_log__log_formats.{ext}" for ext in ("eval", "json")]
    if not all(p.exists() for p in pair):
        pytest.skip("../shared/corpora is not beside this checkout")
    code, _, err = invoke("--db", "x.db", "import", *map(str, pair))
    assert code == 0 and "0 skipped" in err and "1 already stored" in err
    assert runs("x.db") == {"popularity · llama3.1": (1, 0)}


def test_import_summary_names_the_rule_applied_not_a_field_that_gave_nothing(
    tmp_path: Path,
) -> None:
    args = ("--db", "x.db", "import", "--pass-threshold", "0.8", "--success-field", "no.such")
    code, _, err = invoke(*args, str(GRADED))
    assert code == 0
    (line,) = [ln for ln in err.splitlines() if ln.startswith("outcomes:")]
    assert line.endswith("; pass means reward ≥ 0.8 − 1e-6") and "no.such ≥" not in line
