"""What the trials list filters on, and that filter as SQL over ``trials t``.

The verdict and label a trial shows come from the views of migration m006 (``latest_judge_verdicts``,
``trial_labels``, ``standing_labels``), the same ones every other reader uses, and the latest verdict of
any judge, for filters, from ``trial_verdicts`` (m016: ``latest_trial_verdicts`` kept as a table).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, fields
from typing import Any, Literal

from reviewer.store.db import Store
from reviewer.store.summaries import judged_with_sql, latest_verdict_sql

Outcome = Literal["pass", "fail", "infra", "unscored"]
VerdictFilter = Literal["pass", "fail", "error", "none"]
LabelFilter = Literal["pass", "fail", "skip", "none"]
SortKey = Literal["cost", "latency", "steps", "tool_errors"]
#: The column each sort key orders by (the worst first: most expensive, slowest, longest, most errors).
SORT_COLUMNS: dict[str, str] = {
    "cost": "cost_usd",
    "latency": "latency_s",
    "steps": "steps",
    "tool_errors": "tool_errors",
}


def sort_key_sql(sort: str, ascending: bool, alias: str = "t") -> str:
    """The number the list orders by, then by seq: ascending order of this puts the trials the way
    the sort asks, trials without the value (no cost recorded) last either way."""
    column = f"{alias}.{SORT_COLUMNS[sort]}"
    return f"IFNULL({column}, 1e308)" if ascending else f"-IFNULL({column}, -1e308)"


@dataclass(frozen=True)
class TrialFilter:
    """What the list shows; every field None means all trials.

    ``verdict`` is the latest verdict of any judge (or of ``judge``), ``label`` the latest standing label
    of any labeler (or of ``labeler``): the same values the list shows. "none" means there is none.
    ``rule_id`` "any" keeps trials with at least one violation. ``search`` is user text for FTS5,
    matched in the conversation; ``search_system`` matches the system prompt too.
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
    search_system: bool = False
    #: the order of the list (not a filter): None is the order the trials were imported in
    sort: SortKey | None = None
    ascending: bool = False

    @property
    def is_empty(self) -> bool:
        """No filter (the order aside)."""
        return all(
            getattr(self, f.name) in (None, "", False)
            for f in fields(self)
            if f.name not in ("sort", "ascending")
        )

    def key_sql(self, alias: str = "t") -> str:
        """What the list orders by before seq: seq itself when unsorted."""
        if self.sort is None:
            return f"{alias}.seq"
        return sort_key_sql(self.sort, self.ascending, alias)


# The rules themselves (latest verdict, standing label) are the views of migration m006.
def latest_verdict(judge: bool) -> str:
    """The verdict a trial ``t`` shows: the latest of any judge, or of one judge (a ``?`` parameter)."""
    if judge:
        return "(SELECT v.verdict FROM latest_judge_verdicts v WHERE v.trial_id = t.id AND v.judge = ?)"
    return "(SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id)"


def shown_label(labeler: bool) -> str:
    """The label a trial ``t`` shows: the latest standing one of any labeler, or of one labeler (a
    ``?`` parameter)."""
    if labeler:
        return "(SELECT l.verdict FROM standing_labels l WHERE l.trial_id = t.id AND l.labeler = ?)"
    return "(SELECT l.verdict FROM trial_labels l WHERE l.trial_id = t.id)"


_LATEST_CLUSTERING = "(SELECT MAX(id) FROM clusterings)"

_labels_lock = threading.Lock()
_labels_memo: dict[tuple[Any, ...], str] = {}


def _labeled_ids(db: Store, verdict: str | None, labeler: str | None) -> str:
    """The trials whose shown label is ``verdict`` (None: any label), as a JSON array. Read from the
    views and kept until the data changes: labels are few next to trials, and a page of a label
    filter then costs a lookup per row."""
    version = data_version(db)
    key = (version, verdict, labeler)
    with _labels_lock:
        if version is not None and key in _labels_memo:
            return _labels_memo[key]
    view = "trial_labels l WHERE 1" if labeler is None else "standing_labels l WHERE l.labeler = ?"
    params: list[Any] = [] if labeler is None else [labeler]
    if verdict is None:
        view += " AND l.verdict IS NOT NULL"
    else:
        view += " AND l.verdict = ?"
        params.append(verdict)
    rows = db.execute(f"SELECT l.trial_id FROM {view}", params).fetchall()
    ids = json.dumps([r[0] for r in rows])
    if version is not None:
        with _labels_lock:
            if len(_labels_memo) > 64 or any(k[0] != version for k in _labels_memo):
                _labels_memo.clear()
            _labels_memo[key] = ids
    return ids


def clear_label_memo() -> None:
    """Forget the cached label sets (tests; a writer that edits rows in place)."""
    with _labels_lock:
        _labels_memo.clear()


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
        q.add("t.outcome = ?", f.outcome)
    if f.verdict is not None and f.judge is None:
        # the latest verdict of any judge: m016's table when it has taken in every verdict
        if f.verdict == "none":
            q.add(f"{latest_verdict_sql(db)} IS NULL")
        elif correlated:
            q.add(f"{latest_verdict_sql(db)} = ?", f.verdict)
        else:
            q.add(judged_with_sql(db), f.verdict)
    elif f.verdict is not None:
        jp = [f.judge]
        view, judge = "latest_judge_verdicts", " AND v.judge = ?"
        if f.verdict == "none":
            q.add(f"NOT EXISTS (SELECT 1 FROM {view} v WHERE v.trial_id = t.id{judge})", *jp)
        elif correlated:
            q.add(f"{latest_verdict(True)} = ?", *jp, f.verdict)
        else:
            q.add(
                f"t.id IN (SELECT v.trial_id FROM {view} v WHERE v.verdict = ?{judge})",
                f.verdict,
                *jp,
            )
    if f.label is not None:
        if f.label == "none":
            q.add("t.id NOT IN (SELECT value FROM json_each(?))", _labeled_ids(db, None, f.labeler))
        else:
            q.add("t.id IN (SELECT value FROM json_each(?))", _labeled_ids(db, f.label, f.labeler))
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
    """What cached counts and label sets depend on: the tables' top rowids (inserts) and the counter
    that every in-place update or delete bumps (m007: merges, splits, re-graded verdicts). None for
    in-memory databases."""
    where = db.identity()
    if where is None:
        return None
    row = db.execute(
        "SELECT (SELECT MAX(seq) FROM trials), (SELECT MAX(id) FROM verdicts), "
        "(SELECT MAX(id) FROM labels), (SELECT MAX(rowid) FROM violations), "
        "(SELECT MAX(id) FROM rule_sets), (SELECT MAX(id) FROM clusterings), "
        "(SELECT MAX(rowid) FROM cluster_members), (SELECT n FROM data_edits WHERE id = 1)"
    ).fetchone()
    return (where, *row)
