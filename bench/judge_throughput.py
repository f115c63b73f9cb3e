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
import statistics
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


def startup(db_path: Path, repeat: int) -> tuple[float, float]:
    """Median seconds from starting ``reviewer judge`` (a fresh process) to its first request at an
    in-process stand-in, and the same process's bare start-up (``python -c pass``) for scale."""
    from reviewer.judge.standin import StandIn, default_policy

    first: list[float] = []

    def policy(params: dict[str, object]) -> object:
        first.append(time.perf_counter())
        return default_policy(params)

    times, bare = [], []
    with StandIn(policy) as server:  # type: ignore[arg-type]
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "fake"}
        for i in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            bare.append(time.perf_counter() - t0)
            first.clear()
            t0 = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "reviewer",
                    "judge",
                    "--db",
                    str(db_path),
                    "--limit",
                    "1",
                    "--concurrency",
                    "1",
                    "--model",
                    f"startup-model-{i}",
                ],
                env=env,
                capture_output=True,
                check=True,
            )
            times.append(first[0] - t0)
    return statistics.median(times), statistics.median(bare)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=1, help="runs of the timed judgement (median)")
    ap.add_argument("--startup-repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, standin_process(args.delay) as url:
        os.environ["ANTHROPIC_BASE_URL"] = url
        os.environ["ANTHROPIC_API_KEY"] = "fake-key-for-the-stand-in"
        warm = args.concurrency
        db_path = make_store(Path(tmp), args.n + warm)
        db = open_store(db_path)
        everything = select_trials(db)
        ids, warm_ids = everything[:-warm], everything[-warm:]
        settings = JudgeSettings(concurrency=args.concurrency)
        # warm-up outside the timing: the SDK imports its types lazily on the first request
        Runner(db, settings).run(verdict_jobs(db, warm_ids, BUILTIN_RUBRIC, settings), warm)
        walls, cpus = [], []
        for attempt in range(args.repeat):
            # a fresh judge id each time, so nothing is cached
            settings = JudgeSettings(concurrency=args.concurrency, model=f"bench-model-{attempt}")
            started, cpu = time.perf_counter(), time.process_time()
            stats = Runner(db, settings).run(
                verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids)
            )
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
        wall, cpu_s = statistics.median(walls), statistics.median(cpus)
        again = time.perf_counter()
        cached = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), len(ids))
        cached_wall = time.perf_counter() - again
        db.close()
        first_request, bare = startup(db_path, args.startup_repeat)
        command_wall = command_run(db_path, url, args)
    ideal = len(ids) * args.delay / args.concurrency
    print(
        f"judgements          {stats.done} of {len(ids)} ({stats.requests} requests, {stats.errors} errors)"
    )
    print(f"concurrency         {args.concurrency}, stand-in delay {args.delay * 1000:.0f} ms")
    print(f"ideal wall time     {ideal:.2f} s  (n x delay / concurrency)")
    print(f"measured wall time  {wall:.2f} s")
    print(
        f"ratio to ideal      {wall / ideal:.3f}  (median of {args.repeat}; target <= 1.10 steady)"
    )
    print(f"judge CPU time      {cpu_s:.2f} s ({cpu_s / len(ids) * 1000:.1f} ms per request)")
    print(
        f"whole command       {command_wall:.2f} s: {command_wall / ideal:.3f} of ideal "
        "(`reviewer judge` in a fresh process, start-up included; target <= 1.25)"
    )
    print(
        f"start-up            {first_request:.2f} s from `reviewer judge` to its first request "
        f"(python itself starts in {bare:.2f} s; target <= 0.8 s)"
    )
    print(
        f"cached re-run       {cached_wall:.2f} s, {cached.requests} requests ({cached_wall / ideal:.3f} of ideal)"
    )


def command_run(db_path: Path, url: str, args: argparse.Namespace) -> float:
    """Wall seconds of ``reviewer judge`` over the same trials, from process start to exit."""
    env = {**os.environ, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "fake"}
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "reviewer",
            "judge",
            "--db",
            str(db_path),
            "--limit",
            str(args.n),
            "--concurrency",
            str(args.concurrency),
            "--model",
            "command-model",
        ],
        env=env,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
