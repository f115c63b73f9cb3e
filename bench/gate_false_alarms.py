"""How often the CI gate fails a run that differs from its baseline only by chance, and whether it
still fails a real regression: a seeded simulation of pairs of runs (issue 26).

Each pair is two runs of the same agent: 50 tasks x 5 trials (``--tasks``, ``--trials``), every task
with its own pass probability drawn from a realistic mix (55% reliable tasks at 0.90-1.00, 30% flaky
at 0.40-0.90, 15% hard at 0.00-0.40), steps, cost and latency scaled per task, tool errors, and a
forbidden tool (rule ``no-cancel-after-shipped``) called in 1% of trials of both runs:

- ``spread``: each trial breaks the rule with probability 1%, whatever its task;
- ``clustered``: the same 1% carried by 5 of the 50 tasks (10% of their trials), as when a few
  tasks tempt the agent (a shipped order to cancel);
- ``known``: as ``spread``, but only pairs whose baseline broke the rule at least once (a rule
  already known broken: the "2 of 250 -> 3 of 250" case of the issue).

For each scenario it prints the share of no-change pairs the gate fails (exit 1) with what failed
it, over ``--pairs`` pairs (default 2000, for a precise rate) and over the issue's 30 pairs
(target: at most 3), then the share of JUnit reports with a failed task case, and last the share of
real regressions the gate fails: pass rates 0.15 lower on average (every task's pass probability
down by 0.15, clipped at 0), and the forbidden tool going from never to 3% of trials; last, how
often the judge-drift check on 40 anchors says the judge moved when it did not (its verdicts only
noisy) and when it became 0.15 stricter.

Run: ``python bench/gate_false_alarms.py [--pairs N] [--seed S] [--boot B]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewer.metrics.compare import compare_runs  # noqa: E402
from reviewer.metrics.distributions import TrialStats  # noqa: E402
from reviewer.metrics.drift import judge_shift  # noqa: E402
from reviewer.metrics.gate import evaluate_gate  # noqa: E402

RULES = {"no-cancel-after-shipped": "forbidden", "lookup-before-refund": "policy"}
FORBIDDEN = "no-cancel-after-shipped"


def agent(rng: random.Random, n_tasks: int) -> list[tuple[float, float]]:
    """(pass probability, cost/latency scale) of each task of one agent."""
    tasks = []
    for _ in range(n_tasks):
        u = rng.random()
        p = (
            rng.uniform(0.90, 1.00)
            if u < 0.55
            else rng.uniform(0.40, 0.90)
            if u < 0.85
            else rng.uniform(0.0, 0.40)
        )
        tasks.append((p, rng.uniform(0.5, 2.0)))
    return tasks


def run(
    rng: random.Random,
    tasks: list[tuple[float, float]],
    trials: int,
    forbidden: list[float],
    drop: float = 0.0,
) -> list[TrialStats]:
    """One run: every trial of every task, ``forbidden[i]`` the chance a trial of task i breaks
    the forbidden rule, ``drop`` lowering every task's pass probability."""
    out = []
    for i, (p, scale) in enumerate(tasks):
        p = max(0.0, p - drop)
        for _ in range(trials):
            ok = rng.random() < p
            calls = rng.randint(1, 6)
            broken = set()
            if rng.random() < forbidden[i]:
                broken.add(FORBIDDEN)
            if rng.random() < 0.05 * scale:
                broken.add("lookup-before-refund")
            out.append(
                TrialStats(
                    f"t{i}",
                    ok,
                    rng.randint(3, 6) + int(scale * 4) + (0 if ok else rng.randint(0, 3)),
                    round(scale * rng.uniform(0.01, 0.05), 5),
                    scale * rng.lognormvariate(2.8, 0.5),
                    calls,
                    sum(rng.random() < 0.08 for _ in range(calls)),
                    frozenset(broken),
                )
            )
    return out


def forbidden_rates(rng: random.Random, scenario: str, n_tasks: int, rate: float) -> list[float]:
    if scenario == "clustered":
        tempting = set(rng.sample(range(n_tasks), 5))
        return [rate * n_tasks / 5 if i in tempting else 0.0 for i in range(n_tasks)]
    return [rate] * n_tasks


def gate_once(
    old: list[TrialStats],
    new: list[TrialStats],
    seed: int,
    boot: int,
    new_forbidden: str = "red flag",
) -> tuple[int, list[str], int]:
    """(exit code, what failed it, failed JUnit task cases)."""
    cmp = compare_runs(
        old, new, None, RULES, seed=seed, n_boot=boot, old_name="base", new_name="new"
    )
    result = evaluate_gate(cmp, new_forbidden=new_forbidden)
    names = {"pass_hat_k": "pass^k", "pass_at_1": "pass@1", "forbidden_rate": "forbidden rate"}
    kinds = [f"{names.get(c.metric, c.metric)} {c.status}" for c in result.failures]
    if result.regressed_tasks:
        kinds.append("a task fell beyond noise")
    return result.exit_code, kinds, len(result.regressed_tasks)


