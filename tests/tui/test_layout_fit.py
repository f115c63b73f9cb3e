"""Screens that must fit the terminal: every field of a form reachable and in view at 80x24, tables
no wider than their screen, and a screen laid out again for the terminal's new size."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, Input

from reviewer.tui.app import ReviewerApp
from tests.tui.conftest import open_new_queue_form
from tests.tui.screen_picture import picture


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
