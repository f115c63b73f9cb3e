"""Failure clustering: group by signature first, then merge and split the groups with embeddings.

Small sets use average-linkage agglomerative clustering with a cosine distance cut chosen by
silhouette; large ones first compress the points into at most ``micro_clusters`` MiniBatchKMeans
centroids and run the same step on those, so no n x n matrix is ever built and the number of
clusters is never given. Deterministic under ``seed``, whatever the order of the input.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reviewer.clustering.linkage import auto_cluster, canonical, split_modes
from reviewer.clustering.naming import FailureCluster, describe_clusters
from reviewer.clustering.signature import FailureDoc
from reviewer.clustering.templates import templates_of

if TYPE_CHECKING:
    import numpy as np

    from reviewer.clustering.embed import Embedder

__all__ = ["ClusteringResult", "FailureCluster", "cluster_failures"]

#: Mean cosine distance under which two groups of failures merge; None chooses the cut by weighted
#: silhouette, which on the sample runs recovers the generator's failure modes best (ARI 0.84 vs 0.57
#: for a fixed 0.35 that kept every phrasing of one mode apart).
MERGE_THRESHOLD: float | None = None
#: Share of a failure's vector given to its signature (the rest to its text).
SIGNATURE_WEIGHT = 0.5
#: Share of a failure's vector given to what its agent did (``behaviour.behaviour_of``), the rest to
#: its text; a failure with no behaviour is its text alone. Tuned on the dev wordings of
#: tests/clustering/behaviours.py only (see bench/behaviour_ari.py).
BEHAVIOUR_WEIGHT = 0.5
#: Behaviour features kept (the most frequent): the vector stays small whatever the tools.
BEHAVIOUR_FEATURES = 64
#: How much each kind of behaviour feature counts: what was changed, on what, unasked, after which
#: error and how it ended say what was done; which tools were read, and in what order, less.
_FEATURE_WEIGHTS = {
    "write": 2.0,
    "status": 2.0,
    "unconfirmed": 2.0,
    "gave_up": 2.0,
    "transfer": 2.0,
    "end": 2.0,
    "final": 1.0,
    "error": 1.0,
    "loop": 1.0,
    "tool": 0.5,
    "next": 0.5,
    "budget": 0.5,
}
#: Evidence kinds whose signature groups a failure on its own; a failure with none of these (its
#: signature only a free-text reason, or nothing) is grouped by what its agent did when it did
#: something telling.
_STRONG_EVIDENCE = frozenset({"violation", "harness_error", "outcome", "tool_error", "termination"})
#: Dimensions of the signature embedding; up to this many distinct signatures it is exact.
SIGNATURE_DIMS = 256
#: Mean cosine distance of texts over which one cluster splits apart; larger than the merge threshold,
#: so a signature group is only cut where its texts are clearly different.
SPLIT_THRESHOLD = 0.8
#: More points than this go through the MiniBatchKMeans compression step.
LARGE = 2000


@dataclass
class ClusteringResult:
    """Clusters ranked by size, the number of failures clustered, and the parameters used."""

    clusters: list[FailureCluster]
    total: int
    params: dict[str, Any] = field(default_factory=dict)

    def by_trial(self) -> dict[str, str]:
        """Trial id -> cluster id."""
        return {t: c.id for c in self.clusters for t in c.trial_ids}

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "params": self.params,
            "clusters": [c.to_dict() for c in self.clusters],
        }


def _embed(
    ordered: Sequence[FailureDoc],
    embedder: Embedder | None,
    vectors: Any,
    order: list[int],
    seed: int,
) -> tuple[np.ndarray, np.ndarray, list[str], dict[str, Any]]:
    """Unit (or zero) vectors of the docs, the unique text index of each doc, the unique texts, and
    what the embedder was. Each distinct text is embedded once."""
    import numpy as np

    from reviewer.clustering.embed import TfidfSvdEmbedder
    from reviewer.clustering.vectorize import normalize

    n = len(ordered)
    text_index: dict[str, int] = {}
    doc_text = np.fromiter(
        (text_index.setdefault(d.text, len(text_index)) for d in ordered), np.int64, n
    )
    texts = list(text_index)
    if vectors is not None:
        x = np.asarray(vectors, dtype=np.float64)
        if x.ndim != 2 or len(x) != n:
            raise ValueError(f"vectors must have one row per doc: got shape {x.shape} for {n} docs")
        return normalize(x[order]), doc_text, texts, {"embedder": "precomputed"}
    if embedder is None:
        embedder = TfidfSvdEmbedder(seed=seed)
    x = normalize(np.asarray(embedder.embed(texts), dtype=np.float64))[doc_text]
    describe = getattr(embedder, "params", None)
    return x, doc_text, texts, describe() if callable(describe) else {"embedder": embedder.name}


def behaviour_vectors(docs: Sequence[FailureDoc]) -> np.ndarray:
    """One row per doc: its behaviour features, each weighted by its kind and by how rare it is
    (``log((1 + n) / (1 + df))``: a feature every failure has tells none apart), unit length; zero
    rows for docs with none. Columns are the ``BEHAVIOUR_FEATURES`` most frequent features, sorted,
    so the result does not depend on the order of ``docs``."""
    import numpy as np

    from reviewer.clustering.vectorize import normalize

    df: Counter[str] = Counter()
    for d in docs:
        df.update(set(d.behaviour))
    kept = sorted(sorted(df, key=lambda t: (-df[t], t))[:BEHAVIOUR_FEATURES])
    out = np.zeros((len(docs), len(kept)))
    if not kept:
        return out
    column = {t: j for j, t in enumerate(kept)}
    n = len(docs)
    weight = np.array(
        [
            _FEATURE_WEIGHTS.get(t.split(":", 1)[0], 1.0) * np.log((1.0 + n) / (1.0 + df[t]))
            for t in kept
        ]
    )
    for i, d in enumerate(docs):
        cols = [column[t] for t in d.behaviour if t in column]
        out[i, cols] = weight[cols]
    return normalize(out)


def _with_behaviour(docs: Sequence[FailureDoc], x: np.ndarray, weight: float) -> np.ndarray:
    """Each doc's text vector beside its behaviour vector (share ``weight``), unit length; docs
    whose agent did nothing telling (no ``behaviour_key``) keep their text vector alone."""
    import numpy as np

    from reviewer.clustering.vectorize import normalize

    b = behaviour_vectors(docs)
    if b.shape[1] == 0 or weight <= 0:
        return x
    w = min(weight, 1.0)
    # a trajectory that shows nothing telling (reads, then talk) leaves the text to decide
    has = (np.abs(b).sum(axis=1) > 0) & np.array([_telling(d) for d in docs])
    b[~has] = 0.0
    text_scale = np.where(has, np.sqrt(1.0 - w), 1.0)[:, None]
    return normalize(np.hstack([text_scale * x, np.sqrt(w) * b]))


def group_kind(doc: FailureDoc, kind: str) -> str:
    """What a failure is grouped by: its signature (or template), or, when its only evidence is
    free text (a grader's or a harness's words) or none and its agent did something telling, what
    the agent did: two failures that did the same thing group however the reason was worded."""
    if any(e.signature and e.kind in _STRONG_EVIDENCE for e in doc.evidence):
        return kind
    return "did: " + doc.behaviour_key if _telling(doc) else kind


def _telling(doc: FailureDoc) -> bool:
    """Whether what the agent did can group the failure: a key, except an agent that only talked
    and has no signature: with no reason whose wording would split it, its text groups it (two
    modes of talk alone, an invented date and a promised discount, read apart)."""
    key = doc.behaviour_key
    return bool(key) and not (key.startswith("talked only") and not doc.signature)


def _unsigned_groups(
    kinds: Sequence[str], x: np.ndarray, doc_text: np.ndarray, seed: int, **options: Any
) -> tuple[np.ndarray, str]:
    """Group label per doc for the docs with no signature (-1 for signed ones and for blank text).

    With no signature to group them by, the docs are first clustered by text alone (atoms: identical
    texts, or identical text and behaviour), so the merge step sees groups, as it does for
    signatures."""
    import numpy as np

    out = np.full(len(kinds), -1, dtype=np.int64)
    idx = np.flatnonzero(np.array([not k for k in kinds]) & (np.abs(x).sum(axis=1) > 0))
    if len(idx) == 0:
        return out, "none"
    texts, first, local = np.unique(doc_text[idx], return_index=True, return_inverse=True)
    local = local.ravel()
    sizes = np.bincount(local, minlength=len(texts)).astype(np.float64)
    labels, info = auto_cluster(x[idx[first]], sizes, seed, **options)
    out[idx] = labels[local]
    return out, str(info["method"])


def _atoms(docs: Sequence[FailureDoc], doc_text: np.ndarray) -> np.ndarray:
    """An index per doc, equal for docs of one text and one behaviour (their vectors are equal)."""
    import numpy as np

    index: dict[tuple[int, tuple[str, ...]], int] = {}
    return np.fromiter(
        (
            index.setdefault((int(t), d.behaviour), len(index))
            for d, t in zip(docs, doc_text.tolist(), strict=True)
        ),
        np.int64,
        len(docs),
    )


def _group_means(
    kinds: Sequence[str],
    group_of: np.ndarray,
    n_groups: int,
    x: np.ndarray,
    signature_weight: float,
    seed: int,
    embedder: Embedder | None = None,
) -> np.ndarray:
    """The mean, over each group, of its failures' vectors: a failure is its signature's embedding
    (weight ``signature_weight``) next to its text's, or its text's alone when it has no signature."""
    import numpy as np
    import scipy.sparse as sp

    from reviewer.clustering.embed import TfidfSvdEmbedder

    n = len(kinds)
    sizes = np.bincount(group_of, minlength=n_groups).astype(np.float64)
    indicator = sp.csr_matrix(
        (1.0 / sizes[group_of], (group_of, np.arange(n))), shape=(n_groups, n)
    )
    text_mean = np.asarray(indicator @ x)
    group_sig = [""] * n_groups
    for i, g in enumerate(group_of.tolist()):
        group_sig[g] = kinds[i]
    # a group by what its agent did is compared by its behaviour and text vectors (in ``x``), not
    # by the wording of its key: two keys can read alike and mean different things
    group_sig = ["" if sig.startswith("did: ") else sig for sig in group_sig]
    signed = np.array([bool(sig) for sig in group_sig])
    unique_sigs = sorted({sig for sig in group_sig if sig})
    sig_part = np.zeros((n_groups, 1))
    if unique_sigs:
        if embedder is None or isinstance(embedder, TfidfSvdEmbedder):
            embedder = TfidfSvdEmbedder(
                seed=seed, dims=SIGNATURE_DIMS, char_dims=SIGNATURE_DIMS // 2
            )
        sig_vectors = embedder.embed(unique_sigs)
        row = {sig: i for i, sig in enumerate(unique_sigs)}
        sig_part = np.zeros((n_groups, sig_vectors.shape[1]))
        sig_part[signed] = sig_vectors[[row[sig] for sig in group_sig if sig]]
    w = min(max(signature_weight, 0.0), 1.0)
    text_scale = np.where(signed, np.sqrt(1.0 - w), 1.0)[:, None]
    return np.hstack([np.sqrt(w) * sig_part, text_scale * text_mean])


def _split_clusters(
    labels: np.ndarray, x: np.ndarray, threshold: float, seed: int, min_size: int
) -> int:
    """Split, in place, the clusters whose members' texts hold clearly separate modes; returns how
    many new clusters that made."""
    import numpy as np

    min_part = max(3, min_size // 2)
    next_label = int(labels.max()) + 1
    splits = 0
    by_label = np.argsort(labels, kind="stable")
    for idx in np.split(by_label, np.flatnonzero(np.diff(labels[by_label])) + 1):
        if len(idx) < min_size:
            continue
        sub = split_modes(x[idx], threshold, seed, min_part)
        if sub is None:
            continue
        for part in range(1, int(sub.max()) + 1):
            labels[idx[sub == part]] = next_label
            next_label += 1
            splits += 1
    return splits


def cluster_failures(
    docs: Sequence[FailureDoc],
    seed: int = 0,
    *,
    embedder: Embedder | None = None,
    vectors: Any = None,
    merge_threshold: float | None = MERGE_THRESHOLD,
    text_threshold: float | None = None,
    split_threshold: float = SPLIT_THRESHOLD,
    signature_weight: float = SIGNATURE_WEIGHT,
    behaviour_weight: float = BEHAVIOUR_WEIGHT,
    min_split_size: int = 10,
    large: int = LARGE,
    micro_clusters: int = 1024,
    n_terms: int = 5,
) -> ClusteringResult:
    """Cluster failed trials; the clusters come named, described and ranked by size.

    Distances are mean cosine distances between the failures of two clusters (average linkage).
    1. Groups: docs of one signature (or one signature template, see ``templates``). Docs with no
       signature are first clustered by their text alone, cut at ``text_threshold`` or, when None,
       where the silhouette is best: the text is all the evidence there is.
    2. Merge: a failure's vector is its signature's embedding next to its text's (weights
       ``signature_weight`` and ``1 - signature_weight``); groups closer than ``merge_threshold``
       merge, so two signatures join only when they and their texts read alike (None: by silhouette).
    3. Split: a cluster whose texts hold parts further apart than ``split_threshold`` is cut.
    ``vectors`` (one row per doc) replaces the embedder. Deterministic under ``seed`` whatever the
    order of ``docs``.
    """
    import numpy as np

    params: dict[str, Any] = {
        "seed": seed,
        "merge_threshold": merge_threshold,
        "text_threshold": text_threshold,
        "split_threshold": split_threshold,
        "signature_weight": signature_weight,
        "behaviour_weight": behaviour_weight,
        "min_split_size": min_split_size,
        "large": large,
        "micro_clusters": micro_clusters,
        "n_docs": len(docs),
    }
    if not docs:
        return ClusteringResult([], 0, params)
    order = sorted(range(len(docs)), key=lambda i: (docs[i].trial_id, i))
    ordered = [docs[i] for i in order]
    n = len(ordered)
    x, doc_text, texts, about = _embed(ordered, embedder, vectors, order, seed)
    params.update(about)
    x = _with_behaviour(ordered, x, behaviour_weight)
    params["dims"] = int(x.shape[1])
    options: dict[str, Any] = {"large": large, "micro_clusters": micro_clusters}

    # 1. groups
    template = templates_of(Counter(d.signature for d in ordered if d.signature))
    kinds = [group_kind(d, template.get(d.signature, d.signature)) for d in ordered]
    params["behaviour_grouped"] = sum(k.startswith("did: ") for k in kinds)
    unsigned, params["unsigned_method"] = _unsigned_groups(
        kinds, x, _atoms(ordered, doc_text), seed, threshold=text_threshold, **options
    )
    group_index: dict[tuple[str, int], int] = {}
    keys = ((k, -1) if k else ("", int(unsigned[i])) for i, k in enumerate(kinds))
    group_of = np.fromiter((group_index.setdefault(k, len(group_index)) for k in keys), np.int64, n)
    n_groups = len(group_index)
    params["n_groups"], params["templated_signatures"] = n_groups, len(template)

    # 2. merge groups that read alike; a group with no vector at all stays as it is
    means = _group_means(kinds, group_of, n_groups, x, signature_weight, seed, embedder)
    sizes = np.bincount(group_of, minlength=n_groups).astype(np.float64)
    live = np.flatnonzero(np.abs(means).sum(axis=1) > 0)
    group_label = np.arange(n_groups, dtype=np.int64) + n_groups
    if len(live):
        merged, info = auto_cluster(
            means[live], sizes[live], seed, threshold=merge_threshold, **options
        )
        group_label[live] = merged
        params["merge_method"], params["merge_cut"] = info["method"], info["cut"]
    labels = canonical(group_label[group_of])

    # 3. split clusters whose members' texts hold clearly separate modes
    params["splits"] = _split_clusters(labels, x, split_threshold, seed, min_split_size)
    labels = canonical(labels)
    params["n_clusters"] = int(labels.max()) + 1
    clusters = describe_clusters(
        ordered, kinds, x, labels, texts, doc_text, n_terms=n_terms, seed=seed
    )
    return ClusteringResult(clusters, n, params)
