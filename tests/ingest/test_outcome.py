"""Issue 15: a crashed trial is an infrastructure error, graded rewards go by a stated pass rule, a
trial with no outcome is unscored; none of them is counted as an agent failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.clustering.run import failure_docs
from reviewer.ingest import tau_bench
from reviewer.metrics.compare import compare_runs
from reviewer.metrics.passk import run_passk
from reviewer.models import Skip, Trial
from reviewer.store.clusters import count_failures
from reviewer.store.db import open_store
from reviewer.store.queries import (
    judged_task_counts,
    list_runs,
    run_outcomes,
    run_pass_rule,
    task_counts,
)
from reviewer.store.trials import trial_stats
from tests.conftest import FIXTURES, native_trial, real_data, write_jsonl
from tests.tui.conftest import settle, until

CRASHED = FIXTURES / "tau_bench" / "deepseek-v3-crashed.json"
GRADED = FIXTURES / "tau_bench" / "grok-3-graded-5-tasks.json"
FIELD = "reward_info.components.base_success"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def tau_record(task: int, trial: int, reward: float) -> dict[str, Any]:
    return {
        "task_id": task,
        "trial": trial,
        "reward": reward,
        "info": {"reward_info": {"reward": reward, "info": {"r_actions": reward}}},
        "traj": [
            {"role": "user", "content": f"task {task}"},
            {"role": "assistant", "content": "done"},
        ],
    }


def crash_record(task: int, trial: int) -> dict[str, Any]:
    """What tau-bench's runner writes when the harness crashes (see the deepseek-v3 fixture)."""
    crash = json.loads(CRASHED.read_text())[0]
    return {**crash, "task_id": task, "trial": trial}


# --- 1. crashed trials -----------------------------------------------------------------------------


def test_crashed_tau_bench_trial_is_an_infrastructure_error_not_a_failure(tmp_path: Path) -> None:
    (trial,) = [t for t in tau_bench.parse(CRASHED)]
    assert isinstance(trial, Trial)
    assert trial.outcome == "infra" and not trial.success and not trial.scored
    assert trial.error is not None and trial.error.message == "EOF when reading a line"
    assert trial.error.type == "EOFError"
    assert trial.termination != "max steps"  # it did not run out of steps: it never ran
    assert "EOFError" in trial.metadata["traceback"]
    code, _, err = invoke("--db", "x.db", "import", str(CRASHED))
    assert code == 0
    assert "1 infrastructure error (left out of pass rates)" in err
    with open_store("x.db") as db:
        (run,) = list_runs(db)
        assert (run.trials, run.passed, run.infra) == (0, 0, 1)
        assert task_counts(db, run.name) == [("0", 0, 0)]
        assert count_failures(db) == 0
        assert failure_docs(db) == []  # not clustered as an agent failure
        assert count_failures(db, include_infra=True) == 1  # unless asked
        assert run_outcomes(db, run.name) == {"infra": 1}


def test_crashed_trials_leave_the_denominators_of_pass_rates(tmp_path: Path) -> None:
    # task 0: pass, fail, crash; task 1: pass, pass, crash. Published style (tau2): the crashes are
    # left out, so task 0 is 1 of 2 and task 1 is 2 of 2.
    recs = [
        tau_record(0, 0, 1.0),
        tau_record(0, 1, 0.0),
        crash_record(0, 2),
        tau_record(1, 0, 1.0),
        tau_record(1, 1, 1.0),
        crash_record(1, 2),
    ]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(recs))
    assert invoke("--db", "x.db", "import", "--run", "r", str(path))[0] == 0
    with open_store("x.db") as db:
        counts = task_counts(db, "r")
        assert counts == [("0", 2, 1), ("1", 2, 2)]
        rep = run_passk("r", counts, [1, 2, 3])
        assert rep.average_hat_k[1] == pytest.approx(0.75)
        assert rep.average_hat_k[2] == pytest.approx(0.5)  # (0 + 1) / 2
        # pass^3: two scored trials per task are fewer than k, so no task has a value (as tau2,
        # which will not compute pass^k for a task with fewer than k trials)
        assert rep.average_hat_k[3] is None and rep.excluded[3] == 2
        assert count_failures(db, "r") == 1
    code, out, _ = invoke("--db", "x.db", "report", "--run", "r", "--json")
    data = json.loads(out)["runs"][0]
    assert data["distributions"]["run"]["success_rate"] == pytest.approx(0.75)
    assert data["distributions"]["run"]["infra"] == 2


