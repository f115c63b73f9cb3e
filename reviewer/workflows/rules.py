"""Trajectory rules: the active rules, setting new ones and the violations per run (`reviewer
rules`)."""

from __future__ import annotations

from reviewer.metrics.active_rules import active_rules as active_rules
from reviewer.metrics.active_rules import rules_json as rules_json
from reviewer.metrics.active_rules import set_rules as set_rules
from reviewer.metrics.rules import RuleError as RuleError
from reviewer.metrics.rules import parse_rules as parse_rules
from reviewer.store.violations import violation_counts as violation_counts
