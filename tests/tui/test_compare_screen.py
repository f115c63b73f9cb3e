"""The Compare screen: the same comparison as `reviewer compare` (the audit's warnings and the
forbidden rules' exact tests included), and W for where the outcomes come from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from textual.widgets import Static

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.compare import CompareScreen
from tests.conftest import SAMPLE_RUNS


async def settle(app: ReviewerApp, pilot: Any) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def test_compare_screen_tests_the_forbidden_rise_and_w_switches_outcomes(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.db"
    assert CliRunner().invoke(cli, ["--db", str(path), "import", str(SAMPLE_RUNS)]).exit_code == 0
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        await settle(app, pilot)

        def shown() -> str:
            return str(app.screen.query_one("#comparison", Static).render())

        assert (
            "forbidden-tool rate: 0 of 40 -> 3 of 30 trials: the baseline never broke it" in shown()
        )
        assert "outcomes:" not in shown()
        await pilot.press("W")
        await settle(app, pilot)
        assert "outcomes: the standing human label where there is one" in shown()
        await pilot.press("W", "W")
        await settle(app, pilot)
        assert "outcomes:" not in shown()  # back to the harness


async def test_compare_screen_shows_the_audit_warning_the_cli_prints(tmp_path: Path) -> None:
    from tests.audit_sim import Sim, planted
    from tests.conftest import run_cli, write_jsonl

    path = tmp_path / "w.db"
    run_cli("--db", str(path), "import", str(planted(tmp_path / "sim.jsonl")))
    clean = Sim(seed=4, tasks=9, trials=4, run="clean").records()
    run_cli("--db", str(path), "import", str(write_jsonl(tmp_path / "clean.jsonl", clean)))
    code, _, err = run_cli("--db", str(path), "compare", "clean", "sim")
    (warning,) = [line for line in err.splitlines() if line.startswith("warning: run sim:")]
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("clean", "sim"))
        await settle(app, pilot)
        shown = str(app.screen.query_one("#comparison", Static).render())
    assert code == 0 and warning in shown.splitlines()


async def test_stored_rules_that_no_longer_load_are_the_same_one_line_in_both(
    tmp_path: Path,
) -> None:
    from reviewer.store import open_store
    from reviewer.store.violations import RuleSet, add_rule_set
    from tests.conftest import run_cli

    path = tmp_path / "r.db"
    assert CliRunner().invoke(cli, ["--db", str(path), "import", str(SAMPLE_RUNS)]).exit_code == 0
    with open_store(path) as db, db.transaction():  # a rule set an older reviewer accepted
        add_rule_set(db, RuleSet("old.toml", "[[rule]]\nid = 1\n", "x"), "2026-01-01T00:00:00")
    code, out, err = run_cli("--db", str(path), "compare", "support-v1", "support-v2")
    assert code == 1 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("reviewer: stored rules no longer load: ")
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        await settle(app, pilot)
        shown = str(app.screen.query_one("#comparison", Static).render())
    assert shown == line.removeprefix("reviewer: ")
