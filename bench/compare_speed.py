"""Time ``compare_runs`` on two runs of 5,000 tasks x 10 trials against pass^k alone on the same data.

Prints both times and their ratio (target: under 3x). The baseline is what ``reviewer report`` does for
pass^k: count (n, c) per task, then ``run_passk`` with k = 1 and k = 10, for both runs.
Run: ``python bench/compare_speed.py [--tasks N] [--trials N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from reviewer.metrics.compare import compare_runs, count_by_task
from reviewer.metrics.distributions import TrialStats
from reviewer.metrics.passk import run_passk

RULES = {
    "no-cancel-after-shipped": "forbidden",
    "lookup-before-refund": "policy",
    "budget": "budget",
}


def make_run(tasks: int, trials: int, shift: float, seed: int) -> list[TrialStats]:
    rng = random.Random(seed)
    out: list[TrialStats] = []
    for t in range(tasks):
        p = min(1.0, max(0.0, rng.betavariate(2, 1) + shift))
        for _ in range(trials):
            violations: set[str] = set()
            if rng.random() < 0.01:
                violations.add("no-cancel-after-shipped")
            if rng.random() < 0.05:
                violations.add("lookup-before-refund")
            calls = rng.randint(0, 8)
            out.append(
                TrialStats(
                    task_id=f"task_{t:05d}",
                    success=rng.random() < p,
                    steps=calls + rng.randint(1, 6),
                    cost_usd=None if rng.random() < 0.02 else rng.uniform(0.005, 0.08),
                    latency_s=None if rng.random() < 0.02 else rng.lognormvariate(2.3, 0.5),
                    tool_calls=calls,
                    tool_errors=sum(rng.random() < 0.1 for _ in range(calls)),
                    violations=frozenset(violations),
                )
            )
    return out


def best_of_interleaved(repeat: int, *fs: Callable[[], object]) -> list[float]:
    """Best time of each function; runs alternate so that machine load hits all of them alike."""
    best = [float("inf")] * len(fs)
    for _ in range(repeat):
        for i, f in enumerate(fs):
            start = time.perf_counter()
            f()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=5000)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    old = make_run(args.tasks, args.trials, 0.0, seed=1)
    new = make_run(args.tasks, args.trials, -0.03, seed=2)
    ks = [1, args.trials]

    def passk_alone() -> None:
        for name, run in (("old", old), ("new", new)):
            counts = count_by_task(run)
            run_passk(name, [(t, n, c) for t, (n, c) in counts.items()], ks)

    def compare() -> None:
        compare_runs(old, new, None, RULES)

    base, cmp = best_of_interleaved(args.repeat, passk_alone, compare)
    print(
        f"data: 2 runs x {args.tasks:,} tasks x {args.trials} trials ({len(old) + len(new):,} trials)"
    )
    print(f"pass^k alone (count + run_passk, k={ks}, both runs): {base * 1000:8.1f} ms")
    print(f"compare_runs (n_boot=2000, {len(RULES)} rules):          {cmp * 1000:8.1f} ms")
    print(f"ratio: {cmp / base:.2f}x (target < 3x)")


if __name__ == "__main__":
    main()
