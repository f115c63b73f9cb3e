"""Coverage of the kappa intervals (and of the TPR / TNR intervals) on calibration-sized label sets:
a seeded simulation.

For each n (labels), true kappa and pass share (the human's; the judge's is the same, or shifted by
``--judge-shift``), draws ``--draws`` 2x2 tables from the multinomial with those margins and that
kappa and counts how often each 95% interval the report computes contains the true kappa, and how
often its lower bound lies above it (the error that trusts a judge it should not: at most 2.5% for
an honest 95% interval). A table whose kappa is undefined (every label and verdict the same) has no
interval: it is counted apart ("undef") and left out of the coverage, which is the coverage of the
intervals a report prints.

- analytic: kappa +- 1.96 FCE standard errors (``ci_analytic`` in ``--json``);
- bootstrap: the seeded percentile bootstrap of 2000 resamples (``ci_bootstrap``);
- trust: ``kappa_ci_adjusted``, the report's "95% CI", the one the trust verdict is decided on;
- mix: the interval of kappa over the judge's verdict mix (``mix.mix_interval``; here the mix of a
  million verdicts at its true pass share), what the report decides on when it knows that mix.

Then the Wilson intervals of the judge's TPR and TNR over the same tables.

Targets (issue 26): the trust interval (plain and on the judge's mix) covers >= 94.5% with its
lower bound above the truth in <= 2.5% of draws, in every cell of n = 20, 30, 50 x kappa 0.3-0.9 x
pass share 0.5-0.9; the analytic and bootstrap intervals are shown for the record (they are "not
for decisions"). Wilson's TPR / TNR intervals are shown for the record too.
Run: ``python bench/kappa_coverage.py [--draws N] [--n 20 30 50] [--seed S] [--judge-shift D]``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewer.calibration.kappa import (  # noqa: E402
    bootstrap_kappa_ci,
    kappa_ci_adjusted,
    kappa_from_confusion,
    kappa_se_fce,
)
from reviewer.calibration.mix import mix_interval  # noqa: E402
from reviewer.calibration.wilson import wilson_interval  # noqa: E402

KAPPAS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
SHARES = (0.5, 0.6, 0.7, 0.8, 0.9)
INTERVALS = ("analytic", "bootstrap", "trust", "mix")
Z = 1.959963984540054
COVERAGE_TARGET = 0.945
HIGH_TARGET = 0.025


def cell_probs(kappa: float, p: float, q: float | None = None) -> list[float]:
    """P(pass, pass), P(pass, fail), P(fail, pass), P(fail, fail) (human first, judge second) with
    human pass share ``p``, judge pass share ``q`` (default ``p``) and Cohen's kappa ``kappa``."""
    q = p if q is None else q
    pe = p * q + (1 - p) * (1 - q)
    both = (kappa * (1 - pe) + pe - 1 + p + q) / 2
    cells = [both, p - both, q - both, 1 - p - q + both]
    if min(cells) < -1e-12:
        raise ValueError(f"no 2x2 table has kappa {kappa} with pass shares {p} and {q}")
    return [max(0.0, c) for c in cells]


@dataclass
class Cover:
    """One interval over the draws of one cell."""

    covered: int = 0  # draws whose interval contains the truth
    high: int = 0  # draws whose lower bound lies above the truth
    defined: int = 0  # draws with an interval

    def coverage(self) -> float:
        return self.covered / self.defined if self.defined else float("nan")

    def too_high(self) -> float:
        return self.high / self.defined if self.defined else float("nan")

    def add(self, ci: tuple[float, float] | None, truth: float, weight: int) -> None:
        if ci is None:
            return
        self.defined += weight
        self.covered += weight * (ci[0] <= truth <= ci[1])
        self.high += weight * (ci[0] > truth)


def intervals(
    table: list[list[int]], n_boot: int = 2000, mix: dict[str, int] | None = None
) -> dict[str, tuple[float, float] | None]:
    """The intervals the report computes for ``table`` (bootstrap with the default seed 0), the
    last on the table re-weighted to the judge's verdict ``mix``."""
    k = kappa_from_confusion(table)
    se = kappa_se_fce(table)
    analytic = None if k is None or se is None else (k - Z * se, k + Z * se)
    (tp, fn), (fp, tn) = table
    human = ["pass"] * (tp + fn) + ["fail"] * (fp + tn)
    judge = ["pass"] * tp + ["fail"] * fn + ["pass"] * fp + ["fail"] * tn
    boot = None if k is None or n_boot == 0 else bootstrap_kappa_ci(human, judge, 0, n_boot)
    trust = kappa_ci_adjusted(table)
    mixed = mix_interval(table, mix)
    return {
        "analytic": analytic,
        "bootstrap": boot,
        "trust": trust,
        "mix": trust if mixed is None else mixed,
    }


