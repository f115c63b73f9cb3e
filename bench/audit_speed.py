"""Audit speed: the independence audit of one airline-like run, as a ratio to importing the same file.

Every trial looks up a user (a large JSON profile), then books, cancels (echoing seeded ids) or reads a
reservation, as tau-bench trials do, 4 trials a task; a few trials carry a planted leak so the leak
path runs for real. Prints (CPU time) the import, the audit's share of it (the fingerprints kept
as trials are written, and the audit after the import), the same audit read from the records as it
was before fingerprints, and the audit after appending 10 trials to the run.

Run: python bench/audit_speed.py [--trials N] [--noisy-reads] (default 20,000 trials).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import reviewer.workflows.audit as audit_workflow
from reviewer.store import open_store
from reviewer.store.db import Store
from reviewer.workflows.imports import import_paths

USERS = 2000
NOISY = False


def _code(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(6))


def seed_profiles(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for u in range(USERS):
        out.append(
            {
                "user_id": f"user_{u}_{rng.randrange(1000, 9999)}",
                "payment_methods": [f"card_{rng.randrange(10**6, 10**7)}" for _ in range(3)],
                "reservations": [_code(rng) for _ in range(5)],
                "address": {"zip": str(rng.randrange(10000, 99999)), "city": "Springfield"},
                "membership": rng.choice(["gold", "silver", "regular"]),
            }
        )
    return out


def make_trial(
    rng: random.Random, profiles: list[dict[str, Any]], task: int, trial: int, leak: str | None
) -> dict[str, Any]:
    user = profiles[task % USERS]
    profile = dict(user, reservations=user["reservations"] + ([leak] if leak else []))
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You are an airline agent. " + "Policy text. " * 40},
        {"role": "user", "content": f"Hi, I am {user['user_id']}."},
    ]

    def call(i: int, name: str, args: dict[str, Any], result: Any) -> None:
        msgs.append(
            {
                "role": "assistant",
                "content": "Let me check that for you.",
                "tool_calls": [{"id": f"c{i}", "name": name, "arguments": args}],
            }
        )
        msgs.append(
            {"role": "tool", "tool_call_id": f"c{i}", "name": name, "content": json.dumps(result)}
        )

    call(1, "get_user_details", {"user_id": user["user_id"]}, profile)
    for i in range(2, 6):
        date = f"2024-05-{10 + i + task % 9}"
        # the same search gives the same flights, as in tau-bench; --noisy-reads: fresh ones
        local = rng if NOISY else random.Random(date)
        flights = [
            {"flight_number": f"HAT{local.randrange(100, 999)}", "price": local.randrange(90, 900)}
            for _ in range(6)
        ]
        call(i, "search_direct_flight", {"origin": "JFK", "date": date}, flights)
    kind = task % 3
    if kind == 0:
        new = {"reservation_id": f"N{task:06d}{trial}", "payment": user["payment_methods"][0]}
        call(6, "book_reservation", {"user_id": user["user_id"]}, new)
    elif kind == 1:
        res = user["reservations"][0]
        echo = {"reservation_id": res, "payments": user["payment_methods"], "status": "cancelled"}
        call(6, "cancel_reservation", {"reservation_id": res}, echo)
    else:
        call(6, "get_reservation_details", {"reservation_id": user["reservations"][1]}, {})
    msgs.append({"role": "assistant", "content": f"All done. Ref {rng.randrange(10**9)}."})
    return {
        "run": "bench",
        "task_id": f"task_{task:05d}",
        "trial": trial,
        "outcome": {"passed": rng.random() < 0.6},
        "messages": msgs,
        "latency_s": round(rng.uniform(3, 60), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument(
        "--noisy-reads",
        action="store_true",
        help="searches return fresh random flights each time (every value read varies)",
    )
    args = parser.parse_args()
    n = args.trials
    global NOISY
    NOISY = args.noisy_reads
    rng = random.Random(0)
    profiles = seed_profiles(rng)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i in range(n):
                task, trial = divmod(i, 4)
                # every 50th booking task leaks its trial 0's booking into trial 2
                leak = f"N{task:06d}0" if task % 150 == 0 and trial == 2 else None
                fh.write(json.dumps(make_trial(rng, profiles, task, trial, leak)) + "\n")
        size = path.stat().st_size
        extra = Path(tmp) / "extra.jsonl"  # 10 more trials of the same run, imported after
        with extra.open("w", encoding="utf-8") as fh:
            for i in range(10):
                fh.write(json.dumps(make_trial(rng, profiles, n // 4 + 1 + i, 0, None)) + "\n")
        timer = _Timer()
        with open_store(Path(tmp) / "b.db") as db:
            import_cpu = _cpu(lambda: import_paths(db, [path]))
            fingerprints, audited = (
                timer.parts["fingerprint_batch"],
                timer.parts["audit_after_import"],
            )
            result = audit_workflow.audit_run(db, "bench")
            # as before fingerprints were kept: every record decoded and read again
            records = _cpu(lambda: _audit_from_records(db))
            timer.parts.clear()
            append_cpu = _cpu(lambda: import_paths(db, [extra]))
            appended = timer.parts["fingerprint_batch"] + timer.parts["audit_after_import"]
        timer.undo()
    share = (fingerprints + audited) / import_cpu
    print(f"{n:,} trials, {size / 1e6:.0f} MB (CPU seconds)")
    print(
        f"import {import_cpu:.2f}s, of which the audit {fingerprints + audited:.2f}s "
        f"(fingerprints kept as trials are written {fingerprints:.2f}s, audit after import "
        f"{audited:.2f}s): {share:.2f} of the import (target <= 0.25)"
    )
    print(
        f"the same audit from the records (as before fingerprints): {records:.2f}s, "
        f"{records / max(audited, 1e-9):.1f}x the audit from fingerprints"
    )
    print(
        f"appending 10 trials to the run: import {append_cpu:.2f}s, of which the audit "
        f"{appended:.2f}s"
    )
    print(f"found: {result.summary()}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak resident memory of the whole process: {peak:.0f} MB")


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def _audit_from_records(db: Store) -> None:
    """The run's audit reading no stored fingerprint (one of another version), keeping nothing."""
    version = audit_workflow.FINGERPRINT_VERSION
    audit_workflow.FINGERPRINT_VERSION = version + 1  # type: ignore[misc]
    try:
        audit_workflow.audit_run(db, "bench", store=False)
    finally:
        audit_workflow.FINGERPRINT_VERSION = version  # type: ignore[misc]


class _Timer:
    """CPU seconds in the audit's two parts of an import (the import reaches both through the
    module): the fingerprints kept as trials are written, and the audit after the import."""

    NAMES = ("fingerprint_batch", "audit_after_import")

    def __init__(self) -> None:
        self.parts: dict[str, float] = {}
        self.original = {name: getattr(audit_workflow, name) for name in self.NAMES}
        for name, fn in self.original.items():
            setattr(audit_workflow, name, self._timed(name, fn))

    def _timed(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def part(*args: Any, **kwargs: Any) -> Any:
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.parts[name] = self.parts.get(name, 0.0) + time.process_time() - start

        return part

    def undo(self) -> None:
        for name, fn in self.original.items():
            setattr(audit_workflow, name, fn)


if __name__ == "__main__":
    main()
