"""Naming, describing and ranking clusters: class-based TF-IDF terms, the dominant signature, a
representative trial, the runs and tasks spanned, and an id that survives re-runs."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewer.clustering.signature import FailureDoc
from reviewer.models import Cluster

if TYPE_CHECKING:
    import numpy as np

__all__ = ["FailureCluster", "class_terms", "describe_clusters", "match_previous", "share_text"]

NAME_SIGNATURE_CHARS = 96
_PLACEHOLDER = re.compile(r"<\w+>")
# Words of transcripts and tracebacks that name no failure.
_EXTRA_STOP = "agent calls let file line return traceback recent notes".split()


def _stop_words() -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return sorted(ENGLISH_STOP_WORDS.union(_EXTRA_STOP))


@dataclass(frozen=True)
class FailureCluster:
    """One failure cluster, ready to show: "12 of 19 failures: cancel_order: order <id> already shipped"."""

    id: str
    name: str
    size: int
    share: str  # "12 of 19 failures"
    fraction: float
    signature: str  # the dominant signature ("" when no member had error evidence)
    terms: tuple[str, ...]  # top distinguishing terms (class-based TF-IDF)
    runs: tuple[str, ...]
    tasks: tuple[str, ...]
    representative: str  # trial id of the member closest to the centroid
    trial_ids: tuple[str, ...]
    signatures: tuple[tuple[str, int], ...] = ()  # member signatures with counts, most common first

    def to_model(self) -> Cluster:
        return Cluster(
            id=self.id,
            name=self.name,
            size=self.size,
            signature=self.signature,
            terms=list(self.terms),
            trial_ids=list(self.trial_ids),
            representative=self.representative,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "size": self.size,
            "share": self.share,
            "fraction": self.fraction,
            "signature": self.signature,
            "terms": list(self.terms),
            "runs": list(self.runs),
            "tasks": list(self.tasks),
            "representative": self.representative,
            "trial_ids": list(self.trial_ids),
            "signatures": [{"signature": s, "count": c} for s, c in self.signatures],
        }


def share_text(size: int, total: int) -> str:
    return f"{size} of {total} failure{'' if total == 1 else 's'}"


def _preprocess(text: str) -> str:
    return _PLACEHOLDER.sub(" ", text.lower())


def _sample_per_label(labels: np.ndarray, per_label: int, seed: int) -> np.ndarray:
    """Indices of at most ``per_label`` docs of each label, picked by a seeded shuffle, sorted."""
    import numpy as np

    perm = np.random.default_rng(seed).permutation(len(labels))
    by_label = perm[np.argsort(labels[perm], kind="stable")]
    sorted_labels = labels[by_label]
    starts = np.searchsorted(sorted_labels, sorted_labels, side="left")
    rank = np.arange(len(by_label)) - starts
    return np.sort(by_label[rank < per_label])


def class_terms(
    texts: Sequence[str],
    doc_text: np.ndarray,
    labels: np.ndarray,
    n_clusters: int,
    n_terms: int = 5,
    *,
    per_cluster: int = 300,
    seed: int = 0,
) -> list[list[str]]:
    """Top terms per cluster by class-based TF-IDF (BERTopic's c-TF-IDF): tf within the cluster's
    concatenated text times ``log(1 + A / f)``, with A the mean words per cluster and f a term's
    frequency over all clusters. ``texts`` are unique texts, ``doc_text`` maps each doc to one; at most
    ``per_cluster`` docs of each cluster (seeded sample) are read, so the cost stays linear."""
    import numpy as np
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import CountVectorizer

    empty: list[list[str]] = [[] for _ in range(n_clusters)]
    if n_clusters == 0 or not texts:
        return empty
    picked = _sample_per_label(labels, per_cluster, seed)
    text_ids, local = np.unique(doc_text[picked], return_inverse=True)
    vectorizer = CountVectorizer(
        preprocessor=_preprocess,
        token_pattern=r"(?u)\b[a-z][a-z_]{2,}\b",
        stop_words=_stop_words(),
        max_features=2**16,
        dtype=np.float64,
    )
    try:
        counts = vectorizer.fit_transform([texts[i] for i in text_ids.tolist()])
    except ValueError:  # no words at all
        return empty
    vocab = vectorizer.get_feature_names_out()
    membership = sp.csr_matrix(
        (np.ones(len(picked)), (labels[picked], local.ravel())), shape=(n_clusters, len(text_ids))
    )  # sampled docs per (cluster, unique text)
    tf_raw = sp.csr_matrix(membership @ counts)
    words_per_class = np.asarray(tf_raw.sum(axis=1)).ravel()
    freq = np.asarray(tf_raw.sum(axis=0)).ravel()
    avg = float(words_per_class.mean()) if words_per_class.size else 0.0
    idf = np.log1p(avg / np.maximum(freq, 1e-12))
    out: list[list[str]] = []
    for c in range(n_clusters):
        row = tf_raw.getrow(c)
        if row.nnz == 0:
            out.append([])
            continue
        scores = row.data / max(words_per_class[c], 1e-12) * idf[row.indices]
        terms = [str(vocab[j]) for j in row.indices]
        ranked = sorted(
            zip(scores.tolist(), terms, strict=True), key=lambda st: (-round(st[0], 12), st[1])
        )
        out.append([t for _, t in ranked[:n_terms]])
    return out


def _short(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _name(signature: str, terms: Sequence[str]) -> str:
    if not signature:
        return ", ".join(terms[:4]) if terms else "no error evidence"
    sig_words = set(re.findall(r"[a-z_]+", signature.lower()))
    extra = [t for t in terms if t not in sig_words][:3]
    short = _short(signature, NAME_SIGNATURE_CHARS)
    return f"{short} — {', '.join(extra)}" if extra else short


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0] == "", kv[0]))


def _cluster_id(signature: str, unique_signature: bool, first_member: str) -> str:
    # A dominant signature that only one cluster has is the most stable handle across re-runs;
    # otherwise the smallest member trial id disambiguates (stable unless a smaller id joins).
    key = signature if unique_signature else f"{signature}\n{first_member}"
    return "c" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def describe_clusters(
    docs: Sequence[FailureDoc],
    kinds: Sequence[str],
    vectors: np.ndarray,
    labels: np.ndarray,
    texts: Sequence[str],
    doc_text: np.ndarray,
    n_terms: int = 5,
    seed: int = 0,
) -> list[FailureCluster]:
    """Describe each label's cluster and rank them by size (desc), then name, then id.

    ``docs`` are sorted by trial id; ``kinds`` are their signatures as grouped (templates where one
    applies), of which the most common names the cluster; ``vectors`` are their unit (or zero)
    embeddings."""
    import numpy as np

    total = len(docs)
    if total == 0:
        return []
    n_clusters = int(labels.max()) + 1
    terms = class_terms(texts, doc_text, labels, n_clusters, n_terms, seed=seed)
    members: list[list[int]] = [[] for _ in range(n_clusters)]
    for i, label in enumerate(labels.tolist()):
        members[label].append(i)
    dominant: list[str] = []
    counted: list[list[tuple[str, int]]] = []
    for idx in members:
        counted.append(_ranked(Counter(docs[i].signature for i in idx)))
        dominant.append(next((s for s, _ in _ranked(Counter(kinds[i] for i in idx)) if s), ""))
    sig_uses = Counter(dominant)
    clusters = []
    for c, idx in enumerate(members):
        if not idx:
            continue
        rows = vectors[idx]
        centroid = rows.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        best = int(np.argmax(np.round(rows @ (centroid / norm), 9))) if norm > 0 else 0
        ids = [docs[i].trial_id for i in idx]
        clusters.append(
            FailureCluster(
                id=_cluster_id(
                    dominant[c], bool(dominant[c]) and sig_uses[dominant[c]] == 1, ids[0]
                ),
                name=_name(dominant[c], terms[c]),
                size=len(idx),
                share=share_text(len(idx), total),
                fraction=len(idx) / total,
                signature=dominant[c],
                terms=tuple(terms[c]),
                runs=tuple(sorted({docs[i].run for i in idx if docs[i].run})),
                tasks=tuple(sorted({docs[i].task_id for i in idx if docs[i].task_id})),
                representative=ids[best],
                trial_ids=tuple(ids),
                signatures=tuple(counted[c]),
            )
        )
    clusters.sort(key=lambda cl: (-cl.size, cl.name, cl.id))
    return clusters


def match_previous(
    previous: Mapping[str, Iterable[str]],
    clusters: Sequence[FailureCluster],
    min_jaccard: float = 0.5,
) -> dict[str, str]:
    """New cluster id -> previous cluster id, by best member overlap (Jaccard ≥ ``min_jaccard``), one
    to one, so human renames and merges stored against old ids can follow a re-run."""
    old = {cid: set(ids) for cid, ids in previous.items()}
    owner: dict[str, list[str]] = {}
    for cid, ids in old.items():
        for t in ids:
            owner.setdefault(t, []).append(cid)
    pairs = []
    for cl in clusters:
        overlap: Counter[str] = Counter()
        for t in cl.trial_ids:
            overlap.update(owner.get(t, ()))
        for cid, inter in overlap.items():
            jaccard = inter / (len(cl.trial_ids) + len(old[cid]) - inter)
            if jaccard >= min_jaccard:
                pairs.append((jaccard, cl.id, cid))
    out: dict[str, str] = {}
    used: set[str] = set()
    # on a tie, a cluster that kept its own id keeps it
    for _, new_id, old_id in sorted(pairs, key=lambda p: (-p[0], p[1] != p[2], p[1], p[2])):
        if new_id not in out and old_id not in used:
            out[new_id] = old_id
            used.add(old_id)
    # An unmatched cluster keeps its own id unless a matched one has just taken it (after a merge the
    # merged id can go to another cluster); then it gets a fresh one, so no two clusters share an id.
    taken = used | {cl.id for cl in clusters}
    for cl in clusters:
        if cl.id not in out and cl.id in used:
            n = 2
            while f"{cl.id}-{n}" in taken:
                n += 1
            out[cl.id] = f"{cl.id}-{n}"
            taken.add(out[cl.id])
    return out
