"""Pictures of the main screens at a fixed size (pytest-textual-snapshot); the data is fixed too."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from tests.conftest import sample_copy

SIZE = (100, 30)


@pytest.fixture
def frozen_db(tmp_path: Path) -> Path:
    path = sample_copy(tmp_path / "snap.db")
    db = open_store(path)
    with db.atomic():
        db.execute("UPDATE runs SET imported_at = '2026-01-05T09:30:00+00:00'")
    db.close()
    return path


async def _settle(pilot) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def test_runs_screen(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=_settle)


def test_tasks_screen(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    async def go(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)

    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=go)


def test_failing_transcript(snap_compare, frozen_db: Path) -> None:  # type: ignore[no-untyped-def]
    async def go(pilot) -> None:  # type: ignore[no-untyped-def]
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)
        await pilot.press("down", "down", "down", "F")
        await _settle(pilot)
        await pilot.press("enter")
        await _settle(pilot)

    assert snap_compare(ReviewerApp(db_path=frozen_db), terminal_size=SIZE, run_before=go)
