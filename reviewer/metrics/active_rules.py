"""The active trajectory rules: set them from a file's text, check trials against them, read them back.

Setting new rules recomputes every trial's violations in one transaction; freshly imported trials are
checked against the rules already active.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from reviewer.metrics.rules import Rule, check_trial, parse_rules
from reviewer.store.db import Store
from reviewer.store.trials import iter_trials
from reviewer.store.violations import (
    RuleSet,
    ViolationRow,
    add_rule_set,
    add_violations,
    clear_violations,
    latest_rule_set,
)


@dataclass
class ActiveRules:
    source: str
    text: str
    rules: list[Rule]


def active_rules(db: Store) -> ActiveRules | None:
    """The rules applied last, parsed (RuleError when the stored text no longer loads)."""
    stored = latest_rule_set(db)
    if stored is None:
        return None
    return ActiveRules(stored.source, stored.text, parse_rules(stored.text, file=stored.source))


def set_rules(
    db: Store, source: str, text: str, progress: Callable[[int], None] | None = None
) -> tuple[ActiveRules, bool]:
    """Make ``text`` the active rules (RuleError if invalid); returns (rules, changed)."""
    rules = parse_rules(text, file=source)
    digest = hashlib.sha256(text.encode()).hexdigest()
    current = latest_rule_set(db)
    if current is not None and current.digest == digest and current.source == source:
        return ActiveRules(source, text, rules), False
    with db.transaction():
        add_rule_set(
            db, RuleSet(source, text, digest), datetime.now(UTC).isoformat(timespec="seconds")
        )
        clear_violations(db)
        _check(db, rules, None, progress)
    return ActiveRules(source, text, rules), True


def _check(
    db: Store,
    rules: Sequence[Rule],
    ids: Sequence[str] | None,
    progress: Callable[[int], None] | None,
) -> int:
    rows: list[ViolationRow] = []
    found = 0
    for done, (tid, trial) in enumerate(iter_trials(db, ids=ids), 1):
        for v in check_trial(trial, rules):
            rows.append((tid, v.rule_id, v.severity, v.message_index, v.detail))
        if len(rows) >= 1000:
            found += add_violations(db, rows)
            rows.clear()
        if progress and done % 500 == 0:
            progress(done)
    return found + add_violations(db, rows)


def rules_json(active: ActiveRules | None) -> list[dict[str, object]]:
    return [] if active is None else [json.loads(json.dumps(r.to_dict())) for r in active.rules]
