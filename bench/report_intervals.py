"""Coverage of the 95% intervals on `reviewer report`'s averages: a seeded simulation.

Each draw is one run: ``m`` tasks drawn from a population of tasks, each tried ``n`` times. A task has
its own pass rate (easy, flaky, hard and never-passing tasks mixed); on the day of the run the whole
agent wobbles (every task's rate moved by one shift on the logit scale, drawn per run); one task in
twenty has a bad day (an outage that fails all its trials); 3% of trials crash (infrastructure errors,
left out, so some tasks have fewer trials and drop out of pass^n). The truth is the mean over the
population of tasks, on that day, of each task's pass@1 (its expected rate) and pass^n (the chance
that n tries all pass). Printed: how often the interval of ``metrics.average_interval`` contains it
(wanted: at least 93% in every cell of 20 and 50 tasks, 90% at 10 tasks, where a population with
rare kinds of task is barely sampled; "met" / "NOT MET"), and beside it Student's t over the tasks
and Hesterberg's expanded percentile bootstrap over tasks (what `compare` uses), for reference.

Run: ``python bench/report_intervals.py [--draws 2000] [--seed 26]``.
"""

from __future__ import annotations

import argparse
import math
from math import comb

import numpy as np

from reviewer.metrics.average_interval import mean_interval
from reviewer.metrics.noise import expanded_alpha

POPULATIONS = {
    # (share, beta a, beta b) of each kind of task
    "mixed": [(0.35, 18.0, 1.5), (0.35, 2.0, 2.0), (0.2, 1.0, 6.0), (0.1, 0.3, 30.0)],
    "easy": [(0.8, 30.0, 1.0), (0.2, 4.0, 2.0)],
    "hard": [(0.2, 3.0, 3.0), (0.8, 1.0, 8.0)],
}
TASKS = (10, 20, 50)
TRIALS = (3, 5, 8)
OUTAGE = 0.05  # share of tasks with a bad day in a run
CRASH = 0.03  # share of trials ended by an infrastructure error
WOBBLE = 0.3  # SD of the day's shift on the logit scale
WANTED = 0.93  # at 20 and 50 tasks
WANTED_10 = 0.90  # at 10 tasks, where a population with rare kinds of task is barely sampled
NAMES = ("ours", "t", "bootstrap")


def draw_rates(rng: np.random.Generator, pop: str, size: tuple[int, ...]) -> np.ndarray:
    kinds = POPULATIONS[pop]
    which = rng.choice(len(kinds), size=size, p=[s for s, _, _ in kinds])
    a = np.array([k[1] for k in kinds])[which]
    b = np.array([k[2] for k in kinds])[which]
    return rng.beta(a, b)


def shifted(p: np.ndarray, shift: np.ndarray | float) -> np.ndarray:
    with np.errstate(divide="ignore"):
        logit = np.log(p) - np.log1p(-p)
    return 1 / (1 + np.exp(-(logit + shift)))


def truth(rng: np.random.Generator, pop: str, shift: float, k: int) -> tuple[float, float]:
    """The population means of pass@1 and pass^k on a day with this shift (a large sample)."""
    p = shifted(draw_rates(rng, pop, (200_000,)), shift) * 1.0
    return float((1 - OUTAGE) * p.mean()), float((1 - OUTAGE) * (p**k).mean())


def one_run(
    rng: np.random.Generator, pop: str, m: int, n: int, shift: float
) -> tuple[np.ndarray, np.ndarray]:
    """(scored trials, passes) of each of ``m`` tasks."""
    p = shifted(draw_rates(rng, pop, (m,)), shift)
    p = np.where(rng.random(m) < OUTAGE, 0.0, p)
    scored = n - rng.binomial(n, CRASH, size=m)
    return scored, rng.binomial(scored, p)


def intervals(values: np.ndarray, seed: int) -> dict[str, tuple[float, float] | None]:
    """Ours (``mean_interval``), Student's t over the tasks, and the expanded bootstrap."""
    from scipy.special import stdtrit

    m = len(values)
    if m < 2:
        return dict.fromkeys(NAMES)
    uniq, times = np.unique(values, return_counts=True)
    ours = mean_interval(zip(uniq.tolist(), times.tolist(), strict=True))
    mean, se = float(values.mean()), float(values.std(ddof=1)) / math.sqrt(m)
    half = float(stdtrit(m - 1, 0.975)) * se
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, m, size=(1000, m))].mean(axis=1)
    a = expanded_alpha(m)
    lo, hi = np.quantile(means, [a / 2, 1 - a / 2])
    return {"ours": ours, "t": (mean - half, mean + half), "bootstrap": (float(lo), float(hi))}


def pass_hat(scored: np.ndarray, passed: np.ndarray, k: int) -> np.ndarray:
    full = scored >= k
    pairs = zip(scored[full].tolist(), passed[full].tolist(), strict=True)
    return np.array([comb(c, k) / comb(n, k) for n, c in pairs])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    days = rng.normal(0, WOBBLE, size=8)  # the days a run can fall on (their truths computed once)
    print(f"{args.draws} runs per cell: coverage of each 95% interval (mean width of ours)")
    print(
        f"{'population':<10} {'tasks':>5} {'trials':>6}  {'metric':<7}"
        + "".join(f"{n:>11}" for n in NAMES)
        + f"{'width':>8}"
    )
    worst = {10: 1.0, 20: 1.0}
    for pop in POPULATIONS:
        for n in TRIALS:
            truths = [truth(rng, pop, d, n) for d in days]
            metrics = ("pass@1", f"pass^{n}")
            for m in TASKS:
                hits = {(metric, name): 0 for metric in metrics for name in NAMES}
                width = dict.fromkeys(metrics, 0.0)
                for i in range(args.draws):
                    day = int(rng.integers(len(days)))
                    scored, passed = one_run(rng, pop, m, n, float(days[day]))
                    ok = scored > 0
                    for metric, values, target in (
                        (metrics[0], passed[ok] / scored[ok], truths[day][0]),
                        (metrics[1], pass_hat(scored, passed, n), truths[day][1]),
                    ):
                        for name, ci in intervals(values, args.seed + i).items():
                            hits[metric, name] += ci is not None and ci[0] <= target <= ci[1]
                            if name == "ours" and ci is not None:
                                width[metric] += (ci[1] - ci[0]) / args.draws
                for metric in metrics:
                    cov = [hits[metric, name] / args.draws for name in NAMES]
                    band = 10 if m < 20 else 20
                    worst[band] = min(worst[band], cov[0])
                    print(
                        f"{pop:<10} {m:>5} {n:>6}  {metric:<7}"
                        + "".join(f"{c:>11.1%}" for c in cov)
                        + f"{width[metric]:>8.3f}"
                    )
    for band, wanted, what in ((20, WANTED, "20 and 50 tasks"), (10, WANTED_10, "10 tasks")):
        verdict = "met" if worst[band] >= wanted else "NOT MET"
        print(
            f"lowest coverage of ours at {what}: {worst[band]:.1%} (wanted >= {wanted:.0%}): {verdict}"
        )


if __name__ == "__main__":
    main()
