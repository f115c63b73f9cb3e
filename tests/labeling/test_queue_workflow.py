"""Making a queue is one job: `reviewer sample` and the app's `a` key name, size and resume it alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.store.queues import list_queues
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.queues import QueuesScreen
from reviewer.workflows.queues import (
    DEFAULT_SIZE,
    QueueScopeError,
    default_queue_name,
    make_queue,
)
from tests.conftest import SAMPLE_RUNS


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    result = CliRunner().invoke(cli, ["--db", str(path), "import", str(SAMPLE_RUNS)])
    assert result.exit_code == 0, result.stderr
    return path


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
    app_db = tmp_path / "app.db"
    result = CliRunner().invoke(cli, ["--db", str(app_db), "import", str(SAMPLE_RUNS)])
    assert result.exit_code == 0, result.stderr
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
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        with open_store(app_db) as db:
            queues = list_queues(db)
        assert [q.name for q in queues] == [cli_queue["name"]] == ["ana-s0"]
        with open_store(app_db) as db:
            made = make_queue(db, "ana")  # the app's queue is the CLI's, item for item
        assert made.total == cli_queue["n"] == DEFAULT_SIZE
        # pressing a again resumes the stored queue instead of sampling another
        await pilot.press("a")
        for _ in range(300):
            if isinstance(app.screen, LabelScreen):
                break
            await pilot.pause(0.01)
        assert isinstance(app.screen, LabelScreen) and app.screen.queue_name == "ana-s0"
    with open_store(app_db) as db:
        assert [q.name for q in list_queues(db)] == ["ana-s0"]
