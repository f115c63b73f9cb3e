"""An active queue in the app: made from the `a` form, labeled in the label screen in the order it
decides as labels arrive, resumed where it stands, and blind: the screen says how the next trial
was picked and how many labels the verdict needs, never the judge's verdict of the trial."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.widgets import Checkbox, Input, Static

from reviewer.store import open_store
from reviewer.store.queries import verdicts_for
from reviewer.store.queues import QueueItem, get_queue, list_queues
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.queues import QueuesScreen
from reviewer.workflows.queues import make_queue, queue_status
from tests.tui.conftest import open_new_queue_form, settle, until
from tests.tui.test_label_blind import _squash, leaks

SIZE = (120, 40)


async def test_the_form_makes_an_active_queue_and_the_list_says_so(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_new_queue_form(app, pilot)
        form.query_one(Input).value = "8"
        form.query_one("#new-queue-active", Checkbox).value = True
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        with open_store(sample_db) as db:
            (queue,) = list_queues(db)
            status = queue_status(db, queue.name, "ana")
        assert queue.name == "ana-active-s0" and queue.params["active"]
        assert status.total == 8 and status.outlook is not None
        screen = app.screen
        assert isinstance(screen, QueuesScreen)
        row = screen.rows[queue.name]
        assert row.active and row.outlook == "30+ labels to a verdict"
        status_line = str(screen.query_one("#queues-status", Static).render())
        assert "30+ labels to a verdict · active: picked to tighten the kappa estimate most" in (
            status_line
        )
        assert "judge-pass" not in status_line and "judge-fail" not in status_line


def _shows(screen: LabelScreen, item: QueueItem | None) -> Callable[[], bool]:
    return lambda: (
        item is not None and screen.payload is not None and screen.payload.trial_id == item.trial_id
    )


def _moved_on(screen: LabelScreen, done: int) -> Callable[[], bool]:
    return lambda: (
        screen.mine is None and screen.state is not None and len(screen.state.done) == done
    )


async def test_labeling_follows_the_queue_decisions_blind_and_resumes(sample_db: Path) -> None:
    with open_store(sample_db) as db:
        queue = make_queue(db, "ana", n=6, active=True).queue
        markers = {}
        for item in get_queue(db, queue.name).items:
            found = ["JUDGE", "judge:", "judge-pass", "judge-fail"]
            for v in verdicts_for(db, item.trial_id):
                found += [_squash(v.judge), _squash(v.rationale or "")[:30]]
            markers[item.trial_id] = [m for m in found if m]
    app = ReviewerApp(db_path=sample_db, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        for step in range(3):
            with open_store(sample_db) as db:
                want = queue_status(db, queue.name, "ana")
            if step in (0, 2):  # at first, and again after leaving: it resumes where it stands
                screen = LabelScreen(queue.name, "ana")
                app.push_screen(screen)
            await until(pilot, _shows(screen, want.next_item))
            await settle(app, pilot)
            assert screen.mine is None and leaks(app, markers) == []
            outlook = str(screen.query_one("#label-outlook", Static).render())
            assert "labels to a verdict" in outlook and "picked to tighten kappa" in outlook
            title = str(screen.query_one("#label-title", Static).render())
            assert f"— {step} / 6" in title
            assert want.next_item is not None
            if step == 2:  # the decision, not the queue's order: position 3 is left for later
                assert want.next_item.position == 4
            # labels that agree with the judge (a judge-fail label tightens kappa less after them)
            await pilot.press("p" if want.next_item.verdict == "pass" else "f")
            await until(pilot, _moved_on(screen, step + 1))
            if step == 1:
                await pilot.press("escape")
                await settle(app, pilot)
        # back to the first labeled trial with [ : labeled, so it is no longer blind to the screen
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert (
            screen.mine is not None and screen.mine.verdict == "pass"
        )  # the last labeled: position 4
    with open_store(sample_db) as db:
        assert queue_status(db, queue.name, "ana").done == 3


async def test_a_queue_made_with_a_is_the_one_highlighted(sample_db: Path) -> None:
    """A queue made with a was not selected afterwards: Enter opened another, finished one
    (found by a review). The new queue is highlighted once the list holds it."""
    from textual.widgets import DataTable

    from reviewer.tui.screens.queues import QueuesLoaded
    from reviewer.workflows.queues import make_queue

    with open_store(sample_db) as db:
        make_queue(db, "ana", n=4, name="aaa-old", runs=["support-v1"])  # first in the list
    app = ReviewerApp(db_path=sample_db, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        form = await open_new_queue_form(app, pilot)
        form.query_one(Input).value = "5"
        await pilot.press("ctrl+s")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, QueuesScreen)
        new = next(name for name in screen.rows if name != "aaa-old")
        await until(pilot, lambda: screen._current() == new)
        table = screen.query_one("#queues", DataTable)
        assert table.cursor_row == table.get_row_index(new)
        # the race seen in a terminal: a load begun before the queue was made lands after it
        rows, runs = list(screen.rows.values()), screen.runs
        table.move_cursor(row=table.get_row_index("aaa-old"))
        screen.focus_on = new
        screen.on_queues_loaded(QueuesLoaded([r for r in rows if r.name != new], runs))
        assert screen.focus_on == new  # kept for the load that holds it
        screen.on_queues_loaded(QueuesLoaded(rows, runs))
        assert screen._current() == new and screen.focus_on is None
