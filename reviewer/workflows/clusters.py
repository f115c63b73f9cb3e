"""The failure-cluster jobs: cluster, merge, split, rename. `reviewer cluster ...` and the app's failures
screen both call these, so an edit made on one face is the same edit, checked the same way, on the other."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

# re-exported for the faces (they import workflows only)
from reviewer.clustering.score import summary_line as summary_line
from reviewer.clustering.score import tag_line as tag_line
from reviewer.clustering.signature import signatures_of_lines as signatures_of_lines
from reviewer.store.clusters import ClusterRow as ClusterRow
from reviewer.store.clusters import (
    cluster_members,
    clustering_info,
    edits_count,
    latest_clustering_id,
    rename_cluster,
    replace_clusters,
    undo_last_edit,
)
from reviewer.store.clusters import count_outcomes as count_outcomes
from reviewer.store.clusters import latest_clusters as latest_clusters
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


def tasks_summary(tasks: list[str], shown: int = 3) -> str:
    """A cluster's tasks in one short line: all of a few, else "12 tasks: a, b, c and 9 more";
    numbered tasks in number order (tau-bench's 3, 4, 23, not 23, 3, 4)."""
    from reviewer.text import natural_key

    tasks = sorted(tasks, key=natural_key)
    if len(tasks) <= shown + 1:
        return ", ".join(tasks)
    return f"{len(tasks)} tasks: {', '.join(tasks[:shown])} and {len(tasks) - shown} more"


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
    embedder: str | None = None,
) -> Clustering:
    """Cluster the failures of ``run`` (or of every run) and store the result in place of that scope's
    previous clustering; ``cancelled()`` returning True stops it with InterruptedError, storing nothing.
    Infrastructure errors are not failures of the agent and are left out unless ``include_infra``.
    ``embedder``: ``tfidf`` (default) or ``semantic`` (the optional extra); an embedder that cannot
    run is a ClusterJobError, and nothing stored changes."""
    from reviewer.clustering.embed import EmbedderUnavailable
    from reviewer.clustering.run import recluster

    try:
        recluster(
            db,
            run,
            seed=seed,
            progress=progress,
            cancelled=cancelled,
            include_infra=include_infra,
            embedder=embedder,
        )
    except (EmbedderUnavailable, ValueError) as e:
        if isinstance(e, ValueError) and "embedder" not in str(e):
            raise
        raise ClusterJobError(str(e)) from None
    stored = current(db)
    assert stored is not None  # recluster always stores one
    return stored


def embedder_of(stored: Clustering | None) -> str | None:
    """The embedder a stored clustering used, by the name `cluster(embedder=...)` takes."""
    params = (stored.info.get("params") or {}) if stored is not None else {}
    return "semantic" if params.get("embedder") == "wordllama" else None


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


def _docs(db: Store, trial_ids: list[str]) -> list[Any]:
    from reviewer.clustering.run import failure_docs

    stored = _clustering(db)
    include_infra = bool(stored.info.get("params", {}).get("include_infra"))
    return failure_docs(db, ids=trial_ids, include_infra=include_infra)


def merge(db: Store, cluster_ids: Sequence[str], seed: int = 0) -> ClusterRow:
    """Merge the clusters into the biggest of them (the first given on a tie), which keeps its id and
    name; its runs, tasks, signature and representative are those of all the members. Undoable."""
    import dataclasses

    from reviewer.clustering.edit import describe_groups

    ids = list(dict.fromkeys(cluster_ids))
    if len(ids) < 2:
        raise ClusterJobError("merge needs two or more different cluster ids")
    stored = _clustering(db)
    rows = [_row(stored, cid) for cid in ids]
    into = max(rows, key=lambda r: r.size)  # max keeps the first of equals
    read = {r.id: cluster_members(db, r.id, r.clustering_id) for r in rows}
    members = [t for r in rows for t in read[r.id]]
    (merged,) = _named(db, describe_groups(_docs(db, members), [members], into.total, seed=seed))
    taken = {r.name.lower() for r in stored.rows if r.id not in ids}
    merged = dataclasses.replace(merged, id=into.id, name=_free(merged.name, taken))
    with _conflicts():
        replace_clusters(
            db,
            "merge",
            [r.id for r in rows],
            [merged],
            read_from=into.clustering_id,
            read_members=read,
        )
    return _row(_clustering(db), into.id)