def test_a_run_whose_api_crashed_is_not_worse_in_compare(tmp_path: Path) -> None:
    old = [tau_record(t, i, 1.0) for t in (0, 1) for i in range(2)]
    new = [tau_record(0, i, 1.0) for i in range(2)] + [crash_record(1, i) for i in range(2)]
    for name, recs in (("old", old), ("new", new)):
        (tmp_path / f"{name}.json").write_text(json.dumps(recs))
        assert (
            invoke("--db", "x.db", "import", "--run", name, str(tmp_path / f"{name}.json"))[0] == 0
        )
    with open_store("x.db") as db:
        cmp = compare_runs(trial_stats(db, "old"), trial_stats(db, "new"), old_name="old")
    assert cmp.row("pass_hat_k").direction == "same"
    assert cmp.row("pass_at_1").direction == "same"
    assert {t.task_id: t.bucket for t in cmp.tasks} == {
        "0": "unchanged",
        "1": "infrastructure error",
    }
    assert cmp.left_out["new"] == {"infra": 2, "unscored": 0}
    code, out, _ = invoke("--db", "x.db", "compare", "old", "new")
    assert code == 0
    assert "new: 2 trials ended by infrastructure errors, left out" in out
    assert "worse" not in out


def test_tau2_infrastructure_terminations_are_left_out(tmp_path: Path) -> None:
    data = json.loads((FIXTURES / "tau2" / "airline-small.json").read_text())
    sims = data["simulations"]
    sims[0]["termination_reason"] = "infrastructure_error"
    sims[0]["reward_info"] = None
    sims[1]["termination_reason"] = "context_window_exceeded"
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    assert invoke("--db", "x.db", "import", "--run", "t2", str(path))[0] == 0
    with open_store("x.db") as db:
        assert run_outcomes(db, "t2").get("infra") == 2
        assert sum(n for _, n, _ in task_counts(db, "t2")) == len(sims) - 2


def test_inspect_sample_error_is_an_infrastructure_error(tmp_path: Path) -> None:
    from tests.ingest.test_inspect_log import sample, write_log

    error = {"message": "RateLimitError('429')", "traceback": "RateLimitError: 429\n"}
    log = write_log(tmp_path, [sample("a", 1, "C"), sample("a", 2, None, error=error)])
    assert invoke("--db", "x.db", "import", "--run", "i", str(log))[0] == 0
    with open_store("x.db") as db:
        assert task_counts(db, "i") == [("a", 1, 1)]
        assert run_outcomes(db, "i") == {"pass": 1, "infra": 1}


# --- 2. graded rewards -----------------------------------------------------------------------------


def test_graded_rewards_warn_and_pass_nothing_without_a_rule(tmp_path: Path) -> None:
    code, _, err = invoke("--db", "x.db", "import", "--run", "g", str(GRADED))
    assert code == 0
    assert "rewards look graded: 4 of 5 lie strictly between 0 and 1 (e.g. 0.76, 0.77, 0.89)" in err
    assert "pass means reward ≥ 1 − 1e-6 unless you set --pass-threshold" in err
    with open_store("x.db") as db:
        assert sum(c for _, _, c in task_counts(db, "g")) == 0


