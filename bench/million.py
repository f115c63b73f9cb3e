"""A 1,000,000-trial database through the real importer, then the app and the commands on it.

Generates native JSONL (10 runs; 10 trials per task; each trial ``--messages`` messages, a judge
verdict, usage) one file at a time, imports each with ``reviewer.workflows.imports.import_paths`` and
deletes it, so the database is exactly what ``reviewer import`` would build. Prints the generation
time and the size on disk, then (with ``--measure``, on a database kept with ``--db``) times:

- the app's first screen (Textual Pilot, runs table filled) against the same on 100 trials
  (target: ratio <= 1.2),
- a trial page: the trials list's first page and a deep page, and one trial's record (target <= 10 ms),
- counts of the trials list, uncached: no filter, run and outcome, the judge's verdict (target < 10 ms),
- ``reviewer report`` and ``reviewer compare run-0 run-1`` as subprocesses (target <= 3 s each),

each the median of several runs, with the CPU time and peak resident memory of each command; each
figure says its target and whether it is met, and a summary repeats them all with the database's
size. Opening a database built before migration m016 migrates it first (about 17 s at 1,000,000).

Run: ``python bench/million.py --db DIR/million.db [--trials 1000000]`` (builds it when missing, then
measures). On a 2-core machine the build takes a while; pass ``--trials`` for a smaller one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reviewer.store import open_store
from reviewer.workflows.imports import import_paths

WORDS = (
    "order refund shipped delivered customer policy address cancel return item damaged verify email "
    "account payment card total amount store credit warehouse tracking carrier label please thanks"
).split()
RUNS = 10
PER_FILE = 20_000


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _message_pool(rng: random.Random, n_messages: int, size: int = 400) -> list[str]:
    """``size`` distinct message lists, already JSON: a trial's line takes one and adds its identity."""
    pool = []
    for _ in range(size):
        messages: list[dict[str, object]] = [{"role": "system", "content": _sentence(rng, 30)}]
        for turn in range(n_messages - 1):
            kind = turn % 4
            if kind == 0:
                messages.append({"role": "user", "content": _sentence(rng, rng.randint(8, 25))})
            elif kind == 1:
                call = {
                    "id": f"c{turn}",
                    "name": "get_order",
                    "arguments": {"order_id": f"W{rng.randint(1000, 9999)}"},
                }
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
            elif kind == 2:
                body = json.dumps({"status": rng.choice(["shipped", "delivered"])})
                messages.append({"role": "tool", "tool_call_id": f"c{turn - 1}", "content": body})
            else:
                messages.append(
                    {"role": "assistant", "content": _sentence(rng, rng.randint(10, 30))}
                )
        pool.append(json.dumps(messages))
    return pool


def build(db_path: Path, trials: int, n_messages: int) -> float:
    """Import ``trials`` generated trials into ``db_path``; returns the seconds it took."""
    rng = random.Random(11)
    pool = _message_pool(rng, n_messages)
    per_run = trials // RUNS
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, open_store(db_path) as db:
        done = 0
        while done < trials:
            path = Path(tmp) / f"part{done // PER_FILE}.jsonl"
            with path.open("w") as fh:
                for i in range(done, min(done + PER_FILE, trials)):
                    run, k = divmod(i, per_run)
                    run = min(run, RUNS - 1)
                    passed = rng.random() < 0.55 + 0.02 * run
                    verdict = "pass" if (passed if rng.random() < 0.9 else not passed) else "fail"
                    fh.write(
                        f'{{"run": "run-{run}", "task_id": "task_{k // 10:06d}", '
                        f'"trial": {k % 10 + 1}, "outcome": {{"passed": {json.dumps(passed)}, '
                        f'"reason": "{_sentence(rng, 5)}"}}, "messages": {pool[i % len(pool)]}, '
                        f'"judge": {{"verdict": "{verdict}", "model": "m"}}, '
                        f'"usage": {{"input_tokens": {rng.randint(1000, 9000)}, '
                        f'"output_tokens": 400, "cost_usd": {rng.random() / 20:.5f}}}, '
                        f'"latency_s": {rng.random() * 30:.3f}}}\n'
                    )
            summary = import_paths(db, [str(path)])
            done += summary.added
            path.unlink()
            elapsed = time.perf_counter() - start
            print(f"  {done:>9,} trials  {elapsed:7.0f} s  {done / elapsed:7.0f}/s", flush=True)
    return time.perf_counter() - start


def disk_size(db_path: Path) -> int:
    return sum(p.stat().st_size for p in db_path.parent.glob(db_path.name + "*") if p.is_file())


