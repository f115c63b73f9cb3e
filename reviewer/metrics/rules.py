"""Trajectory rules: checks on the path a trial took, not on its outcome.

Rules live in ``rules.toml`` as ``[[rule]]`` tables of three types: ``forbid_tool`` (never call a tool,
optionally only with matching arguments or after a matching tool result), ``require_before`` (call one of
some tools before a tool) and ``budget`` (max steps, cost, latency, tool errors). Loading validates every
field and names the file and line of the first problem.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from reviewer.metrics.rule_regex import RegexRefused, RulePattern, compile_rule_regex
from reviewer.metrics.rule_types import (
    BUDGET_LIMITS,
    SEVERITIES,
    Budget,
    ForbidTool,
    RequireBefore,
    Rule,
    RuleError,
    Violation,
)
from reviewer.models import Trial

__all__ = [
    "SEVERITIES",
    "Budget",
    "ForbidTool",
    "RequireBefore",
    "Rule",
    "RuleError",
    "Violation",
    "check_trial",
    "load_rules",
    "parse_rules",
    "severities",
]

_COMMON = ("id", "type", "severity", "description")
_FIELDS: dict[str, tuple[str, ...]] = {
    "forbid_tool": (*_COMMON, "tool", "args", "after_result"),
    "require_before": (*_COMMON, "tool", "before"),
    "budget": (*_COMMON, *BUDGET_LIMITS),
}
_DEFAULT_SEVERITY = {"forbid_tool": "forbidden", "require_before": "policy", "budget": "budget"}
_REQUIRED = {
    "forbid_tool": ("id", "tool"),
    "require_before": ("id", "tool", "before"),
    "budget": ("id",),
}


# --- loading -------------------------------------------------------------------------------------------


def load_rules(path: str | Path) -> list[Rule]:
    """Read and validate a rules file; raises RuleError naming ``path`` and the line."""
    from reviewer.config import read_small_text

    try:
        text = read_small_text(path)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise RuleError(str(path), None, f"cannot read rules: {e}") from e
    return parse_rules(text, file=str(path))


def parse_rules(text: str, file: str = "rules.toml") -> list[Rule]:
    """Validate rules given as TOML text; ``file`` is only used in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        line, reason = _toml_error_position(e, text)
        raise RuleError(file, line, f"invalid TOML: {reason}") from e
    except RecursionError as e:  # tomllib recurses once per nested array or inline table
        raise RuleError(file, None, "invalid TOML: nested too deeply") from e
    except ValueError as e:  # an integer of more than 4,300 digits (Python's limit)
        from reviewer.config import toml_value_error

        raise RuleError(file, None, f"invalid TOML: {toml_value_error(e)}") from e
    locator = _Locator(text)
    for key in data:
        if key != "rule":
            raise RuleError(
                file, locator.top_level(key), f"unknown top-level key {key!r}; expected [[rule]]"
            )
    raw = data.get("rule", [])
    if not isinstance(raw, list):
        raise RuleError(
            file, locator.top_level("rule"), "'rule' must be an array of tables ([[rule]])"
        )
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, table in enumerate(raw):
        if not isinstance(table, dict):
            raise RuleError(file, locator.header(i), f"rule #{i + 1} must be a table")
        rule = _build_rule(table, i, file, locator)
        if rule.id in seen:
            raise RuleError(
                file,
                locator.key(i, "id"),
                f"duplicate rule id {rule.id!r} (first used by rule #{seen[rule.id] + 1})",
            )
        seen[rule.id] = i
        rules.append(rule)
    return rules


def severities(rules: Iterable[Rule]) -> dict[str, str]:
    """rule id -> severity, the shape ``compare_runs`` takes."""
    return {r.id: r.severity for r in rules}


