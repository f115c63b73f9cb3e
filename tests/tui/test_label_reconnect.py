"""The label screen on a PostgreSQL server that dropped its connections (a restart, an idle
timeout): the next label is stored without leaving the screen; while the server cannot be reached,
a label is not saved and the modal says so in one line naming the database, not an exception."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from textual.widgets import Static

from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.store.queues import queue_items
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.error import ErrorModal
from reviewer.tui.screens.label import LabelScreen
from reviewer.workflows.queues import make_queue
from tests.conftest import SAMPLE_RUNS, run_cli
from tests.support.pg_server import drop_connections
from tests.tui.conftest import settle, until

SIZE = (120, 40)


def _label(url: str, trial_id: str) -> str | None:
    with open_store(url) as db:
        found = current_labels(db, labeler="ann").get((trial_id, "ann"))
    return None if found is None else found.verdict


async def test_a_label_after_the_server_dropped_the_connection_is_stored(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import reviewer.store.postgres as pg

    code, _, err = run_cli("--db", pg_url, "import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    assert code == 0, err
    with open_store(pg_url) as db:
        make_queue(db, "lead", n=4, name="team", per_trial=1)
        ids = [it.trial_id for it in queue_items(db, "team")]
    app = ReviewerApp(db_path=pg_url, labeler="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = LabelScreen("team", "ann")
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        await settle(app, pilot)
        first = screen.payload.trial_id  # type: ignore[union-attr]

        drop_connections(pg_url)
        await pilot.press("p")  # said "OperationalError: the connection is closed" until restarted
        await until(pilot, lambda: _label(pg_url, first) == "pass")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        await settle(app, pilot)
        second = screen.payload.trial_id  # type: ignore[union-attr]
        assert second in ids

        drop_connections(pg_url)

        def refused(url: str) -> Any:
            raise sqlite3.OperationalError("connection failed: Connection refused")

        with monkeypatch.context() as away:  # the server is not back yet
            away.setattr(pg, "connect", refused)
            await pilot.press("f")
            await until(pilot, lambda: isinstance(app.screen, ErrorModal))
            detail = str(app.screen.query_one("#error-detail", Static).render())
            assert detail.startswith(f"{pg_url}: lost the connection to the PostgreSQL server")
            assert "OperationalError" not in detail and len(detail.splitlines()) == 1
            await pilot.press("escape")
            await settle(app, pilot)
        assert _label(pg_url, second) is None

        await pilot.press("f")  # the server is back: the same key stores it
        await until(pilot, lambda: _label(pg_url, second) == "fail")
        await pilot.press("escape")
        await settle(app, pilot)
