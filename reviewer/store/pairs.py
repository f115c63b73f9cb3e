"""Pair judgements in the ``pairs`` table, trial references, and the trials pair sampling draws from.

A row is one judge's verdicts on one pair in both presentation orders, with the winners already mapped
back to the pair's own names: ``order_ab`` / ``order_ba`` / ``human`` are ``a``, ``b``, ``tie`` or
``None`` (missing, or a reply that could not be parsed). Rows are keyed by (pair_id, judge): writing a
row again replaces it.

``a_trial`` / ``b_trial`` hold the stored trial id when the reference resolved when the row was written,
else the reference as given: a trial id string, or the canonical JSON text of a ``{"run", "task_id",
"trial"}`` object. :func:`resolve_ref` resolves such text again, so a pair imported before its trials
opens once their run is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.models import PairRecord, TrialRef
from reviewer.store.db import Store
from reviewer.store.labels import find_trial_id, now_at

WINNERS = ("a", "b", "tie")
ORDERS = ("ab", "ba")

_COLUMNS = (
    "pair_id, judge, task_id, a_trial, b_trial, order_ab, order_ba, human, rationale_ab, "
    "rationale_ba, source, created_at"
)
#: The columns that make two rows "the same judgement" (source and time do not).
_CONTENT = (
    "task_id",
    "a_trial",
    "b_trial",
    "order_ab",
    "order_ba",
    "human",
    "rationale_ab",
    "rationale_ba",
)


@dataclass
class PairRow:
    """One judge's judgement of one pair in both orders (winners named a / b / tie, None = missing)."""

    pair_id: str
    judge: str
    task_id: str | None = None
    a_trial: str | None = None
    b_trial: str | None = None
    order_ab: str | None = None
    order_ba: str | None = None
    human: str | None = None
    rationale_ab: str | None = None
    rationale_ba: str | None = None
    source: str = "import"
    created_at: str = ""

    def same_judgement(self, other: PairRow) -> bool:
        return all(getattr(self, c) == getattr(other, c) for c in _CONTENT)


@dataclass
class PairCounts:
    """What writing a batch of pair judgements did."""

    added: int = 0
    updated: int = 0
    already: int = 0
    unresolved_refs: int = 0  # trial references kept as given (their trial is not stored)
    checked: int = 0  # valid lines seen by a check that writes nothing
    judges: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return self.added + self.updated + self.already


# --- trial references ----------------------------------------------------------------------------


