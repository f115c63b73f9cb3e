"""How well a clustering matches the failure tags humans gave: ARI, homogeneity, completeness and
purity over the tagged failures that sit in a cluster, and each tag's best cluster.

Pure functions over plain mappings (trial id -> tag, trial id -> cluster id); sklearn's metrics
are imported where they are used.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

#: Fewer tagged failures in clusters than this, and a score says little: ARI between unrelated tags
#: and clusters of 9 trials reaches 0.2 or more 11% of the time, of 10 9% (bench/cluster_score_noise.py).
MIN_SCORED = 10
#: With one tag there is nothing to tell apart: ARI is 0 or undefined whatever the clusters.
MIN_TAGS = 2


@dataclass
class TagBest:
    """Where one tag's trials went: its best cluster (holding most of them) and how many."""

    tag: str
    n: int  # tagged trials in the scope
    clustered: int  # of them, in some cluster
    cluster_id: str | None = None
    rank: int | None = None
    name: str = ""
    in_best: int = 0  # of the tag's trials, in its best cluster
    best_size: int = 0  # tagged trials (any tag) in that cluster
    clusters: int = 0  # clusters holding some of the tag's trials


@dataclass
class Scorecard:
    """The clustering against the human tags; the scores are None when ``enough`` is False."""

    tagged: int  # tagged failures in the clustering's scope
    scored: int  # of them, in a cluster (the scores are over these)
    unclustered: int  # tagged but in no cluster (passed by the harness, or clustered before)
    tags: int  # distinct tags among the scored
    clusters: int  # clusters holding a scored trial
    enough: bool
    why: str = ""  # why there is no score, when not enough
    ari: float | None = None
    homogeneity: float | None = None
    completeness: float | None = None
    purity: float | None = None
    per_tag: list[TagBest] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def purity(tags: list[str], clusters: list[str]) -> float:
    """The share of trials whose cluster's most common tag is their own."""
    by_cluster: dict[str, Counter[str]] = {}
    for t, c in zip(tags, clusters, strict=True):
        by_cluster.setdefault(c, Counter())[t] += 1
    return sum(max(cnt.values()) for cnt in by_cluster.values()) / max(len(tags), 1)


def score_tags(
    tags: Mapping[str, str],
    cluster_of: Mapping[str, str],
    clusters: Mapping[str, tuple[int, str]] | None = None,
) -> Scorecard:
    """Score the clustering ``cluster_of`` (trial id -> cluster id) against ``tags`` (trial id ->
    tag). ``clusters``: cluster id -> (rank, name), for the per-tag lines."""
    from sklearn.metrics import adjusted_rand_score, completeness_score, homogeneity_score

    clusters = clusters or {}
    scored = sorted(t for t in tags if t in cluster_of)
    y_tag = [tags[t] for t in scored]
    y_cluster = [cluster_of[t] for t in scored]
    n_tags = len(set(y_tag))
    card = Scorecard(
        tagged=len(tags),
        scored=len(scored),
        unclustered=len(tags) - len(scored),
        tags=n_tags,
        clusters=len(set(y_cluster)),
        enough=False,
    )
    if n_tags < MIN_TAGS:
        card.why = (
            f"{n_tags} tag{'' if n_tags == 1 else 's'} among the clustered failures: "
            f"a score needs {MIN_TAGS} or more different tags"
        )
    elif len(scored) < MIN_SCORED:
        card.why = (
            f"{len(scored)} tagged failure{'' if len(scored) == 1 else 's'} in clusters: "
            f"a score needs {MIN_SCORED} or more (fewer give chance agreement)"
        )
    else:
        card.enough = True
        card.ari = float(adjusted_rand_score(y_tag, y_cluster))
        card.homogeneity = float(homogeneity_score(y_tag, y_cluster))
        card.completeness = float(completeness_score(y_tag, y_cluster))
        card.purity = purity(y_tag, y_cluster)
    size = Counter(y_cluster)
    for tag, n in sorted(Counter(tags.values()).items(), key=lambda kv: (-kv[1], kv[0])):
        where = Counter(cluster_of[t] for t in scored if tags[t] == tag)
        best = TagBest(tag=tag, n=n, clustered=sum(where.values()), clusters=len(where))
        if where:
            # most of the tag's trials; a tie goes to the bigger cluster (lower rank)
            cid, k = min(
                where.items(), key=lambda kv: (-kv[1], clusters.get(kv[0], (1 << 30, ""))[0], kv[0])
            )
            rank, name = clusters.get(cid, (None, ""))
            best.cluster_id, best.rank, best.name = cid, rank, name
            best.in_best, best.best_size = k, size[cid]
        card.per_tag.append(best)
    return card


def tag_line(b: TagBest) -> str:
    """``wrong_refund: 9 of 11 in cluster 2 'called refund twice' (9 of its 12 tagged)``."""
    if b.cluster_id is None:
        return f"{b.tag}: {b.n} tagged, none in a cluster"
    where = f"cluster {b.rank}" if b.rank is not None else f"cluster {b.cluster_id}"
    line = f"{b.tag}: {b.in_best} of {b.n} in {where} {b.name!r} ({b.in_best} of its {b.best_size} tagged)"
    if b.clusters > 1:
        line += f"; spread over {b.clusters} clusters"
    return line


def summary_line(card: Scorecard) -> str:
    """One line: the scores, or why there are none, and what they were computed over."""
    over = (
        f"over {card.scored} tagged failure{'' if card.scored == 1 else 's'} "
        f"({card.tags} tag{'' if card.tags == 1 else 's'}, {card.clusters} "
        f"cluster{'' if card.clusters == 1 else 's'})"
    )
    left = f"; {card.unclustered} tagged in no cluster" if card.unclustered else ""
    if card.tagged == 0:
        return "no tagged failures: tag fails while labeling (K, or a rubric's categories)"
    if not card.enough:
        return f"no score: {card.why}{left}"
    return (
        f"ARI {card.ari:.2f} · purity {card.purity:.2f} · homogeneity {card.homogeneity:.2f} · "
        f"completeness {card.completeness:.2f} {over}{left}"
    )
