"""What a run's trials and its judge's verdicts cost, as stored: for dollars to decision."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reviewer.store.db import Store


@dataclass(frozen=True)
class RunCosts:
    trials: int  # every trial of the run
    agent_known: int  # of them, with a stored cost
    agent_mean: float | None  # their mean cost
    judged_trials: int  # trials with a judge verdict (any judge)
    judge_calls: int  # the latest verdict of each judge on each of them
    judge_known: int  # of those, with a stored cost
    judge_mean: float | None  # their mean cost


def run_costs(db: Store, run: str) -> RunCosts:
    """The run's stored agent costs per trial and the judge's per verdict (the latest of each
    judge on each trial: ``latest_judge_verdicts``)."""
    trials, known, mean = db.execute(
        "SELECT COUNT(*), COUNT(cost_usd), AVG(cost_usd) FROM trials WHERE run = ?", [run]
    ).fetchone()
    judged, calls, judge_known, judge_mean = db.execute(
        "SELECT COUNT(DISTINCT v.trial_id), COUNT(*), COUNT(v.cost_usd), AVG(v.cost_usd) "
        "FROM latest_judge_verdicts v JOIN trials t ON t.id = v.trial_id WHERE t.run = ?",
        [run],
    ).fetchone()
    return RunCosts(
        int(trials),
        int(known),
        _finite(mean),
        int(judged),
        int(calls),
        int(judge_known),
        _finite(judge_mean),
    )


def _finite(v: object) -> float | None:
    """A mean SQLite computed, or None when there was none or it overflowed (old databases)."""
    if not isinstance(v, int | float) or not math.isfinite(v):
        return None
    return float(v)
