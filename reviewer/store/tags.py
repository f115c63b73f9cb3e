"""The failure tags humans gave, and the cluster each tagged trial sits in: what
`reviewer cluster --score` compares."""

from __future__ import annotations

from reviewer.store.db import Store


def failure_tags(db: Store, run: str | None = None) -> dict[str, str]:
    """trial id -> its failure tag (of ``run``, else of every run): of the standing fail labels
    with a tag, the latest (by time, then labeler name, as ``trial_labels`` orders labels)."""
    where, args = ("AND t.run = ?", [run]) if run is not None else ("", [])
    rows = db.execute(
        "SELECT s.trial_id, s.tag FROM standing_labels s JOIN trials t ON t.id = s.trial_id "
        f"WHERE s.verdict = 'fail' AND s.tag IS NOT NULL {where} "
        "ORDER BY s.trial_id, s.at, s.labeler",
        args,
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}  # the last row of a trial is its latest


def clustering_members(db: Store, clustering_id: int) -> dict[str, str]:
    """trial id -> cluster id, for every member of one clustering."""
    rows = db.execute(
        "SELECT trial_id, cluster_id FROM cluster_members WHERE clustering_id = ?",
        [clustering_id],
    ).fetchall()
    return {str(r[0]): str(r[1]) for r in rows}
