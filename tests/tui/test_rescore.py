"""Graded rewards in the app (issue 32, item 2): `P` on the Runs screen tries a pass threshold on
the highlighted run and applies it on Enter; the import dialog takes a threshold; exporting the
harness's graded "failures" says they got partial credit before it writes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Static

from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.export_action import OfferHarness
from reviewer.tui.screens.importing import ImportModal
from reviewer.tui.screens.rescore import RescoreModal
from reviewer.tui.screens.runs import RunsScreen
from tests.conftest import native_trial, run_cli, write_jsonl
from tests.tui.conftest import settle, until

SIZE = (100, 30)


def _graded(tmp_path: Path) -> Path:
    """20 trials of one task, rewards 0.50 … 0.69: every one a fail by the default rule."""
    recs = [
        native_trial("t1", run="graded[red]", trial=i, outcome={"reward": 0.5 + i / 100})
        for i in range(20)
    ]
    return write_jsonl(tmp_path / "graded.jsonl", recs)


def _passes(db: Path) -> int:
    with open_store(db) as store:
        return int(
            store.execute("SELECT COUNT(*) FROM trials WHERE outcome = 'pass'").fetchone()[0]
        )


async def test_p_previews_a_threshold_and_enter_applies_it(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await until(pilot, lambda: bool(runs.warnings))
        await pilot.press("P")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, RescoreModal) and modal.run == "graded[red]"
        warning = str(modal.query_one("#rescore-warning", Static).render())
        assert "rewards look graded" in warning
        await pilot.press("2")  # not a threshold: said, nothing written
        await settle(app, pilot)
        preview = modal.query_one("#rescore-preview", Static)
        assert "a reward above 0 and at most 1" in str(preview.render())
        await pilot.press("backspace", *"0.6")
        await settle(app, pilot)
        await until(pilot, lambda: "would turn 10 fails into passes" in str(preview.render()))
        assert _passes(db) == 0  # a preview writes nothing
        await pilot.press("enter")
        await settle(app, pilot)
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        assert _passes(db) == 10
        await settle(app, pilot)
        table = app.screen.query_one("#runs", DataTable)
        assert str(table.get_row_at(0)[4]) == "0.50"  # pass@1 of the run, reloaded
        assert not runs.warnings  # a threshold was chosen: no graded warning
        assert "pass means reward ≥ 0.6" in str(runs.query_one("#runs-detail", Static).render())


async def test_p_opens_the_run_the_warning_names_wherever_the_cursor_is(tmp_path: Path) -> None:
    """ "⚠ P on it: pass threshold · graded…" named one run while P opened the highlighted one,
    which said "0 of 0 scored trials carry a pass or fail of their own" (found by a new user)."""
    db = tmp_path / "g.db"
    other = write_jsonl(tmp_path / "plain.jsonl", [native_trial("t1", run="aaa-plain")])
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)), str(other))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await until(pilot, lambda: bool(runs.warnings))
        table = runs.query_one("#runs", DataTable)
        plain = next(i for i in range(table.row_count) if "plain" in str(table.get_row_at(i)[1]))
        table.move_cursor(row=plain)
        await settle(app, pilot)
        await pilot.press("P")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, RescoreModal) and modal.run == "graded[red]"


async def test_esc_leaves_the_run_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("P")
        await settle(app, pilot)
        await pilot.press(*"0.5")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen) and _passes(db) == 0


async def test_the_import_dialog_takes_a_pass_threshold(tmp_path: Path) -> None:
    graded = _graded(tmp_path)
    app = ReviewerApp(db_path=tmp_path / "new.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, ImportModal)
        await pilot.press(*str(graded), "tab", *"7")  # 7 is no reward
        await pilot.press("enter")
        await settle(app, pilot)
        status = modal.query_one("#import-status", Static)
        assert "pass threshold 7: a reward above 0 and at most 1" in str(status.render())
        assert app.screen.query_one("#import-threshold", Input).has_focus
        await pilot.press("backspace", *"0.55", "enter")
        await settle(app, pilot)
        await until(pilot, lambda: "imported 20 trials" in str(status.render()))
        assert _passes(tmp_path / "new.db") == 15


async def test_exporting_graded_failures_says_so_before_it_writes(tmp_path: Path) -> None:
    db = tmp_path / "g.db"
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")  # every trial of the run
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        await until(pilot, lambda: isinstance(app.screen, OfferHarness))
        text = str(app.screen.query_one(Static).render())
        assert "20 of them got partial credit (rewards 0.5–0.69)" in text
        assert "reviewer rescore graded[red] --pass-threshold X" in text
        assert "They would be appended to " in text and "regression/tasks.jsonl" in text
        assert not (tmp_path / "regression").exists()  # asked first, nothing written


async def test_p_on_the_tasks_screen_rescores_its_run_and_the_warning_goes(tmp_path: Path) -> None:
    from reviewer.tui.screens.tasks import TasksScreen

    db = tmp_path / "g.db"
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)))[0] == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        tasks = app.screen
        assert isinstance(tasks, TasksScreen)
        warning = tasks.query_one("#tasks-warning", Static)
        assert warning.display and str(warning.render()).startswith("⚠ P: pass threshold")
        table = tasks.query_one("#tasks", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        mean = sum(0.5 + i / 100 for i in range(20)) / 20
        assert str(table.get_row_at(0)[labels.index("reward")]) == f"{mean:.2f}"
        await pilot.press("P")
        await settle(app, pilot)
        assert isinstance(app.screen, RescoreModal)
        await pilot.press(*"0.65", "enter")
        await settle(app, pilot)
        # the graded-rewards line goes (what the run's audit found, if anything, stays)
        await until(
            pilot,
            lambda: (
                app.screen is tasks
                and not (warning.display and "pass threshold" in str(warning.render()))
            ),
        )
        await settle(app, pilot)
        assert str(table.get_row_at(0)[labels.index("c")]) == "5"  # 0.65 … 0.69 now pass
        assert _passes(db) == 5


async def test_a_store_failure_on_enter_is_one_line_and_the_modal_stays_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk filling (or the lock held too long) while applying: the modal says it in one line,
    the threshold can be typed again and Esc leaves; nothing written."""
    import sqlite3

    from reviewer.workflows import rescore as job

    db = tmp_path / "g.db"
    assert run_cli("--db", str(db), "import", str(_graded(tmp_path)))[0] == 0
    real = job.rescore_run

    def full_on_apply(*a: Any, apply: bool = True, **k: Any) -> Any:
        if apply:
            raise sqlite3.OperationalError("database or disk is full")
        return real(*a, apply=apply, **k)

    monkeypatch.setattr(job, "rescore_run", full_on_apply)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("P")
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, RescoreModal)
        await pilot.press(*"0.6", "enter")
        await settle(app, pilot)
        preview = modal.query_one("#rescore-preview", Static)
        await until(pilot, lambda: "the disk is full" in str(preview.render()))
        box = modal.query_one(Input)
        assert not box.disabled and box.has_focus and not modal.busy
        assert len(str(preview.render()).splitlines()) == 1
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen) and _passes(db) == 0
