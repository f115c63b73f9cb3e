"""Import speed: ~10,000 native trials (~30 messages each), as a ratio to plain json.loads of the files.

Prints wall and CPU time (medians of interleaved runs; CPU time is steadier on a busy machine),
how much of it is parsing and checking alone, the import with and without the independence audit
(the fingerprints kept as trials are written and the audit after the import, both run after every
import; "without" is measured by imports with both switched off, interleaved with the others), the
audit's share of the import's CPU, and the Python heap's peak during an import. With
``--growth 100000`` it also imports 100,000 and prints the growth against json.loads' own.

Run: python bench/import_speed.py [--trials N] [--repeat N] [--growth N]. Targets (issue 21): the
import at most 4x json.loads; growth 10k -> 100k at most 10.5x (within 5% of linear). The last lines
say "met" or "not met" for each.
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

import msgspec

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


def parse_lines(files: list[Path], parse: Callable[[bytes], Any]) -> int:
    """Every line of FILES given to PARSE; how many there were."""
    n = 0
    for path in files:
        with path.open("rb") as fh:
            for line in fh:
                parse(line)
                n += 1
    return n


def loads_all(files: list[Path]) -> int:
    return parse_lines(files, json.loads)


def c_parse_all(files: list[Path]) -> int:
    """The C parser alone (msgspec, as the import's ``fast_loads`` calls it), every line."""
    return parse_lines(files, msgspec.json.Decoder().decode)


class _TimedConnection:
    """A connection whose statements and commits add their CPU time to ``spent``: SQLite's own
    work (rows given as a generator are made before the clock starts)."""

    def __init__(self, conn: Any, spent: list[float]) -> None:
        self._conn, self._spent = conn, spent

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def _timed(self, fn: Callable[..., Any], *args: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args)
        finally:
            self._spent[0] += time.process_time() - start

    def execute(self, *args: Any) -> Any:
        return self._timed(self._conn.execute, *args)

    def executemany(self, sql: str, rows: Any) -> Any:
        return self._timed(self._conn.executemany, sql, list(rows))

    def commit(self) -> Any:
        return self._timed(self._conn.commit)


def sqlite_cpu(root: Path, db_path: Path) -> float:
    """CPU seconds spent inside SQLite's calls during one import without the audit."""
    db = open_store(db_path)
    spent = [0.0]
    db.conn = _TimedConnection(db.conn, spent)  # type: ignore[assignment]
    saved = {p: getattr(audit_workflow, p) for p in AUDIT_PARTS if hasattr(audit_workflow, p)}
    for part in saved:
        setattr(audit_workflow, part, lambda *args, **kwargs: None)
    try:
        import_paths(db, [str(root / "runs")])
    finally:
        for part, fn in saved.items():
            setattr(audit_workflow, part, fn)
    db.conn = db.conn._conn  # type: ignore[attr-defined]
    db.close()
    return spent[0]


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
AUDIT_PARTS = ("fingerprint_batch", "audit_after_import")
for _part in AUDIT_PARTS:
    if hasattr(audit_workflow, _part):
        setattr(audit_workflow, _part, _audit_timer(getattr(audit_workflow, _part)))


def timed_import(root: Path, db_path: Path, audit: bool = True) -> tuple[float, float, float]:
    """(wall, CPU, CPU in the audit) of one import of ``root``/runs into a new database; without
    ``audit``, the fingerprints and the audit after the import are switched off for it."""
    db = open_store(db_path)
    before = AUDIT_CPU[0]
    saved = {p: getattr(audit_workflow, p) for p in AUDIT_PARTS if hasattr(audit_workflow, p)}
    if not audit:
        for part in saved:
            setattr(audit_workflow, part, lambda *args, **kwargs: None)
    try:
        wall, cpu = timed(lambda: import_paths(db, [str(root / "runs")]))
    finally:
        for part, fn in saved.items():
            setattr(audit_workflow, part, fn)
    db.close()
    DB_MB[0] = sum(p.stat().st_size for p in db_path.parent.glob(db_path.name + "*")) / 1e6
    for p in db_path.parent.glob(db_path.name + "*"):
        p.unlink()
    return wall, cpu, AUDIT_CPU[0] - before


#: The size of the database the last timed import made (MB, its log included).
DB_MB = [0.0]


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
        runs: dict[str, list[tuple[float, float]]] = {
            "loads": [],
            "c parse": [],
            "parse": [],
            "import": [],
            "no audit": [],
        }
        audit_shares: list[float] = []
        sqlite_share: list[float] = []
        for attempt in range(repeat):  # interleaved, so a busy moment hits all alike
            runs["loads"].append(timed(lambda: loads_all(files)))
            runs["c parse"].append(timed(lambda: c_parse_all(files)))
            sqlite_share.append(sqlite_cpu(root, root / f"sql{attempt}.db"))
            runs["parse"].append(timed(lambda: parse_all(files)))
            db_file = root / f"bench{attempt}.db"
            wall, cpu, audit_cpu = timed_import(root, db_file)
            out["db_mb"] = DB_MB[0]
            runs["import"].append((wall, cpu))
            audit_shares.append(audit_cpu / cpu)
            wall, cpu, _ = timed_import(root, root / f"plain{attempt}.db", audit=False)
            runs["no audit"].append((wall, cpu))
        for name, values in runs.items():
            out[f"{name} wall"] = statistics.median(v[0] for v in values)
            out[f"{name} cpu"] = statistics.median(v[1] for v in values)
        out["audit share"] = statistics.median(audit_shares)
        out["sqlite cpu"] = statistics.median(sqlite_share)
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
    for name in ("loads", "c parse", "parse", "import", "no audit"):
        print(
            f"  {name:8} wall {r[name + ' wall']:6.2f} s   cpu {r[name + ' cpu']:6.2f} s   "
            f"x{r[name + ' cpu'] / r['loads cpu']:5.2f} of json.loads (cpu)"
        )
    print(
        "  (import: with the independence audit, as every import runs it; no audit: the same "
        "import with its fingerprints and the audit after it switched off)"
    )
    print(
        f"  of which the independence audit (fingerprints + audit after import): "
        f"{r['audit share']:.2f} of the import's cpu"
    )
    print(
        f"  database {r['db_mb']:.0f} MB; Python heap peak during an import {r['heap_mb']:.0f} MB"
    )
    loads = r["loads cpu"]
    floor = (r["c parse cpu"] + r["sqlite cpu"]) / loads
    print(
        f"  the floor of an import in Python: the C parser alone {r['c parse cpu'] / loads:.2f}x + "
        f"SQLite's own statements and commits (no audit) {r['sqlite cpu'] / loads:.2f}x = "
        f"{floor:.2f}x of json.loads; what is left for every line of Python under a 4x target: "
        f"{4 - floor:.2f}x (today {(r['no audit cpu'] - r['c parse cpu'] - r['sqlite cpu']) / loads:.2f}x "
        "without the audit)"
    )


def verdict(value: float, target: float) -> str:
    return "met" if value <= target else "not met"


RATIO_TARGET = 4.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--growth", type=int, default=0, help="also import this many (e.g. 100000)")
    args = ap.parse_args()
    small = measure(args.trials, args.repeat)
    report(args.trials, small)
    ratio = small["import cpu"] / small["loads cpu"]
    plain = small["no audit cpu"] / small["loads cpu"]
    wall = small["import wall"] / small["loads wall"]
    print(
        f"ratio: {ratio:.2f}x cpu, {wall:.2f}x wall (medians of {args.repeat}); without the audit "
        f"{plain:.2f}x cpu"
    )
    print(
        f"  of which parsing and checking (no SQL): "
        f"{small['parse cpu'] / small['loads cpu']:.2f}x; SQLite and the rest (no audit): "
        f"{(small['no audit cpu'] - small['parse cpu']) / small['loads cpu']:.2f}x"
    )
    lines = [
        f"native import vs json.loads, {args.trials:,} trials, with the audit: {ratio:.2f}x "
        f"(target <= {RATIO_TARGET:g}x): {verdict(ratio, RATIO_TARGET)}",
        f"native import vs json.loads, {args.trials:,} trials, without the audit: {plain:.2f}x "
        f"(target <= {RATIO_TARGET:g}x): {verdict(plain, RATIO_TARGET)}",
    ]
    if args.growth:
        big = measure(args.growth, max(1, args.repeat - 2))
        report(args.growth, big)
        floor = big["loads cpu"] / small["loads cpu"]
        target = 1.05 * args.growth / args.trials
        for name, key in (("with the audit", "import cpu"), ("without the audit", "no audit cpu")):
            grew = big[key] / small[key]
            lines.append(
                f"native import growth {args.trials:,} -> {args.growth:,}, {name}: {grew:.2f}x "
                f"(json.loads itself {floor:.2f}x; target <= {target:.1f}x): {verdict(grew, target)}"
            )
    else:
        lines.append("native import growth: not measured (run with --growth 100000)")
    print("targets:")
    for line in lines:
        print(f"  {line}")
    print(f"peak resident memory of the whole bench: {_rss_mb():.0f} MB")


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
