"""What the trials list filters on, and that filter as SQL over ``trials t``.

Labels are resolved here too: the label a trial shows is its latest *standing* label (a retraction
undoes the labeler's latest label before it), worked out in Python because labels are few.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from reviewer.store.db import Store

Outcome = Literal["pass", "fail"]
VerdictFilter = Literal["pass", "fail", "error", "none"]
LabelFilter = Literal["pass", "fail", "skip", "none"]


@dataclass(frozen=True)
class TrialFilter:
    """What the list shows; every field None means all trials.

    ``verdict`` is the latest verdict of any judge (or of ``judge``), ``label`` the latest standing label
    of any labeler (or of ``labeler``): the same values the list shows. "none" means there is none.
    ``rule_id`` "any" keeps trials with at least one violation. ``search`` is user text for FTS5.
    """

    run: str | None = None
    task_id: str | None = None
    outcome: Outcome | None = None
    verdict: VerdictFilter | None = None
    judge: str | None = None
    label: LabelFilter | None = None
    labeler: str | None = None
    cluster_id: str | None = None
    rule_id: str | None = None
    search: str | None = None

    @property
    def is_empty(self) -> bool:
        return all(getattr(self, f.name) in (None, "") for f in fields(self))


LATEST_VERDICT = (
    "(SELECT v.verdict FROM verdicts v WHERE v.trial_id = t.id{judge} "
    "ORDER BY v.created_at DESC, v.id DESC LIMIT 1)"
)
# the verdict rows that no later verdict (of the same judge scope) overrides
_VERDICT_SET = (
    "t.id IN (SELECT v.trial_id FROM verdicts v WHERE v.verdict = ?{judge} AND NOT EXISTS ("
    "SELECT 1 FROM verdicts w WHERE w.trial_id = v.trial_id{wjudge} "
    "AND (w.created_at, w.id) > (v.created_at, v.id)))"
)
_LATEST_CLUSTERING = "(SELECT MAX(id) FROM clusterings)"


def _standing(rows: Sequence[Sequence[Any]]) -> dict[str, str | None]:
    """trial -> verdict of its latest standing label, from (trial_id, labeler, verdict, at, retracted, id)
    rows ordered by (trial_id, labeler, at, retracted, id). Per (trial, labeler) a retraction cancels the
    latest label not yet cancelled before it (undo); the latest standing label of any labeler wins."""
    out: dict[str, str | None] = {}
    latest: dict[str, tuple[str, int]] = {}
    i, n = 0, len(rows)
    while i < n:
        trial_id, labeler = rows[i][0], rows[i][1]
        stack: list[tuple[str, int, str | None]] = []
        while i < n and rows[i][0] == trial_id and rows[i][1] == labeler:
            _, _, verdict, at, retracted, row_id = rows[i]
            if not retracted:
                stack.append((at, row_id, verdict))
            elif stack:
                stack.pop()
            i += 1
        if stack:
            at, row_id, verdict = stack[-1]
            if trial_id not in latest or (at, row_id) > latest[trial_id]:
                latest[trial_id] = (at, row_id)
                out[trial_id] = verdict
    return out


_LABEL_ORDER = "ORDER BY trial_id, labeler, at, retracted, id"


def standing_labels(
    db: Store, trial_ids: Sequence[str], labeler: str | None = None
) -> dict[str, str | None]:
    """The label each of ``trial_ids`` shows (latest standing one, of ``labeler`` when given)."""
    if not trial_ids:
        return {}
    sql = f"SELECT trial_id, labeler, verdict, at, retracted, id FROM labels WHERE trial_id IN ({','.join('?' * len(trial_ids))})"
    params: list[Any] = list(trial_ids)
    if labeler is not None:
        sql += " AND labeler = ?"
        params.append(labeler)
    return _standing(db.execute(f"{sql} {_LABEL_ORDER}", params).fetchall())


_labels_lock = threading.Lock()
_labels_memo: dict[tuple[Any, ...], dict[str, str | None]] = {}


def _all_standing_labels(db: Store, labeler: str | None) -> dict[str, str | None]:
    """Every trial's standing label, kept until the data changes (labels are few next to trials)."""
    version = data_version(db)
    key = (version, labeler)
    with _labels_lock:
        if version is not None and key in _labels_memo:
            return _labels_memo[key]
    sql = "SELECT trial_id, labeler, verdict, at, retracted, id FROM labels"
    params = [] if labeler is None else [labeler]
    if labeler is not None:
        sql += " WHERE labeler = ?"
    labels = _standing(db.execute(f"{sql} {_LABEL_ORDER}", params).fetchall())
    if version is not None:
        with _labels_lock:
            _labels_memo.clear()
            _labels_memo[key] = labels
    return labels