def test_success_field_gives_the_base_success_of_graded_rewards(tmp_path: Path) -> None:
    code, _, err = invoke(
        "--db", "x.db", "import", "--run", "g", "--success-field", FIELD, str(GRADED)
    )
    assert code == 0 and "look graded" not in err
    with open_store("x.db") as db:
        assert [(t, c) for t, _, c in task_counts(db, "g")] == [
            ("6", 1),
            ("7", 1),
            ("8", 0),
            ("9", 1),
            ("10", 1),
        ]
        assert json.loads(run_pass_rule(db, "g") or "{}")["field"] == FIELD
        assert count_failures(db, "g") == 1  # the successes are not clustered as failures
    _, out, _ = invoke("--db", "x.db", "report", "--run", "g", "--json")
    assert json.loads(out)["runs"][0]["average"]["pass_at_k"]["1"] == pytest.approx(0.8)


def test_graded_rewards_warning_names_a_success_field_every_trial_has(tmp_path: Path) -> None:
    """The grok-3 log's rewards are graded, its reward_info.components.base_success 0 or 1: the
    warning names that field and the option that uses it. A field some trial lacks, or one that
    holds something other than 0/1 or true/false, is not named."""
    _, _, err = invoke("--db", "x.db", "import", "--run", "g", str(GRADED))
    assert (
        f"every trial with a reward has {FIELD} true/false or 0/1: --success-field {FIELD}" in err
    )
    recs = json.loads(GRADED.read_text())
    del recs[2]["info"]["reward_info"]["components"]["base_success"]  # one trial lacks it
    recs[3]["info"]["passed"] = True
    (tmp_path / "a.json").write_text(json.dumps(recs))
    _, _, err = invoke("--db", "y.db", "import", str(tmp_path / "a.json"))
    assert "rewards look graded" in err and "--success-field PATH;" in err
    for r in recs:
        r["info"]["solved"] = 0.5  # named like an outcome, but graded too
    (tmp_path / "b.json").write_text(json.dumps(recs))
    _, _, err = invoke("--db", "z.db", "import", str(tmp_path / "b.json"))
    assert "rewards look graded" in err and "solved" not in err


def test_pass_threshold_from_the_option_and_from_reviewer_toml(tmp_path: Path) -> None:
    assert invoke("--db", "a.db", "import", "--pass-threshold", "0.8", str(GRADED))[0] == 0
    Path("reviewer.toml").write_text("[import]\npass_threshold = 0.8\n")
    assert invoke("--db", "b.db", "import", str(GRADED))[0] == 0
    for db_path in ("a.db", "b.db"):
        with open_store(db_path) as db:
            (run,) = list_runs(db)
            # 0.76, 0.77, 0.0, 0.89, 0.84: two reach 0.8
            assert run.passed == 2
            assert json.loads(run.pass_rule or "{}")["threshold"] == 0.8


def test_bad_import_settings_are_one_line(tmp_path: Path) -> None:
    Path("reviewer.toml").write_text('[import]\npass_threshold = "high"\n')
    code, _, err = invoke("--db", "x.db", "import", str(GRADED))
    assert code != 0 and "pass_threshold must be a number" in err and "Traceback" not in err
    Path("reviewer.toml").unlink()
    code, _, err = invoke("--db", "x.db", "import", "--success-field", "a..b", str(GRADED))
    assert code != 0 and "--success-field" in err


@pytest.mark.parametrize(
    "path",
    real_data(
        GRADED,
        "realworld",
        "tau_bench",
        "tau_bench__tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json",
    ),
)
def test_grok_3_base_success_counts(path: Path) -> None:
    recs = json.loads(path.read_text())
    expected = sum(r["info"]["reward_info"]["components"]["base_success"] == 1 for r in recs)
    if path != GRADED:
        assert (len(recs), expected) == (115, 78)  # the source: 78 of 115 succeeded
    assert (
        invoke("--db", "x.db", "import", "--run", "g", "--success-field", FIELD, str(path))[0] == 0
    )
    with open_store("x.db") as db:
        assert sum(c for _, _, c in task_counts(db, "g")) == expected
        assert sum(n for _, n, _ in task_counts(db, "g")) == len(recs)
    graded = sum(0 < r["reward"] < 1 for r in recs)
    _, _, err = invoke("--db", "y.db", "import", str(path))
    assert f"rewards look graded: {graded} of {len(recs)} lie strictly between 0 and 1" in err


