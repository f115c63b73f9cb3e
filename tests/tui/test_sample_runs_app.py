"""The README's first command, `reviewer sample_runs/`, on the real folder: the app opens on the runs
screen with both runs in view, in a small and a large terminal, and the README's six keys reach a
failing `cancel_after_ship` transcript."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.transcript import TranscriptScreen
from tests.conftest import REAL_SAMPLE_RUNS, sample_copy
from tests.tui.conftest import settle
from tests.tui.screen_picture import picture


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_app_opens_on_the_real_sample_runs(tmp_path: Path, size: tuple[int, int]) -> None:
    db = sample_copy(tmp_path / "s.db", REAL_SAMPLE_RUNS)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one("#runs", DataTable).row_count == 2
        rows = picture(app)
        assert len(rows) == size[1]
        shown = {
            run: [r for r in rows if r.split()[:2] == [run, "50"]]
            for run in ("support-v1", "support-v2")
        }
        assert all(len(found) == 1 for found in shown.values()), rows
        assert "397" in shown["support-v1"][0] and "296" in shown["support-v2"][0]

        # the README: "Enter (the run), ↓↓↓ (the task), F (its failing trials), Enter"
        for keys in (["enter"], ["down", "down", "down", "F"], ["enter"]):
            await pilot.press(*keys)
            await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        trial = (
            open_store(db)
            .execute("SELECT run, task_id, outcome FROM trials WHERE id = ?", [app.screen.trial_id])
            .fetchone()
        )
        assert tuple(trial) == ("support-v1", "cancel_after_ship_01", "fail")