def coverage(
    n: int,
    kappa: float,
    p: float,
    draws: int,
    seed: int,
    q: float | None = None,
    n_boot: int = 2000,
) -> dict[str, Cover]:
    """{interval: Cover} for the three kappa intervals and the Wilson TPR / TNR intervals."""
    probs = cell_probs(kappa, p, q)
    rng = np.random.default_rng(seed)
    tables = rng.multinomial(n, probs, size=draws)
    distinct, counts = np.unique(tables, axis=0, return_counts=True)
    tpr_true = probs[0] / (probs[0] + probs[1])
    tnr_true = probs[3] / (probs[2] + probs[3])
    # the judge's verdict mix over many trials it graded: its true pass share
    mix = {"pass": round(1e6 * (probs[0] + probs[2])), "fail": round(1e6 * (probs[1] + probs[3]))}
    out = {name: Cover() for name in (*INTERVALS, "tpr", "tnr")}
    for row, m in zip(distinct, counts, strict=True):
        table = [[int(row[0]), int(row[1])], [int(row[2]), int(row[3])]]
        for name, ci in intervals(table, n_boot, mix).items():
            out[name].add(ci, kappa, int(m))
        (tp, fn), (fp, tn) = table
        out["tpr"].add(wilson_interval(tp, tp + fn), tpr_true, int(m))
        out["tnr"].add(wilson_interval(tn, tn + fp), tnr_true, int(m))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--n", type=int, nargs="+", default=[20, 30, 50])
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--judge-shift", type=float, default=0.0, help="judge pass share - human's")
    ap.add_argument("--boot", type=int, default=2000, help="bootstrap resamples (0: skip it)")
    args = ap.parse_args()
    print(
        f"{args.draws} draws per cell, seed {args.seed}, judge pass share = human's"
        f" {args.judge_shift:+g}; coverage of the intervals printed (undefined kappa left out)"
    )
    worst: dict[str, tuple[float, str]] = {}
    worst_high = (0.0, "")
    for n in args.n:
        print(f"\nn = {n} labels")
        print(
            f"  {'kappa':>5} {'pass':>4} {'undef':>6}   {'analytic':>8} {'bootstrap':>9}"
            f" {'trust':>6} {'lo>k':>5} {'mix':>6} {'lo>k':>5}   {'TPR':>6} {'TNR':>6}"
        )
        for i, kappa in enumerate(KAPPAS):
            for j, p in enumerate(SHARES):
                q = min(1.0, max(0.0, p + args.judge_shift))
                try:
                    res = coverage(
                        n, kappa, p, args.draws, args.seed + 1000 * n + 10 * i + j, q, args.boot
                    )
                except ValueError:
                    continue
                undef = 1 - res["trust"].defined / args.draws
                cell = f"n {n}, kappa {kappa}, pass {p}"
                for name, c in res.items():
                    if c.defined and (name not in worst or c.coverage() < worst[name][0]):
                        worst[name] = (c.coverage(), cell)
                for name in ("trust", "mix"):
                    if res[name].too_high() > worst_high[0]:
                        worst_high = (res[name].too_high(), f"{name}, {cell}")
                r = {name: res[name] for name in (*INTERVALS, "tpr", "tnr")}
                print(
                    f"  {kappa:>5} {p:>4} {undef:>6.1%}   {r['analytic'].coverage():>8.1%}"
                    f" {r['bootstrap'].coverage():>9.1%} {r['trust'].coverage():>6.1%}"
                    f" {r['trust'].too_high():>5.1%} {r['mix'].coverage():>6.1%}"
                    f" {r['mix'].too_high():>5.1%}"
                    f"   {r['tpr'].coverage():>6.1%} {r['tnr'].coverage():>6.1%}"
                )
    print("\nworst coverage over the grid:")
    for name, (c, cell) in worst.items():
        print(f"  {name:<9} {c:6.1%}  ({cell})")
    for name in ("trust", "mix"):
        ok = worst[name][0] >= COVERAGE_TARGET
        print(
            f"{name} interval coverage >= {COVERAGE_TARGET:.1%} in every cell: "
            f"{'met' if ok else 'NOT MET'} (worst {worst[name][0]:.1%})"
        )
    high_ok = worst_high[0] <= HIGH_TARGET
    print(
        f"trust and mix lower bound above the truth <= {HIGH_TARGET:.1%} in every cell: "
        f"{'met' if high_ok else 'NOT MET'} (worst {worst_high[0]:.1%}, {worst_high[1]})"
    )


if __name__ == "__main__":
    main()
