"""Power planning: what a comparison of two runs like this one could detect, and what it would take.

A drop of D is the average over tasks of pass@1 (or of pass^k) falling by D, absolute: pass@1 0.75
-> 0.65 is a drop of 0.1. The power of ``reviewer compare`` to call such a drop worse is simulated
(``power_sim.py``) from the run's own per-task rates, each estimated as (c + 0.5) / (n + 1) so a task
that passed every one of a few trials still counts as able to fail, under two shapes of drop: spread
evenly over the tasks, and carried by a fifth of them. The plan takes the lower of the two powers:
the detectable drop, the tasks and the trials it asks for are enough for either shape.
``bench/plan_power.py`` checks with compare itself that runs differing by the planned drop are called
worse about as often as planned, and that runs that do not differ are called worse at most 5% of the
time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from math import comb
from typing import Any

from reviewer.metrics import power_sim
from reviewer.metrics.noise import MIN_TASKS
from reviewer.metrics.passk import shared_k
from reviewer.metrics.plan_cost import DecisionCost, TrialCosts, cheaper, decision_cost
from reviewer.metrics.power_search import (
    MAX_TASKS,
    MAX_TRIALS,
    analytic_tasks,
    detectable_drops,
    lower_power,
    smallest,
    trials_can_reach,
)
from reviewer.metrics.power_sim import SHAPES
from reviewer.text import one_line

#: what the text calls the shapes of a drop
SHAPE_WORDS = {"uniform": "even", "concentrated": "a fifth"}


@dataclass
class MetricPlan:
    """The plan for one metric (pass@1 or pass^k)."""

    metric: str
    label: str
    value: float  # the run's average today
    detectable_drop: float | None  # the smallest drop detected with the wanted power (both shapes)
    #: with the run's trials per task, how many tasks would detect a drop of ``delta``
    tasks_needed: int | None = None
    #: with the run's tasks, how many trials per task would detect a drop of ``delta``
    trials_needed: int | None = None
    #: why ``detectable_drop`` is None although the run has tasks: a drop can never exceed today's
    #: value, so a drop at least as large as it is no drop of this metric at all
    reason: str | None = None
    #: why ``tasks_needed`` and ``trials_needed`` are None: ``delta`` exceeds today's value
    delta_reason: str | None = None
    #: the smallest drop detected with the wanted power, per shape of drop
    detectable_by_shape: dict[str, float | None] = field(default_factory=dict)
    #: how often a drop of ``delta`` is called worse at the run's size, per shape, and the lower
    power_at_delta: dict[str, float] | None = None
    #: the cheaper of ``tasks_needed`` x trials and tasks x ``trials_needed``, priced
    decision_cost: DecisionCost | None = None
    #: why ``trials_needed`` is None on enough tasks: a drop carried by a few tasks varies between
    #: tasks, and no number of trials takes that spread away
    trials_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decision_cost"] = None if self.decision_cost is None else self.decision_cost.to_dict()
        return d


@dataclass
class Plan:
    run: str
    n_tasks: int
    trials: int  # trials per task assumed (the run's median)
    k: int
    power: float
    delta: float | None
    metrics: list[MetricPlan] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    costs: TrialCosts | None = None
    #: what runs of today's size cost (two for a comparison)
    today_cost: DecisionCost | None = None

    def drop_meaning(self) -> str:
        """What a drop of D is, with today's pass@1 as the example."""
        d = self.delta if self.delta is not None else 0.1
        p1 = next((m.value for m in self.metrics if m.metric == "pass_at_1"), None)
        example = "" if p1 is None else f": pass@1 {p1:.3f} -> {max(0.0, p1 - d):.3f} for D = {d:g}"
        return f"a drop of D is the average over tasks falling by D, absolute{example}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "n_tasks": self.n_tasks,
            "trials_per_task": self.trials,
            "k": self.k,
            "power": self.power,
            "alpha": 0.05,
            "delta": self.delta,
            "metrics": [m.to_dict() for m in self.metrics],
            "notes": list(self.notes),
            "drop_meaning": self.drop_meaning(),
            "method": {
                "simulated_comparisons": power_sim.SIMS,
                "seed": power_sim.SEED,
                "shapes": list(SHAPES),
                "concentrated_share": power_sim.CONCENTRATED_SHARE,
                "simulated_up_to": {
                    "tasks": power_sim.SIM_TASKS,
                    "trials": power_sim.SIM_TRIALS,
                },
            },
            "costs": None if self.costs is None else self.costs.to_dict(),
            "today_cost": None if self.today_cost is None else self.today_cost.to_dict(),
        }

    def render(self, width: int = 80) -> str:
        """The plan as text in lines of at most ``width`` columns (run names aside)."""
        lines = [
            f"plan for {one_line(self.run)}: {self.n_tasks} task{'' if self.n_tasks == 1 else 's'},"
            f" {self.trials} trial{'' if self.trials == 1 else 's'} per task (median)",
            *(line for n in self.notes for line in _wrap(f"note: {n}", width)),
        ]
        if not self.metrics:
            return "\n".join(lines)
        lines += [
            "",
            *_wrap(
                f"{self.drop_meaning()}. Power is simulated from the run's own per-task rates,"
                " for a drop spread evenly over the tasks and for one carried by a fifth of"
                " them; the lower power counts.",
                width,
            ),
            "",
            f"smallest drop that `reviewer compare` calls worse {self.power:.0%} of the time:",
        ]
        for m in self.metrics:
            if m.reason is not None:
                lines.append(f"  {m.label:<8} {m.reason}")
                continue
            drop = "none" if m.detectable_drop is None else f"{m.detectable_drop:.3f}"
            lines.append(f"  {m.label:<8} today {m.value:.3f}   drop {drop}{_by_shape(m)}")
        if self.delta is not None:
            lines += ["", f"to detect a drop of {self.delta:g} {self.power:.0%} of the time:"]
            for m in self.metrics:
                lines += self._delta_lines(m)
        lines += self._cost_lines(width)
        lines.append("")
        lines += _wrap(
            "A real drop smaller than these usually reads as 'within noise' in `reviewer"
            " compare`: to see smaller drops, add tasks or trials.",
            width,
        )
        return "\n".join(_fit(lines, width))

    def _delta_lines(self, m: MetricPlan) -> list[str]:
        if m.delta_reason is not None:
            return [f"  {m.label:<8} {m.delta_reason}"]
        tasks = _count(m.tasks_needed, MAX_TASKS, "tasks")
        # pass^k with k above the run's trials is planned at k trials a task (its note says so)
        each = max(self.trials, self.k) if m.metric == "pass_hat_k" else self.trials
        word = "trial" if each == 1 else "trials"
        lines = [f"  {m.label:<8} {tasks} at {each} {word} each, or"]
        if self.n_tasks < MIN_TASKS:
            on = "1 task" if self.n_tasks == 1 else f"{self.n_tasks} tasks"
            more = f"no number of trials on {on} (compare needs {MIN_TASKS})"
        elif m.trials_reason is not None:
            more = m.trials_reason
        else:
            more = _count(m.trials_needed, MAX_TRIALS, "trials per task")
            more += f" on these {self.n_tasks} tasks"
        lines.append(f"  {'':<8} {more}")
        if m.power_at_delta is not None:
            shapes = ", ".join(f"{SHAPE_WORDS[s]} {m.power_at_delta[s]:.0%}" for s in SHAPES)
            now = "today" if self.n_tasks >= MIN_TASKS else f"at {MIN_TASKS} tasks"
            lines.append(
                f"  {'':<8} {now}: called worse {m.power_at_delta['lower']:.0%} of the time"
                f" ({shapes})"
            )
        return lines

    def _cost_lines(self, width: int) -> list[str]:
        if self.costs is None:
            return []
        lines = ["", "dollars to decision (the two runs a comparison needs):"]
        for n in self.costs.notes(self.run):
            lines += _wrap(f"note: {n}", width, indent="  ")
        if self.costs.per_trial is None:
            return lines
        lines.append(f"  {self.costs.inputs()}:")
        if self.today_cost is not None:
            lines.append(f"  {'today':<8} {self.today_cost.text()}")
        if self.delta is None:
            return lines
        for m in self.metrics:
            if m.decision_cost is not None:
                lines.append(f"  {m.label:<8} {m.decision_cost.text()}")
            elif m.delta_reason is None:
                lines.append(f"  {m.label:<8} no plan above detects a drop of {self.delta:g}")
        return lines


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    """``text`` in lines of at most ``width`` columns, each starting with ``indent``."""
    import textwrap

    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _fit(lines: list[str], width: int) -> list[str]:
    """Lines longer than ``width`` wrapped under their own text (a metric's lines under its
    figures, past the label)."""
    import textwrap

    out = []
    for line in lines:
        if len(line) <= width:
            out.append(line)
            continue
        lead = len(line) - len(line.lstrip(" "))
        out += textwrap.wrap(
            line.strip(),
            width,
            initial_indent=" " * lead,
            subsequent_indent=" " * (11 if lead == 2 else lead or 2),
            break_long_words=False,
            break_on_hyphens=False,
        )
    return out


