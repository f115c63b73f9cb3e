"""Labeling while another process holds the write lock (issue 14, item 2, the app's half): a label key
is taken once per trial; presses while the write waits are ignored, not queued."""

from __future__ import annotations

from pathlib import Path

from reviewer.calibration.sampling import make_queue
from reviewer.store import open_store
from reviewer.store.labels import iter_label_rows
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from tests.conftest import sample_copy
from tests.support.writer_lock import hold_write_lock


async def test_four_presses_while_the_database_is_locked_label_one_trial_once(
    tmp_path: Path,
) -> None:
    path = sample_copy(tmp_path / "s.db")
    with open_store(path) as db:
        make_queue(db, "q", 6, seed=1, labeler="ana")
    app = ReviewerApp(db_path=path, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        for _ in range(500):
            await pilot.pause(0.01)
            if screen.payload is not None and screen.state is not None:
                break
        first = screen.payload.trial_id  # type: ignore[union-attr]
        other = hold_write_lock(path)  # a second writer holds the lock
        try:
            for _ in range(4):
                await pilot.press("p")
                await pilot.pause(0.05)
            assert screen.saving == first
            assert screen.payload is not None and screen.payload.trial_id == first  # not advanced
        finally:
            other.release()
        for _ in range(1000):
            await pilot.pause(0.01)
            if screen.saving is None and screen.payload and screen.payload.trial_id != first:
                break
        assert screen.saving is None
        await pilot.pause(0.2)
    with open_store(path) as db:
        rows = list(iter_label_rows(db))
    assert [label.trial_id for label, *_ in rows] == [first]
