"""Failure clusterings in the database: the latest result per scope, human renames, merges and splits.

A new clustering replaces the previous one of the same scope in one transaction. Cluster ids are kept
stable across re-runs (a new cluster that matches an old one by members takes its id), and human names
are stored by id, so a rename survives re-clustering.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from reviewer.store.db import Store
from reviewer.store.trials import failure_condition


class StoredCluster(Protocol):
    """The fields of one cluster the store keeps (a clustering's FailureCluster has them)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def signature(self) -> str: ...
    @property
    def terms(self) -> Sequence[str]: ...
    @property
    def runs(self) -> Sequence[str]: ...
    @property
    def tasks(self) -> Sequence[str]: ...
    @property
    def representative(self) -> str | None: ...
    @property
    def trial_ids(self) -> Sequence[str]: ...


class StoredClustering(Protocol):
    """What ``save_clustering`` stores of a clustering result: its clusters, size and parameters."""

    @property
    def clusters(self) -> Sequence[StoredCluster]: ...
    @property
    def total(self) -> int: ...
    @property
    def params(self) -> dict[str, Any]: ...


@dataclass
class ClusterRow:
    id: str
    clustering_id: int
    rank: int
    name: str  # the human name when one was given, else the generated one
    generated_name: str
    size: int
    total: int
    signature: str
    terms: list[str]
    runs: list[str]
    tasks: list[str]
    representative: str | None
    renamed: bool

    @property
    def share(self) -> str:
        return f"{self.size} of {self.total} failure{'' if self.total == 1 else 's'}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def previous_members(db: Store, scope: str) -> dict[str, list[str]]:
    """cluster id -> member trial ids of the latest clustering of ``scope`` (for stable ids)."""
    row = db.execute("SELECT MAX(id) FROM clusterings WHERE scope = ?", [scope]).fetchone()
    if row is None or row[0] is None:
        return {}
    out: dict[str, list[str]] = {}
    for cid, tid in db.execute(
        "SELECT cluster_id, trial_id FROM cluster_members WHERE clustering_id = ?", [row[0]]
    ).fetchall():
        out.setdefault(cid, []).append(tid)
    return out


def save_clustering(
    db: Store,
    scope: str,
    result: StoredClustering,
    id_map: dict[str, str] | None = None,
    signatures: dict[str, str] | None = None,
) -> int:
    """Replace ``scope``'s clustering with ``result``; ``id_map`` renames new ids to matching old ones."""
    id_map = id_map or {}
    signatures = signatures or {}
    with db.transaction():
        old = [
            r[0]
            for r in db.execute("SELECT id FROM clusterings WHERE scope = ?", [scope]).fetchall()
        ]
        for cid in old:
            db.execute("DELETE FROM cluster_edits WHERE clustering_id = ?", [cid])
            db.execute("DELETE FROM cluster_members WHERE clustering_id = ?", [cid])
            db.execute("DELETE FROM clusters WHERE clustering_id = ?", [cid])
            db.execute("DELETE FROM clusterings WHERE id = ?", [cid])
        cur = db.execute(
            "INSERT INTO clusterings (scope, params, created_at, n_failures) VALUES (?, ?, ?, ?) "
            "RETURNING id",
            [scope, json.dumps(result.params, default=str), _now(), result.total],
        )
        clustering_id = int(cur.fetchone()[0])
        _write_clusters(db, clustering_id, result.clusters, id_map, signatures)
    return clustering_id


def _write_clusters(
    db: Store,
    clustering_id: int,
    clusters: Sequence[StoredCluster],
    id_map: dict[str, str],
    signatures: dict[str, str],
    first_rank: int = 1,
) -> list[str]:
    """Insert ``clusters`` (ids through ``id_map``); an id met twice gets a suffix rather than
    breaking the clustering's key. Returns the ids written."""
    written: list[str] = []
    for rank, c in enumerate(clusters, first_rank):
        cid = id_map.get(c.id, c.id)
        if cid in written:
            n = 2
            while f"{cid}-{n}" in written:
                n += 1
            cid = f"{cid}-{n}"
        written.append(cid)
        db.execute(
            "INSERT INTO clusters (id, clustering_id, rank, name, size, signature, terms, runs, tasks, representative) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                cid,
                clustering_id,
                rank,
                c.name,
                c.size,
                c.signature,
                json.dumps(list(c.terms)),
                json.dumps(list(c.runs)),
                json.dumps(list(c.tasks)),
                c.representative,
            ],
        )
        db.conn.executemany(
            "INSERT INTO cluster_members (clustering_id, cluster_id, trial_id, signature) VALUES (?, ?, ?, ?)",
            [(clustering_id, cid, t, signatures.get(t)) for t in c.trial_ids],
        )
    return written