def _build_rule(t: dict[str, Any], i: int, file: str, loc: _Locator) -> Rule:
    def fail(key: str | None, reason: str, sub: str | None = None) -> RuleError:
        line = loc.key(i, key, sub) if key else loc.header(i)
        name = t.get("id")
        who = f"rule {name!r}" if isinstance(name, str) and name else f"rule #{i + 1}"
        return RuleError(file, line, f"{who}: {reason}")

    if "type" not in t:
        raise fail(None, "missing required field 'type'")
    kind = t["type"]
    if not isinstance(kind, str) or kind not in _FIELDS:
        expected = ", ".join(sorted(_FIELDS))
        raise fail("type", f"unknown rule type {kind!r}; expected one of {expected}")
    allowed = _FIELDS[kind]
    for key in t:
        if key not in allowed:
            raise fail(key, f"unknown field {key!r} for type {kind}; allowed: {', '.join(allowed)}")
    for key in _REQUIRED[kind]:
        if key not in t:
            raise fail(None, f"missing required field {key!r} for type {kind}")

    def string(key: str, default: str | None = None) -> str:
        v = t.get(key, default)
        if not isinstance(v, str):
            raise fail(key, f"{key!r} must be a string, got {_tname(v)}")
        if not v.strip() and key in ("id", "tool"):
            raise fail(key, f"{key!r} must not be empty")
        return v

    def regex(key: str, pattern: Any, sub: str | None = None) -> RulePattern:
        label = f"{key}.{sub}" if sub else key
        if not isinstance(pattern, str):
            raise fail(key, f"{label!r} must be a regex string, got {_tname(pattern)}", sub)
        try:
            return compile_rule_regex(pattern)
        except RegexRefused as e:
            raise fail(key, f"bad regex in {label!r}: {e}", sub) from e

    rid = string("id")
    severity = string("severity", _DEFAULT_SEVERITY[kind])
    if severity not in SEVERITIES:
        raise fail(
            "severity", f"unknown severity {severity!r}; expected one of {', '.join(SEVERITIES)}"
        )
    common: dict[str, Any] = {
        "id": rid,
        "severity": severity,
        "description": string("description", ""),
        "line": loc.header(i),
    }

    if kind == "forbid_tool":
        args_raw = t.get("args", {})
        if not isinstance(args_raw, dict):
            raise fail(
                "args", f"'args' must be a table of argument name -> regex, got {_tname(args_raw)}"
            )
        args = tuple((name, regex("args", p, name)) for name, p in args_raw.items())
        after = regex("after_result", t["after_result"]) if "after_result" in t else None
        return ForbidTool(tool=string("tool"), args=args, after_result=after, **common)

    if kind == "require_before":
        before_raw = t["before"]
        names = [before_raw] if isinstance(before_raw, str) else before_raw
        if (
            not isinstance(names, list)
            or not names
            or not all(isinstance(n, str) and n.strip() for n in names)
        ):
            raise fail("before", "'before' must be a tool name or a non-empty list of tool names")
        return RequireBefore(tool=string("tool"), before=tuple(names), **common)

    limits: dict[str, Any] = {}
    for name in BUDGET_LIMITS:
        if name not in t:
            continue
        v = t[name]
        integral = name in ("max_steps", "max_tool_errors")
        if (
            isinstance(v, bool)
            or not isinstance(v, int | float)
            or (integral and isinstance(v, float))
        ):
            want = "an integer" if integral else "a number"
            raise fail(name, f"{name!r} must be {want}, got {_tname(v)}")
        if isinstance(v, int) and v.bit_length() > 63:  # TOML hex integers have no size limit
            raise fail(name, f"{name!r} must be a number below 2^63, got {v.bit_length()} bits")
        if v < 0 or v != v:
            raise fail(name, f"{name!r} must be a number >= 0, got {v!r}")
        if v == math.inf:  # no limit at all: leave the field out (JSON has no Infinity)
            raise fail(name, f"{name!r} must be a finite number (to set no limit, leave it out)")
        limits[name] = v if integral else float(v)
    if not limits:
        raise fail(None, f"a budget rule needs at least one of {', '.join(BUDGET_LIMITS)}")
    return Budget(**limits, **common)


def _tname(v: Any) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(v), type(v).__name__
    )


_TOML_POS = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _toml_error_position(e: tomllib.TOMLDecodeError, text: str) -> tuple[int | None, str]:
    msg = str(e)
    m = _TOML_POS.search(msg)
    if m:
        return int(m.group(1)), msg[: m.start()]
    m = _TOML_END.search(msg)
    if m:
        return max(1, text.count("\n") + (0 if text.endswith("\n") else 1)), msg[: m.start()]
    lineno = getattr(e, "lineno", None)
    return (lineno if isinstance(lineno, int) else None), msg


class _Locator:
    """Finds the line of a rule's ``[[rule]]`` header or of one of its keys by scanning the text."""

    _HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]")
    _TABLE = re.compile(r"^\s*\[")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.starts = [i for i, s in enumerate(self.lines) if self._HEADER.match(s)]

    @staticmethod
    def _key_re(key: str) -> re.Pattern[str]:
        k = re.escape(key)
        return re.compile(rf"^\s*(?:{k}|\"{k}\"|'{k}')\s*[=.]")

    def top_level(self, key: str) -> int | None:
        pat = self._key_re(key)
        table = re.compile(rf"^\s*\[+\s*{re.escape(key)}\s*[\].]")
        for n, s in enumerate(self.lines):
            if self._TABLE.match(s) and not table.match(s):
                break
            if pat.match(s) or table.match(s):
                return n + 1
        for n, s in enumerate(self.lines):
            if table.match(s):
                return n + 1
        return None

    def header(self, i: int) -> int | None:
        if i < len(self.starts):
            return self.starts[i] + 1
        return self.top_level("rule")

    def key(self, i: int, key: str, sub: str | None = None) -> int | None:
        if i >= len(self.starts):
            return self.header(i)
        start = self.starts[i]
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.lines)
        own_end = next((n for n in range(start + 1, end) if self._TABLE.match(self.lines[n])), end)
        pat = self._key_re(key)
        for n in range(start + 1, own_end):
            if pat.match(self.lines[n]):
                return n + 1
        if sub is not None:  # a sub-table such as [rule.args]
            sub_pat = self._key_re(sub)
            sub_header = re.compile(rf"^\s*\[\s*rule\s*\.\s*{re.escape(key)}\s*\]")
            inside = False
            for n in range(own_end, end):
                s = self.lines[n]
                if self._TABLE.match(s):
                    inside = bool(sub_header.match(s))
                elif inside and sub_pat.match(s):
                    return n + 1
        return start + 1