def median_of(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def first_screen(path: Path) -> float:
    from textual.widgets import DataTable

    from reviewer.tui.app import ReviewerApp

    t0 = time.perf_counter()
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            await app.workers.wait_for_complete()
            await pilot.pause()
            tables = app.screen.query(DataTable)
            if tables and tables.first().row_count:
                break
        return time.perf_counter() - t0


def command(db_path: Path, *args: str, repeat: int) -> tuple[float, float, float]:
    """Median seconds of ``reviewer ARGS --db DB`` in a fresh process, its median CPU seconds (steadier
    on a shared machine) and its peak memory (MB)."""
    times, cpu, rss = [], [], 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "reviewer", *args, "--db", str(db_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
        )
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise SystemExit(f"reviewer {' '.join(args)} failed: {err.decode()[-400:]}")
        rss = max(rss, usage.ru_maxrss / 1024)
        cpu.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(times), statistics.median(cpu), rss


#: Every item-2 figure: (what, the figure, its target as words, met or not), in print order.
RESULTS: list[tuple[str, str, str, bool]] = []


def result(name: str, figure: str, target: str, met: bool) -> None:
    RESULTS.append((name, figure, target, met))
    print(f"{name}: {figure} (target {target}): {'met' if met else 'NOT MET'}", flush=True)


def measure(db_path: Path, small_path: Path, repeat: int) -> None:
    from reviewer.store.trial_list import TrialFilter, clear_cache, count, page
    from reviewer.store.trials import load_trial

    with open_store(db_path) as db:  # migrated before anything is timed
        n_trials = int(db.execute("SELECT MAX(seq) FROM trials").fetchone()[0])
    print(f"\nmeasuring (medians of {repeat}; a loaded machine: compare ratios, not seconds)")
    small, big = [], []
    for _ in range(repeat):  # interleaved so a busy moment hits both alike
        small.append(asyncio.run(first_screen(small_path)))
        big.append(asyncio.run(first_screen(db_path)))
    s, b = statistics.median(small), statistics.median(big)
    result(
        "first screen (runs table filled) vs on 100 trials",
        f"{b / s:.2f}x ({b * 1e3:.0f} ms vs {s * 1e3:.0f} ms)",
        "<= 1.2x",
        b / s <= 1.2,
    )

    with open_store(db_path) as db:
        end = int(db.execute("SELECT MAX(seq) FROM trials").fetchone()[0])
        rng = random.Random(3)
        ids = [
            db.execute("SELECT id FROM trials WHERE seq = ?", [rng.randint(1, end)]).fetchone()[0]
            for _ in range(50)
        ]
        deep = TrialFilter(run="run-7", outcome="fail")
        cases = {
            "trials page (first 200)": lambda: page(db, TrialFilter(), limit=200),
            # the screen turning a page knows how many rows lie before it (Page.end_index)
            "trials page (deep, run-7 failures, turned to)": lambda: page(
                db, deep, after_seq=end * 3 // 4, limit=200, known_before=1
            ),
            "trials page (deep, run-7 failures, jumped to: counts its position, uncached)": lambda: (
                clear_cache(),
                page(db, deep, after_seq=end * 3 // 4, limit=200),
            ),
            "one trial (a random one: read and decode its record)": lambda: load_trial(
                db, ids[rng.randrange(len(ids))]
            ),
        }
        for name, fn in cases.items():
            fn()
            t = median_of(fn, max(repeat, 7))
            result(name, f"{t * 1e3:.2f} ms", "<= 10 ms", t <= 0.010)
        for name, f in {
            "count, no filter": TrialFilter(),
            "count, run-3 failures": TrialFilter(run="run-3", outcome="fail"),
            "count, judge fail": TrialFilter(verdict="fail"),
            "count, run-3 failures the judge passed": TrialFilter(
                run="run-3", outcome="fail", verdict="pass"
            ),
            "count, no verdict": TrialFilter(verdict="none"),
        }.items():
            clear_cache()
            t = median_of(lambda f=f: count(db, f, cached=False), 3)
            result(f"{name} (uncached)", f"{t * 1e3:.2f} ms", "< 10 ms", t < 0.010)

    for args in (("report",), ("compare", "run-0", "run-1")):
        t, cpu, rss = command(db_path, *args, repeat=repeat)
        figure = f"{t:.2f} s ({cpu:.2f} s CPU), peak {rss:.0f} MB"
        result(f"reviewer {' '.join(args)}", figure, "<= 3 s", t <= 3)

    size = disk_size(db_path)
    print(f"\nsummary: {n_trials:,} trials, {size / 1e9:.2f} GB on disk")
    width = max(len(r[0]) for r in RESULTS)
    for name, figure, target, met in RESULTS:
        print(f"  {name:<{width}}  {figure:<36} target {target:<9} {'met' if met else 'NOT MET'}")
    left = [r[0] for r in RESULTS if not r[3]]
    print(
        f"{len(RESULTS) - len(left)} of {len(RESULTS)} met"
        + (f"; not met: {', '.join(left)}" if left else "")
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--db", type=Path, required=True, help="the big database (built when missing)")
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--messages", type=int, default=12, help="messages per trial")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build-only", action="store_true")
    args = ap.parse_args()
    if not args.db.exists():
        print(f"building {args.trials:,} trials into {args.db} ...", flush=True)
        took = build(args.db, args.trials, args.messages)
        with open_store(args.db) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"built in {took / 60:.1f} min, peak memory {peak:.0f} MB")
    print(f"database: {disk_size(args.db) / 1e9:.2f} GB on disk")
    if args.build_only:
        return
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small.db"
        build(small, 100, args.messages)
        measure(args.db, small, args.repeat)


if __name__ == "__main__":
    main()
