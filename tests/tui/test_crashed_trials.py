"""A trial the harness crashed before the agent ran: its transcript and its task's flakiness line
say so in words, not a blank body and "no trial passed" (found by a review)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.store import open_store
from reviewer.store.queries import trials_by_id_prefix
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.tasks import TasksScreen
from tests.conftest import native_trial, write_jsonl
from tests.tui.conftest import settle
from tests.tui.test_app import import_into
from tests.tui.test_transcript import all_rows, open_transcript


def _crashed_db(tmp_path: Path) -> Path:
    crashed = [
        dict(native_trial("crashed", trial=i, run="r"), outcome={"infra_error": True}, messages=[])
        for i in (1, 2)
    ]
    recs = [native_trial("a", passed=True, trial=1, run="r"), *crashed]
    write_jsonl(tmp_path / "r.jsonl", recs)
    return import_into(tmp_path / "x.db", tmp_path / "r.jsonl")


async def test_a_crashed_trial_shows_why_it_has_no_messages(tmp_path: Path) -> None:
    db = _crashed_db(tmp_path)
    with open_store(db) as store:
        ids = [t[0] for t in trials_by_id_prefix(store, "", limit=10)]
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        shown = []
        for tid in ids:
            view = await open_transcript(app, pilot, tid)
            shown.append("\n".join(all_rows(view)))
            app.pop_screen()
            await settle(app, pilot)
        empty = [text for text in shown if "the harness crashed before the agent ran" in text]
        assert len(empty) == 2
        assert all(text.strip().startswith("no messages") for text in empty)


async def test_a_task_whose_trials_all_crashed_is_not_said_to_have_failed(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=_crashed_db(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await app.push_screen(TasksScreen("r"))
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TasksScreen)
        screen._show_flakiness("crashed")
        line = str(screen.query_one("#tasks-flakiness", Static).render())
        assert line == "not flaky: no trial ran to its end (2 infrastructure errors)"


async def test_the_runs_left_out_column_shows_its_whole_header(tmp_path: Path) -> None:
    """A tau-bench run of one crashed record at 120 columns: the column was as wide as '1 infra'
    and its header read 'left ou' (found by a new user on the realworld tau_bench folder)."""
    recs = [
        dict(native_trial("0", trial=1, run="r"), outcome={"infra_error": True}, messages=[]),
        native_trial("a", passed=True, trial=1, run="s"),
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    app = ReviewerApp(db_path=import_into(tmp_path / "x.db", tmp_path / "r.jsonl"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        from textual.widgets import DataTable

        table = app.screen.query_one("#runs", DataTable)
        column = table.columns[next(k for k in table.columns if k.value == "left_out")]
        assert column.width >= len("left out")
