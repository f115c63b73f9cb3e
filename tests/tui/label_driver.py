"""Run the app headless on a queue and press p for each trial, printing each committed label.

Used by the crash and concurrency tests: python label_driver.py DB QUEUE LABELER COUNT
"""

from __future__ import annotations

import asyncio
import sys


async def main(db: str, queue: str, labeler: str, count: int) -> None:
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.label import Committed, LabelScreen

    committed: list[str] = []

    class Reporting(LabelScreen):
        def on_committed(self, message: Committed) -> None:
            super().on_committed(message)
            if message.kind == "label" and message.label is not None:
                committed.append(message.label.trial_id)
                print(f"labeled {len(committed)} {message.label.trial_id}", flush=True)

    app = ReviewerApp(db_path=db, labeler=labeler)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = Reporting(queue, labeler)
        app.push_screen(screen)
        while screen.payload is None:
            await pilot.pause(0.01)
        for i in range(count):
            shown = screen.payload.trial_id if screen.payload else None
            await pilot.press("p")
            while len(committed) <= i:
                await pilot.pause(0.005)
            while (
                screen.state is not None
                and len(screen.state.done) < len(screen.state.items)
                and screen.payload is not None
                and screen.payload.trial_id == shown
            ):
                await pilot.pause(0.005)
    print("done", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