# --- 3. unscored trials ----------------------------------------------------------------------------


def unscored(task: str, **extra: Any) -> dict[str, Any]:
    rec = native_trial(task, **extra)
    rec["outcome"] = None
    return rec


def test_native_outcome_null_is_unscored_not_failed(tmp_path: Path) -> None:
    recs = [native_trial("a", passed=True), native_trial("a", passed=False), unscored("a")]
    write_jsonl(tmp_path / "n.jsonl", recs)
    code, _, err = invoke("--db", "x.db", "import", str(tmp_path / "n.jsonl"))
    assert code == 0 and "1 unscored" in err
    with open_store("x.db") as db:
        assert task_counts(db, "r1") == [("a", 2, 1)]
        assert run_outcomes(db, "r1") == {"pass": 1, "fail": 1, "unscored": 1}
        assert count_failures(db) == 1
        # the trials list filters on it, and search finds it
        from reviewer.store.trial_filter import TrialFilter
        from reviewer.store.trial_list import count

        assert count(db, TrialFilter(outcome="unscored"), cached=False) == 1


def test_outcome_null_round_trips_through_the_record() -> None:
    from reviewer.record import decode, encode, trial_from_dict

    t = trial_from_dict(unscored("a"))
    assert t.outcome == "unscored" and t.passed is None and t.reward is None
    back = decode(encode(t), run="r", task_id="a", trial=1)
    assert back.outcome == "unscored"
    t.infra_error = True
    assert decode(encode(t), run="r", task_id="a", trial=1).outcome == "infra"


def test_a_record_without_any_outcome_is_still_refused(tmp_path: Path) -> None:
    from reviewer.ingest import native

    rec = native_trial("a")
    rec["outcome"] = {}
    write_jsonl(tmp_path / "n.jsonl", [rec])
    (skip,) = list(native.parse(tmp_path / "n.jsonl"))
    assert isinstance(skip, Skip) and "outcome: null for an unscored trial" in skip.reason


def test_unscored_trials_cluster_once_labeled_or_judged_fail(tmp_path: Path) -> None:
    from reviewer.store.db import open_store as store
    from reviewer.workflows.labels import give_label

    recs = [unscored("a"), unscored("b"), unscored("c")]
    write_jsonl(tmp_path / "n.jsonl", recs)
    assert invoke("--db", "x.db", "import", str(tmp_path / "n.jsonl"))[0] == 0
    with store("x.db") as db:
        assert count_failures(db) == 0
        ids = {t: i for i, t in db.execute("SELECT id, task_id FROM trials").fetchall()}
        give_label(db, ids["a"], "ana", "fail")
        give_label(db, ids["b"], "ana", "pass")
        assert count_failures(db) == 1
        assert {d.trial_id for d in failure_docs(db)} == {ids["a"]}
        # as outcomes: the human label where one stands, else not scored
        assert judged_task_counts(db, "r1", "human") == [("a", 1, 0), ("b", 1, 1), ("c", 0, 0)]
        assert judged_task_counts(db, "r1", "judge") == [("a", 0, 0), ("b", 0, 0), ("c", 0, 0)]


def test_sessions_are_unscored_and_keep_pass_hat_k(tmp_path: Path) -> None:
    session = FIXTURES / "claude_code" / "tool_call_conversation.jsonl"
    scored = [native_trial("t1", passed=i < 2, trial=i + 1, run="s") for i in range(4)]
    write_jsonl(tmp_path / "s.jsonl", scored)
    assert invoke("--db", "x.db", "import", str(tmp_path / "s.jsonl"))[0] == 0
    _, before, _ = invoke("--db", "x.db", "report", "--run", "s", "--json")
    code, _, err = invoke("--db", "x.db", "import", "--run", "s", "--task", "t1", str(session))
    assert code == 0 and "unscored" in err
    _, after, _ = invoke("--db", "x.db", "report", "--run", "s", "--json")
    b, a = json.loads(before)["runs"][0], json.loads(after)["runs"][0]
    assert a["average"] == b["average"]
    assert a["distributions"]["run"]["unscored"] == a["left_out"]["unscored"] == 1
    out = invoke("--db", "x.db", "report", "--run", "s")[1]
    assert "note: 1 unscored, left out of pass@k and pass^k" in out


