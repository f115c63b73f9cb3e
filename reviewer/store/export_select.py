"""The reads behind `reviewer export`: which trials carry a human or judge fail, with their context.

Labels and verdicts come from the views of migration m006: a trial's *human* label is the one the
trials list shows (``trial_labels``), its judge verdict the latest of any judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.models import Criterion, Label, Rubric
from reviewer.store.db import Store
from reviewer.store.labels import current_labels, shown_labels
from reviewer.store.trial_filter import TrialFilter


@dataclass(frozen=True)
class TrialKey:
    """Where a stored trial sits: the readable key a task's provenance names."""

    trial_id: str
    seq: int
    run: str
    task_id: str
    trial: int


@dataclass(frozen=True)
class JudgeVerdict:
    """The latest verdict any judge gave a trial."""

    judge: str
    verdict: str
    rationale: str | None
    rubric: str | None


@dataclass(frozen=True)
class Membership:
    """A trial's cluster in the newest clustering, with the signature stored for it."""

    cluster_id: str
    cluster_name: str
    signature: str | None
    representative: str | None


def human_labels(db: Store, labeler: str | None = None) -> dict[str, Label]:
    """trial id -> the label it shows: its most recent standing label (of ``labeler`` when given)."""
    return shown_labels(db, labeler)


def harness_fails(db: Store) -> set[str]:
    """Trials the harness scored as failed (not infrastructure errors, not unscored)."""
    return {r[0] for r in db.execute("SELECT id FROM trials WHERE outcome = 'fail'").fetchall()}


def trial_outcomes(db: Store, ids: Iterable[str]) -> dict[str, str]:
    """trial id -> its outcome (pass, fail, infra, unscored), for the stored trials among ``ids``."""
    wanted = sorted(set(ids))
    out: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        sql = f"SELECT id, outcome FROM trials WHERE id IN ({','.join('?' * len(chunk))})"
        out.update({r[0]: r[1] for r in db.execute(sql, chunk).fetchall()})
    return out


def human_passes(db: Store) -> set[str]:
    """Trials some labeler's standing label calls pass: a judge's fail there is contradicted."""
    return {tid for (tid, _), label in current_labels(db).items() if label.verdict == "pass"}


def label_verdicts(db: Store) -> dict[str, set[str]]:
    """trial id -> the verdicts of every labeler's standing label on it."""
    out: dict[str, set[str]] = {}
    for (tid, _), label in current_labels(db).items():
        out.setdefault(tid, set()).add(label.verdict)
    return out


def latest_trial_verdicts(db: Store) -> dict[str, JudgeVerdict]:
    """trial id -> the latest verdict of any judge."""
    rows = db.execute(
        "SELECT trial_id, judge, verdict, rationale, rubric FROM latest_trial_verdicts"
    ).fetchall()
    return {r[0]: JudgeVerdict(r[1], r[2], r[3], r[4]) for r in rows}


def trial_keys(
    db: Store, ids: Iterable[str], runs: Sequence[str] | None = None
) -> dict[str, TrialKey]:
    """The keys of the stored trials among ``ids`` (of ``runs`` when given)."""
    wanted = sorted(set(ids))
    out: dict[str, TrialKey] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        sql = f"SELECT id, seq, run, task_id, trial FROM trials WHERE id IN ({','.join('?' * len(chunk))})"
        params: list[Any] = list(chunk)
        if runs:
            sql += f" AND run IN ({','.join('?' * len(runs))})"
            params.extend(runs)
        for r in db.execute(sql, params).fetchall():
            out[r[0]] = TrialKey(r[0], int(r[1]), r[2], r[3], int(r[4]))
    return out


def memberships(db: Store) -> dict[str, Membership]:
    """trial id -> its cluster in the newest clustering (human names win over generated ones)."""
    rows = db.execute(
        "SELECT m.trial_id, m.cluster_id, COALESCE(n.name, c.name), m.signature, c.representative "
        "FROM cluster_members m "
        "JOIN clusters c ON c.clustering_id = m.clustering_id AND c.id = m.cluster_id "
        "LEFT JOIN cluster_names n ON n.cluster_id = m.cluster_id "
        "WHERE m.clustering_id = (SELECT MAX(id) FROM clusterings)"
    ).fetchall()
    return {r[0]: Membership(r[1], r[2], r[3], r[4]) for r in rows}


def cluster_ids(db: Store) -> list[str]:
    """The cluster ids of the newest clustering, biggest first."""
    return [
        r[0]
        for r in db.execute(
            "SELECT id FROM clusters WHERE clustering_id = (SELECT MAX(id) FROM clusterings) "
            "ORDER BY size DESC, rank"
        ).fetchall()
    ]


def violation_rows(db: Store, trial_id: str) -> list[tuple[str, str, str]]:
    """(rule id, severity, detail) of every rule the trial broke, first occurrence first."""
    return [
        (r[0], r[1], r[2] or "")
        for r in db.execute(
            "SELECT rule_id, severity, detail FROM violations WHERE trial_id = ? "
            "ORDER BY COALESCE(message_index, 1e9), rule_id",
            [trial_id],
        ).fetchall()
    ]


def rubric_by_ref(db: Store, ref: str) -> Rubric | None:
    """The rubric recorded under name@version, if labels were given under it."""
    row = db.execute("SELECT definition FROM rubrics WHERE ref = ?", [ref]).fetchone()
    if row is None:
        return None
    d = json.loads(row[0])
    criteria = [Criterion(**c) for c in d.pop("criteria", [])]
    return Rubric(criteria=criteria, **d)


def filter_ids(db: Store, f: TrialFilter, limit: int = 100_000) -> list[str]:
    """Every trial id a trials-list filter shows (up to ``limit``), in list order."""
    from reviewer.store.trial_list import page

    ids: list[str] = []
    after: int | None = None
    while len(ids) < limit:
        p = page(db, f, after_seq=after, limit=min(1000, limit - len(ids)))
        if not p.rows:
            break
        ids.extend(r.id for r in p.rows)
        after = p.rows[-1].seq
    return ids