def runs_calling_tools(db: Store) -> set[str]:
    """The runs of which some trial called a tool: one probe of the per-run index each."""
    runs = [str(r[0]) for r in db.execute("SELECT name FROM runs").fetchall()]
    probe = "SELECT 1 FROM trials WHERE run = ? AND tool_calls > 0 LIMIT 1"
    return {r for r in runs if db.execute(probe, [r]).fetchone() is not None}


def count_failures(db: Store, run: str | None = None, include_infra: bool = False) -> int:
    """How many failures there are (of ``run``, or of every run), as clustering reads them
    (``store.trials.failure_condition``)."""
    where = failure_condition(include_infra) + (" AND t.run = ?" if run else "")
    row = db.execute(
        f"SELECT COUNT(*) FROM trials t WHERE {where}", [run] if run else []
    ).fetchone()
    return int(row[0])


def count_outcomes(db: Store, run: str | None = None) -> dict[str, int]:
    """Trials by outcome (pass, fail, infra, unscored), of ``run`` or of every run."""
    where = "WHERE run = ?" if run else ""
    return {
        str(o): int(n)
        for o, n in db.execute(
            f"SELECT outcome, COUNT(*) FROM trials {where} GROUP BY outcome", [run] if run else []
        ).fetchall()
    }


def failure_violations(db: Store, include_infra: bool = False) -> list[tuple[str, str, str]]:
    """(trial id, rule id, severity) of every rule violation of a failure, in message order."""
    return [
        (str(r[0]), str(r[1]), str(r[2]))
        for r in db.execute(
            "SELECT v.trial_id, v.rule_id, v.severity FROM violations v JOIN trials t ON t.id = v.trial_id "
            f"WHERE {failure_condition(include_infra)} "
            "ORDER BY v.trial_id, COALESCE(v.message_index, 1e9)"
        ).fetchall()
    ]


def latest_clustering_id(db: Store) -> int | None:
    row = db.execute("SELECT MAX(id) FROM clusterings").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def clustering_info(db: Store, clustering_id: int) -> dict[str, Any]:
    row = db.execute(
        "SELECT scope, params, created_at, n_failures FROM clusterings WHERE id = ?",
        [clustering_id],
    ).fetchone()
    if row is None:
        return {}
    return {
        "scope": row[0],
        "params": json.loads(row[1]),
        "created_at": row[2],
        "n_failures": row[3],
    }


def latest_clusters(db: Store, clustering_id: int | None = None) -> list[ClusterRow]:
    """The clusters of the newest clustering (or ``clustering_id``), ranked by size."""
    cid = clustering_id if clustering_id is not None else latest_clustering_id(db)
    if cid is None:
        return []
    total = db.execute("SELECT n_failures FROM clusterings WHERE id = ?", [cid]).fetchone()[0]
    rows = db.execute(
        "SELECT c.id, c.rank, c.name, n.name, c.size, c.signature, c.terms, c.runs, c.tasks, c.representative "
        "FROM clusters c LEFT JOIN cluster_names n ON n.cluster_id = c.id "
        "WHERE c.clustering_id = ? ORDER BY c.size DESC, c.rank",
        [cid],
    ).fetchall()
    return [
        ClusterRow(
            id=r[0],
            clustering_id=cid,
            rank=i,
            name=r[3] or r[2],
            generated_name=r[2],
            size=r[4],
            total=total,
            signature=r[5] or "",
            terms=json.loads(r[6] or "[]"),
            runs=json.loads(r[7] or "[]"),
            tasks=json.loads(r[8] or "[]"),
            representative=r[9],
            renamed=r[3] is not None,
        )
        for i, r in enumerate(rows, 1)
    ]


def cluster_members(db: Store, cluster_id: str, clustering_id: int | None = None) -> list[str]:
    cid = clustering_id if clustering_id is not None else latest_clustering_id(db)
    return [
        r[0]
        for r in db.execute(
            "SELECT m.trial_id FROM cluster_members m JOIN trials t ON t.id = m.trial_id "
            "WHERE m.clustering_id = ? AND m.cluster_id = ? ORDER BY t.seq",
            [cid, cluster_id],
        ).fetchall()
    ]