# --- 4. SWE-bench outcomes and the folder walk ------------------------------------------------------


def test_outcomes_file_joins_swe_bench_resolution(tmp_path: Path) -> None:
    traj = FIXTURES / "swe_agent" / "swe-agent__test-repo-i1.traj"
    report = tmp_path / "report.json"
    report.write_text(
        json.dumps({"resolved_ids": ["swe-agent__test-repo-i1"], "unresolved_ids": []})
    )
    code, _, err = invoke(
        "--db", "x.db", "import", "--run", "s", "--outcomes", str(report), str(traj)
    )
    assert code == 0 and "1 joined from" in err
    with open_store("x.db") as db:
        assert run_outcomes(db, "s") == {"pass": 1}
    bad = tmp_path / "bad.json"
    bad.write_text('{"something": 1}')
    code, _, err = invoke("--db", "y.db", "import", "--outcomes", str(bad), str(traj))
    assert code != 0 and "not a SWE-bench report" in err and "something" in err


def test_traj_files_are_found_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "trajs"
    folder.mkdir()
    src = FIXTURES / "swe_agent" / "swe-agent__test-repo-i1.traj"
    (folder / src.name).write_bytes(src.read_bytes())
    code, _, err = invoke("--db", "x.db", "import", str(folder))
    assert code == 0 and "imported 1 trial" in err


# --- report and app presentation ----------------------------------------------------------------------


