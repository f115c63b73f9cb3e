"""The active trajectory rules and the violations they find, kept in the database.

The rules text is stored with the database, so every command and the app see the same rules; setting new
rules recomputes every trial's violations in one transaction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from reviewer.metrics.rules import Rule, Violation, check_trial, parse_rules
from reviewer.store.db import Store
from reviewer.store.trials import iter_trials


@dataclass
class ActiveRules:
    source: str
    text: str
    rules: list[Rule]


def active_rules(db: Store) -> ActiveRules | None:
    row = db.execute("SELECT source, rules FROM rule_sets ORDER BY id DESC LIMIT 1").fetchone()
    if row is None:
        return None
    source, text = row
    return ActiveRules(source, text, parse_rules(text, file=source))


def set_rules(
    db: Store, source: str, text: str, progress: Callable[[int], None] | None = None
) -> tuple[ActiveRules, bool]:
    """Make ``text`` the active rules (RuleError if invalid); returns (rules, changed)."""
    rules = parse_rules(text, file=source)
    digest = hashlib.sha256(text.encode()).hexdigest()
    current = db.execute("SELECT digest, source FROM rule_sets ORDER BY id DESC LIMIT 1").fetchone()
    if current is not None and current[0] == digest and current[1] == source:
        return ActiveRules(source, text, rules), False
    with db.transaction():
        db.execute(
            "INSERT INTO rule_sets (source, digest, rules, applied_at) VALUES (?, ?, ?, ?)",
            [source, digest, text, datetime.now(UTC).isoformat(timespec="seconds")],
        )
        db.execute("DELETE FROM violations")
        _check(db, rules, None, progress)
    return ActiveRules(source, text, rules), True


def check_new_trials(db: Store, trial_ids: Sequence[str]) -> int:
    """Apply the active rules to freshly imported trials; returns how many violations were found."""
    active = active_rules(db)
    if active is None or not trial_ids:
        return 0
    with db.transaction():
        return _check(db, active.rules, trial_ids, None)


def _check(
    db: Store,
    rules: Sequence[Rule],
    ids: Sequence[str] | None,
    progress: Callable[[int], None] | None,
) -> int:
    rows: list[tuple[str, str, str, int | None, str]] = []
    found = 0
    for done, (tid, trial) in enumerate(iter_trials(db, ids=ids), 1):
        for v in check_trial(trial, rules):
            rows.append((tid, v.rule_id, v.severity, v.message_index, v.detail))
        if len(rows) >= 1000:
            found += _flush(db, rows)
        if progress and done % 500 == 0:
            progress(done)
    return found + _flush(db, rows)


def _flush(db: Store, rows: list[tuple[str, str, str, int | None, str]]) -> int:
    n = len(rows)
    if rows:
        db.conn.executemany(
            "INSERT INTO violations (trial_id, rule_id, severity, message_index, detail) VALUES (?, ?, ?, ?, ?)",
            rows,
        )
        rows.clear()
    return n


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
    """rule id -> run -> number of trials breaking it."""
    out: dict[str, dict[str, int]] = {}
    for rule_id, run, n in db.execute(
        "SELECT v.rule_id, t.run, COUNT(DISTINCT v.trial_id) FROM violations v JOIN trials t ON t.id = v.trial_id "
        "GROUP BY v.rule_id, t.run"
    ).fetchall():
        out.setdefault(rule_id, {})[run] = n
    return out


def rules_json(active: ActiveRules | None) -> list[dict[str, object]]:
    return [] if active is None else [json.loads(json.dumps(r.to_dict())) for r in active.rules]