def ref_text(ref: TrialRef) -> str:
    """The stored spelling of an unresolved reference: the id string, or canonical JSON of the object."""
    if isinstance(ref, str):
        return ref
    return json.dumps(
        {k: ref.get(k) for k in ("run", "task_id", "trial")},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


def resolve_ref(db: Store, ref: TrialRef | None) -> str | None:
    """The stored trial id a reference (or a stored ``a_trial`` / ``b_trial`` text) names, if any."""
    if ref is None:
        return None
    if isinstance(ref, str):
        found = find_trial_id(db, ref)
        if found is not None or not ref.startswith("{"):
            return found
        try:
            ref = json.loads(ref)
        except ValueError:
            return None
        if not isinstance(ref, dict):
            return None
    trial = ref.get("trial")
    if isinstance(trial, bool) or not isinstance(trial, int):
        return None
    run, task_id = ref.get("run"), ref.get("task_id")
    if not isinstance(run, str) or not isinstance(task_id, str):
        return None
    return find_trial_id(db, None, run, task_id, trial)


def stored_ref(db: Store, ref: TrialRef) -> tuple[str, bool]:
    """(what to store for ``ref``, whether it resolved to a stored trial)."""
    found = resolve_ref(db, ref)
    return (found, True) if found is not None else (ref_text(ref), False)


# --- writing -------------------------------------------------------------------------------------


def _params(row: PairRow) -> list[Any]:
    return [
        row.pair_id,
        row.judge,
        row.task_id,
        row.a_trial,
        row.b_trial,
        row.order_ab,
        row.order_ba,
        row.human,
        row.rationale_ab,
        row.rationale_ba,
        row.source,
        row.created_at or now_at(),
    ]


def _check(row: PairRow) -> None:
    for name in ("order_ab", "order_ba", "human"):
        value = getattr(row, name)
        if value is not None and value not in WINNERS:
            raise ValueError(f"{name} must be a, b, tie or null, got {value!r}")
    if not row.pair_id or not row.judge:
        raise ValueError("a pair judgement needs a pair_id and a judge")


def upsert_pairs(db: Store, rows: Iterable[PairRow]) -> PairCounts:
    """Write ``rows`` in one transaction (joining an open one); a row of a stored (pair, judge) replaces
    it, and an identical one is counted as already stored and left alone."""
    counts = PairCounts()
    with db.transaction():
        for row in rows:
            _check(row)
            counts.judges.add(row.judge)
            old = get_pair(db, row.pair_id, row.judge)
            if old is not None and old.same_judgement(row):
                counts.already += 1
                continue
            db.conn.execute(
                f"INSERT OR REPLACE INTO pairs ({_COLUMNS}) VALUES ({', '.join('?' * 12)})",
                _params(row),
            )
            if old is None:
                counts.added += 1
            else:
                counts.updated += 1
    return counts


def write_pair_records(
    db: Store, records: Iterable[PairRecord], source: str = "import"
) -> PairCounts:
    """Resolve the references of parsed pair lines and upsert them in one transaction."""
    rows: list[PairRow] = []
    unresolved = 0
    for rec in records:
        a_trial, a_ok = stored_ref(db, rec.a)
        b_trial, b_ok = stored_ref(db, rec.b)
        unresolved += (not a_ok) + (not b_ok)
        rows.append(
            PairRow(
                pair_id=rec.pair_id,
                judge=rec.judge,
                task_id=rec.task_id,
                a_trial=a_trial,
                b_trial=b_trial,
                order_ab=rec.order_ab,
                order_ba=rec.order_ba,
                human=rec.human,
                rationale_ab=rec.rationale_ab,
                rationale_ba=rec.rationale_ba,
                source=source,
            )
        )
    counts = upsert_pairs(db, rows)
    counts.unresolved_refs = unresolved
    return counts


def record_order(
    db: Store,
    *,
    pair_id: str,
    judge: str,
    order: str,
    winner: str | None,
    rationale: str | None,
    task_id: str | None,
    a_trial: str,
    b_trial: str,
    source: str = "judge",
) -> None:
    """Store one order's verdict of a pair (``winner`` already mapped back to a / b / tie; None for an
    error), keeping the other order's. Runs no transaction of its own: the caller commits."""
    if order not in ORDERS:
        raise ValueError(f"order must be ab or ba, got {order!r}")
    if winner is not None and winner not in WINNERS:
        raise ValueError(f"winner must be a, b, tie or None, got {winner!r}")
    side = f"order_{order}"
    why = f"rationale_{order}"
    db.conn.execute(
        f"INSERT INTO pairs (pair_id, judge, task_id, a_trial, b_trial, {side}, {why}, source, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        f"ON CONFLICT (pair_id, judge) DO UPDATE SET {side} = excluded.{side}, "
        f"{why} = excluded.{why}, task_id = excluded.task_id, a_trial = excluded.a_trial, "
        "b_trial = excluded.b_trial, source = excluded.source, created_at = excluded.created_at",
        [pair_id, judge, task_id, a_trial, b_trial, winner, rationale, source, now_at()],
    )


# --- reading -------------------------------------------------------------------------------------


def get_pair(db: Store, pair_id: str, judge: str) -> PairRow | None:
    row = db.conn.execute(
        f"SELECT {_COLUMNS} FROM pairs WHERE pair_id = ? AND judge = ?", [pair_id, judge]
    ).fetchone()
    return None if row is None else PairRow(*row)


def pair_rows(db: Store, judge: str | None = None) -> list[PairRow]:
    """Every stored pair judgement (of ``judge``), by judge then pair id."""
    where, args = ("WHERE judge = ?", [judge]) if judge is not None else ("", [])
    rows = db.conn.execute(
        f"SELECT {_COLUMNS} FROM pairs {where} ORDER BY judge, pair_id", args
    ).fetchall()
    return [PairRow(*r) for r in rows]


def pair_judges(db: Store) -> list[str]:
    """Every judge with a stored pair judgement."""
    return [r[0] for r in db.conn.execute("SELECT DISTINCT judge FROM pairs ORDER BY judge")]


# --- what pair sampling draws from ---------------------------------------------------------------


@dataclass(frozen=True)
class PairCandidate:
    """A stored trial that may go into a pair, with its latest verdict and its own outcome."""

    trial_id: str
    run: str
    task_id: str
    trial: int
    verdict: str | None  # the latest judge verdict: pass | fail | error | None
    success: bool
    outcome: str = "fail"  # pass | fail | infra | unscored


def pair_candidates(
    db: Store, runs: Sequence[str] | None = None, judge: str | None = None
) -> list[PairCandidate]:
    """Every trial (of ``runs``) with its latest verdict (of ``judge``, else of any judge), by id."""
    latest_sql = (
        "SELECT trial_id, verdict FROM latest_judge_verdicts WHERE judge = ?"
        if judge is not None
        else "SELECT trial_id, verdict FROM latest_trial_verdicts"
    )
    run_clause = f"WHERE t.run IN ({', '.join('?' * len(runs))})" if runs else ""
    sql = f"""
        WITH latest AS ({latest_sql})
        SELECT t.id, t.run, t.task_id, t.trial, latest.verdict, t.success, t.outcome
        FROM trials t LEFT JOIN latest ON latest.trial_id = t.id
        {run_clause}
        ORDER BY t.id
    """
    args: list[Any] = [judge] if judge is not None else []
    args += list(runs or [])
    return [
        PairCandidate(r[0], r[1], r[2], r[3], r[4], bool(r[5]), str(r[6]))
        for r in db.conn.execute(sql, args)
    ]
