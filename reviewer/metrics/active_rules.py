"""The active trajectory rules: set them from a file's text, check trials against them, read them back.

Setting new rules recomputes every trial's violations in one transaction; freshly imported trials are
checked against the rules already active.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from reviewer.metrics.rule_types import ForbidTool, RequireBefore
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
    #: set just now: a line for each tool a rule names that no stored trial calls (a misspelt
    #: ``cancel_ordr`` keeps a forbidden rule from ever being broken, and the gate's RED FLAG off)
    unused_tools: list[str] = field(default_factory=list)
    #: set just now: the tools the stored trials call
    called: set[str] = field(default_factory=set)


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
        called: set[str] = set()
        _check(db, rules, None, progress, called)
    return ActiveRules(source, text, rules, unused_tools(rules, called), called), True


def named_tools(rules: Sequence[Rule]) -> set[str]:
    """The tools the forbid_tool and require_before rules are about (``tool``)."""
    return {r.tool for r in rules if isinstance(r, ForbidTool | RequireBefore)}


def unused_tools(rules: Sequence[Rule], called: set[str]) -> list[str]:
    """One line for each tool a forbid_tool or require_before rule names that none of the trials
    (which call ``called``) calls; none when no trial calls any tool (nothing stored yet)."""
    from reviewer.text import name_list

    if not called:
        return []
    out: list[str] = []
    for r in rules:
        if isinstance(r, ForbidTool | RequireBefore) and r.tool not in called:
            out.append(
                f"rule {name_list([r.id])}: no trial calls tool {name_list([r.tool])}, so "
                f"the rule cannot be broken yet (a misspelt name never will be); tools called: "
                f"{name_list(sorted(called))}"
            )
    return out


def _check(
    db: Store,
    rules: Sequence[Rule],
    ids: Sequence[str] | None,
    progress: Callable[[int], None] | None,
    called: set[str] | None = None,
) -> int:
    """Store the violations of the trials ``ids`` (every trial for None); ``called`` gathers the
    names of the tools they call."""
    rows: list[ViolationRow] = []
    found = 0
    for done, (tid, trial) in enumerate(iter_trials(db, ids=ids), 1):
        if called is not None:
            called.update(c.name for m in trial.messages for c in m.tool_calls)
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
