"""Judge throughput and start-up, each against a baseline measured in the same run.

Targets (issue 21), each printed with "met" / "not met":

* steady: 400 judgements at concurrency 16 against the stand-in answering after 200 ms, in its own
  process, vs the ideal 400 x 0.2 / 16 = 5.0 s: <= 1.10. Measured in this process after a warm-up
  round.
* whole command: ``reviewer judge`` over 400 trials in a fresh process, start to exit: <= 1.25.
* start-up: ``reviewer judge`` from process start to its first request: <= 0.8 s.

Baselines measured in the same run: the stand-in's own floor (plain threads with keep-alive
connections, no client library, no store: what the server allows), python's bare start and
``import anthropic`` alone. Then, for reference, the same with the anthropic SDK's client in place
of the judge's own (``reviewer.judge.api``; the SDK is what the judge used before): steady in this
process, start-up and the whole command. Repeats are interleaved and medians printed; CPU and peak memory (max RSS) of the command are printed with
its time.

Run: ``python bench/judge_throughput.py [--n 400] [--concurrency 16] [--delay 0.2] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.runner import Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.store.db import open_store
from reviewer.store.judging import select_trials
from reviewer.workflows.imports import import_paths

SAMPLE = Path(__file__).resolve().parents[1] / "sample_runs" / "support-v1.jsonl"
STEADY_TARGET = 1.10
COMMAND_TARGET = 1.25
STARTUP_TARGET_S = 0.8


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


def standin_floor(url: str, params: dict[str, Any], n: int, concurrency: int) -> float:
    """Wall seconds for ``n`` requests from ``concurrency`` threads, each on one keep-alive
    connection, no SDK and no store: how fast the stand-in itself lets the run go."""
    host, port = url.rsplit("//", 1)[1].split(":")
    body = json.dumps(params).encode()
    counter = iter(range(n))
    lock = threading.Lock()

    def worker() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        while True:
            with lock:
                if next(counter, None) is None:
                    break
            conn.request("POST", "/v1/messages", body, {"content-type": "application/json"})
            conn.getresponse().read()
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def timed_child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MB) of one child process run to its end."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} failed ({proc.returncode}): {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def judge_cmd(db_path: Path, limit: int, concurrency: int, model: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "reviewer",
        "judge",
        "--db",
        str(db_path),
        "--limit",
        str(limit),
        "--concurrency",
        str(concurrency),
        "--model",
        model,
    ]


#: ``reviewer judge`` with the anthropic SDK's client in place of its own (``judge.api``): what the
#: judge sent its requests through before; the same command, runner and store. The reference that
#: shows what the SDK costs at start-up and per request.
SDK_CLIENT = """
import reviewer.judge.runner as runner

def sdk_client(settings):
    runner.require_key()
    anthropic = runner.import_sdk()
    return anthropic.AsyncAnthropic(max_retries=0, timeout=settings.timeout_s)
"""
SDK_COMMAND = (
    SDK_CLIENT
    + """
runner.Runner.__init__.__kwdefaults__["client_factory"] = sdk_client
from reviewer.cli import main
main()
"""
)


def sdk_factory() -> Any:
    """The SDK client's factory, for runs in this process."""
    namespace: dict[str, Any] = {}
    exec(SDK_CLIENT, namespace)
    return namespace["sdk_client"]


def sdk_cmd(db_path: Path, limit: int, concurrency: int, model: str) -> list[str]:
    return [sys.executable, "-c", SDK_COMMAND, *judge_cmd(db_path, limit, concurrency, model)[3:]]


