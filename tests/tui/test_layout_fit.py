"""Screens that must fit the terminal: every field of a form reachable and in view at 80x24, tables
no wider than their screen, and a screen laid out again for the terminal's new size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, DataTable, Input, Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.audit import AuditScreen
from reviewer.tui.screens.compare import CompareScreen
from reviewer.tui.screens.failures import FailuresScreen
from reviewer.tui.screens.trials import TrialsScreen
from reviewer.workflows.clusters import tasks_summary
from tests.conftest import SAMPLE_RUNS, sample_copy
from tests.tui.conftest import open_new_queue_form, settle
from tests.tui.screen_picture import picture
from tests.tui.test_audit_screen import audited_db  # noqa: F401 (a fixture)


async def test_new_queue_form_fits_80x24(sample_db: Path) -> None:
    """Every field of the `a` form is reachable by Tab and shown when focused; an option's label
    too long for the dialog ends with an ellipsis instead of running past its edge."""
    app = ReviewerApp(db_path=sample_db, labeler="ann")
    async with app.run_test(size=(80, 24)) as pilot:
        form = await open_new_queue_form(app, pilot)
        screen_region = form.region
        rows = picture(app)
        for box in form.query(Checkbox):
            r = box.region
            shown = rows[r.y + 1][r.x : r.right].rstrip(" ▎")  # the label's row, inside the border
            assert shown.endswith("…"), shown
        for _ in range(4):
            await pilot.press("tab")
        await pilot.pause()
        per_trial = form.query_one("#new-queue-per-trial", Input)
        assert app.focused is per_trial
        dialog = per_trial.parent
        assert dialog is not None
        inner = dialog.content_region  # type: ignore[attr-defined]
        region = per_trial.region
        assert region.height > 0
        assert inner.contains_region(region) and screen_region.contains_region(region)


async def _comparison_at(app: ReviewerApp, pilot: Pilot[None]) -> str:
    await settle(app, pilot)
    return str(app.screen.query_one("#comparison", Static).render())


async def test_compare_lays_out_again_on_resize(sample_db: Path) -> None:
    """Opened at 80 columns, then the terminal grows: the comparison is laid out for 120 columns,
    as if it had been opened there."""
    wide = ReviewerApp(db_path=sample_db)
    async with wide.run_test(size=(120, 40)) as pilot:
        await settle(wide, pilot)
        wide.push_screen(CompareScreen("support-v1", "support-v2"))
        expected = await _comparison_at(wide, pilot)
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        compact = await _comparison_at(app, pilot)
        assert compact != expected  # the test means something: 80 columns lay it out otherwise
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert await _comparison_at(app, pilot) == expected


def _fits(table: DataTable[Any]) -> None:
    """The table is no wider than the room it has (no column past the screen's edge)."""
    assert table.virtual_size.width <= table.scrollable_content_region.width, (
        table.virtual_size.width,
        table.scrollable_content_region.width,
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_failures_table_fits(tmp_path: Path, size: tuple[int, int]) -> None:
    """The clusters table fits the screen: the numbers whole, the name cut with "…", runs and tasks
    cut in the middle or (a summary of several tasks) at the end."""
    db = sample_copy(tmp_path / "c.db", SAMPLE_RUNS, "cluster")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.push_screen(FailuresScreen())
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, FailuresScreen) and screen.rows
        table = screen.query_one("#clusters", DataTable)
        _fits(table)
        widths = {str(c.key.value): c.width for c in table.columns.values()}
        for i, r in enumerate(screen.rows):
            _, rank, cluster_size, _, name, runs, tasks = (c.plain for c in table.get_row_at(i))
            assert rank == str(r.rank) and cluster_size == str(r.size)
            assert name == r.name or (name.endswith("…") and len(name) <= widths["name"])
            assert len(runs) <= widths["runs"] and len(tasks) <= widths["tasks"]
            assert tasks == tasks_summary(r.tasks) or "…" in tasks


async def test_cluster_trials_keep_run_and_task_names_at_120(tmp_path: Path) -> None:
    """At 120 columns a cluster's trials show whole run and task names: the reason gives way."""
    db = sample_copy(tmp_path / "c.db", SAMPLE_RUNS, "cluster")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(FailuresScreen())
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrialsScreen) and screen.page and screen.page.rows
        table = screen.query_one(DataTable)
        _fits(table)
        keys = [str(k.value) for k in table.columns]
        for i, r in enumerate(screen.page.rows):
            cells = dict(zip(keys, (c.plain for c in table.get_row_at(i)), strict=True))
            assert cells["run"] == r.run and cells["task"] == r.task_id


async def test_audit_table_fits_at_120(audited_db: Path) -> None:  # noqa: F811
    """The audit's findings fit 120 columns and the pass^k change (the last column) is whole."""
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(AuditScreen())
        await settle(app, pilot)
        table = app.screen.query_one("#audit-findings", DataTable)
        assert table.row_count
        _fits(table)
        rows = picture(app)
        for i in range(table.row_count):
            effect = table.get_row_at(i)[-1].plain
            assert "→" in effect and any(
                line.rstrip(" ▁▂▃▄▅▆▇█▎▊").endswith(effect) for line in rows
            )
