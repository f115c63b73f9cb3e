"""Audit memory and storage on a run whose trials all share one environment (nothing reset between
trials), against a run of the same size whose trials are independent.

Every trial looks up its user, whose reservations include those every earlier trial for that user
booked, then books one: each trial sees ids other trials created, the worst case for the leak check
(before issue 27: 998,725 findings, 4.3 GB of memory and a 1.1 GB database at 20,000 trials).
Each audit runs in its own process (its peak resident memory is the figure), at 2,000 and 20,000
trials; prints the peaks, their ratio (target: close to 1, <= 1.3), the findings kept and counted,
and the database's size. Run: ``python bench/audit_memory.py [--small N] [--large N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TRIALS = 4
USERS = 50  # trials of one user see each other's bookings: ~n / USERS ids per lookup


def _code(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(6))


def records(n: int, *, shared: bool, seed: int = 0) -> list[dict[str, Any]]:
    """``n`` trials (4 a task), run round by round across the tasks as a harness does; with
    ``shared`` one environment serves them all, else each trial starts from the seeded one."""
    rng = random.Random(seed)
    users = [f"user_{u}_{rng.randrange(1000, 9999)}" for u in range(USERS)]
    seeded = {u: [_code(rng) for _ in range(2)] for u in users}
    booked: dict[str, list[str]] = {u: [] for u in users}
    out: dict[tuple[int, int], dict[str, Any]] = {}
    tasks = n // TRIALS
    for trial in range(TRIALS):
        for task in range(tasks):
            user = users[task % USERS]
            mine = seeded[user] + (booked[user][-200:] if shared else [])
            new = _code(rng)
            if shared:
                booked[user].append(new)
            msgs = [
                {"role": "system", "content": "You are an airline agent."},
                {"role": "user", "content": f"Hi, I am {user}. Book me a flight."},
                _call("c1", "get_user_details", {"user_id": user}),
                _result("c1", "get_user_details", {"user_id": user, "reservations": mine}),
                _call("c2", "book_reservation", {"user_id": user}),
                _result("c2", "book_reservation", {"reservation_id": new}),
                {"role": "assistant", "content": f"Booked {new}."},
            ]
            out[(task, trial)] = {
                "run": "shared" if shared else "fresh",
                "task_id": f"task_{task:05d}",
                "trial": trial,
                "outcome": {"passed": rng.random() < 0.6},
                "messages": msgs,
            }
    return [out[k] for k in sorted(out)]


def _call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": cid, "name": name, "arguments": args}],
    }


def _result(cid: str, name: str, value: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "name": name, "content": json.dumps(value)}


def _audit_child(db_path: str, run: str) -> None:
    """In a fresh process: audit ``run`` and store it; print the figures as JSON."""
    import time

    from reviewer.store import open_store
    from reviewer.workflows.audit import audit_run, stored_audit

    with open_store(db_path) as db:
        start = time.process_time()
        result = audit_run(db, run)
        cpu = time.process_time() - start
        stored = stored_audit(db, run, refresh=False)
        kept = 0 if stored is None else len(stored.findings)
    peak = _high_water_mb()
    print(
        json.dumps(
            {
                "peak_mb": peak,
                "cpu_s": cpu,
                "counts": result.counts(),
                "stored": kept,
                "summary": result.summary(),
            }
        )
    )


def _high_water_mb() -> float:
    """This process's peak resident memory (VmHWM: ru_maxrss would count the parent's at fork)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(n: int, shared: bool, tmp: Path) -> dict[str, Any]:
    from reviewer.store import open_store
    from reviewer.workflows.imports import import_paths

    name = f"{'shared' if shared else 'fresh'}-{n}"
    src = tmp / f"{name}.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records(n, shared=shared)))
    db_path = tmp / f"{name}.db"
    import reviewer.workflows.audit as audit_workflow

    after = audit_workflow.audit_after_import
    audit_workflow.audit_after_import = lambda db, runs: None  # type: ignore[assignment]
    try:  # the audit runs in the child only
        with open_store(db_path) as db:
            import_paths(db, [src])
    finally:
        audit_workflow.audit_after_import = after  # type: ignore[assignment]
    size_before = db_path.stat().st_size
    run = "shared" if shared else "fresh"
    child = subprocess.run(
        [sys.executable, __file__, "--child", str(db_path), run],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    figures: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    with open_store(db_path) as db:
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    figures["db_growth_mb"] = (db_path.stat().st_size - size_before) / 1e6
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--large", type=int, default=20_000)
    parser.add_argument("--child", nargs=2, metavar=("DB", "RUN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _audit_child(*args.child)
        return
    sys.path.insert(0, str(REPO))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for shared in (False, True):
            for n in (args.small, args.large):
                f = rows[(shared, n)] = measure(n, shared, Path(tmp))
                what = "shared environment" if shared else "fresh environments"
                print(
                    f"{n:>7,} trials, {what:<18}: audit peak {f['peak_mb']:6.1f} MB, "
                    f"CPU {f['cpu_s']:5.2f} s, findings {sum(f['counts'].values()):,} "
                    f"({f['stored']:,} stored), database +{f['db_growth_mb']:.2f} MB"
                )
                print(f"{'':9}{f['summary']}")
    small, large = rows[(True, args.small)], rows[(True, args.large)]
    ratio = large["peak_mb"] / small["peak_mb"]
    fresh = rows[(False, args.large)]["peak_mb"]
    print(
        f"peak at {args.large:,} / at {args.small:,} leaky trials: {ratio:.2f}x "
        f"(target <= 1.3): {'met' if ratio <= 1.3 else 'NOT MET'}"
    )
    print(
        f"leaky / independent run at {args.large:,} trials: {large['peak_mb'] / fresh:.2f}x; "
        f"stored findings {large['stored']:,} (target: capped): "
        f"{'met' if large['stored'] <= 400 else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
