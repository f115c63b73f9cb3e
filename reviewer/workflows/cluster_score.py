"""The clustering scorecard: how well the newest stored clustering matches the failure tags humans
gave while labeling. `reviewer cluster --score` and the app's failures screen both call it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.clustering.score import Scorecard
from reviewer.store.db import Store


@dataclass
class ClusterScore:
    """The scorecard of the newest clustering, with its scope (a run, or ``*`` for every run)."""

    scope: str
    card: Scorecard

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, **self.card.to_dict()}


def score_clusters(db: Store) -> ClusterScore:
    """Score the newest stored clustering against the tags of the failures in its scope;
    ClusterJobError before the first clustering."""
    from reviewer.clustering.score import score_tags
    from reviewer.store.clusters import latest_clustering_id
    from reviewer.store.tags import clustering_members, failure_tags
    from reviewer.workflows.clusters import ClusterJobError, current

    stored = current(db)
    clustering_id = latest_clustering_id(db)
    if stored is None or clustering_id is None:
        raise ClusterJobError("no clustering stored yet; run `reviewer cluster` first")
    scope = str(stored.info.get("scope") or "*")
    tags = failure_tags(db, None if scope == "*" else scope)
    names = {r.id: (r.rank, r.name) for r in stored.rows}
    return ClusterScore(scope, score_tags(tags, clustering_members(db, clustering_id), names))
