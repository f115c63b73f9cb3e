"""Counts agree with their nouns on the screens ("1 queues", "1 tasks", "1 infrastructure errors",
"1 rubric answer … are not stored" were found by a review), and the runs screen's hint with two
runs marked says what is left to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from reviewer.calibration.sampling import make_queue
from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.queues import QueuesScreen
from reviewer.tui.screens.tasks import TasksScreen
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl
from tests.tui.conftest import settle, until
from tests.tui.test_app import import_into


def text_of(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_one_task_and_one_infrastructure_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = [
        native_trial("a", passed=True, trial=1, run="r"),
        dict(native_trial("a", trial=2, run="r"), outcome={"infra_error": True}),
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    db = import_into(tmp_path / "x.db", tmp_path / "r.jsonl")
    said: list[str] = []

    def notify(self: Any, message: str, **_: Any) -> None:
        said.append(message)

    monkeypatch.setattr(TasksScreen, "notify", notify)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(TasksScreen("r"))
        await settle(app, pilot)
        status = text_of(app, "#tasks-status")
        assert status.startswith("1 task · ") and "1 tasks" not in status
        await pilot.press("F")  # no failing trial: says what else the task has
        await until(pilot, lambda: said)
        assert "(1 infrastructure error; Enter lists them)" in said[-1]


async def test_one_queue_and_one_rubric_answer(tmp_path: Path) -> None:
    db = sample_copy(tmp_path / "s.db")
    with open_store(db) as store:
        make_queue(store, "q", 4, seed=1, labeler="ana")
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(QueuesScreen())
        await settle(app, pilot)
        await until(pilot, lambda: "labeling as" in text_of(app, "#queues-status"))
        assert "\n1 queue · labeling as ana" in text_of(app, "#queues-status")
        screen = LabelScreen("q", "ana", rubric)
        await app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        await pilot.press("2")
        assert screen.unsaved_work() == (
            "1 rubric answer on this trial is not stored until you label it"
        )
        await pilot.press("3")
        assert screen.unsaved_work() == (
            "2 rubric answers on this trial are not stored until you label it"
        )


async def test_two_runs_marked_the_hint_says_d_compares_them(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=sample_copy(tmp_path / "s.db"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("space")
        await settle(app, pilot)
        assert "mark one more run (space), then d compares them" in text_of(app, "#runs-status")
        await pilot.press("down", "space")
        await settle(app, pilot)
        assert text_of(app, "#runs-status") == "marked: support-v1, support-v2 — d compares them"
