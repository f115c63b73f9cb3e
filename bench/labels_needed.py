"""Does "N more labels would settle it" hold? A seeded simulation of the agreement report's figure.

For each true kappa (0.3-0.9) and pass share (0.5-0.9, the same for the human and the judge) and
each starting number of labels n0 (20, 30, 50), draws ``--reps`` label sets of n0 from the truth
(the judge's verdict mix known, as when it graded every trial); where the report's trust verdict is
not settled yet, takes its "N more labels" (the 80%-assurance figure of
``assurance.labels_to_verdict``), draws N more labels from the same truth and checks whether the
verdict is then settled (trusted or not trusted), and whether it is settled the wrong way (trusted
below the threshold, not trusted at or above it). The old figure ("if agreement stays as it is":
the table scaled up) is checked the same way.

The figure is an average over plausible truths, so per truth it runs from near 100% far from the
threshold to a few percent for a judge exactly at it (its interval straddles the threshold at any
n: no number of labels settles it). The script prints the share by distance from the threshold.
Target (issue 26): the report's N settles the verdict in >= 80% of cases over the grid's truths
away from the threshold (|kappa - threshold| >= 0.1), the old figure for comparison.
Run: ``python bench/labels_needed.py [--reps R] [--n0 20 30 50] [--threshold 0.6] [--seed S]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kappa_coverage import KAPPAS, SHARES, cell_probs  # noqa: E402
from reviewer.calibration.agreement import MIN_LABELS  # noqa: E402
from reviewer.calibration.assurance import labels_to_verdict  # noqa: E402
from reviewer.calibration.kappa import kappa_ci_adjusted  # noqa: E402
from reviewer.calibration.mix import mix_interval  # noqa: E402

TARGET = 0.80


def old_labels_needed(m: Sequence[Sequence[int]], threshold: float, min_n: int) -> int | None:
    """The figure the report gave before issue 26: labels after which the table, scaled up with its
    proportions kept, would settle the verdict."""
    n = sum(sum(r) for r in m)

    def settled(size: int) -> bool:
        ci = kappa_ci_adjusted([[x * size / n for x in row] for row in m])
        return ci is not None and (ci[0] >= threshold or ci[1] < threshold)

    start = max(n, min_n)
    if settled(start):
        return start - n
    hi = start
    while not settled(hi):
        hi *= 2
        if hi > 10_000_000:
            return None
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if settled(mid) else (mid, hi)
    return hi - n


def verdict(table: np.ndarray, threshold: float, mix: dict[str, int]) -> str:
    """The report's verdict on ``table`` (pass/pass, pass/fail, fail/pass, fail/fail) when the
    judge's verdict mix is ``mix``."""
    m = [[int(table[0]), int(table[1])], [int(table[2]), int(table[3])]]
    ci = mix_interval(m, mix) or kappa_ci_adjusted(m)
    if ci is None:
        return "open"
    if ci[0] >= threshold:
        return "trusted"
    if ci[1] < threshold:
        return "not trusted"
    return "open"