def cluster_of(db: Store, trial_id: str) -> str | None:
    cid = latest_clustering_id(db)
    row = db.execute(
        "SELECT cluster_id FROM cluster_members WHERE clustering_id = ? AND trial_id = ?",
        [cid, trial_id],
    ).fetchone()
    return None if row is None else str(row[0])


def rename_cluster(db: Store, cluster_id: str, name: str, *, read_from: int | None = None) -> None:
    """A human name for a cluster, kept by id across re-clustering; an empty name restores the
    generated one. Undoable like a merge or split. With ``read_from``, EditConflict unless the
    newest clustering is still that one and holds the cluster."""
    name = " ".join(name.split())
    with db.transaction():
        cid = latest_clustering_id(db)
        if read_from is not None:
            _check_read(db, read_from, None)
            exists = db.execute(
                "SELECT 1 FROM clusters WHERE clustering_id = ? AND id = ?", [cid, cluster_id]
            ).fetchone()
            if exists is None:
                raise EditConflict(
                    f"cluster {cluster_id} is gone (merged or split in another window); nothing "
                    "changed: look again"
                )
        if cid is not None:
            old = db.execute(
                "SELECT name FROM cluster_names WHERE cluster_id = ?", [cluster_id]
            ).fetchone()
            before = {
                "clusters": [],
                "members": [],
                "names": {cluster_id: old[0]} if old else {},
                "ids": [cluster_id],
                "rename_only": True,
            }
            _log_edit(db, cid, "rename", before)
        _set_name(db, cluster_id, name)


_COLUMNS = "id, rank, name, size, signature, terms, runs, tasks, representative"


def _snapshot(db: Store, clustering_id: int, cluster_ids: Sequence[str]) -> dict[str, Any]:
    """The rows, members and human names of ``cluster_ids``, as an edit's ``before``."""
    marks = ",".join("?" * len(cluster_ids))
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM clusters WHERE clustering_id = ? AND id IN ({marks})",
        [clustering_id, *cluster_ids],
    ).fetchall()
    members = db.execute(
        "SELECT cluster_id, trial_id, signature FROM cluster_members "
        f"WHERE clustering_id = ? AND cluster_id IN ({marks})",
        [clustering_id, *cluster_ids],
    ).fetchall()
    names = db.execute(
        f"SELECT cluster_id, name FROM cluster_names WHERE cluster_id IN ({marks})",
        list(cluster_ids),
    ).fetchall()
    return {
        "clusters": [list(r) for r in rows],
        "members": [list(m) for m in members],
        "names": {str(c): str(n) for c, n in names},
        "ids": list(cluster_ids),
    }


def _log_edit(db: Store, clustering_id: int, kind: str, before: dict[str, Any]) -> None:
    db.execute(
        "INSERT INTO cluster_edits (clustering_id, kind, at, before) VALUES (?, ?, ?, ?)",
        [clustering_id, kind, _now(), json.dumps(before)],
    )


class EditConflict(Exception):
    """The clusters an edit was made from changed before it was written (another process or window
    edited or re-clustered them): nothing was written; the message is one line."""


def _check_read(
    db: Store, clustering_id: int | None, members: Mapping[str, Sequence[str]] | None
) -> None:
    """Raise EditConflict unless the newest clustering is still ``clustering_id`` and each cluster
    of ``members`` still holds exactly those trials (inside the edit's transaction)."""
    now = latest_clustering_id(db)
    if clustering_id is not None and now != clustering_id:
        raise EditConflict(
            "the failures were clustered again since these clusters were read; nothing changed: "
            "look again and redo the edit"
        )
    for cluster_id, expected in (members or {}).items():
        held = db.execute(
            "SELECT trial_id FROM cluster_members WHERE clustering_id = ? AND cluster_id = ?",
            [now, cluster_id],
        ).fetchall()
        if sorted(str(r[0]) for r in held) != sorted(expected):
            raise EditConflict(
                f"cluster {cluster_id} changed since it was read (another edit, perhaps in another "
                "window); nothing changed: look again and redo the edit"
            )