def crashed_and_unscored_db(tmp_path: Path) -> None:
    recs = [
        native_trial("a", passed=True, trial=1, run="r"),
        native_trial("a", passed=False, trial=2, run="r"),
        dict(native_trial("a", trial=3, run="r"), outcome={"infra_error": True}),
        dict(unscored("b"), run="r", trial=1),
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    assert invoke("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0


def test_report_says_what_was_left_out(tmp_path: Path) -> None:
    crashed_and_unscored_db(tmp_path)
    code, out, _ = invoke("--db", "x.db", "report", "--run", "r")
    assert code == 0
    assert "note: 1 trial ended by an infrastructure error, left out" in out
    assert "note: 1 unscored, left out of pass@k and pass^k" in out
    data = json.loads(invoke("--db", "x.db", "report", "--run", "r", "--json")[1])["runs"][0]
    assert data["left_out"] == {"infra": 1, "unscored": 1}
    assert [(t["task_id"], t["n"], t["c"]) for t in data["tasks"]] == [("a", 2, 1), ("b", 0, 0)]
    # --include-infra: the crash counts as a failure
    data = json.loads(
        invoke("--db", "x.db", "report", "--run", "r", "--json", "--include-infra")[1]
    )["runs"][0]
    assert [(t["task_id"], t["n"], t["c"]) for t in data["tasks"]][0] == ("a", 3, 1)


def test_report_header_shows_the_pass_rule(tmp_path: Path) -> None:
    assert (
        invoke("--db", "x.db", "import", "--run", "g", "--success-field", FIELD, str(GRADED))[0]
        == 0
    )
    out = invoke("--db", "x.db", "report", "--run", "g")[1]
    assert out.startswith(f"pass rule: pass means {FIELD} ≥ 1 − 1e-6")
    assert invoke("--db", "x.db", "import", "--run", "plain", str(CRASHED))[0] == 0
    assert invoke("--db", "x.db", "report", "--run", "plain")[1].startswith("task ")


def test_report_outcome_human_uses_labels_of_unscored_trials(tmp_path: Path) -> None:
    from reviewer.workflows.labels import give_label

    crashed_and_unscored_db(tmp_path)
    with open_store("x.db") as db:
        (tid,) = [r[0] for r in db.execute("SELECT id FROM trials WHERE task_id = 'b'")]
        give_label(db, tid, "ana", "pass")
    data = json.loads(
        invoke("--db", "x.db", "report", "--run", "r", "--json", "--outcome", "human")[1]
    )["runs"][0]
    assert [(t["task_id"], t["n"], t["c"]) for t in data["tasks"]] == [("a", 2, 1), ("b", 1, 1)]
    assert data["left_out"] == {"infra": 1, "unscored": 0}
    out = invoke("--db", "x.db", "report", "--run", "r", "--outcome", "human")[1]
    assert out.startswith("outcomes: the standing human label where there is one")


def test_cluster_leaves_out_infrastructure_errors_unless_asked(tmp_path: Path) -> None:
    crashed_and_unscored_db(tmp_path)
    data = json.loads(invoke("--db", "x.db", "cluster", "--json")[1])
    assert data["n_failures"] == 1
    data = json.loads(invoke("--db", "x.db", "cluster", "--json", "--include-infra")[1])
    assert data["n_failures"] == 2


async def test_app_shows_infrastructure_errors_and_unscored_trials(tmp_path: Path) -> None:
    from textual.widgets import DataTable, Static

    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.failures import FailuresScreen
    from reviewer.tui.screens.tasks import TasksScreen
    from reviewer.tui.screens.trials import TrialsScreen, TrialTable

    crashed_and_unscored_db(tmp_path)
    assert invoke("--db", "x.db", "cluster")[0] == 0
    app = ReviewerApp(db_path=tmp_path / "x.db")
    async with app.run_test(size=(160, 30)) as pilot:
        await settle(app, pilot)
        runs = app.screen.query_one("#runs", DataTable)
        assert "1 infra · 1 unscored" in str(runs.get_row("r"))
        app.push_screen(TasksScreen("r"))
        await settle(app, pilot)
        status = str(app.screen.query_one("#tasks-status", Static).render())
        assert "1 trial ended by an infrastructure error, left out" in status
        assert "1 unscored, left out" in status
        app.push_screen(TrialsScreen(title="all"))
        await settle(app, pilot)
        cells = [str(app.screen.query_one(TrialTable).get_row_at(i)[3]) for i in range(4)]
        assert sorted(cells) == ["· unscored", "○ fail", "● pass", "⚠ infra"]
        app.push_screen(FailuresScreen())
        await settle(app, pilot)
        clusters = app.screen.query_one("#clusters-status", Static)
        await until(pilot, lambda: str(clusters.render()).startswith("1 failures"))
        status = str(clusters.render())
        assert status.startswith("1 failures in 1 clusters, biggest first · 1 trial ended by")


# --- Inspect: runs named after the eval -------------------------------------------------------------


def inspect_log(path: Path, eval_id: str, scores: list[str]) -> Path:
    from tests.ingest.test_inspect_log import sample

    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "popularity", "model": "anthropic/claude-sonnet-4", "eval_id": eval_id},
        "samples": [sample(f"s{i}", 1, v) for i, v in enumerate(scores)],
    }
    path.write_text(json.dumps(log))
    return path


def test_inspect_runs_are_named_after_task_and_model_one_run_per_eval(tmp_path: Path) -> None:
    a = inspect_log(tmp_path / "a.json", "E1", ["C", "I"])
    b = inspect_log(tmp_path / "b.json", "E2", ["C", "C"])
    for _ in range(2):  # imported twice: the same eval finds its own run again
        assert invoke("--db", "x.db", "import", str(a), str(b))[0] == 0
    with open_store("x.db") as db:
        runs = {r.name: (r.trials, r.passed, r.model) for r in list_runs(db)}
    assert runs == {
        "popularity · claude-sonnet-4": (2, 1, "anthropic/claude-sonnet-4"),
        "popularity · claude-sonnet-4 (2)": (2, 2, "anthropic/claude-sonnet-4"),
    }


