"""The Compare screen: the same comparison as `reviewer compare` (the audit's warnings and the
forbidden rules' exact tests included), and W for where the outcomes come from."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.compare import CompareScreen
from tests.conftest import sample_copy
from tests.tui.conftest import settle


async def test_compare_screen_tests_the_forbidden_rise_and_w_switches_outcomes(
    tmp_path: Path,
) -> None:
    path = sample_copy(tmp_path / "c.db")
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
    from tests.conftest import run_cli, write_jsonl
    from tests.support.audit_sim import Sim, planted

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
    sample_copy(path)
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


async def test_enter_on_a_red_flag_or_a_task_opens_its_trials_and_esc_comes_back(
    tmp_path: Path,
) -> None:
    """Issue 32, item 3: the rules that moved and the tasks whose pass^k changed are rows under the
    comparison; Enter opens that rule's or task's trials in the new run, Esc returns to Compare."""
    import json

    from textual.widgets import DataTable

    from reviewer.tui.screens.trials import TrialsScreen
    from tests.conftest import run_cli

    path = tmp_path / "d.db"
    sample_copy(path)
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        compare = CompareScreen("support-v1", "support-v2")
        app.push_screen(compare)
        await settle(app, pilot)
        table = compare.query_one("#compare-drill", DataTable)
        rows = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert rows[0].startswith("rule no-cancel-after-shipped: ") and "RED FLAG" in rows[0]
        tasks = [r for r in rows if r.startswith("task ")]
        assert tasks and "→" in tasks[0]
        # the RED FLAG: the new run's trials that break the rule
        assert table.has_focus and table.cursor_row == 0
        await pilot.press("enter")
        await settle(app, pilot)
        trials = app.screen
        assert isinstance(trials, TrialsScreen)
        assert trials.filter.run == "support-v2"
        assert trials.filter.rule_id == "no-cancel-after-shipped"
        assert trials.page is not None
        # every trial of the new run that breaks it (the rate counts the tasks both runs share:
        # 3 of 30), the same list as `reviewer trials --run support-v2 --rule ...`
        code, out, _ = run_cli(
            "--db",
            str(path),
            "trials",
            "--run",
            "support-v2",
            "--rule",
            "no-cancel-after-shipped",
            "--json",
        )
        assert code == 0 and trials.page.total == json.loads(out)["total"] >= 3
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is compare
        # a task: its trials in the new run
        table.move_cursor(row=rows.index(tasks[0]))
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)
        task_id = tasks[0].removeprefix("task ").split(":")[0]
        assert app.screen.filter.task_id == task_id and app.screen.filter.run == "support-v2"
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is compare


async def test_page_down_scrolls_the_comparison_while_the_drill_list_has_the_focus(
    tmp_path: Path,
) -> None:
    """At 80x24 the 95% intervals are listed under the table, below the fold, and the arrows move
    in the drill list: only Tab reached them (found by a new user). PgDn / PgUp scroll it."""
    from textual.containers import VerticalScroll
    from textual.widgets import DataTable

    path = sample_copy(tmp_path / "c.db")
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        await settle(app, pilot)
        body = app.screen.query_one("#compare-body", VerticalScroll)
        assert isinstance(app.focused, DataTable) and body.max_scroll_y > 0
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert body.scroll_y > 0 and isinstance(app.focused, DataTable)
        await pilot.press("pageup")
        await settle(app, pilot)
        assert body.scroll_y == 0
