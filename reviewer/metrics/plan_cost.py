"""Dollars to decision: what the two runs a comparison needs would cost, from a run's stored costs
(the agent's mean cost per trial, and the judge's mean cost per verdict when the run is judged)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class TrialCosts:
    """What one more trial like the run's costs, from its stored costs."""

    trials: int  # the run's trials
    agent_known: int  # of them, with a stored cost
    agent_per_trial: float | None  # the mean of the stored costs
    judged_trials: int = 0  # trials with a judge verdict
    judge_calls: int = 0  # judge verdicts on them (one per judge and trial)
    judge_known: int = 0  # of them, with a stored cost
    judge_per_call: float | None = None  # the mean of the stored verdict costs

    @property
    def judged(self) -> bool:
        return self.judge_calls > 0

    @property
    def calls_per_trial(self) -> float:
        return self.judge_calls / self.judged_trials if self.judged_trials else 0.0

    @property
    def per_trial(self) -> float | None:
        """Agent plus judge (every trial judged like the judged ones); None with no agent cost.
        A judge whose verdicts have no stored cost adds nothing, and :meth:`notes` says so."""
        if self.agent_per_trial is None:
            return None
        judge = (self.judge_per_call or 0.0) * self.calls_per_trial
        return self.agent_per_trial + judge

    def inputs(self) -> str:
        """``at $0.031 per trial and $0.004 per judge call``: what the figures multiply."""
        text = f"at {usd(self.agent_per_trial)} per trial"
        if self.judge_per_call is not None:
            text += f" and {usd(self.judge_per_call)} per judge call"
            if abs(self.calls_per_trial - 1) > 1e-9:
                text += f" ({self.calls_per_trial:.2g} a trial)"
        return text

    def notes(self, run: str) -> list[str]:
        """What the figures leave out or assume, in words."""
        out = []
        if self.agent_per_trial is None:
            out.append(f"cost unknown: no trial of {run} has a stored cost")
            return out
        if self.agent_known < self.trials:
            out.append(
                f"the agent's cost is the mean of the {self.agent_known} of {self.trials} trials"
                " with a stored cost"
            )
        if self.judged and self.judge_per_call is None:
            out.append(
                f"judge cost unknown: none of its {self.judge_calls} verdicts has a stored cost;"
                " the figures are the agent's alone"
            )
        elif self.judged and self.judged_trials < self.trials:
            out.append(
                f"the judge graded {self.judged_trials} of {self.trials} trials; the figures"
                " judge every trial"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "judged": self.judged,
            "judge_calls_per_trial": self.calls_per_trial,
            "per_trial": self.per_trial,
        }


@dataclass(frozen=True)
class DecisionCost:
    """The cost of runs of ``tasks`` tasks x ``trials`` trials: one run, and the two a comparison
    needs."""

    tasks: int
    trials: int
    per_run: float
    comparison: float

    def text(self) -> str:
        return (
            f"{self.tasks:,} task{'' if self.tasks == 1 else 's'} x {self.trials:,} "
            f"trial{'' if self.trials == 1 else 's'} = {usd(self.per_run)} per run,"
            f" {usd(self.comparison)} for the two runs"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def decision_cost(costs: TrialCosts | None, tasks: int, trials: int) -> DecisionCost | None:
    """What runs of this size cost; None when the cost per trial is unknown."""
    per_trial = None if costs is None else costs.per_trial
    if per_trial is None:
        return None
    per_run = tasks * trials * per_trial
    return DecisionCost(tasks, trials, per_run, 2 * per_run)


def cheaper(options: list[DecisionCost | None]) -> DecisionCost | None:
    """The cheapest of the options that have a cost (fewer trials on a tie)."""
    known = [o for o in options if o is not None]
    return min(known, key=lambda o: (o.per_run, o.tasks * o.trials), default=None)


def usd(v: float | None) -> str:
    """Dollars: to the cent from 10 cents up, two significant digits below ($0.031, $0.0042,
    $0.004)."""
    if v is None:
        return "unknown"
    if v >= 0.1 or v <= 0:
        return f"${v:,.2f}"
    return "$" + f"{v:.{1 - math.floor(math.log10(v))}f}".rstrip("0")