def run_cell(
    kappa: float, p: float, n0: int, reps: int, threshold: float, seed: int
) -> dict[str, list[int]]:
    """{rule: [asked, settled, wrong, N sum, beyond]} over the reps that start unsettled."""
    probs = cell_probs(kappa, p)
    # the judge graded many more trials than were labeled: its verdict mix is known
    mix = {"pass": round(1e6 * (probs[0] + probs[2])), "fail": round(1e6 * (probs[1] + probs[3]))}
    rng = np.random.default_rng(seed)
    out = {"new": [0, 0, 0, 0, 0], "old": [0, 0, 0, 0, 0]}
    for _ in range(reps):
        start = rng.multinomial(n0, probs)
        if n0 >= MIN_LABELS and verdict(start, threshold, mix) != "open":
            continue
        m = [[int(start[0]), int(start[1])], [int(start[2]), int(start[3])]]
        rule_n = {
            "new": labels_to_verdict(m, threshold, MIN_LABELS, mix=mix, seed=0).labels,
            "old": old_labels_needed(m, threshold, MIN_LABELS),
        }
        for rule, more in rule_n.items():
            tally = out[rule]
            tally[0] += 1
            if more is None:
                tally[4] += 1
                continue
            tally[3] += more
            end = verdict(start + rng.multinomial(more, probs), threshold, mix)
            if end != "open":
                tally[1] += 1
                tally[2] += (end == "trusted") != (kappa >= threshold)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--reps", type=int, default=60)
    ap.add_argument("--n0", type=int, nargs="+", default=[20, 30, 50])
    ap.add_argument("--threshold", type=float, default=0.6)
    ap.add_argument("--seed", type=int, default=26)
    args = ap.parse_args()
    print(
        f"threshold {args.threshold}, {args.reps} label sets per cell, seed {args.seed}; share of"
        " unsettled starts that N more labels settle"
    )
    # tallies by distance of the true kappa from the threshold, then by rule
    by_gap: dict[float, dict[str, list[int]]] = {}
    for n0 in args.n0:
        print(f"\nstarting from n0 = {n0} labels")
        print(
            f"  {'kappa':>5} {'pass':>4}  {'asked':>5}  {'new: settled':>12} {'mean N':>6}"
            f"  {'old: settled':>12} {'mean N':>6}"
        )
        for i, kappa in enumerate(KAPPAS):
            for j, p in enumerate(SHARES):
                res = run_cell(
                    kappa, p, n0, args.reps, args.threshold, args.seed + 1000 * n0 + 10 * i + j
                )
                gap = round(abs(kappa - args.threshold), 2)
                tallies = by_gap.setdefault(gap, {"new": [0] * 5, "old": [0] * 5})
                for rule, t in res.items():
                    tallies[rule] = [a + b for a, b in zip(tallies[rule], t, strict=True)]
                new, old = res["new"], res["old"]
                if not new[0]:
                    print(f"  {kappa:>5} {p:>4}  {0:>5}  (every start settled)")
                    continue
                print(
                    f"  {kappa:>5} {p:>4}  {new[0]:>5}  {new[1] / new[0]:>12.0%}"
                    f" {new[3] / max(1, new[0] - new[4]):>6.0f}  {old[1] / old[0]:>12.0%}"
                    f" {old[3] / max(1, old[0] - old[4]):>6.0f}"
                )
    print("\nby distance of the true kappa from the threshold (all n0 and pass shares):")
    print(
        f"  {'|kappa - t|':>11}  {'asked':>5}  {'new: settled':>12} {'wrong':>5}"
        f"  {'old: settled':>12} {'wrong':>5}"
    )
    away = {"new": [0] * 5, "old": [0] * 5}
    for gap in sorted(by_gap):
        t = by_gap[gap]
        new, old = t["new"], t["old"]
        if gap > 0:
            for rule in away:
                away[rule] = [a + b for a, b in zip(away[rule], t[rule], strict=True)]
        print(
            f"  {gap:>11}  {new[0]:>5}  {new[1] / max(1, new[0]):>12.1%}"
            f" {new[2] / max(1, new[0]):>5.1%}  {old[1] / max(1, old[0]):>12.1%}"
            f" {old[2] / max(1, old[0]):>5.1%}"
        )
    new, old = away["new"], away["old"]
    share, before = new[1] / max(1, new[0]), old[1] / max(1, old[0])
    print(
        f"\naway from the threshold (|kappa - t| >= 0.1): the report's N settles {share:.1%}"
        f" (the old figure {before:.1%}); starts with no figure (beyond the search cap):"
        f" new {new[4]}, old {old[4]}"
    )
    print(
        f"N settles the verdict in >= {TARGET:.0%} away from the threshold: "
        f"{'met' if share >= TARGET else 'NOT MET'} ({share:.1%})"
    )


if __name__ == "__main__":
    main()
