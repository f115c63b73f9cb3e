"""A shared queue in the app: the label screen shows the trial no other labeler holds, the team's
progress and who else is labeling, takes the next lease after each label and gives its lease back
when the labeler leaves; the `a` form makes a shared queue."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Checkbox, Input, Static

from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.store.queues import claim_next, list_queues, live_leases, queue_items
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.queues import QueuesScreen
from reviewer.workflows.queues import make_queue
from tests.tui.conftest import open_new_queue_form, settle, until

SIZE = (120, 40)


def _team_queue(db_path: Path) -> list[str]:
    """A shared queue "team" of 6 trials, one label each, made by lead: its trial ids."""
    with open_store(db_path) as db:
        make_queue(db, "lead", n=6, name="team", per_trial=1)
        return [it.trial_id for it in queue_items(db, "team")]


def _showing(screen: LabelScreen) -> Callable[[str], bool]:
    return lambda trial_id: screen.payload is not None and screen.payload.trial_id == trial_id


async def test_label_screen_takes_leases_and_gives_them_back(sample_db: Path) -> None:
    ids = _team_queue(sample_db)
    with open_store(sample_db) as db:
        claim_next(db, "team", "bob", 1)  # bob, in another process, holds the first trial
    app = ReviewerApp(db_path=sample_db, labeler="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = LabelScreen("team", "ann")
        app.push_screen(screen)
        showing = _showing(screen)

        await until(pilot, lambda: showing(ids[1]))
        await settle(app, pilot)
        title = str(screen.query_one("#label-title", Static).render())
        assert "team 0 / 6 done · you labeled 0" in title
        assert "also labeling: bob" in str(screen.query_one("#label-outlook", Static).render())
        await pilot.press("p")
        await until(pilot, lambda: showing(ids[2]))
        await settle(app, pilot)
        assert "team 1 / 6 done · you labeled 1" in str(
            screen.query_one("#label-title", Static).render()
        )
        with open_store(sample_db) as db:
            assert current_labels(db, labeler="ann")[ids[1], "ann"].verdict == "pass"
            assert [(k.labeler, k.trial_id) for k in live_leases(db, "team")] == [
                ("bob", ids[0]),
                ("ann", ids[2]),
            ]
        await pilot.press("right_square_bracket")  # past the last: says why, stays
        await settle(app, pilot)
        assert showing(ids[2])
        assert any(
            "your last trial so far: the team has 1 / 6 done" in str(n.message)
            for n in app._notifications
        )
        await pilot.press("escape")
        await settle(app, pilot)

        def given_back() -> bool:
            with open_store(sample_db) as db:
                return [k.labeler for k in live_leases(db, "team")] == ["bob"]

        await until(pilot, given_back)


async def test_the_form_makes_a_shared_queue(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db, labeler="ann")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_new_queue_form(app, pilot)
        form.query_one("#new-queue-size", Input).value = "5"
        form.query_one("#new-queue-shared", Checkbox).value = True
        form.query_one("#new-queue-per-trial", Input).value = "0"
        await pilot.press("ctrl+s")
        await pilot.pause()
        error = str(form.query_one("#new-queue-error", Static).render())
        assert "labels per trial is a whole number from 1 to 50" in error
        form.query_one("#new-queue-per-trial", Input).value = "3"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        with open_store(sample_db) as db:
            (queue,) = list_queues(db)
        assert queue.name == "ann-shared-s0" and queue.params["per_trial"] == 3
        screen = app.screen
        assert isinstance(screen, QueuesScreen)
        row = screen.rows[queue.name]
        assert row.per_trial == 3 and row.team.startswith("team 0 / 5 with all 3 labels")


async def test_a_trial_filled_while_read_is_not_labeled_twice(sample_db: Path) -> None:
    """ann's lease lapsed while she read; bob took the trial and labeled it: her key press stores
    nothing, says so, and brings her next trial."""
    ids = _team_queue(sample_db)
    app = ReviewerApp(db_path=sample_db, labeler="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = LabelScreen("team", "ann")
        app.push_screen(screen)
        showing = _showing(screen)

        await until(pilot, lambda: showing(ids[0]))
        await settle(app, pilot)
        with open_store(sample_db) as db:
            db.execute("UPDATE queue_leases SET expires = 0")  # twenty minutes later
            db.conn.commit()
            taken = claim_next(db, "team", "bob", 1)
            assert taken is not None and taken.trial_id == ids[0]
            from reviewer.workflows.labels import give_label

            give_label(db, ids[0], "bob", "fail", queue="team")
        await pilot.press("p")
        await until(pilot, lambda: showing(ids[1]))
        with open_store(sample_db) as db:
            labels = current_labels(db)
        assert (ids[0], "ann") not in labels and labels[ids[0], "bob"].verdict == "fail"
        assert any("Not labeled: bob labeled or took" in str(n.message) for n in app._notifications)
