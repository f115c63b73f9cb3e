"""Import speed: ~10,000 native trials (~30 messages each), as a ratio to plain json.loads of the files.

Run: python bench/import_speed.py [--trials N]. Target: ratio under 4x.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--trials", type=int, default=10_000)
    args = ap.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        per_file = 1000
        (root / "runs").mkdir()
        for f in range(max(1, args.trials // per_file)):
            path = root / "runs" / f"run{f}.jsonl"
            with path.open("w") as fh:
                for i in range(per_file):
                    fh.write(json.dumps(make_trial(rng, f"run{f}", i // 10, i % 10 + 1)) + "\n")
            files.append(path)
        size = sum(p.stat().st_size for p in files)

        # Best of three for both, interleaved, so a busy machine affects both alike.
        baselines, imports = [], []
        n = 0
        for attempt in range(3):
            t0 = time.perf_counter()
            n = 0
            for path in files:
                with path.open("rb") as fh:
                    for line in fh:
                        json.loads(line)
                        n += 1
            baselines.append(time.perf_counter() - t0)

            db = open_store(root / f"bench{attempt}.db")
            t0 = time.perf_counter()
            summary = import_paths(db, [str(root / "runs")])
            imports.append(time.perf_counter() - t0)
            db.close()
            assert summary.added == n, (summary.added, n)
        baseline, elapsed = min(baselines), min(imports)

    print(f"trials: {n:,} in {len(files)} files, {size / 1e6:.1f} MB")
    print(f"json.loads baseline: {baseline:.2f} s (best of 3)")
    print(f"reviewer import:     {elapsed:.2f} s (best of 3, fresh database each)")
    print(f"ratio: {elapsed / baseline:.2f}x (target < 4x)")


if __name__ == "__main__":
    main()
