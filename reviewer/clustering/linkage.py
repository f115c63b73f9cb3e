"""Clustering primitives: average linkage over failures, with groups of failures as weighted atoms.

An atom (a signature group, a set of identical texts, a micro-cluster) is given by the *mean* of its
members' unit vectors and its number of members. Mean cosine distances then come out exactly: between
atoms ``1 - mu_a . mu_b``, within one ``1 - |mu_a|^2``. So average linkage over atoms is average linkage
over failures (UPGMA, weighted by size), and the silhouette that picks the cut is the failures'
silhouette. Above ``large`` atoms, MiniBatchKMeans compresses the light ones first: no n x n matrix.

numpy, scipy and scikit-learn are imported inside the functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "CUTS",
    "auto_cluster",
    "canonical",
    "cut_at",
    "split_modes",
    "upgma",
    "weighted_silhouette",
]

#: Candidate cuts (mean cosine distance between failures of two clusters); best silhouette wins.
CUTS = (0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)


def canonical(labels: Any) -> np.ndarray:
    """Labels renumbered 0..k-1 by first appearance, so equal partitions give equal arrays."""
    import numpy as np

    _, first, inverse = np.unique(np.asarray(labels), return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return np.asarray(rank[inverse.ravel()], dtype=np.int64)


def _distances(means: np.ndarray) -> np.ndarray:
    """Mean cosine distance between the members of atoms (diagonal: within one atom)."""
    import numpy as np

    return np.asarray(np.clip(1.0 - means @ means.T, 0.0, 2.0))


def upgma(means: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Size-weighted average linkage of atoms, as a scipy linkage matrix (nearest-neighbour chain,
    Lance-Williams updates: O(m^2) time and memory)."""
    import numpy as np

    m = len(means)
    dist = _distances(means)
    np.fill_diagonal(dist, np.inf)
    size = np.asarray(weights, dtype=np.float64).copy()
    active = np.ones(m, dtype=bool)
    merges: list[tuple[int, int, float]] = []
    chain: list[int] = []
    remaining = m
    while remaining > 1:
        if not chain:
            chain.append(int(np.flatnonzero(active)[0]))
        a = chain[-1]
        row = dist[a]
        b = int(np.argmin(row))
        if len(chain) > 1 and row[chain[-2]] <= row[b]:
            b = chain[-2]  # ties go back down the chain, so it always ends
        if len(chain) > 1 and b == chain[-2]:
            chain.pop()
            chain.pop()
            merges.append((a, b, float(row[b])))
            wa, wb = size[a], size[b]
            merged = (wa * dist[a] + wb * dist[b]) / (wa + wb)
            dist[a, :] = merged
            dist[:, a] = merged
            dist[a, a] = np.inf
            dist[b, :] = np.inf
            dist[:, b] = np.inf
            size[a] = wa + wb
            active[b] = False
            remaining -= 1
        else:
            chain.append(b)
    # scipy's format: merges by height, clusters numbered m, m+1, ... as they form
    order = sorted(range(len(merges)), key=lambda i: merges[i][2])
    parent = list(range(m))
    cluster_id = list(range(m))
    count = [1.0] * m

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    tree = np.zeros((len(merges), 4))
    for step, i in enumerate(order):
        a, b, height = merges[i]
        ra, rb = find(a), find(b)
        tree[step] = (cluster_id[ra], cluster_id[rb], height, count[ra] + count[rb])
        parent[rb] = ra
        cluster_id[ra] = m + step
        count[ra] += count[rb]
    tree[:, :2].sort(axis=1)
    return tree


def cut_at(tree: np.ndarray, t: float) -> np.ndarray:
    """The atoms' flat clusters under cut ``t``: scipy's ``fcluster(tree, t, criterion="distance")``
    up to numbering (every caller renumbers with ``canonical``), without importing scipy.cluster
    (0.2 s). ``upgma`` lists merges by height, children before parents, so a merge is under the cut
    exactly when its own height is (its subtree's highest merge is itself, as fcluster asks)."""
    import numpy as np

    m = len(tree) + 1
    parent = list(range(2 * m - 1))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for step, (a, b, height, _) in enumerate(tree.tolist()):
        if height <= t:
            parent[find(int(a))] = m + step
            parent[find(int(b))] = m + step
    return np.fromiter((find(i) for i in range(m)), np.int64, m)


def weighted_silhouette(distances: np.ndarray, labels: np.ndarray, weights: np.ndarray) -> float:
    """The failures' mean silhouette, computed on atoms: ``distances`` between atoms with the
    within-atom mean distance on the diagonal, ``weights`` the atoms' sizes. A cluster of one failure
    scores 0, as in scikit-learn; one cluster in all scores -1. O(m^2) for any number of clusters."""
    import numpy as np
    import scipy.sparse as sp

    m = len(labels)
    k = int(labels.max()) + 1
    if k < 2:
        return -1.0
    onehot = sp.csr_matrix((weights, (labels, np.arange(m))), shape=(k, m))
    sums = np.asarray(
        onehot @ distances
    ).T  # (m, k): summed distance from an atom's failure to each cluster
    mass = np.asarray(onehot.sum(axis=1)).ravel()
    others = mass[labels] - 1.0  # the other failures of its own cluster
    a = np.divide(sums[np.arange(m), labels], others, out=np.zeros(m), where=others > 0)
    mean_to = sums / mass[None, :]
    mean_to[np.arange(m), labels] = np.inf
    b = mean_to.min(axis=1)
    denom = np.maximum(a, b)
    s = np.divide(b - a, denom, out=np.zeros(m), where=denom > 0)
    s[others <= 0] = 0.0
    return float((s * weights).sum() / weights.sum())


