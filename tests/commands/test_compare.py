"""`reviewer compare`, `reviewer rules` and the report's second table, end to end on the sample runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from tests.conftest import SAMPLE_RUNS, imported, native_trial, write_jsonl


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def sample_db() -> str:
    sample = imported(SAMPLE_RUNS)
    assert "rules: 3 from" in sample.stderr
    sample.copy("s.db")
    return "s.db"


def test_compare_shows_the_cheaper_but_less_reliable_pattern(sample_db: str) -> None:
    code, out, _ = invoke("--db", sample_db, "compare", "support-v1", "support-v2")
    assert code == 0
    rows = {line.split("  ")[0].strip(): line for line in out.splitlines()}
    # five shared tasks: too few for any interval to mean something, and the report says so
    assert rows["pass^6 (overall)"].endswith("too few tasks")
    assert rows["cost / task"].endswith("too few tasks")
    assert (
        "too few tasks to tell: 5 shared tasks carry the rows so marked; an interval needs 10 (5 more)."
        in out
    )
    assert "<-- worse" not in out and "better" not in out.split("noise check")[0]
    forbidden = rows["forbidden-tool rate"]
    assert "0.0%" in forbidden and forbidden.endswith("<-- RED FLAG")
    assert "\x1b[" not in out  # not a tty: plain markers, no colour codes
    assert "only in new (3): damaged_item_refund, exchange_item, order_status" in out
    assert "newly flaky" in out


def test_compare_json_is_reproducible_under_the_seed(sample_db: str) -> None:
    outs = [
        invoke("--db", sample_db, "compare", "support-v1", "support-v2", "--json", "--seed", "3")[1]
        for _ in range(2)
    ]
    assert outs[0] == outs[1]
    data = json.loads(outs[0])
    assert data["k"] == 6
    assert [t["task_id"] for t in data["only_new"]] == [
        "damaged_item_refund",
        "exchange_item",
        "order_status",
    ]
    other = json.loads(
        invoke("--db", sample_db, "compare", "support-v1", "support-v2", "--json", "--seed", "4")[1]
    )
    assert other["bootstrap"] != data["bootstrap"]


def test_compare_k_and_unknown_run(sample_db: str) -> None:
    code, out, _ = invoke("--db", sample_db, "compare", "support-v1", "support-v2", "--k", "2")
    assert code == 0 and "pass^2 (overall)" in out
    code, _, err = invoke("--db", sample_db, "compare", "support-v1", "nope")
    assert code == 1 and "no run named 'nope'" in err


def test_report_has_distributions_and_a_plot(sample_db: str) -> None:
    code, out, _ = invoke("--db", sample_db, "report", "--run", "support-v2", "--plot")
    assert code == 0
    assert (
        "lat p95" in out
        and "rule violations (share of trials): no-cancel-after-shipped 8.3% (4 of 48)" in out
    )
    assert "pass^k vs k" in out and "support-v2" in out.split("pass^k vs k")[1]
    code, out, _ = invoke("--db", sample_db, "report", "--run", "support-v2", "--json")
    dist = json.loads(out)["runs"][0]["distributions"]
    assert dist["run"]["violation_trials"]["no-cancel-after-shipped"] == 4
    assert set(dist["tasks"]) >= {"cancel_after_ship", "order_status"}


def test_rules_command_lists_sets_and_rejects(sample_db: str, tmp_path: Path) -> None:
    code, out, _ = invoke("--db", sample_db, "rules")
    assert code == 0 and "no-cancel-after-shipped" in out and "support-v2: 4" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nid = "x"\ntype = "forbid"\ntool = "a"\n')
    code, _, err = invoke("--db", sample_db, "rules", str(bad))
    assert code == 1
    assert err.startswith(f"reviewer: {bad}:3:") and "unknown rule type 'forbid'" in err
    assert "Traceback" not in err
    only_budget = tmp_path / "budget.toml"
    only_budget.write_text('[[rule]]\nid = "tight"\ntype = "budget"\nmax_steps = 3\n')
    code, _, err = invoke("--db", sample_db, "rules", str(only_budget))
    assert code == 0, err
    data = json.loads(invoke("--db", sample_db, "rules", "--json")[1])
    assert [r["id"] for r in data["rules"]] == ["tight"]
    assert "no-cancel-after-shipped" not in data["violations"]
    from reviewer.store import open_store

    (over,) = (
        open_store(sample_db).execute("SELECT COUNT(*) FROM trials WHERE steps > 3").fetchone()
    )
    assert 0 < over < 88
    assert sum(data["violations"]["tight"].values()) == over


def test_new_trials_are_checked_against_the_active_rules(sample_db: str, tmp_path: Path) -> None:
    rec = native_trial("late", run="support-v2")
    refund_first = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c0", "name": "refund", "arguments": {}}],
    }
    rec["messages"].insert(2, refund_first)
    f = write_jsonl(tmp_path / "more.jsonl", [rec])
    code, _, err = invoke("--db", sample_db, "import", str(f))
    assert code == 0
    assert "rules: 1 violation in the new trials" in err
    data = json.loads(invoke("--db", sample_db, "rules", "--json")[1])
    assert data["violations"]["lookup-before-refund"]["support-v2"] == 3


def test_compare_on_the_judges_outcomes(sample_db: str) -> None:
    """--outcome judge: each trial's latest judge verdict is its outcome (the sample's judge is
    wrong about 15% of the time, so tasks' pass counts move), and the output says where outcomes came from."""
    _, harness, _ = invoke("--db", sample_db, "compare", "support-v1", "support-v2", "--json")
    code, judged, _ = invoke(
        "--db", sample_db, "compare", "support-v1", "support-v2", "--outcome", "judge", "--json"
    )
    assert code == 0
    h, j = json.loads(harness), json.loads(judged)
    assert (h["outcome_source"], j["outcome_source"]) == ("harness", "judge")
    by_task = {t["task_id"]: t["old"]["c"] for t in h["tasks"]}
    assert any(by_task[t["task_id"]] != t["old"]["c"] for t in j["tasks"])
    code, text, _ = invoke(
        "--db", sample_db, "compare", "support-v1", "support-v2", "--outcome", "judge"
    )
    assert "outcomes: the latest judge verdict where there is one, else the harness's" in text


