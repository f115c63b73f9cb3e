"""TUI speed on 100,000 trials vs 100, measured in-process through Textual's run_test.

Measures the time to the first screen (runs table filled), to open a 2,000-message transcript, and per
`n` step through the trials list; prints each for both databases and the ratio big / small (target:
ratios under 1.5, first screen under 1 s), and the resident memory after the big run (target < 300 MB).
Run: ``python bench/tui_speed.py [--trials N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trial_list_speed import build  # noqa: E402

from reviewer.store import open_store  # noqa: E402
from reviewer.store.writer import rebuild_task_stats  # noqa: E402


def add_long_transcript(path: Path, n_messages: int = 2000) -> str:
    """One trial with ``n_messages`` messages (tool calls and results), stored like an imported one."""
    messages = [{"role": "system", "content": "You are a support agent."}]
    for i in range(n_messages - 1):
        if i % 3 == 0:
            messages.append(
                {"role": "user", "content": f"Question {i}: where is order #W{1000 + i}? " * 3}
            )
        elif i % 3 == 1:
            messages.append(
                {
                    "role": "assistant",
                    "content": "Let me check.",
                    "tool_calls": [
                        {"id": f"c{i}", "name": "get_order", "arguments": {"order_id": f"W{i}"}}
                    ],
                }
            )
        else:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": f"c{i - 1}",
                    "name": "get_order",
                    "content": '{"status": "shipped"}',
                }
            )
    record = json.dumps({"task_id": "long", "outcome": {"passed": False}, "messages": messages})
    db = open_store(path)
    with db.atomic():
        seq = db.execute("SELECT MAX(seq) + 1 FROM trials").fetchone()[0]
        db.execute(
            "INSERT INTO trials (seq, id, run, task_id, trial, success, n_messages, assistant_turns, tool_calls, "
            "tool_errors, steps, record, imported_at) VALUES (?, 'long-trial', 'run-0', 'long', 1, 0, ?, 0, 0, 0, 0, ?, '')",
            [seq, n_messages, record],
        )
    rebuild_task_stats(db)
    db.close()
    return "long-trial"


async def measure(path: Path, steps: int = 20) -> dict[str, float]:
    from textual.widgets import DataTable

    from reviewer.store.trial_list import FilterSequence, TrialFilter
    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.transcript import TranscriptScreen

    out: dict[str, float] = {}
    t0 = time.perf_counter()
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            await app.workers.wait_for_complete()
            await pilot.pause()
            tables = app.screen.query(DataTable)
            if tables and tables.first().row_count:
                break
        out["first screen"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        app.push_screen(TranscriptScreen("long-trial"))
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        out["open 2,000-message transcript"] = time.perf_counter() - t0
        await pilot.press("escape")

        db = open_store(path)
        first = db.execute("SELECT id FROM trials ORDER BY seq LIMIT 1").fetchone()[0]
        db.close()
        app.push_screen(TranscriptScreen(first, FilterSequence(TrialFilter())))
        await app.workers.wait_for_complete()
        await pilot.pause()
        t0 = time.perf_counter()
        for _ in range(steps):
            await pilot.press("n")
            await app.workers.wait_for_complete()
            await pilot.pause()
        out["per n step"] = (time.perf_counter() - t0) / steps
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=100)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.db", Path(tmp) / "big.db"
        build(small, args.small)
        build(big, args.trials)
        for p in (small, big):
            add_long_transcript(p)
        results = {}
        for name, p in (("small", small), ("big", big), ("small", small), ("big", big)):
            r = asyncio.run(measure(p))
            results[name] = {k: min(v, results.get(name, {}).get(k, v)) for k, v in r.items()}
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'measure':32} {args.small:>10,} {args.trials:>10,}   ratio")
    for key in results["small"]:
        s, b = results["small"][key], results["big"][key]
        print(f"{key:32} {s * 1000:9.0f}ms {b * 1000:9.0f}ms   {b / s:.2f}x")
    print(f"resident memory (peak, whole process): {rss_mb:.0f} MB (target < 300 MB)")
    print("targets: ratios < 1.5; first screen on the big database < 1 s")


if __name__ == "__main__":
    main()
