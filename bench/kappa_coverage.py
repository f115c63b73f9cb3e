"""Coverage of the kappa intervals on calibration-sized label sets: a seeded simulation.

For each n (labels), true kappa and pass share (the same for the human and the judge), draws
``--draws`` 2x2 tables from the multinomial with those margins and that kappa and counts how often
each 95% interval contains the true kappa, and how often its lower bound lies above it (the error
that trusts a judge it should not: at most 2.5% for an honest 95% interval).

- analytic: kappa +- 1.96 FCE standard errors (what the report showed alone before);
- adjusted: ``kappa_ci_adjusted``, the interval the trust verdict is decided on.

Wanted (issue 18): adjusted coverage >= 94.5% at n = 50 for kappa 0.4-0.8 and pass shares 0.5-0.8.
Run: ``python bench/kappa_coverage.py [--draws N] [--n 20 30 50 100] [--seed S]``.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from reviewer.calibration.kappa import kappa_ci_adjusted, kappa_se_fce

KAPPAS = (0.4, 0.5, 0.6, 0.7, 0.8)
SHARES = (0.5, 0.6, 0.7, 0.8)
Z = 1.959963984540054


def cell_probs(kappa: float, p: float) -> list[float]:
    """P(pass, pass), P(pass, fail), P(fail, pass), P(fail, fail) with both pass shares p."""
    pe = p * p + (1 - p) * (1 - p)
    both = (kappa * (1 - pe) + pe - (1 - 2 * p)) / 2
    return [both, p - both, p - both, 1 - 2 * p + both]


def coverage(
    n: int, kappa: float, p: float, draws: int, seed: int
) -> dict[str, tuple[float, float]]:
    """{interval: (coverage, share with the lower bound above the truth)}."""
    rng = np.random.default_rng(seed)
    tables = rng.multinomial(n, cell_probs(kappa, p), size=draws)
    distinct, counts = np.unique(tables, axis=0, return_counts=True)
    hit = {"analytic": 0, "adjusted": 0}
    high = {"analytic": 0, "adjusted": 0}
    for row, m in zip(distinct, counts, strict=True):
        table = [[int(row[0]), int(row[1])], [int(row[2]), int(row[3])]]
        adjusted = kappa_ci_adjusted(table)
        se = kappa_se_fce(table)
        k = _kappa(table)
        analytic = None if se is None or k is None else (k - Z * se, k + Z * se)
        for name, ci in (("analytic", analytic), ("adjusted", adjusted)):
            if ci is None:
                continue  # undefined kappa: no interval, counted as a miss
            hit[name] += int(m) * (ci[0] <= kappa <= ci[1])
            high[name] += int(m) * (ci[0] > kappa)
    return {name: (hit[name] / draws, high[name] / draws) for name in hit}


def _kappa(t: list[list[int]]) -> float | None:
    n = sum(map(sum, t))
    po = (t[0][0] + t[1][1]) / n
    pe = (
        (t[0][0] + t[0][1]) * (t[0][0] + t[1][0]) + (t[1][0] + t[1][1]) * (t[0][1] + t[1][1])
    ) / n**2
    return None if math.isclose(pe, 1) else (po - pe) / (1 - pe)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=20_000)
    ap.add_argument("--n", type=int, nargs="+", default=[20, 30, 50, 100])
    ap.add_argument("--seed", type=int, default=18)
    args = ap.parse_args()
    for n in args.n:
        print(f"n = {n} labels, {args.draws} draws per cell")
        print(f"  {'kappa':>5} {'pass':>5}   {'analytic':>17}   {'adjusted':>17}")
        worst = {"analytic": 1.0, "adjusted": 1.0}
        for i, kappa in enumerate(KAPPAS):
            for j, p in enumerate(SHARES):
                res = coverage(n, kappa, p, args.draws, args.seed + 100 * i + j)
                cells = "   ".join(f"{c:6.1%} (lo>k {h:4.1%})" for c, h in res.values())
                print(f"  {kappa:>5} {p:>5}   {cells}")
                for name, (c, _) in res.items():
                    worst[name] = min(worst[name], c)
        print(
            f"  worst coverage: analytic {worst['analytic']:.1%}, adjusted {worst['adjusted']:.1%}"
        )


if __name__ == "__main__":
    main()
