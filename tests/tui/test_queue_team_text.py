"""The app's queue list says who labeled a queue only when someone besides its labeler did, as
`reviewer queues` and docs/app.md say: "labeled by root 3" showed for root's own queue (found by
a new-user review)."""

from __future__ import annotations

from pathlib import Path

from reviewer.tui.screens.queues import team_text
from reviewer.workflows.queues import TeamProgress


def test_a_queue_only_its_labeler_labeled_says_nothing_more() -> None:
    assert team_text(TeamProgress({"root": 3}), "root") == ""
    assert team_text(TeamProgress({}), "root") == ""


def test_another_labeler_or_a_shared_queue_is_said() -> None:
    assert team_text(TeamProgress({"root": 3, "ana": 1}), "root") == "labeled by root 3, ana 1"
    shared = TeamProgress({"root": 3}, shared=True, complete=3, total=10)
    assert team_text(shared, "root") == "team 3 / 10 labeled · labeled by root 3"


async def test_the_queue_list_shows_a_queues_own_labelers_progress(tmp_path: Path) -> None:
    """Bob, in the app, saw ann's queue at "0 / 6" where `reviewer queues` said "3 / 6": the app
    counted the progress of whoever used it on every queue (found by a review). A queue that is
    not shared shows its own labeler's progress, as the CLI does, whoever looks."""
    from textual.widgets import DataTable

    from reviewer.store import open_store
    from reviewer.store.queues import queue_items
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.queues import QueuesScreen
    from reviewer.workflows.labels import give_label
    from reviewer.workflows.queues import make_queue
    from tests.conftest import sample_copy
    from tests.tui.conftest import settle

    db_path = sample_copy(tmp_path / "s.db")
    with open_store(db_path) as db:
        make_queue(db, "ann", n=6, name="anns")
        for it in queue_items(db, "anns")[:3]:
            give_label(db, it.trial_id, "ann", "pass", queue="anns")
    app = ReviewerApp(db_path=db_path, labeler="bob")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(QueuesScreen())
        await settle(app, pilot)
        table = app.screen.query_one("#queues", DataTable)
        row = [str(c) for c in table.get_row_at(0)]
        assert row[0] == "anns" and row[1] == "ann" and row[2] == "3 / 6", row
