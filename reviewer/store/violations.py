"""Rule sets and the violations they found, as kept in the database (reading and writing only).

Parsing rules and checking trials against them is ``reviewer.metrics.active_rules``'s job; the store
keeps the rules text, so every command and the app see the same rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.models import Violation
from reviewer.store.db import Store

ViolationRow = tuple[str, str, str, int | None, str]  # trial id, rule id, severity, message, detail


@dataclass(frozen=True)
class RuleSet:
    """The stored text of a rule set, where it came from and its digest."""

    source: str
    text: str
    digest: str


def latest_rule_set(db: Store) -> RuleSet | None:
    """The rule set applied last (the active one), if any."""
    row = db.execute(
        "SELECT source, rules, digest FROM rule_sets ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else RuleSet(row[0], row[1], row[2])


def add_rule_set(db: Store, rules: RuleSet, at: str) -> None:
    """Record ``rules`` as the active rule set (inside the caller's transaction)."""
    db.execute(
        "INSERT INTO rule_sets (source, digest, rules, applied_at) VALUES (?, ?, ?, ?)",
        [rules.source, rules.digest, rules.text, at],
    )


def clear_violations(db: Store) -> None:
    db.execute("DELETE FROM violations")


def add_violations(db: Store, rows: Sequence[ViolationRow]) -> int:
    """Insert violation rows (inside the caller's transaction); returns how many."""
    if rows:
        db.conn.executemany(
            "INSERT INTO violations (trial_id, rule_id, severity, message_index, detail) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    return len(rows)


def violation_total(db: Store) -> int:
    return int(db.execute("SELECT COUNT(*) FROM violations").fetchone()[0])


def rule_set_count(db: Store) -> int:
    return int(db.execute("SELECT COUNT(*) FROM rule_sets").fetchone()[0])


def trial_violations(db: Store, trial_id: str) -> list[Violation]:
    return [
        Violation(rule_id=r[0], severity=r[1], message_index=r[2], detail=r[3] or "")
        for r in db.execute(
            "SELECT rule_id, severity, message_index, detail FROM violations WHERE trial_id = ? "
            "ORDER BY COALESCE(message_index, 1e9)",
            [trial_id],
        ).fetchall()
    ]


def violation_counts(db: Store) -> dict[str, dict[str, int]]:
    """rule id -> run -> number of trials breaking it, a trial the harness crashed left out (it
    measured no agent: the report's and the gate's rule rates leave it out too)."""
    out: dict[str, dict[str, int]] = {}
    for rule_id, run, n in db.execute(
        "SELECT v.rule_id, t.run, COUNT(DISTINCT v.trial_id) FROM violations v "
        "JOIN trials t ON t.id = v.trial_id WHERE t.outcome != 'infra' GROUP BY v.rule_id, t.run"
    ).fetchall():
        out.setdefault(rule_id, {})[run] = n
    return out