def test_a_judged_run_against_an_unjudged_one_says_they_are_graded_differently(
    tmp_path: Path,
) -> None:
    """--outcome judge (or [gate] outcome = "judge") with the baseline judged and the new run not
    yet: the baseline's outcomes were the judge's, the new run's the harness's, and compare and
    the gate compared the two graders over the same transcripts without a word. Here the new
    run is the baseline's own trials, and the judge fails half of what the harness passed."""
    base, new = [], []
    for t in range(12):
        for i in range(4):
            rec = native_trial(f"t{t:02d}", True, run="base", trial=i)
            rec["judge"] = {"verdict": "pass" if i % 2 else "fail", "rationale": "x"}
            base.append(rec)
            new.append(native_trial(f"t{t:02d}", True, run="new", trial=i))
    write_jsonl(tmp_path / "base.jsonl", base)
    write_jsonl(tmp_path / "new.jsonl", new)
    db = str(tmp_path / "j.db")
    assert invoke("--db", db, "import", str(tmp_path / "base.jsonl"))[0] == 0
    assert invoke("--db", db, "import", str(tmp_path / "new.jsonl"))[0] == 0
    said = (
        "warning: 48 of 48 trials of base but 0 of 48 of new have a judge verdict (the rest "
        "count the harness's outcome): the runs are graded differently"
    )
    code, out, _ = invoke("--db", db, "compare", "base", "new", "--outcome", "judge")
    assert code == 0 and said in out.splitlines()
    code, out, _ = invoke("--db", db, "compare", "base", "new", "--outcome", "judge", "--json")
    data = json.loads(out)
    assert data["outcome_coverage"] == {
        "old": {"from_source": 48, "trials": 48},
        "new": {"from_source": 0, "trials": 48},
    }
    assert data["outcome_coverage_warning"] == said
    assert invoke("--db", db, "baseline", "set", "base")[0] == 0
    code, out, _ = invoke("--db", db, "gate", "new", "--outcome", "judge")
    assert said in out.splitlines()[1:4]
    code, out, _ = invoke("--db", db, "compare", "base", "new")
    assert "graded differently" not in out


def test_numbered_tasks_are_listed_in_number_order(tmp_path: Path) -> None:
    """tau-bench numbers its tasks: compare listed equal drops as 1, 11, 16, 2, 29 and the tasks
    only in the new run as 100, ..., 114, 50, 51; the gate's "dropped within noise" began 15, 2,
    20. Numbers now sort as numbers, as `reviewer report` lists them."""
    recs = []
    for t in ("1", "2", "11", "20"):
        recs += [native_trial(t, run="old", trial=i) for i in range(4)]
        recs += [native_trial(t, run="new", trial=i, passed=i == 0) for i in range(4)]
    recs += [native_trial(t, run="new", trial=0) for t in ("100", "50", "9")]
    db = str(tmp_path / "n.db")
    assert invoke("--db", db, "import", str(write_jsonl(tmp_path / "r.jsonl", recs)))[0] == 0
    code, out, err = invoke("--db", db, "compare", "old", "new", "--k", "1")
    assert code == 0, err
    rows = [line.split()[0] for line in out.splitlines() if line.endswith("newly flaky")]
    assert rows == ["1", "2", "11", "20"], out
    assert "only in new (3): 9, 50, 100" in out, out
    assert invoke("--db", db, "baseline", "set", "old")[0] == 0
    _, out, _ = invoke("--db", db, "gate", "new")
    assert "  1 (4/4 -> 1/4), 2 (4/4 -> 1/4), 11 (4/4 -> 1/4), 20 (4/4 -> 1/4)" in out, out
