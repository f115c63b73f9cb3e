"""Dollars to decision: the runs a comparison needs, priced from the run's stored costs, and a plain
"unknown" (never $0) when the costs are missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.metrics.plan_cost import TrialCosts, cheaper, decision_cost, usd
from reviewer.metrics.power import plan_run
from reviewer.store import open_store
from reviewer.store.costs import run_costs
from reviewer.store.judging import VerdictWrite, write_verdict
from tests.conftest import native_trial, write_jsonl

#: 25 tasks of 8 trials, pass counts from 2 to 8
COUNTS = [(f"t{i}", 8, 2 + (i * 5) % 7) for i in range(25)]


def test_the_lead_s_example() -> None:
    costs = TrialCosts(400, 400, 0.031, 400, 400, 400, 0.004)
    cost = decision_cost(costs, 50, 8)
    assert cost is not None
    assert cost.per_run == pytest.approx(50 * 8 * (0.031 + 0.004))
    assert cost.text() == "50 tasks x 8 trials = $14.00 per run, $28.00 for the two runs"
    assert costs.inputs() == "at $0.031 per trial and $0.004 per judge call"


def test_the_plan_prices_the_cheaper_way_to_reach_the_drop() -> None:
    costs = TrialCosts(200, 200, 0.05)
    plan = plan_run("r", COUNTS, k=2, delta=0.15, costs=costs)
    for m in plan.metrics:
        assert m.tasks_needed is not None and m.trials_needed is not None
        options = [(m.tasks_needed, 8), (25, m.trials_needed)]
        tasks, trials = min(options, key=lambda o: o[0] * o[1])
        assert m.decision_cost is not None
        assert (m.decision_cost.tasks, m.decision_cost.trials) == (tasks, trials)
        assert m.decision_cost.comparison == pytest.approx(2 * tasks * trials * 0.05)
    text = plan.render()
    assert "dollars to decision (the two runs a comparison needs):" in text
    assert "  at $0.05 per trial:" in text
    assert "  today    25 tasks x 8 trials = $10.00 per run, $20.00 for the two runs" in text
    d = plan.to_dict()
    assert d["costs"]["per_trial"] == 0.05 and d["today_cost"]["comparison"] == pytest.approx(20)
    assert d["metrics"][0]["decision_cost"]["comparison"] == pytest.approx(
        plan.metrics[0].decision_cost.comparison  # type: ignore[union-attr]
    )


def test_missing_costs_say_so_rather_than_print_0() -> None:
    plan = plan_run("r", COUNTS, k=2, delta=0.15, costs=TrialCosts(200, 0, None))
    text = plan.render()
    assert "note: cost unknown: no trial of r has a stored cost" in text
    assert "$0" not in text and "$" not in text
    assert all(m.decision_cost is None for m in plan.metrics) and plan.today_cost is None
    # a judge whose verdicts have no cost: the agent's cost alone, and a note saying so
    judged = TrialCosts(200, 190, 0.05, 200, 200, 0, None)
    text = " ".join(plan_run("r", COUNTS, k=2, delta=0.15, costs=judged).render().split())
    assert "the agent's cost is the mean of the 190 of 200 trials with a stored cost" in text
    assert "judge cost unknown: none of its 200 verdicts has a stored cost" in text
    assert "at $0.05 per trial:" in text


def test_cheaper_and_usd() -> None:
    a, b = decision_cost(TrialCosts(1, 1, 0.1), 10, 8), decision_cost(TrialCosts(1, 1, 0.1), 20, 3)
    assert cheaper([a, None, b]) is b and cheaper([None]) is None
    assert [usd(v) for v in (0.031, 0.0042, 0.004, 0.5, 1234.5, 0.0, None)] == [
        "$0.031",
        "$0.0042",
        "$0.004",
        "$0.50",
        "$1,234.50",
        "$0.00",
        "unknown",
    ]


def test_stored_costs_are_read_from_the_trials_and_the_latest_verdicts(tmp_path: Path) -> None:
    recs = [
        native_trial(f"t{i % 10}", passed=i % 3 > 0, trial=i // 10 + 1, run="r")
        | ({"usage": {"cost_usd": 0.02 + 0.01 * (i % 2)}} if i < 30 else {})
        for i in range(40)
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    db_path = str(tmp_path / "x.db")
    assert (
        CliRunner().invoke(cli, ["--db", db_path, "import", str(tmp_path / "r.jsonl")]).exit_code
        == 0
    )
    db = open_store(db_path)
    try:
        ids = [r[0] for r in db.execute("SELECT id FROM trials WHERE run = 'r' ORDER BY seq")]
        with db.transaction():
            for i, tid in enumerate(ids[:20]):
                write_verdict(
                    db,
                    VerdictWrite(
                        tid,
                        "j",
                        "pass",
                        "ok",
                        "m",
                        "r@1",
                        1,
                        1,
                        0.004 if i < 16 else None,
                        "{}",
                        "judge",
                        f"k{i}",
                        0.1,
                    ),
                )
            # a second verdict of the same judge replaces the first: its cost counts, once
            write_verdict(
                db,
                VerdictWrite(
                    ids[0], "j", "fail", "no", "m", "r@1", 1, 1, 0.006, "{}", "judge", "k0b", 0.1
                ),
            )
        c = run_costs(db, "r")
    finally:
        db.close()
    assert (c.trials, c.agent_known) == (40, 30)
    assert c.agent_mean == pytest.approx(0.025)
    assert (c.judged_trials, c.judge_calls, c.judge_known) == (20, 20, 16)
    assert c.judge_mean == pytest.approx((0.004 * 15 + 0.006) / 16)
    out = CliRunner().invoke(cli, ["--db", db_path, "plan", "--delta", "0.2", "--k", "2"]).stdout
    flat = " ".join(out.split())
    assert "at $0.025 per trial and $0.0041 per judge call:" in flat
    assert "the agent's cost is the mean of the 30 of 40 trials with a stored cost" in flat
    assert "the judge graded 20 of 40 trials; the figures judge every trial" in flat
    data = json.loads(
        CliRunner()
        .invoke(cli, ["--db", db_path, "plan", "--delta", "0.2", "--k", "2", "--json"])
        .stdout
    )["plans"][0]
    assert data["costs"]["judge_per_call"] == pytest.approx(c.judge_mean)
    per_trial = 0.025 + c.judge_mean  # type: ignore[operator]
    assert data["today_cost"]["per_run"] == pytest.approx(10 * 4 * per_trial)
