"""The LLM judge's cluster names (migration m019): which name the judge last gave each cluster, and
the one undoable edit that puts the judge's names on the newest clustering.

The names go where human names go (``cluster_names``, by cluster id), so every reader shows them and
the generated (offline) name stays stored beside them; ``cluster_judge_names`` tells the judge's from
a human's, so a name a human gave is never replaced. The edit's "before" is the offline names, so
one ``cluster undo`` goes back to them.
"""

from __future__ import annotations

from collections.abc import Mapping

from reviewer.store.clusters import EditConflict, _check_read, _log_edit, _now, _set_name
from reviewer.store.db import Store

#: The kind of the edit in the cluster edit history (``cluster undo`` says it).
EDIT_KIND = "judge names"


def judge_names(db: Store) -> dict[str, str]:
    """cluster id -> the name the judge last gave it."""
    return {
        str(c): str(n)
        for c, n in db.execute("SELECT cluster_id, name FROM cluster_judge_names").fetchall()
    }


def human_named(db: Store, cluster_ids: list[str]) -> set[str]:
    """The clusters of ``cluster_ids`` that show a name a human gave (not the judge's)."""
    if not cluster_ids:
        return set()
    marks = ",".join("?" * len(cluster_ids))
    rows = db.execute(
        "SELECT n.cluster_id FROM cluster_names n LEFT JOIN cluster_judge_names j "
        "ON j.cluster_id = n.cluster_id "
        f"WHERE n.cluster_id IN ({marks}) AND (j.name IS NULL OR j.name != n.name)",
        list(cluster_ids),
    ).fetchall()
    return {str(r[0]) for r in rows}


def apply_judge_names(
    db: Store, names: Mapping[str, str], model: str, *, read_from: int | None
) -> int:
    """Show ``names`` (cluster id -> the judge's name) on the newest clustering, as one undoable
    edit whose undo restores the offline names; a cluster a human named meanwhile keeps its name.
    EditConflict (nothing written) when the failures were clustered again since ``read_from``.
    Returns how many clusters got a judge name."""
    if not names:
        return 0
    with db.transaction():
        _check_read(db, read_from, None)
        if read_from is None:
            return 0
        held = {
            str(r[0])
            for r in db.execute(
                "SELECT id FROM clusters WHERE clustering_id = ?", [read_from]
            ).fetchall()
        }
        ids = [c for c in names if c in held]
        ids = [c for c in ids if c not in human_named(db, ids)]
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        shown = dict(
            db.execute(
                f"SELECT cluster_id, name FROM cluster_names WHERE cluster_id IN ({marks})", ids
            ).fetchall()
        )
        logged = db.execute(
            "SELECT 1 FROM cluster_edits WHERE clustering_id = ? AND kind = ?",
            [read_from, EDIT_KIND],
        ).fetchone()
        # the same names again (a cached re-run) are no new edit: one undo still goes back
        if logged is None or any(shown.get(c) != names[c] for c in ids):
            before = {"clusters": [], "members": [], "names": {}, "ids": ids, "rename_only": True}
            _log_edit(db, read_from, EDIT_KIND, before)
        at = _now()
        for cid in ids:
            _set_name(db, cid, names[cid])
            db.execute(
                "INSERT INTO cluster_judge_names (cluster_id, name, model, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(cluster_id) DO UPDATE SET name = excluded.name, "
                "model = excluded.model, at = excluded.at",
                [cid, names[cid], model, at],
            )
    return len(ids)


__all__ = ["EDIT_KIND", "EditConflict", "apply_judge_names", "human_named", "judge_names"]