def test_inspect_partial_credit_goes_by_the_pass_threshold(tmp_path: Path) -> None:
    log = inspect_log(tmp_path / "p.json", "E1", ["0.6", "0.4", "C"])
    code, _, err = invoke("--db", "x.db", "import", str(log))
    assert "rewards look graded: 2 of 2" in err
    assert invoke("--db", "y.db", "import", "--pass-threshold", "0.5", str(log))[0] == 0
    for db_path, passes in (("x.db", 1), ("y.db", 2)):
        with open_store(db_path) as db:
            (run,) = list_runs(db)
            assert (run.trials, run.passed) == (3, passes)


def test_judged_unscored_trials_count_with_outcome_judge_and_cluster(tmp_path: Path) -> None:
    recs = [
        dict(unscored("a"), run="j", trial=1, judge={"verdict": "fail", "rationale": "wrong"}),
        dict(unscored("a"), run="j", trial=2, judge={"verdict": "pass", "rationale": "ok"}),
        dict(unscored("a"), run="j", trial=3),
    ]
    write_jsonl(tmp_path / "j.jsonl", recs)
    assert invoke("--db", "x.db", "import", str(tmp_path / "j.jsonl"))[0] == 0
    harness = json.loads(invoke("--db", "x.db", "report", "--run", "j", "--json")[1])["runs"][0]
    assert [(t["n"], t["c"]) for t in harness["tasks"]] == [(0, 0)]
    judged = json.loads(
        invoke("--db", "x.db", "report", "--run", "j", "--json", "--outcome", "judge")[1]
    )["runs"][0]
    assert [(t["n"], t["c"]) for t in judged["tasks"]] == [(2, 1)]
    assert judged["left_out"]["unscored"] == 1
    with open_store("x.db") as db:
        assert count_failures(db, "j") == 1  # the one judged fail


def test_transcript_header_shows_inspect_target_and_scores(tmp_path: Path) -> None:
    from reviewer.tui.screens.transcript import load_payload, summary_text
    from tests.ingest.test_inspect_log import sample

    s = sample("q1", 1, "I")
    s["target"] = "Paris"
    s["scores"] = {
        "match": {"value": "I", "answer": "Lyon", "explanation": "Lyon is not Paris"},
        "[red]judge[/]": {"value": 0.25},
    }
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "capitals", "model": "openai/gpt-4o", "eval_id": "E"},
        "samples": [s],
    }
    (tmp_path / "c.json").write_text(json.dumps(log))
    assert invoke("--db", "x.db", "import", str(tmp_path / "c.json"))[0] == 0
    with open_store("x.db") as db:
        (tid,) = [r[0] for r in db.execute("SELECT id FROM trials")]
        payload = load_payload(db, tid, None)
    assert payload is not None and payload.header.run == "capitals · gpt-4o"
    text = summary_text(payload).plain
    assert text.startswith(" FAIL ")
    assert "target: Paris" in text
    assert "score [red]judge[/]  value: 0.25" in text  # a scorer's name is shown, never markup
    # target, answer and score stay in the header's first lines; an explanation (which may wrap
    # over many) comes last, so it can never push them out of the header (issue 33)
    lines = text.splitlines()
    assert lines[1:4] == [
        "target: Paris",
        "score match  value: I  answer: Lyon",
        "score [red]judge[/]  value: 0.25",
    ]
    assert lines[-1] == "explanation match: Lyon is not Paris"