# --- checking ------------------------------------------------------------------------------------------


def check_trial(trial: Trial, rules: Sequence[Rule]) -> list[Violation]:
    """Every violation of ``rules`` in ``trial``, ordered by message index (trial-level ones last)."""
    found: list[Violation] = []
    for rule in rules:
        if isinstance(rule, ForbidTool):
            found.extend(_check_forbid(trial, rule))
        elif isinstance(rule, RequireBefore):
            found.extend(_check_require(trial, rule))
        elif isinstance(rule, Budget):
            found.extend(_check_budget(trial, rule))
    found.sort(key=lambda v: (v.message_index is None, v.message_index or 0))
    return found


def _args_match(arguments: Any, patterns: Sequence[tuple[str, RulePattern]]) -> bool:
    # Unparsed (string) arguments cannot be inspected, so they never match an args filter.
    if not patterns:
        return True
    if not isinstance(arguments, Mapping):
        return False
    return all(name in arguments and p.search(str(arguments[name])) for name, p in patterns)


def _short(arguments: Any, limit: int = 80) -> str:
    try:
        s = json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        s = str(arguments)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _check_forbid(trial: Trial, rule: ForbidTool) -> Iterable[Violation]:
    matched_at: int | None = None  # first earlier tool result that matched after_result
    for i, m in enumerate(trial.messages):
        for call in m.tool_calls:
            if call.name != rule.tool or not _args_match(call.arguments, rule.args):
                continue
            if rule.after_result is not None and matched_at is None:
                continue
            detail = f"called {call.name}({_short(call.arguments)})"
            if rule.after_result is not None:
                detail += f" after the tool result at message {matched_at} matched {rule.after_result.pattern!r}"
            yield Violation(rule.id, rule.severity, i, detail)
        if (
            rule.after_result is not None
            and matched_at is None
            and m.role == "tool"
            and rule.after_result.search(m.content or "")
        ):
            matched_at = i


def _check_require(trial: Trial, rule: RequireBefore) -> Iterable[Violation]:
    # "Before" is order of appearance, so an earlier call in the same assistant message counts.
    done = False
    wanted = set(rule.before)
    for i, m in enumerate(trial.messages):
        for call in m.tool_calls:
            if call.name == rule.tool and not done:
                yield Violation(
                    rule.id,
                    rule.severity,
                    i,
                    f"called {call.name} before any of {', '.join(rule.before)}",
                )
            if call.name in wanted:
                done = True


def _check_budget(trial: Trial, rule: Budget) -> Iterable[Violation]:
    steps = errors = 0
    steps_at: int | None = None
    errors_at: int | None = None
    for i, m in enumerate(trial.messages):
        steps += (1 if m.role == "assistant" else 0) + len(m.tool_calls)
        if m.role == "tool" and m.is_error:
            errors += 1
        if steps_at is None and rule.max_steps is not None and steps > rule.max_steps:
            steps_at = i
        if errors_at is None and rule.max_tool_errors is not None and errors > rule.max_tool_errors:
            errors_at = i
    if steps_at is not None:
        yield Violation(
            rule.id, rule.severity, steps_at, f"steps {steps} > max_steps {rule.max_steps}"
        )
    if errors_at is not None:
        yield Violation(
            rule.id,
            rule.severity,
            errors_at,
            f"tool errors {errors} > max_tool_errors {rule.max_tool_errors}",
        )
    cost = trial.usage.cost_usd
    if rule.max_cost_usd is not None and cost is not None and cost > rule.max_cost_usd:
        yield Violation(
            rule.id,
            rule.severity,
            None,
            f"cost ${cost:.4f} > max_cost_usd ${rule.max_cost_usd:.4f}",
        )
    lat = trial.latency_s
    if rule.max_latency_s is not None and lat is not None and lat > rule.max_latency_s:
        yield Violation(
            rule.id,
            rule.severity,
            None,
            f"latency {lat:.1f}s > max_latency_s {rule.max_latency_s:g}s",
        )
