"""An empty database and odd states (issue 32, item 7): every key says why it does nothing, the trials
list does not blame filters it does not have, the audit does not vouch for trials that are not there,
and a key pressed again does not stack the same toast."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.audit import AuditScreen
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.trials import TrialsScreen
from tests.tui.conftest import settle

SIZE = (100, 30)


def toasts(app: ReviewerApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_an_empty_database_says_why_each_key_does_nothing(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    open_store(db).close()
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        for key, what in (("G", "the gate"), ("D", "the power plan"), ("space", "comparing")):
            await pilot.press(key)
            await settle(app, pilot)
            assert isinstance(app.screen, RunsScreen)
            assert any(f"No runs yet: {what}" in m and "Press i" in m for m in toasts(app)), key
        # the same key again: the toast on the screen is not stacked a second time
        before = len(toasts(app))
        await pilot.press("G", "G")
        await settle(app, pilot)
        assert len(toasts(app)) == before
        # the trials list: no trials at all is not "no trials match these filters"
        await pilot.press("t")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)
        status = str(app.screen.query_one("#trials-status", Static).render())
        assert status.startswith("no trials yet: import a run first")
        assert "filters" not in status
        await pilot.press("escape", "U")
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen)
        detail = str(app.screen.query_one("#audit-detail", Static).render())
        assert detail == "No trials to audit yet: import a run first (i on the runs screen)."
        assert "independent" not in detail


async def test_f_on_a_task_with_no_failure_says_so_instead_of_an_empty_list(tmp_path: Path) -> None:
    from reviewer.tui.screens.tasks import TasksScreen
    from tests.conftest import native_trial, run_cli, write_jsonl

    recs = [native_trial("ok", trial=i) for i in range(3)]
    recs.append(native_trial("ok", trial=3, outcome=None))
    recs += [native_trial("bad", trial=i, passed=i == 0) for i in range(2)]
    db = str(tmp_path / "f.db")
    assert run_cli("--db", db, "import", str(write_jsonl(tmp_path / "r.jsonl", recs)))[0] == 0
    app = ReviewerApp(db_path=Path(db))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        tasks = app.screen
        assert isinstance(tasks, TasksScreen)
        table = tasks.query_one("#tasks", DataTable)
        table.move_cursor(row=[str(table.get_row_at(i)[0]) for i in range(2)].index("ok"))
        await pilot.press("F")
        await settle(app, pilot)
        assert app.screen is tasks
        assert (
            "No failing trials in task ok: 3 of 3 scored trials passed (1 unscored; Enter lists them)"
            in toasts(app)
        )
        table.move_cursor(row=[str(table.get_row_at(i)[0]) for i in range(2)].index("bad"))
        await pilot.press("F")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)


async def test_tasks_of_an_unscored_run_say_so_where_80_columns_show_it(tmp_path: Path) -> None:
    """An OpenHands output.jsonl with no test results (3 unscored trials) opened on tasks with n 0,
    "averages (95% CI): pass@1 - (-)", and the status line cut at 80 columns before "3 unscored,
    left out": nothing on screen said why every number was missing."""
    from tests.conftest import native_trial, run_cli, write_jsonl
    from tests.tui.screen_picture import picture_text

    recs = [native_trial(f"t{i}", outcome=None) for i in range(3)]
    db = str(tmp_path / "u.db")
    assert run_cli("--db", db, "import", str(write_jsonl(tmp_path / "r.jsonl", recs)))[0] == 0
    app = ReviewerApp(db_path=Path(db))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        shown = picture_text(app)
        assert "3 unscored, left out" in shown, shown
        assert "no task has a scored trial" in shown and "pass@1 - (-)" not in shown, shown
