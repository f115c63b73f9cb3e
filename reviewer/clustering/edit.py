"""Hand edits of a clustering, computed: how a split divides a cluster, and each piece (or a merged
cluster) described afresh -- its runs, tasks, signature, name and representative."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from reviewer.clustering.signature import FailureDoc

if TYPE_CHECKING:
    import numpy as np

    from reviewer.clustering.naming import FailureCluster

__all__ = ["describe_groups", "signature_groups", "split_groups"]

#: A default split is refused when no cut reaches this silhouette: the members read alike.
MIN_SILHOUETTE = 0.1
#: The most pieces a default split makes.
MAX_PIECES = 8


def _doc_vectors(docs: Sequence[FailureDoc], seed: int) -> np.ndarray:
    """One unit vector per doc: its signature's embedding beside its text's (as clustering does)."""
    import numpy as np

    from reviewer.clustering.cluster import SIGNATURE_WEIGHT, _embed, _group_means
    from reviewer.clustering.vectorize import normalize

    x, _, _, _ = _embed(list(docs), None, None, list(range(len(docs))), seed)
    kinds = [d.signature for d in docs]
    means = _group_means(kinds, np.arange(len(docs)), len(docs), x, SIGNATURE_WEIGHT, seed)
    return np.asarray(normalize(means))


#: Evidence whose signature says what happened (not how a grader worded it): a default split
#: separates members whose signatures of these kinds differ.
STRUCTURED_KINDS = frozenset({"violation", "harness_error", "outcome", "tool_error", "termination"})


def _split_key(doc: FailureDoc) -> str:
    """The signature a default split separates by; a member known only by free text (a grader's
    reason) is separated by what its agent did, as clustering groups it, and members whose agent did
    nothing telling share one key, since two wordings of one failure differ there (the text split
    tells them apart)."""
    from reviewer.clustering.cluster import group_kind

    kind = next((e.kind for e in doc.evidence if e.signature == doc.signature), "")
    if doc.signature and kind in STRUCTURED_KINDS:
        return doc.signature
    did = group_kind(doc, "")
    return did if did else "\0text"


def signature_groups(docs: Sequence[FailureDoc]) -> list[list[str]]:
    """The trial ids of ``docs`` grouped by their structured signature (free-text evidence shares
    one group), largest first (then by first id); past MAX_PIECES groups, the smallest share one
    last piece."""
    groups: dict[str, list[str]] = {}
    for d in sorted(docs, key=lambda d: d.trial_id):
        groups.setdefault(_split_key(d), []).append(d.trial_id)
    out = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    if len(out) > MAX_PIECES:
        rest = sorted(t for g in out[MAX_PIECES - 1 :] for t in g)
        out = sorted([*out[: MAX_PIECES - 1], rest], key=lambda g: (-len(g), g[0]))
    return out


def split_groups(
    docs: Sequence[FailureDoc], into: int | None = None, seed: int = 0
) -> list[list[str]]:
    """How a split divides a cluster's ``docs``. By default (``into`` None) members whose structured
    signatures differ are separated, one piece per signature (so one member of five that failed
    differently is cut off; members known only by a grader's free-text reason are separated by
    what their agent did, and form one piece when it did nothing telling);
    when they share one signature, the average-linkage tree of their vectors is cut
    into the number of pieces with the best silhouette, at most half the members, each of two or
    more (never singletons, from four members up) and only when some cut separates them
    (silhouette at least ``MIN_SILHOUETTE``). With ``into``, the tree is cut into that many
    pieces. Largest first; [] when they read alike. Deterministic under ``seed``."""
    import numpy as np
    from scipy.cluster.hierarchy import fcluster

    from reviewer.clustering.linkage import _distances, canonical, upgma, weighted_silhouette

    docs = sorted(docs, key=lambda d: d.trial_id)
    n = len(docs)
    if n < 2:
        return []
    if into is None:
        by_signature = signature_groups(docs)
        if len(by_signature) >= 2:
            return by_signature
    x = _doc_vectors(docs, seed)
    rows, inverse, counts = np.unique(
        np.round(x, 6), axis=0, return_inverse=True, return_counts=True
    )
    inverse = inverse.ravel()
    m = len(rows)
    weights = counts.astype(np.float64)
    if m < 2:
        return []
    tree = upgma(rows, weights)
    dist = _distances(rows)

    def cut(k: int) -> np.ndarray:
        return canonical(fcluster(tree, t=k, criterion="maxclust"))

    if into is not None:
        labels = cut(min(into, m))
    else:
        best: tuple[float, np.ndarray] | None = None
        for k in range(2, min(m, max(2, n // 2), MAX_PIECES) + 1):
            labels = cut(k)
            pieces = np.bincount(labels, weights=weights)
            if n >= 4 and pieces.min() < 2:
                continue  # a default split never cuts off single trials (nor makes all singletons)
            score = weighted_silhouette(dist, labels, weights)
            if best is None or score > best[0] + 1e-9:
                best = (score, labels)
        if best is None or best[0] < MIN_SILHOUETTE:
            return []
        labels = best[1]
    groups: dict[int, list[str]] = {}
    for i, d in enumerate(docs):
        groups.setdefault(int(labels[inverse[i]]), []).append(d.trial_id)
    out = sorted(groups.values(), key=lambda g: (-len(g), g[0]))
    return out if len(out) >= 2 else []


def describe_groups(
    docs: Sequence[FailureDoc], groups: Sequence[Sequence[str]], total: int, seed: int = 0
) -> list[FailureCluster]:
    """Each group of trial ids as a cluster described from its own members, in the order given;
    ``total`` is the number of failures of the whole clustering (for shares)."""
    import dataclasses

    import numpy as np

    from reviewer.clustering.cluster import BEHAVIOUR_WEIGHT, _embed, _with_behaviour, group_kind
    from reviewer.clustering.naming import describe_clusters, share_text

    by_id = {d.trial_id: d for d in docs}
    ordered = [by_id[t] for g in groups for t in g if t in by_id]
    ordered.sort(key=lambda d: d.trial_id)
    group_of = {t: gi for gi, g in enumerate(groups) for t in g}
    labels = np.array([group_of[d.trial_id] for d in ordered], dtype=np.int64)
    x, doc_text, texts, _ = _embed(ordered, None, None, list(range(len(ordered))), seed)
    x = _with_behaviour(ordered, x, BEHAVIOUR_WEIGHT)
    kinds = [group_kind(d, d.signature) for d in ordered]
    described = describe_clusters(ordered, kinds, x, labels, texts, doc_text, seed=seed)
    first = {c.trial_ids[0]: c for c in described}
    out = []
    for g in groups:
        head = min(t for t in g if t in by_id)
        c = first[head]
        out.append(
            dataclasses.replace(c, share=share_text(c.size, total), fraction=c.size / max(total, 1))
        )
    return out