def _by_shape(m: MetricPlan) -> str:
    parts = [
        f"{SHAPE_WORDS[s]} {'none' if v is None else f'{v:.3f}'}"
        for s, v in m.detectable_by_shape.items()
    ]
    return f"   ({', '.join(parts)})" if parts else ""


def _count(v: int | None, cap: int, what: str) -> str:
    return f"more than {cap:,} {what}" if v is None else f"{v:,} {what}"


def plan_run(
    run: str,
    counts: Sequence[tuple[str, int, int]],
    *,
    k: int | None = None,
    delta: float | None = None,
    power: float = 0.8,
    costs: TrialCosts | None = None,
) -> Plan:
    """The plan for a run given its (task, n scored, c passed) counts and, for dollars to
    decision, its stored costs."""
    if not 0 < power < 1:
        raise ValueError(f"--power must be between 0 and 1, got {power:g}")
    if delta is not None and not 0 < delta <= 1:
        raise ValueError(f"--delta must be in (0, 1], got {delta:g}")
    scored = [(t, n, c) for t, n, c in counts if n > 0]
    ns = sorted(n for _, n, _ in scored)
    trials = ns[len(ns) // 2] if ns else 0
    # the report's own k for the run (``passk.shared_k``): a plan's "today" pass^k is the number
    # `reviewer report` and the app show (the median trials per task gave pass^8 beside their pass^7)
    kk = k if k is not None else shared_k([[(n, c) for _, n, c in scored]])
    if kk < 1:
        raise ValueError(f"--k must be at least 1, got {kk}")
    plan = Plan(run, len(scored), trials, kk, power, delta, costs=costs)
    if not scored:
        held = len(counts)
        plan.notes.append(
            f"none of the run's {held} task{'' if held == 1 else 's'} has a scored trial (each "
            "trial crashed or holds no outcome): nothing to plan from"
            if held
            else "the run has no scored trial: nothing to plan from"
        )
        return plan
    plan.today_cost = decision_cost(costs, len(scored), trials)
    rates = tuple(sorted((c + 0.5) / (n + 1) for _, n, c in scored))
    tasks = len(scored)
    if tasks < MIN_TASKS:
        plan.notes.append(
            f"`reviewer compare` decides nothing on {tasks} task{'' if tasks == 1 else 's'}"
            f" (it needs {MIN_TASKS});"
            f" the drops assume {MIN_TASKS}"
        )
    if kk > trials:
        plan.notes.append(
            f"pass^{kk} needs {kk} trials per task; the run has {trials}: its figures assume {kk}"
        )
    kinds = [("pass_at_1", "pass@1", 1)] + ([("pass_hat_k", f"pass^{kk}", kk)] if kk > 1 else [])
    for metric, label, kind in kinds:
        value = _today(scored, kind, label, plan.notes)
        n_eff = max(trials, kind)
        at = max(tasks, MIN_TASKS)
        by_shape = dict(detectable_drops(rates, n_eff, kind, at, power))
        known = [v for v in by_shape.values() if v is not None]
        drop = max(known) if len(known) == len(SHAPES) else None
        mp = MetricPlan(metric, label, value, drop, detectable_by_shape=by_shape)
        if mp.detectable_drop is None or mp.detectable_drop >= value:
            # Even every task falling to 0 is not called worse often enough; or, the rates
            # ((c + 0.5) / (n + 1)) failing where the run never did, the drop found exceeds
            # today's value: a drop that large cannot happen.
            mp.detectable_drop = None
            mp.reason = f"no drop of {label} is detectable: today's value is {value:.3f}"
        if delta is not None and delta > value:
            mp.delta_reason = (
                f"no drop of {delta:g} in {label} is possible: today's value is {value:.3f}"
            )
        elif delta is not None:
            _plan_delta(mp, rates, n_eff, kind, tasks, power, delta, costs)
        plan.metrics.append(mp)
    if _approximated(plan, max(tasks, MIN_TASKS)):
        plan.notes.append(
            f"beyond {power_sim.SIM_TASKS:,} tasks or {power_sim.SIM_TRIALS} trials per task,"
            " power is the normal approximation"
        )
    return plan


def _approximated(plan: Plan, tasks: int) -> bool:
    """Whether a figure of the plan came from the normal approximation (beyond the simulation)."""
    if not power_sim.simulated(max(plan.trials, plan.k), tasks):
        return True
    for m in plan.metrics:
        if plan.delta is None or m.delta_reason is not None:
            continue
        if m.tasks_needed is None or m.tasks_needed > power_sim.SIM_TASKS:
            return True
        if (
            plan.n_tasks >= MIN_TASKS
            and m.trials_reason is None
            and (m.trials_needed is None or m.trials_needed > power_sim.SIM_TRIALS)
        ):
            return True
    return False


def _plan_delta(
    mp: MetricPlan,
    rates: tuple[float, ...],
    n_eff: int,
    kind: int,
    tasks: int,
    power: float,
    delta: float,
    costs: TrialCosts | None,
) -> None:
    """The tasks and trials a drop of ``delta`` needs, today's power to see it, and their cost."""
    at = max(tasks, MIN_TASKS)
    each = {s: power_sim.power(rates, n_eff, kind, at, delta, s) for s in SHAPES}
    mp.power_at_delta = {**each, "lower": min(each.values())}

    def enough(t: int, m: int) -> bool:
        return lower_power(rates, m, kind, t, delta) >= power

    start = analytic_tasks(rates, n_eff, kind, delta, power)
    mp.tasks_needed = smallest(lambda t: enough(t, n_eff), MIN_TASKS, MAX_TASKS, start)
    if tasks >= MIN_TASKS:
        if trials_can_reach(rates, kind, tasks, delta):
            mp.trials_needed = smallest(lambda m: enough(tasks, m), kind, MAX_TRIALS, n_eff)
        else:
            mp.trials_reason = f"no number of trials on these {tasks} tasks (a drop on a fifth)"
    options = []
    if mp.tasks_needed is not None:
        options.append(decision_cost(costs, mp.tasks_needed, n_eff))
    if mp.trials_needed is not None:
        options.append(decision_cost(costs, tasks, mp.trials_needed))
    mp.decision_cost = cheaper(options)


def _hat(n: int, c: int, k: int) -> float:
    return comb(c, k) / comb(n, k) if n >= k else 0.0


def _today(scored: Sequence[tuple[str, int, int]], k: int, label: str, notes: list[str]) -> float:
    """Today's average of pass^k (pass@1 for k = 1) over the tasks, as `reviewer report` gives it:
    a task with fewer than k trials has no value and is left out (it used to count as 0, so the
    plan's pass^8 read 0.620 where the report said 0.66). When no task has k trials, the value is
    the one the simulation draws from: each task's rate (c + 0.5) / (n + 1) to the power k."""
    if k == 1:
        return math.fsum(c / n for _, n, c in scored) / len(scored)
    have = [(n, c) for _, n, c in scored if n >= k]
    if have:
        short = len(scored) - len(have)
        if short:
            notes.append(
                f"today's {label} averages the {len(have)} tasks with {k} or more trials, as"
                f" `reviewer report` does; {short} with fewer {'is' if short == 1 else 'are'}"
                " left out"
            )
        return math.fsum(_hat(n, c, k) for n, c in have) / len(have)
    notes.append(
        f"no task has {k} trials, so today's {label} is estimated from each task's rate"
        f" ((c + 0.5) / (n + 1), to the power {k})"
    )
    return math.fsum(((c + 0.5) / (n + 1)) ** k for _, n, c in scored) / len(scored)