def replace_clusters(
    db: Store,
    kind: str,
    remove: Sequence[str],
    add: Sequence[StoredCluster],
    names: dict[str, str] | None = None,
    *,
    read_from: int | None = None,
    read_members: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """One hand edit of the newest clustering, undoable: the clusters ``remove`` make way for
    ``add`` (their members between them), ``names`` sets human names by id; returns the new ids.

    The edit is made in one write transaction (edits are serialized) and only when the state it was
    computed from still holds: the newest clustering is ``read_from`` and each cluster of
    ``read_members`` still holds those trials; else EditConflict and nothing is written."""
    with db.transaction():
        _check_read(db, read_from, read_members)
        cid = latest_clustering_id(db)
        if cid is None:
            return []
        new_ids = [c.id for c in add]
        touched = list(dict.fromkeys([*remove, *new_ids, *(names or {})]))
        before = _snapshot(db, cid, touched)
        _log_edit(db, cid, kind, before)
        signatures = {str(t): str(sig or "") for _, t, sig in before["members"]}
        rank = min((int(r[1]) for r in before["clusters"]), default=1)
        marks = ",".join("?" * len(touched))
        db.execute(
            f"DELETE FROM cluster_members WHERE clustering_id = ? AND cluster_id IN ({marks})",
            [cid, *touched],
        )
        db.execute(
            f"DELETE FROM clusters WHERE clustering_id = ? AND id IN ({marks})", [cid, *touched]
        )
        written = _write_clusters(db, cid, add, {}, signatures, first_rank=rank) if add else []
        for cluster_id, name in (names or {}).items():
            _set_name(db, cluster_id, name)
    return written


def undo_last_edit(db: Store) -> tuple[str, list[str]] | None:
    """Undo the newest hand edit of the newest clustering: (its kind, the ids it restored), or None
    when there is none (a new clustering starts with none)."""
    cid = latest_clustering_id(db)
    if cid is None:
        return None
    with db.transaction():
        row = db.execute(
            "SELECT id, kind, before FROM cluster_edits WHERE clustering_id = ? "
            "ORDER BY id DESC LIMIT 1",
            [cid],
        ).fetchone()
        if row is None:
            return None
        before = json.loads(row[2])
        touched: list[str] = list(before["ids"])
        if before.get("rename_only"):
            for cluster_id in touched:
                _set_name(db, cluster_id, before["names"].get(cluster_id, ""))
            db.execute("DELETE FROM cluster_edits WHERE id = ?", [row[0]])
            return str(row[1]), touched
        # every cluster the edit made holds members of the clusters it replaced
        marks = ",".join("?" * len(touched))
        members = [m[1] for m in before["members"]]
        made = (
            {
                r[0]
                for r in db.execute(
                    "SELECT DISTINCT cluster_id FROM cluster_members WHERE clustering_id = ? "
                    f"AND trial_id IN ({','.join('?' * len(members))})",
                    [cid, *members],
                ).fetchall()
            }
            if members
            else set()
        )
        gone = list(dict.fromkeys([*touched, *made]))
        marks = ",".join("?" * len(gone))
        db.execute(
            f"DELETE FROM cluster_members WHERE clustering_id = ? AND cluster_id IN ({marks})",
            [cid, *gone],
        )
        db.execute(
            f"DELETE FROM clusters WHERE clustering_id = ? AND id IN ({marks})", [cid, *gone]
        )
        db.conn.executemany(
            f"INSERT INTO clusters (clustering_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[cid, *r] for r in before["clusters"]],
        )
        db.conn.executemany(
            "INSERT INTO cluster_members (clustering_id, cluster_id, trial_id, signature) "
            "VALUES (?, ?, ?, ?)",
            [[cid, *m] for m in before["members"]],
        )
        for cluster_id in touched:
            _set_name(db, cluster_id, before["names"].get(cluster_id, ""))
        db.execute("DELETE FROM cluster_edits WHERE id = ?", [row[0]])
    return str(row[1]), [str(r[0]) for r in before["clusters"]]


def _set_name(db: Store, cluster_id: str, name: str) -> None:
    if name:
        db.execute(
            "INSERT INTO cluster_names (cluster_id, name, at) VALUES (?, ?, ?) "
            "ON CONFLICT(cluster_id) DO UPDATE SET name = excluded.name, at = excluded.at",
            [cluster_id, name, _now()],
        )
    else:
        db.execute("DELETE FROM cluster_names WHERE cluster_id = ?", [cluster_id])


def edits_count(db: Store) -> int:
    """How many hand edits of the newest clustering can be undone."""
    cid = latest_clustering_id(db)
    if cid is None:
        return 0
    row = db.execute("SELECT COUNT(*) FROM cluster_edits WHERE clustering_id = ?", [cid]).fetchone()
    return int(row[0])
