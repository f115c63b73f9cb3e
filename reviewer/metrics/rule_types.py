"""What a trajectory rule is, and what breaking one looks like. Loading and checking: ``rules.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from reviewer.metrics.rule_regex import RulePattern
from reviewer.models import Violation

SEVERITIES = ("forbidden", "policy", "budget")
__all__ = [
    "BUDGET_LIMITS",
    "SEVERITIES",
    "Budget",
    "ForbidTool",
    "RequireBefore",
    "Rule",
    "RuleError",
    "Violation",
]

BUDGET_LIMITS = ("max_steps", "max_cost_usd", "max_latency_s", "max_tool_errors")


class RuleError(ValueError):
    """A rules file that cannot be used, with the place and the reason."""

    def __init__(self, file: str, line: int | None, reason: str) -> None:
        super().__init__(file, line, reason)
        self.file = file
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class Rule:
    """Fields every rule has. ``line`` is where its ``[[rule]]`` table starts in its file."""

    type: ClassVar[str]
    id: str
    severity: str
    description: str = ""
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "severity": self.severity,
            "description": self.description,
        }


@dataclass(frozen=True, kw_only=True)
class ForbidTool(Rule):
    """Never call ``tool``; only when every ``args`` regex matches and, if set, after a matching result."""

    type: ClassVar[str] = "forbid_tool"
    tool: str
    args: tuple[tuple[str, RulePattern], ...] = ()
    after_result: RulePattern | None = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["tool"] = self.tool
        d["args"] = {k: p.pattern for k, p in self.args}
        d["after_result"] = self.after_result.pattern if self.after_result else None
        return d


@dataclass(frozen=True, kw_only=True)
class RequireBefore(Rule):
    """Every call of ``tool`` needs an earlier call of one of ``before``."""

    type: ClassVar[str] = "require_before"
    tool: str
    before: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "tool": self.tool, "before": list(self.before)}


@dataclass(frozen=True, kw_only=True)
class Budget(Rule):
    """Upper limits on a trial; a limit left as None is not checked."""

    type: ClassVar[str] = "budget"
    max_steps: int | None = None
    max_cost_usd: float | None = None
    max_latency_s: float | None = None
    max_tool_errors: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        for name in BUDGET_LIMITS:
            d[name] = getattr(self, name)
        return d