class Sql:
    """A WHERE clause under construction."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self.params: list[Any] = []

    def add(self, term: str, *params: Any) -> None:
        self.terms.append(term)
        self.params.extend(params)

    def where(self) -> str:
        return " AND ".join(self.terms) if self.terms else "1"


def conditions(db: Store, f: TrialFilter, *, correlated: bool) -> Sql:
    """The filter on ``trials t`` without search. ``correlated`` checks verdicts and violations per row
    (right when scanning in seq order and stopping at a page); otherwise as sets (right for counts and
    for lists so short that sorting them is cheaper than scanning for them)."""
    q = Sql()
    if f.run is not None:
        q.add("t.run = ?", f.run)
    if f.task_id is not None:
        q.add("t.task_id = ?", f.task_id)
    if f.outcome is not None:
        q.add("t.success = ?", 1 if f.outcome == "pass" else 0)
    if f.verdict is not None:
        jp = [] if f.judge is None else [f.judge]
        if f.verdict == "none":
            judge = "" if f.judge is None else " AND v.judge = ?"
            q.add(f"NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.trial_id = t.id{judge})", *jp)
        elif correlated:
            judge = "" if f.judge is None else " AND v.judge = ?"
            q.add(f"{LATEST_VERDICT.format(judge=judge)} = ?", *jp, f.verdict)
        else:
            judge = "" if f.judge is None else " AND v.judge = ?"
            wjudge = "" if f.judge is None else " AND w.judge = v.judge"
            q.add(_VERDICT_SET.format(judge=judge, wjudge=wjudge), f.verdict, *jp)
    if f.label is not None:
        labels = _all_standing_labels(db, f.labeler)
        if f.label == "none":
            ids = [tid for tid, verdict in labels.items() if verdict is not None]
            q.add("t.id NOT IN (SELECT value FROM json_each(?))", json.dumps(ids))
        else:
            ids = [tid for tid, verdict in labels.items() if verdict == f.label]
            q.add("t.id IN (SELECT value FROM json_each(?))", json.dumps(ids))
    if f.cluster_id is not None:
        q.add(
            "t.id IN (SELECT trial_id FROM cluster_members "
            f"WHERE clustering_id = {_LATEST_CLUSTERING} AND cluster_id = ?)",
            f.cluster_id,
        )
    if f.rule_id is not None:
        rule = "" if f.rule_id == "any" else " AND x.rule_id = ?"
        rp = [] if f.rule_id == "any" else [f.rule_id]
        if correlated:
            q.add(f"EXISTS (SELECT 1 FROM violations x WHERE x.trial_id = t.id{rule})", *rp)
        else:
            q.add(f"t.id IN (SELECT x.trial_id FROM violations x WHERE 1{rule})", *rp)
    return q


def data_version(db: Store) -> tuple[Any, ...] | None:
    """What counts and label sets depend on. The tables are append-only (rules and clusterings are replaced by new
    rows), so their top rowids change whenever a count could. None for in-memory databases."""
    files = [r[2] for r in db.execute("PRAGMA database_list").fetchall() if r[1] == "main"]
    if not files or not files[0]:
        return None
    row = db.execute(
        "SELECT (SELECT MAX(seq) FROM trials), (SELECT MAX(id) FROM verdicts), "
        "(SELECT MAX(id) FROM labels), (SELECT MAX(rowid) FROM violations), "
        "(SELECT MAX(id) FROM rule_sets), (SELECT MAX(id) FROM clusterings), "
        "(SELECT MAX(rowid) FROM cluster_members)"
    ).fetchone()
    return (files[0], *row)


def clear_label_memo() -> None:
    with _labels_lock:
        _labels_memo.clear()