async def test_tasks_screen_names_the_pass_rule(tmp_path: Path) -> None:
    from textual.widgets import Static

    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.tasks import TasksScreen

    assert (
        invoke("--db", "x.db", "import", "--run", "g", "--success-field", FIELD, str(GRADED))[0]
        == 0
    )
    app = ReviewerApp(db_path=tmp_path / "x.db")
    async with app.run_test(size=(200, 30)) as pilot:
        await app.workers.wait_for_complete()
        app.push_screen(TasksScreen("g"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#tasks-status", Static).render())
        assert f"· pass means {FIELD} ≥ 1 − 1e-6 (or true) ·" in status + " ·"


def test_the_run_header_counts_every_trial_and_says_how_many_were_scored(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    db = str(tmp_path / "h.db")
    recs = [native_trial("t1", run="a"), native_trial("t2", run="a", outcome=None)]
    recs.append(native_trial("t1", run="b"))
    write_jsonl(tmp_path / "r.jsonl", recs)
    assert run_cli("--db", db, "import", str(tmp_path / "r.jsonl"))[0] == 0
    code, out, _ = run_cli("--db", db, "report")
    assert code == 0
    assert "run a: 2 tasks, 2 trials (1 scored)" in out
    assert "run b: 1 task, 1 trial\n" in out


def test_crashed_trials_count_in_no_steps_cost_or_latency_so_compare_never_calls_them_better(
    tmp_path: Path,
) -> None:
    from tests.conftest import run_cli

    recs = []
    for run in ("old", "new"):
        for task in ("x", "y"):
            for i in range(2):
                rec = native_trial(task, run=run, trial=i, usage={"cost_usd": 0.1}, latency_s=2.0)
                if run == "new" and task == "y":  # the harness crashed: no steps, no cost
                    rec.update(outcome={"infra_error": True}, messages=rec["messages"][:1])
                    rec.update(usage={"cost_usd": 0.0}, latency_s=0.1)
                recs.append(rec)
    write_jsonl(tmp_path / "r.jsonl", recs)
    db = str(tmp_path / "c.db")
    assert run_cli("--db", db, "import", str(tmp_path / "r.jsonl"))[0] == 0
    summary = json.loads(run_cli("--db", db, "compare", "old", "new", "--json")[1])["summary"]
    rows = {r["metric"]: r for r in summary}
    for metric in ("avg_steps", "cost_per_task", "p95_latency_s"):
        assert rows[metric]["old"] == rows[metric]["new"], metric
        assert rows[metric]["direction"] == "same", metric
    report = json.loads(run_cli("--db", db, "report", "--run", "new", "--json")[1])["runs"][0]
    assert report["distributions"]["run"]["steps"]["mean"] == 3.0


@pytest.mark.parametrize("value", ["2", "1.5", "0", "-1"])
def test_a_pass_threshold_outside_zero_to_one_is_refused(tmp_path: Path, value: str) -> None:
    from tests.conftest import run_cli

    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1")])
    code, _, err = run_cli(
        "--db",
        str(tmp_path / "x.db"),
        "import",
        "--pass-threshold",
        value,
        str(tmp_path / "r.jsonl"),
    )
    assert code != 0 and "--pass-threshold" in err and "a reward above 0 and at most 1" in err


def test_a_custom_threshold_has_the_same_float_tolerance_as_the_default(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    rec = native_trial("t1", outcome={"reward": 0.9299999999999999})
    write_jsonl(tmp_path / "r.jsonl", [rec])
    db = str(tmp_path / "x.db")
    assert (
        run_cli("--db", db, "import", "--pass-threshold", "0.93", str(tmp_path / "r.jsonl"))[0] == 0
    )
    data = json.loads(run_cli("--db", db, "report", "--json")[1])["runs"][0]
    assert data["outcomes"].get("pass") == 1


def test_a_stored_trial_shows_its_outcome_column_else_its_success_flag() -> None:
    from reviewer.models import stored_outcome

    assert [stored_outcome(o, False) for o in ("pass", "fail", "infra", "unscored")] == [
        "pass",
        "fail",
        "infra",
        "unscored",
    ]
    assert stored_outcome(None, True) == "pass"  # a row older than the outcome column
    assert stored_outcome("", False) == "fail"


def test_the_graded_warning_shows_a_failing_reward_near_1_as_it_is() -> None:
    """0.9999989 fails the default rule (reward >= 1 - 1e-6) but read 0.999999, the same as a
    passing reward (found by an attack)."""
    from reviewer.ingest.outcome import graded_line

    line = graded_line(3, 3, [0.5, 0.9999989, 0.999999])
    assert line is not None and "(e.g. 0.5, 0.9999989, 0.999999)" in line