def _agglomerate(
    means: np.ndarray, weights: np.ndarray, threshold: float | None, cuts: Sequence[float]
) -> tuple[np.ndarray, float]:
    """Cut the atoms' average-linkage tree at ``threshold``, or at the cut in ``cuts`` with the best
    silhouette (ties to the coarser cut) when it is None."""
    import numpy as np

    m = len(means)
    if m < 2:
        return np.zeros(m, dtype=np.int64), threshold if threshold is not None else cuts[0]
    tree = upgma(means, weights)
    if threshold is not None:
        return canonical(cut_at(tree, threshold)), threshold
    heights = tree[:, 2]
    if heights.max() <= cuts[0]:
        return np.zeros(m, dtype=np.int64), cuts[0]  # everything is alike
    if heights.min() > cuts[-1]:
        return np.arange(m, dtype=np.int64), cuts[-1]  # nothing is alike
    distances = _distances(means)
    best: tuple[float, float, np.ndarray] | None = None
    for cut in cuts:
        labels = canonical(cut_at(tree, cut))
        score = weighted_silhouette(distances, labels, weights)
        if best is None or score >= best[0] - 1e-9:
            best = (score, cut, labels)
    assert best is not None
    if best[0] <= 0.0:  # no cut separates anything well: keep only the merges under the lowest cut
        return canonical(cut_at(tree, cuts[0])), cuts[0]
    return best[2], best[1]


def auto_cluster(
    means: np.ndarray,
    weights: np.ndarray,
    seed: int,
    *,
    threshold: float | None = None,
    cuts: Sequence[float] = CUTS,
    large: int = 2000,
    micro_clusters: int = 1024,
) -> tuple[np.ndarray, dict[str, Any]]:
    """Cluster atoms (mean vectors and sizes); returns labels and what was done.

    Up to ``large`` atoms: average linkage directly. More: the ``large // 2`` heaviest stay atoms (so
    no two big signature groups can share a micro-cluster) and MiniBatchKMeans compresses the rest
    into micro-clusters, which become atoms in their turn.
    """
    import numpy as np
    import scipy.sparse as sp

    m = len(means)
    if m <= large:
        labels, cut = _agglomerate(means, weights, threshold, cuts)
        return labels, {"method": "agglomerative", "cut": cut}
    from sklearn.cluster import MiniBatchKMeans

    heavy = np.lexsort((np.arange(m), -weights))[: large // 2]
    light = np.setdiff1d(np.arange(m), heavy)
    k = max(1, min(micro_clusters, large - len(heavy), len(light) // 2))
    km = MiniBatchKMeans(
        n_clusters=k,
        random_state=seed,
        batch_size=4096,
        n_init=1,
        max_iter=20,
        init="random",  # k-means++ on ~1000 centres costs more than the fit; micro-clusters merge anyway
        init_size=min(len(light), 3 * k + 1024),
        max_no_improvement=5,
        reassignment_ratio=0.0,
    )
    micro = canonical(km.fit_predict(means[light], sample_weight=weights[light]))
    n_micro = int(micro.max()) + 1
    w = weights[light]
    member = sp.csr_matrix((w, (micro, np.arange(len(light)))), shape=(n_micro, len(light)))
    mass = np.asarray(member.sum(axis=1)).ravel()
    micro_means = np.asarray(member @ means[light]) / mass[:, None]
    atoms = np.vstack([means[heavy], micro_means])
    top, cut = _agglomerate(atoms, np.concatenate([weights[heavy], mass]), threshold, cuts)
    labels = np.empty(m, dtype=np.int64)
    labels[heavy] = top[: len(heavy)]
    labels[light] = top[len(heavy) + micro]
    method = f"{len(heavy)} heaviest + minibatch-kmeans({n_micro}) + agglomerative"
    return canonical(labels), {"method": method, "cut": cut}


def split_modes(
    x: np.ndarray, threshold: float, seed: int, min_part: int, sample: int = 1000
) -> np.ndarray | None:
    """Sub-labels for one cluster's rows (unit or zero vectors) when they hold clearly separate
    modes, else None.

    Average linkage cut at ``threshold`` over at most ``sample`` distinct rows (seeded), parts of at
    least ``min_part`` rows kept, every row then given to its nearest part: linear in the cluster's
    size. Zero rows join the largest part.
    """
    import numpy as np

    nonzero = np.flatnonzero(np.abs(x).sum(axis=1) > 0)
    if len(nonzero) < 2 * min_part:
        return None
    live = x[nonzero]
    rows, counts = np.unique(np.round(live, 6), axis=0, return_counts=True)
    if len(rows) < 2:
        return None
    weights = counts.astype(np.float64)
    if len(rows) > sample:
        pick = np.sort(np.random.default_rng(seed).choice(len(rows), size=sample, replace=False))
        rows, weights = rows[pick], weights[pick] * (weights.sum() / weights[pick].sum())
    sub, _ = _agglomerate(rows, weights, threshold, CUTS)
    mass = np.bincount(sub, weights=weights)
    big = np.flatnonzero(mass >= min_part)
    if len(big) < 2:
        return None
    centroids = np.stack([(rows[sub == b] * weights[sub == b, None]).sum(axis=0) for b in big])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    out = np.full(len(x), int(np.argmax(mass[big])), dtype=np.int64)
    out[nonzero] = np.argmax(live @ centroids.T, axis=1)
    return canonical(out)