def startup(db_path: Path, repeat: int) -> dict[str, float]:
    """Median seconds from starting a fresh process to its first request at an in-process stand-in:
    ``reviewer judge`` itself and with the SDK's client; also python's bare start and ``import
    anthropic`` alone (start to exit). Interleaved, each repeat a new judge model (no cache)."""
    from reviewer.judge.standin import StandIn, default_policy

    first: list[float] = []

    def policy(params: dict[str, object]) -> object:
        first.append(time.perf_counter())
        return default_policy(params)

    times: dict[str, list[float]] = {k: [] for k in ("bare", "import anthropic", "command", "sdk")}

    def to_first(cmd: list[str], env: dict[str, str]) -> float:
        first.clear()
        t0 = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=True)
        return first[0] - t0

    with StandIn(policy) as server:  # type: ignore[arg-type]
        env = {**os.environ, "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "fake"}
        for i in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            times["bare"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import anthropic"], check=True)
            times["import anthropic"].append(time.perf_counter() - t0)
            times["command"].append(to_first(judge_cmd(db_path, 1, 1, f"startup-{i}"), env))
            times["sdk"].append(to_first(sdk_cmd(db_path, 1, 1, f"startup-sdk-{i}"), env))
    return {k: statistics.median(v) for k, v in times.items()}


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each timed judgement (median)")
    ap.add_argument("--startup-repeat", type=int, default=5)
    args = ap.parse_args()
    n, conc = args.n, args.concurrency
    ideal = n * args.delay / conc
    with tempfile.TemporaryDirectory() as tmp, standin_process(args.delay) as url:
        os.environ["ANTHROPIC_BASE_URL"] = url
        os.environ["ANTHROPIC_API_KEY"] = "fake-key-for-the-stand-in"
        db_path = make_store(Path(tmp), n + conc)
        db = open_store(db_path)
        everything = select_trials(db)
        ids, warm_ids = everything[:-conc], everything[-conc:]
        settings = JudgeSettings(concurrency=conc)
        warm = list(verdict_jobs(db, warm_ids, BUILTIN_RUBRIC, settings))
        # warm-up outside the timing: the SDK imports its types lazily on its first request
        Runner(db, settings).run(warm, len(warm))
        Runner(db, settings, client_factory=sdk_factory()).run(warm, len(warm))
        floors, walls, cpus, commands, rss, thins, thin_rss = [], [], [], [], [], [], []
        command_cpu: list[float] = []
        thin_cpu: list[float] = []
        thin_walls: list[float] = []
        thin_cpus: list[float] = []
        stats: Any = None
        for attempt in range(args.repeat):
            floors.append(standin_floor(url, warm[0].params, n, conc))
            # a fresh judge id each time, so nothing is cached
            settings = JudgeSettings(concurrency=conc, model=f"bench-model-{attempt}")
            started, cpu = time.perf_counter(), time.process_time()
            stats = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), n)
            walls.append(time.perf_counter() - started)
            cpus.append(time.process_time() - cpu)
            settings = JudgeSettings(concurrency=conc, model=f"bench-sdk-{attempt}")
            started, cpu = time.perf_counter(), time.process_time()
            jobs = verdict_jobs(db, ids, BUILTIN_RUBRIC, settings)
            Runner(db, settings, client_factory=sdk_factory()).run(jobs, n)
            thin_walls.append(time.perf_counter() - started)
            thin_cpus.append(time.process_time() - cpu)
            env = {**os.environ, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "fake"}
            wall, used, peak = timed_child(
                judge_cmd(db_path, n, conc, f"command-model-{attempt}"), env
            )
            commands.append(wall)
            command_cpu.append(used)
            rss.append(peak)
            wall, used, peak = timed_child(sdk_cmd(db_path, n, conc, f"sdk-model-{attempt}"), env)
            thins.append(wall)
            thin_cpu.append(used)
            thin_rss.append(peak)
        again = time.perf_counter()
        cached = Runner(db, settings).run(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings), n)
        cached_wall = time.perf_counter() - again
        db.close()
        first = startup(db_path, args.startup_repeat)
    floor, wall, cpu_s = (statistics.median(x) for x in (floors, walls, cpus))
    command = statistics.median(commands)
    rep = f"median of {args.repeat}"
    print(
        f"judgements          {stats.done} of {n} ({stats.requests} requests, {stats.errors} errors)"
    )
    print(f"concurrency         {conc}, stand-in delay {args.delay * 1000:.0f} ms, own process")
    print(f"ideal wall time     {ideal:.2f} s  (n x delay / concurrency)")
    print(
        f"stand-in floor      {floor:.2f} s = {floor / ideal:.3f} of ideal "
        "(plain keep-alive threads, no client library, no store)"
    )
    print(
        f"steady              {wall:.2f} s = {wall / ideal:.3f} of ideal ({rep}; "
        f"target <= {STEADY_TARGET:.2f}): {verdict(wall / ideal <= STEADY_TARGET)}"
    )
    print(f"  judge CPU time    {cpu_s:.2f} s ({cpu_s / n * 1000:.1f} ms per request)")
    print(
        f"whole command       {command:.2f} s = {command / ideal:.3f} of ideal (`reviewer judge` in "
        f"a fresh process, start to exit, {rep}; target <= {COMMAND_TARGET:.2f}): "
        f"{verdict(command / ideal <= COMMAND_TARGET)}"
    )
    print(
        f"  CPU, peak memory  {statistics.median(command_cpu):.2f} s CPU; "
        f"{statistics.median(rss):.0f} MB max RSS of the command"
    )
    s = first
    print(
        f"start-up            {s['command']:.2f} s from `reviewer judge` to its first request "
        f"(median of {args.startup_repeat}; target <= {STARTUP_TARGET_S} s): "
        f"{verdict(s['command'] <= STARTUP_TARGET_S)}"
    )
    print(
        f"  python bare start {s['bare']:.2f} s; `import anthropic` alone {s['import anthropic']:.2f} s"
    )
    thin = statistics.median(thins)
    print("reference: the same with the anthropic SDK's client (what the judge used before)")
    thin_wall, thin_cpu_s = statistics.median(thin_walls), statistics.median(thin_cpus)
    print(
        f"  steady          {thin_wall:.2f} s = {thin_wall / ideal:.3f} of ideal: "
        f"{verdict(thin_wall / ideal <= STEADY_TARGET)}; CPU {thin_cpu_s / n * 1000:.1f} ms "
        "per request"
    )
    print(
        f"  start-up        {s['sdk']:.2f} s to the first request: "
        f"{verdict(s['sdk'] <= STARTUP_TARGET_S)}"
    )
    print(
        f"  whole command   {thin:.2f} s = {thin / ideal:.3f} of ideal: "
        f"{verdict(thin / ideal <= COMMAND_TARGET)}; {statistics.median(thin_cpu):.2f} s CPU, "
        f"{statistics.median(thin_rss):.0f} MB max RSS"
    )
    print(
        f"cached re-run       {cached_wall:.2f} s, {cached.requests} requests "
        f"({cached_wall / ideal:.3f} of ideal)"
    )


if __name__ == "__main__":
    main()
