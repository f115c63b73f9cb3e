"""Which trials to label: a seeded simulation of the active queue against the other ways to choose.

For each true kappa and pair of pass shares (the human's, the judge's: a lenient judge passes more),
``--reps`` labelers label ``--n`` trials chosen one of four ways, and the report's trust verdict
(threshold 0.6) is taken on them:

- random: trials drawn at random (the judge's verdicts in their own mix);
- balanced: as many judge-fail as judge-pass trials (what `reviewer sample` does);
- greedy: the next trial from the judge verdict whose label narrows the trust interval of the labels
  as they stand most, in expectation (the rule the issue first asked for);
- active: `reviewer sample --active` (``calibration.active.choose_stratum``).

For each it prints the mean kappa of the labels as they stand minus the truth (what a report that
weighs every label alike measures), and, for the report's verdict on kappa over the judge's
verdict mix (``mix.mix_interval``, the judge's mix known from a million verdicts), how often its
interval covers the truth, its mean width, the share of verdicts settled and of wrong verdicts
(trusted below the threshold, not trusted at or above it), then the wrong verdicts of the old
verdict (the trust interval of the labels as they stand) for comparison.
Targets (issue 26): every way of choosing that the tool offers (random, balanced, active) keeps the
verdict's coverage >= 94.5% and its wrong verdicts <= 2.5% in every cell.
Run: ``python bench/active_labeling.py [--reps R] [--n N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kappa_coverage import cell_probs  # noqa: E402
from reviewer.calibration.active import choose_stratum  # noqa: E402
from reviewer.calibration.kappa import kappa_ci_adjusted, kappa_from_confusion  # noqa: E402
from reviewer.calibration.mix import mix_interval  # noqa: E402


def _feasible(kappa: float, p: float, q: float) -> bool:
    try:
        cell_probs(kappa, p, q)
    except ValueError:
        return False
    return True


CELLS = [
    (kappa, p, q)
    for kappa in (0.4, 0.5, 0.6, 0.7, 0.8)
    for p, q in ((0.7, 0.7), (0.8, 0.8), (0.7, 0.8), (0.8, 0.9))
    if _feasible(kappa, p, q)
]
DESIGNS = ("random", "balanced", "greedy", "active")
OFFERED = ("random", "balanced", "active")
THRESHOLD = 0.6
COVERAGE_TARGET = 0.945
WRONG_TARGET = 0.025


def _width(table: list[list[int]]) -> float:
    ci = kappa_ci_adjusted(table)
    return 2.0 if ci is None else ci[1] - ci[0]


def greedy_stratum(table: list[list[int]]) -> int:
    """The judge verdict (column) whose next label narrows the plain trust interval most."""
    best: tuple[tuple[float, int, bool], int] | None = None
    for j in (0, 1):
        p_pass = (table[0][j] + 0.5) / (table[0][j] + table[1][j] + 1)
        expected = 0.0
        for h, p in ((0, p_pass), (1, 1 - p_pass)):
            t = [row[:] for row in table]
            t[h][j] += 1
            expected += p * _width(t)
        key = (round(expected, 9), table[0][j] + table[1][j], j == 0)
        if best is None or key < best[0]:
            best = (key, j)
    assert best is not None
    return best[1]


def verdict(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "open"
    return "trusted" if ci[0] >= THRESHOLD else "not trusted" if ci[1] < THRESHOLD else "open"


def run(
    kappa: float, p: float, q: float, design: str, n: int, reps: int, seed: int
) -> dict[str, float]:
    probs = cell_probs(kappa, p, q)
    share = [probs[0] + probs[2], probs[1] + probs[3]]
    human_pass = [probs[0] / share[0], probs[1] / share[1]]
    mix = {"pass": round(1e6 * share[0]), "fail": round(1e6 * share[1])}
    rng = np.random.default_rng(seed)
    plain, covered, defined, width, settled, wrong, wrong_plain = [], 0, 0, 0.0, 0, 0, 0
    for _ in range(reps):
        table = [[0, 0], [0, 0]]
        for i in range(n):
            if design == "random":
                j = 0 if rng.random() < share[0] else 1
            elif design == "balanced":
                j = i % 2
            elif design == "greedy":
                j = greedy_stratum(table)
            else:
                choice = choose_stratum(table, mix, {"pass": n, "fail": n})
                assert choice is not None
                j = 0 if choice.stratum == "pass" else 1
            table[0 if rng.random() < human_pass[j] else 1][j] += 1
        k = kappa_from_confusion(table)
        if k is not None:
            plain.append(k)
        ci = mix_interval(table, mix) or kappa_ci_adjusted(table)
        if ci is not None:
            defined += 1
            covered += ci[0] <= kappa <= ci[1]
            width += ci[1] - ci[0]
        end = verdict(ci)
        settled += end != "open"
        wrong += end != "open" and (end == "trusted") != (kappa >= THRESHOLD)
        old = verdict(kappa_ci_adjusted(table))
        wrong_plain += old != "open" and (old == "trusted") != (kappa >= THRESHOLD)
    return {
        "bias": float(np.mean(plain)) - kappa if plain else float("nan"),
        "coverage": covered / max(1, defined),
        "width": width / max(1, defined),
        "settled": settled / reps,
        "wrong": wrong / reps,
        "wrong_plain": wrong_plain / reps,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args()
    print(
        f"{args.n} labels, {args.reps} labelers per cell, threshold {THRESHOLD}, seed {args.seed};"
        " verdict on kappa over the judge's mix (old: on the labels as they stand)"
    )
    print(
        f"  {'kappa':>5} {'human':>5} {'judge':>5}  {'design':<8} {'bias':>6}  {'cover':>6}"
        f" {'width':>5} {'settled':>7} {'wrong':>6}  {'old wrong':>9}"
    )
    worst: dict[str, tuple[float, float, str]] = {d: (1.0, 0.0, "") for d in DESIGNS}
    worst_old: dict[str, tuple[float, str]] = {d: (0.0, "") for d in DESIGNS}
    for i, (kappa, p, q) in enumerate(CELLS):
        for d, design in enumerate(DESIGNS):
            r = run(kappa, p, q, design, args.n, args.reps, args.seed + 10 * i + d)
            print(
                f"  {kappa:>5} {p:>5} {q:>5}  {design:<8} {r['bias']:>+6.3f}  {r['coverage']:>6.1%}"
                f" {r['width']:>5.2f} {r['settled']:>7.0%} {r['wrong']:>6.1%}"
                f"  {r['wrong_plain']:>9.1%}"
            )
            cov, wr, cell = worst[design]
            cell_name = f"kappa {kappa}, pass {p} / {q}"
            if r["wrong_plain"] > worst_old[design][0]:
                worst_old[design] = (r["wrong_plain"], cell_name)
            worst[design] = (
                min(cov, r["coverage"]),
                max(wr, r["wrong"]),
                cell_name if r["wrong"] > wr else cell,
            )
    print("\nworst cell per design (coverage of the verdict's interval, wrong verdicts):")
    for design, (cov, wr, cell) in worst.items():
        old, old_cell = worst_old[design]
        print(
            f"  {design:<8} coverage {cov:6.1%}  wrong {wr:5.1%} ({cell});"
            f" old verdict wrong up to {old:5.1%} ({old_cell})"
        )
    ok = all(worst[d][0] >= COVERAGE_TARGET and worst[d][1] <= WRONG_TARGET for d in OFFERED)
    print(
        f"random, balanced and active keep coverage >= {COVERAGE_TARGET:.1%} and wrong verdicts"
        f" <= {WRONG_TARGET:.1%} in every cell: {'met' if ok else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
