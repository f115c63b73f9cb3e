"""The failure-cluster jobs: cluster, merge, split, rename. `reviewer cluster ...` and the app's failures
screen both call these, so an edit made on one face is the same edit, checked the same way, on the other."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.store.clusters import (
    ClusterRow,
    cluster_members,
    clustering_info,
    latest_clustering_id,
    latest_clusters,
    member_signatures,
    merge_clusters,
    rename_cluster,
    split_cluster,
)
from reviewer.store.db import Store

Progress = Callable[[str, int, int | None], None]  # (stage, done, total)

#: Longest name a human may give a cluster (it is shown on one line).
MAX_NAME = 200


class ClusterJobError(ValueError):
    """A cluster job that cannot be done, said in one line (unknown id, nothing to split, ...)."""


@dataclass
class Clustering:
    """The newest stored clustering: where it came from (scope, params, size) and its clusters."""

    info: dict[str, Any] = field(default_factory=dict)
    rows: list[ClusterRow] = field(default_factory=list)


def current(db: Store) -> Clustering | None:
    """The newest stored clustering, or None before the first one."""
    cid = latest_clustering_id(db)
    if cid is None:
        return None
    return Clustering(clustering_info(db, cid), latest_clusters(db, cid))


def cluster(
    db: Store,
    run: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    include_infra: bool = False,
) -> Clustering:
    """Cluster the failures of ``run`` (or of every run) and store the result in place of that scope's
    previous clustering; ``cancelled()`` returning True stops it with InterruptedError, storing nothing.
    Infrastructure errors are not failures of the agent and are left out unless ``include_infra``."""
    from reviewer.clustering.run import recluster

    recluster(
        db, run, seed=seed, progress=progress, cancelled=cancelled, include_infra=include_infra
    )
    stored = current(db)
    assert stored is not None  # recluster always stores one
    return stored


def _clustering(db: Store) -> Clustering:
    stored = current(db)
    if stored is None:
        raise ClusterJobError("no clustering stored yet; run `reviewer cluster` first")
    return stored


def _row(stored: Clustering, cluster_id: str) -> ClusterRow:
    for r in stored.rows:
        if r.id == cluster_id:
            return r
    raise ClusterJobError(f"no cluster with id {cluster_id!r} in the newest clustering")


def merge(db: Store, cluster_ids: Sequence[str]) -> ClusterRow:
    """Merge the clusters into the biggest of them (the first given on a tie), which keeps its id and
    name; returns the merged cluster."""
    ids = list(dict.fromkeys(cluster_ids))
    if len(ids) < 2:
        raise ClusterJobError("merge needs two or more different cluster ids")
    stored = _clustering(db)
    rows = [_row(stored, cid) for cid in ids]
    into = max(rows, key=lambda r: r.size).id  # max keeps the first of equals
    merge_clusters(db, into, [r.id for r in rows if r.id != into])
    return _row(_clustering(db), into)


def split(db: Store, cluster_id: str, into: int | None = None, seed: int = 0) -> list[ClusterRow]:
    """Split a cluster by its members' signatures, else by their text; with ``into``, into at most that
    many parts (the smallest parts stay together as one). The biggest part keeps the id."""
    from reviewer.clustering.run import failure_docs, split_groups

    if into is not None and into < 2:
        raise ClusterJobError(
            f"cannot split into {into} part{'' if into == 1 else 's'}; use 2 or more"
        )
    row = _row(_clustering(db), cluster_id)
    if row.size < 2:
        raise ClusterJobError(f"cluster {cluster_id} has one trial; it cannot be split")
    groups = split_groups(failure_docs(db, ids=cluster_members(db, cluster_id)), seed=seed)
    if len(groups) < 2:
        raise ClusterJobError(f"cluster {cluster_id}: its trials read alike; nothing to split")
    if into is not None and len(groups) > into:
        rest = [t for g in groups[into - 1 :] for t in g]
        groups = sorted([*groups[: into - 1], rest], key=lambda g: (-len(g), g[0]))
    names = [_part_name(db, g) for g in groups]
    ids = split_cluster(db, cluster_id, groups, names)
    after = _clustering(db)
    return [_row(after, cid) for cid in ids]


def _part_name(db: Store, trial_ids: list[str]) -> str:
    """A name for one part of a split: its most common signature and its size."""
    common = Counter(member_signatures(db, trial_ids)).most_common(1)
    return (common[0][0] if common and common[0][0] else "split part") + f" ({len(trial_ids)})"


def rename(db: Store, cluster_id: str, name: str | None) -> ClusterRow:
    """Give a cluster a human name, kept across re-clustering; None restores the generated name."""
    if name is not None:
        name = " ".join(name.split())
        if not name:
            raise ClusterJobError("a cluster name cannot be empty")
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ClusterJobError(
                "a cluster name must be text: it holds bytes that are not UTF-8"
            ) from None
        if len(name) > MAX_NAME:
            raise ClusterJobError(
                f"a cluster name is at most {MAX_NAME} characters, not {len(name)}"
            )
    _row(_clustering(db), cluster_id)
    rename_cluster(db, cluster_id, name or "")
    return _row(_clustering(db), cluster_id)
