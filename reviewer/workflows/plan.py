"""Power planning for a stored run: the one function `reviewer plan` and the app's plan screen call."""

from __future__ import annotations

from typing import Any

from reviewer.metrics.plan_cost import TrialCosts
from reviewer.metrics.power import Plan, plan_run
from reviewer.store.costs import run_costs
from reviewer.store.queries import task_counts


def plan_for_run(
    db: Any, run: str, *, k: int | None = None, delta: float | None = None, power: float = 0.8
) -> Plan:
    """The plan of ``run`` from its scored trials (infrastructure errors and unscored trials left
    out), priced from its stored costs; raises ValueError (one line) for a power, delta or k out of
    range."""
    c = run_costs(db, run)
    costs = TrialCosts(
        trials=c.trials,
        agent_known=c.agent_known,
        agent_per_trial=c.agent_mean,
        judged_trials=c.judged_trials,
        judge_calls=c.judge_calls,
        judge_known=c.judge_known,
        judge_per_call=c.judge_mean,
    )
    return plan_run(run, task_counts(db, run, False), k=k, delta=delta, power=power, costs=costs)
