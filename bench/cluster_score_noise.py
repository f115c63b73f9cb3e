"""How far the clustering scorecard strays when clusters and tags have nothing to do with each other.

`reviewer cluster --score` prints no number below MIN_SCORED tagged failures in clusters. This
seeded simulation draws unrelated tags and clusters (3 tags with uneven shares, 2-5 clusters, tags
given to a random subset, as labelers do) and reports, per number of tagged failures, the 90th
percentile of |ARI| and how often ARI reaches 0.2 by chance. Target: at MIN_SCORED and above, chance
alone reaches ARI 0.2 at most 10% of the time.

    python bench/cluster_score_noise.py
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import adjusted_rand_score

from reviewer.clustering.score import MIN_SCORED

REPS = 4000
TARGET = 0.10


def chance(n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty(REPS)
    for r in range(REPS):
        shares = rng.dirichlet([2.0, 2.0, 2.0])
        tags = rng.choice(3, size=n, p=shares)
        k = int(rng.integers(2, 6))
        clusters = rng.choice(k, size=n, p=rng.dirichlet([1.5] * k))
        out[r] = adjusted_rand_score(tags, clusters)
    return out


def main() -> None:
    rng = np.random.default_rng(28)
    print(f"{'tagged':>7} {'p90 |ARI|':>10} {'P(ARI>=0.2)':>12}")
    at_min = None
    for n in (5, 7, 9, MIN_SCORED, 15, 20, 30, 50):
        ari = chance(n, rng)
        p = float(np.mean(ari >= 0.2))
        print(f"{n:>7} {np.quantile(np.abs(ari), 0.9):>10.3f} {p:>12.3f}")
        if n == MIN_SCORED:
            at_min = p
    assert at_min is not None
    verdict = "met" if at_min <= TARGET else "NOT MET"
    print(
        f"at {MIN_SCORED} tagged failures chance reaches ARI 0.2 in {at_min:.1%} (target <= 10%): {verdict}"
    )


if __name__ == "__main__":
    main()
