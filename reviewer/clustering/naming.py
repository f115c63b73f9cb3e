"""Naming, describing and ranking clusters: class-based TF-IDF terms, the dominant signature, a
representative trial, the runs and tasks spanned, and an id that survives re-runs."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reviewer.clustering.outcomes import is_detail
from reviewer.clustering.signature import FailureDoc
from reviewer.models import Cluster

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "FailureCluster",
    "class_terms",
    "describe_clusters",
    "fact_name",
    "majority",
    "ranked_facts",
    "match_previous",
    "share_text",
    "unique_names",
]

NAME_SIGNATURE_CHARS = 96
_COUNTED = re.compile(r" \(\d+ of \d+\)$")
#: A word found in more than this share of the failures names no cluster.
COMMON_SHARE = 0.6
_PLACEHOLDER = re.compile(r"<\w+>")
# Words of transcripts and tracebacks that name no failure.
_EXTRA_STOP = "agent calls let file line return traceback recent notes".split()


def _stop_words() -> list[str]:
    from reviewer.clustering.vectorize import english_stop_words

    return sorted(english_stop_words().union(_EXTRA_STOP))


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

    from reviewer.clustering.vectorize import count_matrix, word_analyzer

    empty: list[list[str]] = [[] for _ in range(n_clusters)]
    if n_clusters == 0 or not texts:
        return empty
    picked = _sample_per_label(labels, per_cluster, seed)
    text_ids, local = np.unique(doc_text[picked], return_inverse=True)
    analyze = word_analyzer(r"(?u)\b[a-z][a-z_]{2,}\b", _preprocess, _stop_words())
    try:
        counts, vocab = count_matrix(
            [texts[i] for i in text_ids.tolist()], analyze, np.float64, 2**16
        )
    except ValueError:  # no words at all
        return empty
    membership = sp.csr_matrix(
        (np.ones(len(picked)), (labels[picked], local.ravel())), shape=(n_clusters, len(text_ids))
    )  # sampled docs per (cluster, unique text)
    tf_raw = sp.csr_matrix(membership @ counts)
    # words nearly every failure has (a system prompt, a grader's boilerplate) tell no cluster apart
    present = sp.csr_matrix(counts)
    present.data[:] = 1.0
    df = np.asarray(np.asarray(membership.sum(axis=0)).ravel() @ present).ravel()
    common = df > COMMON_SHARE * len(picked) if n_clusters > 1 and len(picked) >= 5 else None
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
        keep = row.indices if common is None else row.indices[~common[row.indices]]
        scores = (
            (row.data if common is None else row.data[~common[row.indices]])
            / max(words_per_class[c], 1e-12)
            * idf[keep]
        )
        terms = [str(vocab[j]) for j in keep]
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


def _shown(fact: str) -> str:
    """A fact as a name says it."""
    if fact.startswith("rule: "):
        return "broke " + fact[len("rule: ") :]
    return _short(fact, NAME_SIGNATURE_CHARS)


def _specificity(fact: str) -> int:
    """How much a fact says: an argument or answer that differed > an expected action or a broken
    rule > an error > how the episode ended."""
    if fact.startswith("answered ") and ", expected " in fact:
        return 5
    if is_detail(fact) and not fact.startswith("scored incorrect by "):
        return 4
    if (
        fact.startswith(("did not ", "called ", "rule: ", "answered ", "database "))
        or "assertion" in fact
    ):
        return 3
    if fact.startswith("terminated: ") or fact.startswith("scored incorrect by "):
        return 1
    return 2


def majority(size: int) -> int:
    """How many of a cluster's members a statement must hold for to name it: more than half (two at
    least), so a name is never one member's accident."""
    return 1 if size == 1 else max(2, size // 2 + 1)


#: A name from a fact weaker than this (how the episode ended, which writes were made) also
#: carries the cluster's most distinctive terms: the fact alone would read alike for many clusters.
WEAK_FACT = 2.0


def ranked_facts(
    facts: Counter[str],
    size: int,
    behaviour: Counter[str] | None = None,
    free_text: frozenset[str] = frozenset(),
) -> list[tuple[str, float, int]]:
    """The facts true of most of a cluster's ``size`` members, as (fact, weight, count), the most
    specific first, then the most shared. ``facts`` counts each member's facts once; ``behaviour``
    counts what the members' agents did (``behaviour.behaviour_of``), weighed on the same scale by
    ``behaviour.specificity`` and placed after a source's own fact of equal weight; a fact in
    ``free_text`` (a reason's wording) says less than most statements of what the agent did."""
    from reviewer.clustering import behaviour as did

    need = majority(size)
    scored: dict[str, tuple[float, int, int]] = {}
    for source, counts in ((0, facts), (1, behaviour or Counter())):
        for f, n in counts.items():
            if n < need or f in scored:
                continue
            if source == 1:
                weight = did.specificity(f)
            elif f in free_text:
                # a reason that is a bare placeholder ("reward <num>") says nothing at all
                weight = 0.5 if _PLACEHOLDER.sub("", f).strip().count(" ") < 1 else 1.2
            else:
                weight = float(_specificity(f))
            scored[f] = (weight, n, source)
    order = sorted(scored, key=lambda f: (-scored[f][0], -scored[f][1], scored[f][2], len(f), f))
    return [(f, scored[f][0], scored[f][1]) for f in order]


def fact_name(
    facts: Counter[str],
    size: int,
    behaviour: Counter[str] | None = None,
    free_text: frozenset[str] = frozenset(),
) -> tuple[str, list[str]] | None:
    """The most specific fact true of most of a cluster's ``size`` members (see ``ranked_facts``),
    shown with how many it holds for when not all; with the other facts that hold for most, most
    specific first (to tell clusters of one name apart). None when no fact holds for most."""
    ranked = ranked_facts(facts, size, behaviour, free_text)
    if not ranked:
        return None
    top, _, count = ranked[0]
    name = _shown(top)
    if count < size:
        name += f" ({count} of {size})"
    return name, [f for f, _, _ in ranked[1:]]


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
    free_text = frozenset(
        e.signature for d in docs for e in d.evidence if e.kind == "reason" and e.signature
    )
    clusters = []
    extras: dict[str, list[str]] = {}
    for c, idx in enumerate(members):
        if not idx:
            continue
        rows = vectors[idx]
        centroid = rows.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        best = int(np.argmax(np.round(rows @ (centroid / norm), 9))) if norm > 0 else 0
        ids = [docs[i].trial_id for i in idx]
        fact_counts: Counter[str] = Counter()
        did_counts: Counter[str] = Counter()
        for i in idx:
            fact_counts.update(set(docs[i].facts))
            did_counts.update(set(docs[i].behaviour_facts))
        ranked = ranked_facts(fact_counts, len(idx), did_counts, free_text)
        held = sum(1 for i in idx if kinds[i] == dominant[c] or docs[i].signature == dominant[c])
        if ranked:
            top, weight, count = ranked[0]
            name, others = _shown(top), [f for f, w, _ in ranked[1:] if w >= 1.0]
            if weight < WEAK_FACT:
                extra = [t for t in terms[c] if t not in name and len(t) >= 4][:3]
                name += f" — {', '.join(extra)}" if extra else ""
            if count < len(idx):
                name += f" ({count} of {len(idx)})"
        elif dominant[c] and held >= majority(len(idx)):
            name, others = _name(dominant[c], terms[c]), []
        else:
            name, others = _name("", terms[c]), []
        cid = _cluster_id(dominant[c], bool(dominant[c]) and sig_uses[dominant[c]] == 1, ids[0])
        # a term tells two clusters apart only when it reads as a word: three letters are too often
        # a fragment of the conversation (tau-bench's "EST" times named a cluster "… — est")
        extras[cid] = [_shown(f) for f in others] + [
            t for t in terms[c] if t not in name and len(t) >= 4
        ]
        clusters.append(
            FailureCluster(
                id=cid,
                name=name,
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
    clusters = unique_names(clusters, extras)
    clusters.sort(key=lambda cl: (-cl.size, cl.name, cl.id))
    return clusters


def unique_names(
    clusters: Sequence[FailureCluster], extras: Mapping[str, Sequence[str]] | None = None
) -> list[FailureCluster]:
    """The clusters with no two of one name: each of a shared name gets the first of its ``extras``
    (other facts true of most of it, then its terms) that the others of that name lack, else a
    number."""
    import dataclasses

    extras = extras or {}
    base = [_COUNTED.sub("", cl.name) for cl in clusters]
    counted = [cl.name[len(b) :] for cl, b in zip(clusters, base, strict=True)]
    by_name: dict[str, list[int]] = {}
    for i, name in enumerate(base):
        by_name.setdefault(name.lower(), []).append(i)
    for idx in by_name.values():
        if len(idx) < 2:
            continue
        name = base[idx[0]]
        for i in idx:
            mine = [e for e in extras.get(clusters[i].id, ()) if e not in name]
            theirs = {e for j in idx if j != i for e in extras.get(clusters[j].id, ())}
            firsts = {e for j in idx if j != i for e in extras.get(clusters[j].id, ())[:1]}
            pick = next((e for e in mine if e not in theirs), None) or next(
                (e for e in mine if e not in firsts), None
            )
            if pick is not None:
                base[i] = f"{name} — {pick}"
    seen: Counter[str] = Counter()
    for i in sorted(range(len(base)), key=lambda i: (-clusters[i].size, clusters[i].id)):
        seen[base[i].lower()] += 1
        if seen[base[i].lower()] > 1:
            base[i] = f"{base[i]} (#{seen[base[i].lower()]})"
    return [
        dataclasses.replace(cl, name=b + c)
        for cl, b, c in zip(clusters, base, counted, strict=True)
    ]


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
