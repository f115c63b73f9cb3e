"""Power planning for a stored run: the one function `reviewer plan` and the app's plan screen call."""

from __future__ import annotations

from typing import Any

from reviewer.metrics.power import Plan, plan_run
from reviewer.store.queries import task_counts


def plan_for_run(
    db: Any, run: str, *, k: int | None = None, delta: float | None = None, power: float = 0.8
) -> Plan:
    """The plan of ``run`` from its scored trials (infrastructure errors and unscored trials left
    out); raises ValueError (one line) for a power, delta or k out of range."""
    return plan_run(run, task_counts(db, run, False), k=k, delta=delta, power=power)