def scenario_rates(
    scenario: str,
    pairs: int,
    seed: int,
    boot: int,
    n_tasks: int,
    trials: int,
    new_forbidden: str = "red flag",
) -> tuple[float, Counter[str], float, int]:
    """(share of pairs failed, what failed them, share with a failed task case, failures in the
    first 30 pairs)."""
    rng = random.Random(seed)
    failed = junit_failed = first30 = 0
    why: Counter[str] = Counter()
    done = 0
    while done < pairs:
        tasks = agent(rng, n_tasks)
        rates = forbidden_rates(rng, scenario, n_tasks, 0.01)
        old = run(rng, tasks, trials, rates)
        if scenario == "known" and not any(FORBIDDEN in s.violations for s in old):
            continue
        new = run(rng, tasks, trials, rates)
        code, kinds, n_failed_tasks = gate_once(
            old, new, rng.randrange(1 << 30), boot, new_forbidden
        )
        failed += code == 1
        if done < 30:
            first30 += code == 1
        why.update(set(kinds))
        junit_failed += n_failed_tasks > 0
        done += 1
    return failed / pairs, why, junit_failed / pairs, first30


def regression_rates(
    pairs: int, seed: int, boot: int, n_tasks: int, trials: int
) -> dict[str, float]:
    rng = random.Random(seed + 1)
    caught = Counter[str]()
    for _ in range(pairs):
        tasks = agent(rng, n_tasks)
        spread = forbidden_rates(rng, "spread", n_tasks, 0.01)
        old = run(rng, tasks, trials, spread)
        new = run(rng, tasks, trials, spread, drop=0.15)
        caught["pass rates 0.15 lower"] += gate_once(old, new, rng.randrange(1 << 30), boot)[0] == 1
        never = [0.0] * n_tasks
        old = run(rng, tasks, trials, never)
        new = run(rng, tasks, trials, forbidden_rates(rng, "spread", n_tasks, 0.03))
        caught["forbidden tool 0% -> 3%"] += (
            gate_once(old, new, rng.randrange(1 << 30), boot)[0] == 1
        )
    return {k: v / pairs for k, v in caught.items()}


def drift_rates(draws: int, seed: int, anchors: int = 40) -> dict[str, float]:
    """How often the gate says the judge moved: two judges that differ only by noise (each anchor's
    verdict flips with 10% chance on a re-grade) and a judge 0.15 stricter (15% of the anchors it
    used to pass now fail, on top of the noise)."""
    rng = random.Random(seed + 2)
    moved = Counter[str]()
    for _ in range(draws):
        truth = [rng.random() < 0.7 for _ in range(anchors)]

        def grade(strict: float, truth: list[bool] = truth) -> dict[str, str]:
            out = {}
            for i, ok in enumerate(truth):
                v = ok != (rng.random() < 0.10)
                if v and rng.random() < strict:
                    v = False
                out[str(i)] = "pass" if v else "fail"
            return out

        base = grade(0.0)
        moved["same judge, noisy"] += judge_shift(base, grade(0.0)).moved
        moved["0.15 stricter"] += judge_shift(base, grade(0.15 / 0.7)).moved
    return {k: v / draws for k, v in moved.items()}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pairs", type=int, default=2000)
    ap.add_argument("--regression-pairs", type=int, default=300)
    ap.add_argument("--drift-draws", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument(
        "--boot", type=int, default=2000, help="bootstrap resamples (compare's default)"
    )
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    start = time.perf_counter()
    print(
        f"no change: {args.tasks} tasks x {args.trials} trials, forbidden tool in 1% of trials of "
        f"both runs; {args.pairs} pairs per scenario (seed {args.seed})"
    )
    print(
        f"{'scenario':<16} {'gate fails':>10} {'first 30':>9} {'JUnit fails':>12}  what failed it"
    )
    cases = [
        ("known", "red flag"),  # the case: both runs break the rule
        ("spread", "red flag"),
        ("clustered", "red flag"),
        ("spread", "test"),
        ("clustered", "test"),
    ]
    target30 = 0
    for i, (scenario, setting) in enumerate(cases):
        seed = args.seed + 100 * ("known", "spread", "clustered").index(scenario)
        rate, why, junit, first30 = scenario_rates(
            scenario, args.pairs, seed, args.boot, args.tasks, args.trials, setting
        )
        if i == 0:
            target30 = first30
        reasons = ", ".join(f"{k} {v / args.pairs:.1%}" for k, v in why.most_common())
        name = scenario + (" (test)" if setting == "test" else "")
        print(f"{name:<16} {rate:>10.1%} {first30:>6}/30 {junit:>12.1%}  {reasons or '-'}")
    print('(test): [gate] new_forbidden = "test", a first break a RED FLAG only beyond noise')
    print(
        "issue target (known: the forbidden tool in 1% of trials of both runs), at most 3 of 30 "
        f"no-change pairs fail: {target30}/30: {'met' if target30 <= 3 else 'NOT MET'}"
    )
    print()
    caught = regression_rates(args.regression_pairs, args.seed, args.boot, args.tasks, args.trials)
    print(f"real regressions, {args.regression_pairs} pairs each: share the gate fails")
    for what, share in caught.items():
        print(f"  {what:<26} {share:.1%}   [>= 80%: {'met' if share >= 0.8 else 'NOT MET'}]")
    print()
    print(f"judge drift (70% of anchors pass), {args.drift_draws} draws: 'the judge moved'")
    print(
        f"  {'anchors':>7}  {'no shift, 10% of verdicts noisy':>32}  {'0.15 stricter caught':>21}"
    )
    for n in (40, 100, 200):
        drift = drift_rates(args.drift_draws, args.seed, n)
        noise = drift["same judge, noisy"]
        print(
            f"  {n:>7}  {noise:>26.1%} [{'met' if noise <= 0.05 else 'NOT MET'}]"
            f"  {drift['0.15 stricter']:>21.1%}"
        )
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
