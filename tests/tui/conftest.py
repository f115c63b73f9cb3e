"""Helpers every TUI test shares: wait for the app to settle, wait for a condition, press keys."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from textual.app import App
from textual.worker import WorkerFailed

#: Worker groups that live as long as their screen (never "complete" while it is open).
LONG_LIVED = ("label-writer",)


async def settle(
    app: App[Any],
    pilot: Any,
    rounds: int = 3,
    *,
    tolerate_failures: bool = False,
    ignore: Iterable[str] = LONG_LIVED,
) -> None:
    """Wait for every worker (but those of the IGNORE groups), then let the screen refresh; ROUNDS
    times, since a finished worker often posts a message that starts another. A worker that failed
    fails the wait, unless TOLERATE_FAILURES (the app has shown the failure; the test looks for it)."""
    skip = set(ignore)
    for _ in range(rounds):
        busy = [w for w in app.workers if w.group not in skip and not w.is_finished]
        if busy:  # an empty list would mean every worker
            try:
                await app.workers.wait_for_complete(busy)
            except WorkerFailed:
                if not tolerate_failures:
                    raise
        await pilot.pause()


async def until(
    pilot: Any, cond: Callable[[], object], tries: int = 500, step: float = 0.01
) -> None:
    """Poll COND between refreshes, every STEP seconds; fail after TRIES polls."""
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(step)
    raise AssertionError("condition never met")


async def press(app: App[Any], pilot: Any, *keys: str, timeout: float = 20.0) -> None:
    """Press each key and settle after it; a key after which the app never settles fails the test
    (naming the key and the screen) instead of hanging the suite."""
    for key in keys:
        where = type(app.screen).__name__
        try:
            await asyncio.wait_for(pilot.press(key), timeout)
            await asyncio.wait_for(settle(app, pilot, 2, tolerate_failures=True), timeout)
        except TimeoutError:
            raise AssertionError(f"{key!r} on {where} never settled") from None


async def open_new_queue_form(app: Any, pilot: Any) -> Any:
    """The queue list opened and its `a` form shown: the form (a NewQueueForm)."""
    from reviewer.tui.screens.queues import NewQueueForm, QueuesScreen

    await settle(app, pilot)
    app.push_screen(QueuesScreen())
    await settle(app, pilot)
    await pilot.press("a")
    await pilot.pause()
    form = app.screen
    assert isinstance(form, NewQueueForm)
    return form
