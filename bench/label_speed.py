"""Labeling speed: 500 labels through Pilot, key press to the next transcript shown.

Prints the median and p95 of that time and of a bare Textual screen switch (a key press that pushes an
empty screen, driven the same way) measured in the same run, and their ratio (target: under 2x). Run: ``python bench/label_speed.py [--labels N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_db(root: Path, n: int) -> Path:
    from reviewer.calibration.sampling import make_queue
    from reviewer.store import open_store
    from reviewer.workflows.imports import import_paths

    path = root / "runs.jsonl"
    with path.open("w") as fh:
        for i in range(n):
            messages = [
                {"role": "system", "content": "You are a support agent."},
                {"role": "user", "content": f"Where is my order #W{1000 + i}?"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": "c1", "name": "get_order", "arguments": {"order_id": f"W{i}"}}
                    ],
                },
                {
                    "role": "tool",
                    "tool_call_id": "c1",
                    "name": "get_order",
                    "content": '{"status": "shipped"}',
                },
                {"role": "assistant", "content": f"Order W{i} has shipped and arrives on Friday."},
            ]
            rec = {
                "run": "bench",
                "task_id": f"task_{i % 40}",
                "outcome": {"passed": i % 3 != 0},
                "messages": messages,
                "judge": {"verdict": "pass" if i % 2 else "fail", "rationale": "ok", "model": "m"},
                "latency_s": float(i % 17),
            }
            fh.write(json.dumps(rec) + "\n")
    db_path = root / "bench.db"
    db = open_store(db_path)
    import_paths(db, [str(path)])
    make_queue(db, "bench", n, seed=0, labeler="bench")
    db.close()
    return db_path


async def measure(db_path: Path, labels: int) -> tuple[list[float], list[float]]:
    from textual.screen import Screen
    from textual.widgets import Static

    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.label import LabelScreen

    class Bare(Screen[None]):
        BINDINGS = [("z", "app.pop_screen", "back")]

        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("bare")

    class Switcher(Screen[None]):
        """The baseline: a key press that switches to a bare screen, through the same Pilot path."""

        BINDINGS = [("z", "go", "go")]

        def compose(self):  # type: ignore[no-untyped-def]
            yield Static("switcher")

        def action_go(self) -> None:
            self.app.push_screen(Bare())

    label_times: list[float] = []
    switch_times: list[float] = []
    app = ReviewerApp(db_path=db_path, labeler="bench")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = LabelScreen("bench", "bench")
        app.push_screen(screen)
        while screen.payload is None:
            await pilot.pause(0.001)
        for _ in range(labels):
            shown = screen.payload.trial_id if screen.payload else None
            t0 = time.perf_counter()
            await pilot.press("p")
            while screen.payload is not None and screen.payload.trial_id == shown:
                if screen.state is not None and len(screen.state.done) >= len(screen.state.items):
                    break
                await pilot.pause(0.0005)
            label_times.append(time.perf_counter() - t0)

        switcher = Switcher()
        app.push_screen(switcher)
        await pilot.pause()
        for _ in range(labels):
            t0 = time.perf_counter()
            await pilot.press("z")
            while not isinstance(app.screen, Bare):
                await pilot.pause(0.0005)
            switch_times.append(time.perf_counter() - t0)
            await pilot.press("z")
            while app.screen is not switcher:
                await pilot.pause(0.0005)
    return label_times, switch_times


def p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--labels", type=int, default=500)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = make_db(Path(tmp), args.labels + 20)
        labels, switches = asyncio.run(measure(db, args.labels))
    lm, sm = statistics.median(labels), statistics.median(switches)
    print(f"labels: {len(labels)}")
    print(
        f"key press -> next transcript: median {lm * 1000:.1f} ms, p95 {p95(labels) * 1000:.1f} ms"
    )
    print(
        f"bare screen switch:           median {sm * 1000:.1f} ms, p95 {p95(switches) * 1000:.1f} ms"
    )
    print(f"ratio: median {lm / sm:.2f}x, p95 {p95(labels) / p95(switches):.2f}x (target < 2x)")


if __name__ == "__main__":
    main()
