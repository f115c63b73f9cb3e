"""What the independence audit reports: findings, the trials they name, a run's audit."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.audit_trial import TrialDigest
from reviewer.metrics.trend import ALPHA, Trend
from reviewer.text import visible

KINDS = ("leak", "copy", "hollow", "order")
#: Findings kept (and stored) per kind and run, in the order found; past it they are only counted.
MAX_KEPT = 100
#: How a count of findings of each kind reads: (one, many).
KIND_WORDS = {
    "leak": ("leak", "leaks"),
    "copy": ("copy group", "copy groups"),
    "hollow": ("hollow pass", "hollow passes"),
    "order": ("order effect", "order effects"),
}


def kind_count(kind: str, n: int) -> str:
    """``2 leaks``, ``1 copy group``."""
    one, many = KIND_WORDS.get(kind, (kind, kind))
    return f"{n} {one if n == 1 else many}"


@dataclass(frozen=True, slots=True)
class TrialRef:
    id: str
    task_id: str
    trial: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "task_id": self.task_id, "trial": self.trial}

    @classmethod
    def of(cls, d: TrialDigest) -> TrialRef:
        return cls(d.id, d.task_id, d.trial)


@dataclass
class Finding:
    """One problem: what it is, the trials it names, the evidence, and the run's pass^k with it taken
    into account (``adjusted``, beside the reported ``RunAudit.reported``)."""

    kind: str
    task_id: str | None
    trials: list[TrialRef]
    title: str
    evidence: list[str]
    adjusted: float | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "task_id": self.task_id,
            "trials": [t.to_dict() for t in self.trials],
            "title": self.title,
            "evidence": self.evidence,
            "pass_hat_k_adjusted": self.adjusted,
            "detail": self.detail,
        }


@dataclass
class RunAudit:
    run: str
    trials: int
    k: int
    reported: float | None  # the run's pass^k as `report` shows it
    distinct: float | None  # the same with each group of copies counted once
    distinct_left_out: int  # tasks left with fewer than k distinct trials
    trend: Trend
    findings: list[Finding] = field(default_factory=list)
    #: findings past the first ``MAX_KEPT`` of their kind: counted, not kept (kind -> how many)
    not_kept: dict[str, int] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """How many findings of each kind, kept or not."""
        out = dict.fromkeys(KINDS, 0)
        for f in self.findings:
            out[f.kind] += 1
        for kind, n in self.not_kept.items():
            out[kind] += n
        return out

    def summary(self) -> str:
        """One line: the run and what was found, or that nothing was."""
        c = {k: v for k, v in self.counts().items() if v}
        run = visible(self.run, single_line=True)  # data: a newline in it stays on the line
        if not c:
            return f"{run}: no finding in {self.trials} trial{plural(self.trials)}"
        parts = [kind_count(k, n) for k, n in c.items()]
        line = f"{run}: " + ", ".join(parts)
        if c.get("copy") and self.distinct != self.reported:
            line += (
                f" (pass^{self.k} {fmt_rate(self.reported)}, {copies_once(self.k, self.distinct)})"
            )
        return line

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "trials": self.trials,
            "k": self.k,
            "pass_hat_k_reported": self.reported,
            "pass_hat_k_copies_once": self.distinct,
            "copies_once_tasks_left_out": self.distinct_left_out,
            "trend": {
                "z": self.trend.z,
                "p": self.trend.p,
                "alpha": ALPHA,
                "tasks": self.trend.tasks,
                "early_pass_rate": self.trend.early_rate,
                "late_pass_rate": self.trend.late_rate,
            },
            "counts": self.counts(),
            "not_stored": {k: self.not_kept.get(k, 0) for k in KINDS},
            "stored_per_kind": MAX_KEPT,
            "unchecked_sightings": 0,  # every value read is checked (kept for scripts)
            "findings": [f.to_dict() for f in self.findings],
        }


def not_kept_line(kind: str, n: int) -> str:
    """``1,234 more leaks not stored (the first 100 of each kind are)``."""
    one, many = KIND_WORDS.get(kind, (kind, kind))
    return (
        f"{n:,} more {one if n == 1 else many} not stored (the first {MAX_KEPT} of each kind are)"
    )


def plural(n: int) -> str:
    return "" if n == 1 else "s"


def fmt_rate(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def copies_once(k: int | None, distinct: float | None) -> str:
    """pass^k with a run's copies counted once: its value, or why it has none (a bare "-" left
    the reader guessing)."""
    if distinct is not None:
        return f"{distinct:.2f} with copies counted once"
    return f"none with copies counted once (no task keeps {k} distinct trials)"
