"""pass^k at each run's own k (issue 32, item 1): a run of one trial per task no longer turns every
other run's pass^k into pass^1, nor takes the pass^k columns off its tasks screen."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.tasks import TasksScreen
from tests.conftest import SAMPLE_RUNS, native_trial, run_cli, write_jsonl
from tests.tui.conftest import settle


async def test_a_one_trial_run_leaves_the_others_their_own_k(tmp_path: Path) -> None:
    db = str(tmp_path / "k.db")
    assert run_cli("--db", db, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))[0] == 0
    once = [native_trial(f"t{i}", passed=i % 2 == 0, run="once") for i in range(6)]
    assert run_cli("--db", db, "import", str(write_jsonl(tmp_path / "once.jsonl", once)))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        ks = {r.name: r.k for r in screen.rows}
        assert ks["once"] == 1 and ks["support-v1"] > 1
        table = screen.query_one("#runs", DataTable)
        assert str(table.columns[next(k for k in table.columns if k.value == "phk")].label) == (
            "pass^k"
        )
        cells = {str(table.get_row_at(i)[1]): str(table.get_row_at(i)[5]) for i in range(2)}
        assert cells["support-v1"].endswith(f" k={ks['support-v1']}")
        assert cells["once"].endswith(" k=1")
        status = str(screen.query_one("#runs-status", Static).render())
        assert "each run's own k" in status
        # the tasks of support-v1 keep their pass^k columns
        table.move_cursor(row=[str(table.get_row_at(i)[1]) for i in range(2)].index("support-v1"))
        await pilot.press("enter")
        await settle(app, pilot)
        tasks = app.screen
        assert isinstance(tasks, TasksScreen) and tasks.k == ks["support-v1"]
        labels = [str(c.label) for c in tasks.query_one(DataTable).columns.values()]
        assert f"pass^{tasks.k}" in labels
        # k chooses one k for every run again
        await pilot.press("escape")
        await settle(app, pilot)
        app.pass_k = 2  # what the k dialog sets
        screen.action_reload()
        await settle(app, pilot)
        assert {r.k for r in screen.rows} == {2}
        assert "pass^2 for every run (chosen with k)" in str(
            screen.query_one("#runs-status", Static).render()
        )


async def test_the_status_line_fits_100_columns_whole(tmp_path: Path) -> None:
    """The runs screen's status line was cut at 100 columns ("Enter: tasks · spa…"): each of its
    forms fits whole, the keys it names included."""
    db = str(tmp_path / "s.db")
    assert run_cli("--db", db, "import", str(SAMPLE_RUNS))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        status = screen.query_one("#runs-status", Static)
        for k, chosen in ((None, False), (2, False), (2, True)):
            screen.k, screen.k_chosen = k, chosen
            screen._status()
            await pilot.pause()
            line = str(status.render())
            assert line.endswith("space, d: compare"), line
            assert len(line) <= status.content_region.width, line
