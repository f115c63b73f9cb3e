"""The app's import and `reviewer import` run one workflow: same rules, violations and rubric."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import ProgressBar, Static

from reviewer.store import open_store
from reviewer.store.queries import latest_rubric, run_names
from reviewer.store.violations import rule_set_count, violation_counts, violation_total
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.importing import ImportModal
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl
from tests.tui.conftest import until


def what_import_stored(
    db_path: Path,
) -> tuple[int, int, dict[str, dict[str, int]], str | None, list[str]]:
    """Rule sets, violations (in total and per rule and run), the rubric and the runs of a database."""
    with open_store(db_path) as db:
        rubric = latest_rubric(db)
        return (
            rule_set_count(db),
            violation_total(db),
            violation_counts(db),
            None if rubric is None else rubric.ref,
            run_names(db),
        )


async def test_importing_the_sample_folder_in_the_app_matches_the_cli(tmp_path: Path) -> None:
    cli_db = sample_copy(tmp_path / "cli.db")
    from_cli = what_import_stored(cli_db)
    assert from_cli[:2] == (1, 13) and from_cli[3] is not None

    app_db = tmp_path / "app.db"
    app = ReviewerApp(db_path=app_db)
    async with app.run_test(size=(120, 32)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("i")
        await pilot.wait_for_scheduled_animations()
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(SAMPLE_RUNS), "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(app.screen.query_one("#import-status", Static).render())
        assert "imported 88 trials (2 runs, 8 tasks)" in status
        assert "rules: 3 from" in status and "rubric: " in status
        assert app.rubric is not None and app.rubric.ref == from_cli[3]

    assert what_import_stored(app_db) == from_cli


async def test_the_bar_moves_within_one_big_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file of many trials: the bar shows how much of it is read, not 0% until it is done
    (found by a review, when progress counted files)."""
    from reviewer.workflows import import_files

    big = write_jsonl(tmp_path / "big.jsonl", [native_trial(f"t{i}") for i in range(500)])
    monkeypatch.setattr(import_files, "BATCH", 100)
    written, paused, go = [0], threading.Event(), threading.Event()
    real_write = import_files.write_batch

    def write_then_wait(*args: Any, **kwargs: Any) -> Any:
        written[0] += 1
        if written[0] == 3:  # two batches written and reported: hold the import there
            paused.set()
            go.wait(10)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(import_files, "write_batch", write_then_wait)
    app = ReviewerApp(db_path=tmp_path / "x.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.press("i")
        await pilot.wait_for_scheduled_animations()
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(big), "enter")
        await until(pilot, paused.is_set)
        bar = app.screen.query_one(ProgressBar)
        try:
            await until(pilot, lambda: bar.total is not None and bar.progress > 0)
            assert bar.total is not None and 0.2 < bar.progress / bar.total < 0.8
            status = str(app.screen.query_one("#import-status", Static).render())
            assert "big.jsonl: 200 records" in status
        finally:
            go.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "imported 500 trials" in str(app.screen.query_one("#import-status", Static).render())