@contextmanager
def _conflicts() -> Iterator[None]:
    """An edit made from clusters another process changed meanwhile: one ClusterJobError line."""
    from reviewer.store.clusters import EditConflict

    try:
        yield
    except EditConflict as e:
        raise ClusterJobError(str(e)) from None


def most_pieces(size: int) -> int:
    """The most pieces a cluster of ``size`` trials may be split into by hand: each keeps 2 trials
    or more."""
    return size // 2


def split(db: Store, cluster_id: str, into: int | None = None, seed: int = 0) -> list[ClusterRow]:
    """Split a cluster into ``into`` pieces, or (None) as many as its members' evidence separates
    best (by silhouette; never all singletons). Each piece is described afresh: runs, tasks,
    signature, name. The biggest piece keeps the id (and a name given by hand). Undoable."""
    import dataclasses
    import hashlib

    from reviewer.clustering.edit import describe_groups, split_groups

    if into is not None and into < 2:
        raise ClusterJobError(
            f"cannot split into {into} part{'' if into == 1 else 's'}; use 2 or more"
        )
    stored = _clustering(db)
    row = _row(stored, cluster_id)
    if row.size < 2:
        raise ClusterJobError(f"cluster {cluster_id} has one trial; it cannot be split")
    if into is not None and into > most_pieces(row.size):
        raise ClusterJobError(
            f"cannot split cluster {cluster_id} of {row.size} trials into {into} pieces: at most "
            f"{most_pieces(row.size)} keep every piece at 2 trials or more"
        )
    read = cluster_members(db, cluster_id, row.clustering_id)
    docs = _docs(db, read)
    groups = split_groups(docs, into=into, seed=seed)
    if len(groups) < 2:
        raise ClusterJobError(f"cluster {cluster_id}: its trials read alike; nothing to split")
    pieces = _named(db, describe_groups(docs, groups, row.total, seed=seed))
    taken = {r.name.lower() for r in stored.rows if r.id != cluster_id}
    out = []
    for i, (piece, group) in enumerate(zip(pieces, groups, strict=True)):
        new_id = (
            cluster_id
            if i == 0
            else "split-" + hashlib.sha256("\0".join(sorted(group)).encode()).hexdigest()[:12]
        )
        name = _free(piece.name, taken)
        taken.add(name.lower())
        out.append(dataclasses.replace(piece, id=new_id, name=name))
    with _conflicts():
        ids = replace_clusters(
            db,
            "split",
            [cluster_id],
            out,
            read_from=row.clustering_id,
            read_members={cluster_id: read},
        )
    after = _clustering(db)
    return [_row(after, cid) for cid in ids]


def _named(db: Store, clusters: list[Any]) -> list[Any]:
    from reviewer.clustering.run import name_rule_clusters

    return name_rule_clusters(db, clusters)


def _free(name: str, taken: set[str]) -> str:
    """``name``, numbered when another cluster of the clustering has it."""
    out, n = name, 2
    while out.lower() in taken:
        out = f"{name} (#{n})"
        n += 1
    return out


def undo(db: Store) -> tuple[str, list[ClusterRow]]:
    """Undo the newest merge, split or rename of the newest clustering: (what it was, the clusters
    as they are again). A new clustering starts with nothing to undo."""
    _clustering(db)
    done = undo_last_edit(db)
    if done is None:
        raise ClusterJobError(
            "nothing to undo: no merge, split or rename since the last clustering"
        )
    kind, ids = done
    after = _clustering(db)
    return kind, [r for r in after.rows if r.id in ids]


def undoable(db: Store) -> int:
    """How many edits of the newest clustering `undo` can still take back."""
    return edits_count(db)


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
    row = _row(_clustering(db), cluster_id)
    with _conflicts():
        rename_cluster(db, cluster_id, name or "", read_from=row.clustering_id)
    return _row(_clustering(db), cluster_id)
