"""Esc in the app's import stops it: between files, and inside a large file (issue 14, Low)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from reviewer.store import open_store
from reviewer.store.queries import run_names
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.importing import ImportModal
from reviewer.workflows import imports as import_workflow
from reviewer.workflows.import_files import import_file
from tests.conftest import native_trial, write_jsonl


async def test_esc_in_the_import_stops_before_the_remaining_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(6):
        write_jsonl(folder / f"r{i}.jsonl", [native_trial(f"t{i}", trial=1, run=f"run{i}")])
    parsed: list[str] = []
    first_done, esc_pressed = threading.Event(), threading.Event()

    def slow_import_file(db: Any, path: Path, **kw: Any) -> Any:
        parsed.append(path.name)
        result = import_file(db, path, **kw)
        first_done.set()
        esc_pressed.wait(10)  # the user presses Esc while the first file is read
        return result

    monkeypatch.setattr(import_workflow, "import_file", slow_import_file)
    app = ReviewerApp(db_path=tmp_path / "x.db")
    async with app.run_test(size=(120, 32)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(folder), "enter")
        for _ in range(500):
            if first_done.is_set():
                break
            await pilot.pause(0.01)
        await pilot.press("escape")
        esc_pressed.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#import-status", Static).render())
        assert status.startswith("cancelled")
    assert parsed == ["r0.jsonl"]  # not one more file is read after Esc
    with open_store(tmp_path / "x.db") as db:
        assert run_names(db) == ["run0"]


def test_cancel_is_seen_inside_a_file_of_records_that_fill_no_batch(tmp_path: Path) -> None:
    """A large file of skipped (or already stored) records never fills a write batch; the cancel is
    still looked for every few hundred records, not only at the end of the file."""
    bad = tmp_path / "bad.jsonl"
    good = json.dumps(native_trial("t", trial=1))
    bad.write_text(good + "\n" + '{"task_id": "t", "messages": 3}\n' * 5000, encoding="utf-8")
    with open_store(tmp_path / "y.db") as db:
        result = import_file(db, bad, cancelled=lambda: True)
    assert result.cancelled and result.added == 0
    assert len(result.skipped) < 1000  # stopped early, not after all 5,000 lines
