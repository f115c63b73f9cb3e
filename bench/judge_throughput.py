"""Judge throughput: 400 judgements at concurrency 16 against a stand-in that answers after 200 ms.

A warm-up of one round (``concurrency`` other trials) runs first, outside the timing, because the SDK
imports most of its types on its first request (about a second, once per process). The ideal wall time is 400 x 0.2 / 16 = 5.0 s (the server's delay, perfectly overlapped). Prints the
measured wall time and its ratio to that ideal (target: under 1.25). The run goes through the whole
path a user runs: prompts built from stored trials, the real anthropic SDK client over HTTP, parsing,
and every verdict and cached reply committed to SQLite as it arrives.

Run: ``python bench/judge_throughput.py [--n 400] [--concurrency 16] [--delay 0.2]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.runner import Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.store.db import open_store
from reviewer.store.judging import select_trials
from reviewer.workflows.imports import import_paths

SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "support-v1.jsonl"


def make_store(folder: Path, n: int) -> Path:
    """``n`` trials with distinct prompts: the sample run's records, each copy its own task."""
    lines = [json.loads(x) for x in SAMPLE.read_text().splitlines() if x.strip()]
    src = folder / "many.jsonl"
    with src.open("w") as fh:
        for i in range(n):
            rec = dict(lines[i % len(lines)])
            rec["run"] = f"bench-{i // len(lines):03d}"
            rec["task_id"] = f"{rec['task_id']}-{i:05d}"
            fh.write(json.dumps(rec) + "\n")
    path = folder / "bench.db"
    db = open_store(path)
    import_paths(db, [src])
    db.close()
    return path


@contextlib.contextmanager
def standin_process(delay: float) -> Iterator[str]:
    """The stand-in in its own process, as the real API is: it must not share our interpreter's GIL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "reviewer.judge.standin",
        "--port",
        str(port),
        "--delay",
        str(delay),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()  # "stand-in Messages API on ..." once it listens
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay", type=float, default=0.2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, standin_process(args.delay) as url:
        os.environ["ANTHROPIC_BASE_URL"] = url
        os.environ["ANTHROPIC_API_KEY"] = "fake-key-for-the-stand-in"
        warm = args.concurrency
        db = open_store(make_store(Path(tmp), args.n + warm))
        everything = select_trials(db)
        ids, warm_ids = everything[:-warm], everything[-warm:]
        settings = JudgeSettings(concurrency=args.concurrency)
        # warm-up outside the timing: the SDK imports its types lazily on the first request
        Runner(db, settings).run(verdict_jobs(db, warm_ids, BUILTIN_RUBRIC, settings), warm)
        started = time.perf_counter()
        stats = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
        wall = time.perf_counter() - started
        again = time.perf_counter()
        cached = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
        cached_wall = time.perf_counter() - again
        db.close()
    ideal = len(ids) * args.delay / args.concurrency
    print(
        f"judgements          {stats.done} of {len(ids)} ({stats.requests} requests, {stats.errors} errors)"
    )
    print(f"concurrency         {args.concurrency}, stand-in delay {args.delay * 1000:.0f} ms")
    print(f"ideal wall time     {ideal:.2f} s  (n x delay / concurrency)")
    print(f"measured wall time  {wall:.2f} s")
    print(f"ratio to ideal      {wall / ideal:.3f}  (target < 1.25)")
    print(
        f"cached re-run       {cached_wall:.2f} s, {cached.requests} requests ({cached_wall / ideal:.3f} of ideal)"
    )


if __name__ == "__main__":
    main()
