"""Making a queue is one job: `reviewer sample` and the app's `a` key name, size and resume it alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.store.queues import list_queues, queue_items
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.queues import NewQueueForm, QueuesScreen
from reviewer.workflows.queues import (
    DEFAULT_SIZE,
    QueueScopeError,
    default_queue_name,
    make_queue,
)
from tests.conftest import sample_copy


def test_default_name_size_and_resume(sample_db: Path) -> None:
    assert default_queue_name("ana") == "ana-s0"
    assert default_queue_name("ana", "support-v1", 3) == "ana-support-v1-s3"
    with open_store(sample_db) as db:
        made = make_queue(db, "ana")
        assert made.created and made.queue.name == "ana-s0"
        assert len(made.queue.items) == DEFAULT_SIZE and not made.short
        add_label(db, made.queue.items[0].trial_id, "ana", "pass")
        again = make_queue(db, "ana")
        assert not again.created and again.queue.name == "ana-s0"
        assert (again.done, again.total) == (1, DEFAULT_SIZE)
        assert [it.trial_id for it in again.queue.items] == [it.trial_id for it in made.queue.items]
        assert make_queue(db, "ana", n=500, name="big").short
        with pytest.raises(QueueScopeError, match="no run named 'nope'"):
            make_queue(db, "ana", run="nope")


async def test_cli_and_app_make_the_same_default_queue(sample_db: Path, tmp_path: Path) -> None:
    app_db = sample_copy(tmp_path / "app.db")
    result = CliRunner().invoke(
        cli, ["--db", str(sample_db), "--labeler", "ana", "sample", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    cli_queue = json.loads(result.stdout)

    app = ReviewerApp(db_path=app_db, labeler="ana")
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        screen = QueuesScreen()
        app.push_screen(screen)
        await app.workers.wait_for_complete()
        await pilot.press("a")  # the form, with the default size and every run: Enter makes it
        await pilot.pause()
        assert isinstance(app.screen, NewQueueForm)
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        with open_store(app_db) as db:
            queues = list_queues(db)
        assert [q.name for q in queues] == [cli_queue["name"]] == ["ana-s0"]
        with open_store(app_db) as db:
            made = make_queue(db, "ana")  # the app's queue is the CLI's, item for item
        assert made.total == cli_queue["n"] == DEFAULT_SIZE
        # asking again resumes the stored queue instead of sampling another
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("enter")
        for _ in range(300):
            if isinstance(app.screen, LabelScreen):
                break
            await pilot.pause(0.01)
        assert isinstance(app.screen, LabelScreen) and app.screen.queue_name == "ana-s0"
    with open_store(app_db) as db:
        assert [q.name for q in list_queues(db)] == ["ana-s0"]


async def test_the_app_form_chooses_size_and_runs_and_says_when_the_run_has_fewer(
    tmp_path: Path,
) -> None:
    from textual.widgets import Input, SelectionList, Static

    app_db = sample_copy(tmp_path / "app.db")
    app = ReviewerApp(db_path=app_db, labeler="ana")
    async with app.run_test(size=(120, 30)) as pilot:
        await app.workers.wait_for_complete()
        app.push_screen(QueuesScreen())
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, NewQueueForm)
        form.query_one(Input).value = "50"
        chosen = form.query_one("#new-queue-chosen", Static)
        assert str(chosen.render()) == "none ticked: sampled from every run (2)"
        runs = form.query_one(SelectionList)
        runs.select("support-v1")
        await pilot.pause()
        # the ticked run in words (the tick marks alone read alike), and in its own colour
        assert str(chosen.render()) == "ticked 1 of 2: support-v1"
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        told = [n.message for n in app._notifications]
        with open_store(app_db) as db:
            (queue,) = list_queues(db)
        assert queue.params["runs"] == ["support-v1"]
        with open_store(app_db) as db:
            assert len(queue_items(db, queue.name)) == 40
        assert any("asked for 50, the run has 40 trials: the queue holds 40" in m for m in told)


def test_cli_sample_takes_size_and_several_runs(sample_db: Path) -> None:
    result = CliRunner().invoke(
        cli,
        ["--db", str(sample_db), "--labeler", "ana", "sample", "--size", "500"]
        + ["--run", "support-v1", "--run", "support-v2", "--json"],
    )
    assert result.exit_code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["runs"] == ["support-v1", "support-v2"] and summary["n"] == 88
    assert "asked for 500, the 2 runs have 88 trials: the queue holds 88" in result.stderr
    result = CliRunner().invoke(
        cli, ["--db", str(sample_db), "--labeler", "ana", "sample", "--run", "nope"]
    )
    assert result.exit_code == 2 and "no run named 'nope'" in result.stderr
