"""`reviewer plan` on the sample runs, and the app's plan screen (P on the runs screen, palette)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import Static

from reviewer.cli import cli
from reviewer.metrics.power import plan_run
from reviewer.store import open_store
from reviewer.store.queries import task_counts
from reviewer.workflows.plan import plan_for_run
from tests.conftest import sample_copy


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def sample_db(tmp_path: Path) -> str:
    return str(sample_copy(tmp_path / "s.db"))


def test_plan_text_and_json_agree(sample_db: str) -> None:
    code, out, _ = invoke(
        "--db", sample_db, "plan", "--run", "support-v2", "--delta", "0.1", "--k", "3"
    )
    assert code == 0
    assert out.startswith("plan for support-v2: 8 tasks, 6 trials per task (median)\n")
    assert "to detect a drop of 0.1 80% of the time:" in out
    code, raw, _ = invoke(
        "--db", sample_db, "plan", "--run", "support-v2", "--delta", "0.1", "--k", "3", "--json"
    )
    data = json.loads(raw)["plans"][0]
    assert data["n_tasks"] == 8 and data["k"] == 3 and data["delta"] == 0.1
    p1 = data["metrics"][0]
    assert (
        p1["metric"] == "pass_at_1"
        and f"pass@1   today 0.750   drop {p1['detectable_drop']:.3f}" in out
    )
    assert f"pass@1   {p1['tasks_needed']} tasks at 6 trials each, or" in out
    db = open_store(sample_db)
    try:
        expected = plan_for_run(db, "support-v2", k=3, delta=0.1)
        bare = plan_run("support-v2", task_counts(db, "support-v2", False), k=3, delta=0.1)
    finally:
        db.close()
    assert data == json.loads(json.dumps(expected.to_dict()))
    # the same plan as from the counts alone, priced from the stored costs
    assert data["metrics"] == [
        {**m, "decision_cost": data["metrics"][i]["decision_cost"]}
        for i, m in enumerate(json.loads(json.dumps(bare.to_dict()))["metrics"])
    ]


def test_plan_every_run_by_default_and_errors_are_one_line(sample_db: str) -> None:
    code, out, _ = invoke("--db", sample_db, "plan")
    assert code == 0 and "plan for support-v1" in out and "plan for support-v2" in out
    code, _, err = invoke("--db", sample_db, "plan", "--run", "nope")
    assert code != 0 and err.strip().splitlines() == [
        "reviewer: no run named 'nope'; runs: 'support-v1', 'support-v2'"
    ]
    code, _, err = invoke("--db", sample_db, "plan", "--power", "1.5")
    assert code != 0 and "--power must be between 0 and 1" in err and "Traceback" not in err
    code, _, err = invoke("--db", sample_db, "plan", "--k", "0")
    assert code != 0 and "--k must be at least 1" in err


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_plan_screen_from_the_runs_screen(sample_db: str, size: tuple[int, int]) -> None:
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.plan import PlanScreen

    app = ReviewerApp(db_path=Path(sample_db))
    async with app.run_test(size=size) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("D")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        widget = app.screen.query_one("#plan-text", Static)
        text = str(widget.render())
        flat = " ".join(text.split())
        assert f"plan for {app.screen.run}" in text and "to detect a drop of 0.1" in text
        assert "a drop of D is the average over tasks falling by D, absolute" in flat
        assert "dollars to decision" in text and "tasks x 8 trials = $" in flat
        # every line fits the screen: nothing is cut off or wrapped by the widget
        assert max(len(line) for line in text.splitlines()) <= widget.size.width
        assert widget.virtual_size.width <= widget.size.width
        await pilot.press("plus")
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = str(app.screen.query_one("#plan-text", Static).render())
        assert "to detect a drop of 0.2" in text


def test_a_run_the_harness_always_crashed_says_how_many_tasks_it_holds(tmp_path: Path) -> None:
    """It said "0 tasks ... the run has no scored trial" of a run of 3 tasks (found by a review)."""
    from tests.conftest import native_trial, write_jsonl

    recs = [
        native_trial(f"t{t}", run="crash", trial=i, outcome={"infra_error": True})
        for t in range(3)
        for i in (1, 2)
    ]
    db = str(tmp_path / "c.db")
    assert (
        CliRunner()
        .invoke(cli, ["--db", db, "import", str(write_jsonl(tmp_path / "c.jsonl", recs))])
        .exit_code
        == 0
    )
    done = CliRunner().invoke(cli, ["--db", db, "plan"])
    assert done.exit_code == 0, done.output
    assert "none of the run's 3 tasks has a scored trial" in " ".join(done.output.split())


def test_the_help_says_the_default_k_the_plan_uses() -> None:
    """--k's default is the report's own k for the run (``passk.shared_k``), not its trials per task:
    on tau-bench gpt-4o-airline (50 tasks x 4 trials) the plan gave pass^2 while its help said
    "default: the run's trials per task" (found by a numbers audit)."""
    from reviewer.metrics.passk import shared_k

    # 4 trials a task; half of the tasks that ever pass, pass at most twice
    counts = [(f"t{i}", 4, c) for i, c in enumerate([0, 1, 1, 2, 2, 4, 4, 1] * 2)]
    plan = plan_run("r", counts)
    assert plan.k == shared_k([[(n, c) for _, n, c in counts]]) == 2
    code, out, _ = invoke("plan", "--help")
    assert code == 0
    help_text = " ".join(out.split())
    assert "the run's trials per task" not in help_text
    assert "the report's own k" in help_text
