"""Import speed: ~10,000 native trials (~30 messages each), as a ratio to plain json.loads of the files.

Prints wall and CPU time (medians of interleaved runs; CPU time is steadier on a busy machine),
how much of it is parsing and checking alone, the independence audit's share of the import (the
fingerprints kept as trials are written plus the audit after the import; CPU time, target at most
0.25), and the Python heap's peak during an import. With
``--growth 100000`` it also imports 100,000 and prints the growth against json.loads' own.

Run: python bench/import_speed.py [--trials N] [--repeat N] [--growth N]. Targets: ratio under 4x;
growth 10k -> 100k within 5% of linear.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reviewer.workflows.audit as audit_workflow
from reviewer.ingest import sniff
from reviewer.ingest.files import screen
from reviewer.record import encode
from reviewer.store import open_store
from reviewer.workflows.imports import import_paths

WORDS = (
    "order refund shipped delivered customer policy address cancel return item damaged verify email "
    "account payment card total amount store credit warehouse tracking carrier label please thanks"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_trial(rng: random.Random, run: str, task: int, trial: int) -> dict[str, object]:
    messages: list[dict[str, object]] = [{"role": "system", "content": sentence(rng, 60)}]
    for turn in range(29):
        kind = turn % 4
        if kind == 0:
            messages.append({"role": "user", "content": sentence(rng, rng.randint(8, 30))})
        elif kind == 1:
            call = {
                "id": f"c{turn}",
                "name": "get_order",
                "arguments": {"order_id": f"W{rng.randint(1000, 9999)}"},
            }
            messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == 2:
            body = json.dumps(
                {"status": rng.choice(["shipped", "delivered"]), "total": rng.random() * 100}
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": f"c{turn - 1}",
                    "name": "get_order",
                    "content": body,
                }
            )
        else:
            messages.append({"role": "assistant", "content": sentence(rng, rng.randint(10, 40))})
    return {
        "run": run,
        "task_id": f"task_{task}",
        "trial": trial,
        "outcome": {"passed": rng.random() < 0.7, "reason": sentence(rng, 6)},
        "messages": messages,
        "judge": {"verdict": "pass", "rationale": sentence(rng, 20), "model": "m"},
        "usage": {"input_tokens": 5000, "output_tokens": 400, "cost_usd": 0.02},
        "latency_s": rng.random() * 30,
    }


def write_files(root: Path, trials: int, rng: random.Random) -> list[Path]:
    files = []
    per_file = 1000
    (root / "runs").mkdir()
    for f in range(max(1, trials // per_file)):
        path = root / "runs" / f"run{f}.jsonl"
        with path.open("w") as fh:
            for i in range(per_file):
                fh.write(json.dumps(make_trial(rng, f"run{f}", i // 10, i % 10 + 1)) + "\n")
        files.append(path)
    return files


def loads_all(files: list[Path]) -> int:
    n = 0
    for path in files:
        with path.open("rb") as fh:
            for line in fh:
                json.loads(line)
                n += 1
    return n


def parse_all(files: list[Path]) -> int:
    """What the importer does before SQL: sniff, parse, check (no ids, no writes)."""
    n = 0
    for path in files:
        fmt = sniff(path)
        for rec in screen(fmt.parse(path), str(path)):
            n += 1
            encode(rec)  # type: ignore[arg-type]
    return n


#: CPU seconds spent in the audit's two parts during the imports timed so far.
AUDIT_CPU = [0.0]


def _audit_timer(fn: Callable[..., Any]) -> Callable[..., Any]:
    def timed_part(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            AUDIT_CPU[0] += time.process_time() - start

    return timed_part


# the import reaches both through the module, so every import this bench times counts them (a
# checkout from before fingerprints has only the audit after the import)
for _part in ("fingerprint_batch", "audit_after_import"):
    if hasattr(audit_workflow, _part):
        setattr(audit_workflow, _part, _audit_timer(getattr(audit_workflow, _part)))


def timed_import(root: Path, db_path: Path) -> tuple[float, float, float]:
    """(wall, CPU, CPU in the audit) of one import of ``root``/runs into a new database."""
    db = open_store(db_path)
    before = AUDIT_CPU[0]
    wall, cpu = timed(lambda: import_paths(db, [str(root / "runs")]))
    db.close()
    return wall, cpu, AUDIT_CPU[0] - before


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def measure(trials: int, repeat: int) -> dict[str, float]:
    rng = random.Random(7)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = write_files(root, trials, rng)
        out["mb"] = sum(p.stat().st_size for p in files) / 1e6
        out["n"] = loads_all(files)
        runs: dict[str, list[tuple[float, float]]] = {"loads": [], "parse": [], "import": []}
        audit_shares: list[float] = []
        for attempt in range(repeat):  # interleaved, so a busy moment hits all alike
            runs["loads"].append(timed(lambda: loads_all(files)))
            runs["parse"].append(timed(lambda: parse_all(files)))
            wall, cpu, audit_cpu = timed_import(root, root / f"bench{attempt}.db")
            runs["import"].append((wall, cpu))
            audit_shares.append(audit_cpu / cpu)
            db_file = root / f"bench{attempt}.db"
            out["db_mb"] = sum(p.stat().st_size for p in root.glob(db_file.name + "*")) / 1e6
            for p in root.glob(db_file.name + "*"):
                p.unlink()
        for name, values in runs.items():
            out[f"{name} wall"] = statistics.median(v[0] for v in values)
            out[f"{name} cpu"] = statistics.median(v[1] for v in values)
        out["audit share"] = statistics.median(audit_shares)
        # memory: the Python heap's peak during one more (untimed) import
        db = open_store(root / "mem.db")
        tracemalloc.start()
        import_paths(db, [str(root / "runs")])
        out["heap_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        db.close()
    return out


def report(trials: int, r: dict[str, float]) -> None:
    print(f"trials: {int(r['n']):,} in {max(1, trials // 1000)} files, {r['mb']:.1f} MB")
    for name in ("loads", "parse", "import"):
        print(
            f"  {name:7} wall {r[name + ' wall']:6.2f} s   cpu {r[name + ' cpu']:6.2f} s   "
            f"x{r[name + ' cpu'] / r['loads cpu']:5.2f} of json.loads (cpu)"
        )
    print(
        f"  of which the independence audit (fingerprints + audit after import): "
        f"{r['audit share']:.2f} of the import's cpu (target <= 0.25)"
    )
    print(
        f"  database {r['db_mb']:.0f} MB; Python heap peak during an import {r['heap_mb']:.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--growth", type=int, default=0, help="also import this many (e.g. 100000)")
    args = ap.parse_args()
    small = measure(args.trials, args.repeat)
    report(args.trials, small)
    ratio = small["import cpu"] / small["loads cpu"]
    wall = small["import wall"] / small["loads wall"]
    print(f"ratio: {ratio:.2f}x cpu, {wall:.2f}x wall (medians of {args.repeat}; target < 4x)")
    print(
        f"  of which parsing and checking (no SQL): "
        f"{small['parse cpu'] / small['loads cpu']:.2f}x; SQLite and the rest: "
        f"{(small['import cpu'] - small['parse cpu']) / small['loads cpu']:.2f}x"
    )
    if args.growth:
        big = measure(args.growth, max(1, args.repeat - 2))
        report(args.growth, big)
        floor = big["loads cpu"] / small["loads cpu"]
        grew = big["import cpu"] / small["import cpu"]
        print(
            f"growth {args.trials:,} -> {args.growth:,}: import {grew:.2f}x cpu, json.loads "
            f"{floor:.2f}x (target <= {1.05 * args.growth / args.trials:.1f}x: linear)"
        )
    print(f"peak resident memory of the whole bench: {_rss_mb():.0f} MB")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
