"""Where a flaky task's failures come from.

A task is flaky when some of its scored trials passed and others failed: trials the harness
crashed are left out, as pass^k and the tasks screen leave them out (a task whose trials passed
whenever they ran to their end is not flaky, however many crashed). Each non-passing trial of a
flaky task, its crashes too, goes to the first source that explains it, in this order (with
``report --include-infra`` a crash counts as a failure, as pass^k counts it then):

1. ``infra``: the harness crashed (outcome ``infra``): not the agent's doing;
2. ``judge``: the harness said fail but the grader disagrees: the failure may be the grader's, not
   the agent's. A human label outranks the judge: when the trial has a standing human label, it
   decides (``pass`` counts here even if the latest judge verdict says fail; ``fail`` does not,
   even if the judge says pass); without one, the latest judge verdict does;
3. ``rule``: the trial broke a rule (any configured rule): a behaviour to fix;
4. ``agent``: the rest: the agent did the same task differently (agent variance).

Unscored trials are neither passes nor failures and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from reviewer.text import table_names

#: The sources in the order a failure is attributed, with what the report calls them.
SOURCES = ("infra", "judge", "rule", "agent")
SOURCE_NAMES = {
    "infra": "infrastructure errors",
    "judge": "judge disagrees",
    "rule": "broke a rule",
    "agent": "agent variance",
}


@dataclass
class TaskFlakiness:
    task_id: str
    trials: int  # scored trials plus infrastructure errors
    passed: int
    infra: int = 0
    judge: int = 0
    rule: int = 0
    agent: int = 0

    @property
    def failures(self) -> int:
        return self.infra + self.judge + self.rule + self.agent

    #: crashed trials count as failures, as pass^k counts them (``report --include-infra``)
    include_infra: bool = False

    @property
    def flaky(self) -> bool:
        return 0 < self.passed < self.trials - (0 if self.include_infra else self.infra)

    @property
    def passed_when_run(self) -> bool:
        """Every trial that ran to its end passed, and the harness crashed others: not flaky
        (unless crashes count as failures)."""
        return not self.include_infra and 0 < self.passed == self.trials - self.infra < self.trials

    def main_source(self) -> str | None:
        """The source with the most failures (the earlier in :data:`SOURCES` on a tie)."""
        if not self.failures:
            return None
        return max(SOURCES, key=lambda s: (getattr(self, s), -SOURCES.index(s)))

    def summary(self) -> str:
        """``2 of 5 failed: 1 infrastructure error, 1 agent variance``-style words."""
        parts = [
            f"{n} {'infrastructure error' if s == 'infra' and n == 1 else SOURCE_NAMES[s]}"
            for s in SOURCES
            if (n := getattr(self, s))
        ]
        return f"{self.failures} of {self.trials} failed: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "failures": self.failures, "main_source": self.main_source()}


def attribute(
    trials: Iterable[tuple[str, str, frozenset[str], str | None, str | None]],
) -> list[TaskFlakiness]:
    """Per task, in order of first appearance, from (task_id, outcome, rules broken, latest judge
    verdict, human label) per trial, verdict and label ``pass`` / ``fail`` / None; every task, flaky
    or not (see :attr:`TaskFlakiness.flaky`). The human label, when there is one, outranks the
    judge's verdict."""
    tasks: dict[str, TaskFlakiness] = {}
    for task_id, outcome, broken, judge, human in trials:
        if outcome == "unscored":
            continue
        t = tasks.setdefault(task_id, TaskFlakiness(task_id, 0, 0))
        t.trials += 1
        if outcome == "pass":
            t.passed += 1
        elif outcome == "infra":
            t.infra += 1
        elif (human if human is not None else judge) == "pass":
            t.judge += 1
        elif broken:
            t.rule += 1
        else:
            t.agent += 1
    return list(tasks.values())


def render_flakiness(tasks: Iterable[TaskFlakiness], limit: int | None = None) -> str:
    """The flaky tasks as a table, or one line saying there are none; with ``limit``, only that many
    (those with the most failures) and a line saying how many more; the shares are over all."""
    tasks = list(tasks)
    every = [t for t in tasks if t.flaky]
    if all(t.trials == t.infra for t in tasks):  # every trial unscored or crashed: nothing
        # passed or failed
        return "Where the flakiness comes from: no scored trial to tell a flaky task by"
    if not every:
        line = "Where the flakiness comes from: no flaky task (every task passed all or none)"
        crashed = sum(t.passed_when_run for t in tasks)
        return line + ("\n" + _crashed_line(crashed) if crashed else "")
    flaky = every
    if limit is not None and len(every) > limit:
        flaky = sorted(every, key=lambda t: (-t.failures, t.task_id))[:limit]
    names = table_names([t.task_id for t in flaky])
    w = max(4, *(len(n) for n in names)) + 2
    heads = ["trials", "failed", *(SOURCE_NAMES[s] for s in SOURCES)]
    lines = [
        "Where the flakiness comes from (failures of flaky tasks; each counted once, in this order)",
        "task".ljust(w) + "".join(h.rjust(len(h) + 2) for h in heads),
    ]
    for name, t in zip(names, flaky, strict=True):
        cells = [t.trials, t.failures, *(getattr(t, s) for s in SOURCES)]
        lines.append(
            name.ljust(w)
            + "".join(str(c).rjust(len(h) + 2) for c, h in zip(cells, heads, strict=True))
        )
    if len(flaky) < len(every):
        lines.append(
            f"… {len(every) - len(flaky):,} more flaky tasks not listed (the {len(flaky)} with the "
            "most failures are; --all lists them all)"
        )
    total = {s: sum(getattr(t, s) for t in every) for s in SOURCES}
    all_failures = sum(total.values())
    share = ", ".join(
        f"{SOURCE_NAMES[s]} {total[s] / all_failures:.0%}" for s in SOURCES if total[s]
    )
    n = len(every)
    lines.append(f"{'the' if n == 1 else 'all'} {n:,} flaky task{'s' * (n != 1)}: {share}")
    if crashed := sum(t.passed_when_run for t in tasks):
        lines.append(_crashed_line(crashed))
    return "\n".join(lines)


def _crashed_line(n: int) -> str:
    """The tasks left out of the flaky ones for their crashes alone."""
    return (
        f"not flaky: {n:,} task{'s' * (n != 1)} whose every trial that ran to its end passed, "
        "the others ended by infrastructure errors (left out, as pass^k leaves them out)"
    )
