"""The result of comparing two runs: summary rows, per-task deltas, bootstrap intervals. See compare.py."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.distributions import Distributions
from reviewer.text import visible

#: Buckets of a shared task, in display order. A task takes the first that fits:
#: newly failing = old c > 0 and new c == 0; newly flaky = old all passed and 0 < new c < new n;
#: fixed = new all passed and old did not; regressed / improved = pass^k fell / rose, or, where pass^k
#: is equal or missing, the pass rate c/n fell / rose; unchanged = neither moved.
#: infrastructure error = a run has no scored trial of the task and at least one ended by an
#: infrastructure error (the harness crashed: the task is not worse, it was not measured);
#: unscored = a run has no scored trial of it and none crashed.
INFRA_BUCKET = "infrastructure error"
UNSCORED_BUCKET = "unscored"
BUCKETS = (
    "newly failing",
    "newly flaky",
    "fixed",
    "regressed",
    "improved",
    "unchanged",
    INFRA_BUCKET,
    UNSCORED_BUCKET,
)
RED_FLAG = "RED FLAG"
#: ``Row.direction``, the one field that says whether a row got better or worse (a CI gate reads it):
#: - ``better`` / ``worse``: the 95% interval of new - old over shared tasks excludes zero;
#: - ``within noise``: the values differ but the interval includes zero;
#: - ``too few tasks``: fewer shared tasks than ``noise.MIN_TASKS`` carry the row, so no interval
#:   means anything (``Row.note`` says how many would);
#: - ``same``: equal values; ``n/a``: a run has no value;
#: - ``RED FLAG``: a forbidden rule the baseline never broke is broken in the new run, or its rate
#:   rose beyond noise (one-sided exact test stratified by task, p < :data:`FORBIDDEN_ALPHA`);
#: - ``still broken``: a forbidden rule broken in both runs whose rate did not rise beyond noise (a
#:   warning, not a regression: the new run breaks it about as the baseline did).
BETTER = "better"
WORSE = "worse"
SAME = "same"
NOISE = "within noise"
TOO_FEW = "too few tasks"
NA = "n/a"
STILL_BROKEN = "still broken"
DIRECTIONS = (BETTER, WORSE, NOISE, TOO_FEW, SAME, NA, RED_FLAG, STILL_BROKEN)
#: A forbidden rule's rise is a RED FLAG when its one-sided exact p-value is below this.
FORBIDDEN_ALPHA = 0.05
#: Where the outcomes came from, in words, when not from the harness (``--outcome``).
#: How far apart (as a share of trials) the two runs' coverage by the chosen outcome source may be
#: before the comparison warns that they are graded differently.
COVERAGE_GAP = 0.05
OUTCOME_WORDS = {
    "human": "outcomes: the standing human label where there is one, else the harness's",
    "judge": "outcomes: the latest judge verdict where there is one, else the harness's",
}


@dataclass(frozen=True)
class Row:
    """One summary row. ``direction`` is one of :data:`DIRECTIONS` (see there); ``quoted`` marks an
    improvement shown as ``"better"`` because pass^k got worse at the same time. ``low`` / ``high``
    bound the 95% interval of new - old over ``n_tasks`` shared tasks; ``note`` says what more data
    a ``too few tasks`` row needs."""

    metric: str
    label: str
    old: float | None
    new: float | None
    unit: str  # rate | steps | usd | seconds | pct
    higher_is_better: bool
    direction: str
    quoted: bool = False
    low: float | None = None
    high: float | None = None
    n_tasks: int = 0
    note: str = ""
    #: a forbidden rule's row: (old trials breaking it, old trials, new breaking, new trials)
    counts: tuple[int, int, int, int] | None = None
    #: a forbidden rule's row: the one-sided exact p-value of its rise (stratified by task)
    p_value: float | None = None

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old

    @property
    def mark(self) -> str:
        if self.direction in (SAME, NA):
            return ""
        if self.direction in (NOISE, TOO_FEW, STILL_BROKEN):
            return self.direction
        if self.direction == "better" and self.quoted:
            return '<-- "better"'
        return f"<-- {self.direction}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": self.label,
            "old": self.old,
            "new": self.new,
            "delta": self.delta,
            "unit": self.unit,
            "higher_is_better": self.higher_is_better,
            "direction": self.direction,
            "mark": self.mark,
            "ci95": [self.low, self.high],
            "n_tasks": self.n_tasks,
            "note": self.note,
            "trials": None
            if self.counts is None
            else dict(zip(("old_broken", "old", "new_broken", "new"), self.counts, strict=True)),
            "p_value": self.p_value,
        }

    @property
    def forbidden_short(self) -> str:
        """Why a forbidden rule's row is a RED FLAG, in a few words ("" otherwise)."""
        if self.direction != RED_FLAG or self.counts is None:
            return ""
        if self.counts[0] == 0:
            return "the baseline never broke it"
        p = "" if self.p_value is None else f", exact p = {self.p_value:.2g}"
        return f"a rise beyond noise{p}"

    @property
    def forbidden_words(self) -> str:
        """Why a forbidden rule's row got its direction, in words ("" for other rows)."""
        if self.counts is None:
            return ""
        ob, on, nb, nn = self.counts
        trials = f"{ob} of {on} -> {nb} of {nn} trials"
        p = "" if self.p_value is None else f", one-sided exact p = {self.p_value:.2g}"
        if self.direction == RED_FLAG and ob == 0:
            return f"{trials}: the baseline never broke it{p}"
        if self.direction == RED_FLAG:
            return f"{trials}: a rise beyond noise{p}"
        if self.direction == STILL_BROKEN:
            rise = "a rise within noise" if nb * on > ob * nn else "not a rise"
            return f"{trials}: still broken, {rise}{p}"
        return ""


@dataclass(frozen=True)
class TaskCount:
    task_id: str
    n: int
    c: int

    def to_dict(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "n": self.n, "c": self.c}


@dataclass(frozen=True)
class TaskDelta:
    """One shared task in both runs; pass^k is None where a run has fewer than k trials of it."""

    task_id: str
    old_n: int
    old_c: int
    new_n: int
    new_c: int
    old_pass_hat: float | None
    new_pass_hat: float | None
    bucket: str

    @property
    def delta(self) -> float | None:
        if self.old_pass_hat is None or self.new_pass_hat is None:
            return None
        return self.new_pass_hat - self.old_pass_hat

    @property
    def pass1_delta(self) -> float:
        """0 where a run has no scored trial of the task (its bucket says why)."""
        if not self.old_n or not self.new_n:
            return 0.0
        return self.new_c / self.new_n - self.old_c / self.old_n

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "old": {"n": self.old_n, "c": self.old_c, "pass_hat_k": self.old_pass_hat},
            "new": {"n": self.new_n, "c": self.new_c, "pass_hat_k": self.new_pass_hat},
            "delta_pass_hat_k": self.delta,
            "delta_pass_at_1": self.pass1_delta,
            "bucket": self.bucket,
        }


@dataclass(frozen=True)
class BootstrapCI:
    """Paired bootstrap of mean(new) - mean(old) over tasks; significant when the interval excludes 0."""

    metric: str
    diff: float | None
    low: float | None
    high: float | None
    n_tasks: int
    n_boot: int
    seed: int

    @property
    def significant(self) -> bool:
        if self.low is None or self.high is None:
            return False
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "diff": self.diff,
            "ci95": [self.low, self.high],
            "significant": self.significant,
            "n_tasks": self.n_tasks,
            "n_boot": self.n_boot,
            "seed": self.seed,
        }


@dataclass
class Comparison:
    old_name: str
    new_name: str
    k: int
    k_is_default: bool
    rows: list[Row]
    tasks: list[TaskDelta]
    only_old: list[TaskCount]
    only_new: list[TaskCount]
    excluded: list[str]  # shared tasks with fewer than k scored trials in a run: no pass^k
    bootstrap: list[BootstrapCI]
    old_dist: Distributions
    new_dist: Distributions
    severities: dict[str, str] = field(default_factory=dict)
    #: trials of each run left out of every rate: {"old"|"new": {"infra": n, "unscored": n}}
    left_out: dict[str, dict[str, int]] = field(default_factory=dict)
    #: each run's pass rule in words ({"old": ..., "new": ...}), set by the caller from the store
    pass_rules: dict[str, str] = field(default_factory=dict)
    #: metric -> (r, the 95% interval of new - r x old) for the rows asked for (``scaled``)
    scaled: dict[str, tuple[float, tuple[float, float] | None]] = field(default_factory=dict)
    #: where each trial's outcome came from: harness | human | judge (``store.trials.trial_stats``)
    outcome_source: str = "harness"
    #: {"old"|"new": (trials whose outcome the source gave, trials it could give one)}, set by the
    #: caller for a source other than the harness (``store.trials.outcome_coverage``)
    outcome_coverage: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def coverage_warning(self) -> str | None:
        """A warning when the two runs took their outcomes from the chosen source for clearly
        different shares of their trials (the rest fall back to the harness's): a judged baseline
        against an unjudged new run compares the judge with the harness, not the agent with
        itself."""
        if self.outcome_source == "harness" or len(self.outcome_coverage) != 2:
            return None
        (og, on), (ng, nn) = self.outcome_coverage["old"], self.outcome_coverage["new"]
        if not on or not nn:
            return None
        if abs(og / on - ng / nn) <= COVERAGE_GAP and (og == 0) == (ng == 0):
            return None
        what = "a human label" if self.outcome_source == "human" else "a judge verdict"
        return (
            f"warning: {og} of {on} trials of {visible(self.old_name, single_line=True)} but "
            f"{ng} of {nn} of {visible(self.new_name, single_line=True)} have {what} (the rest "
            "count the harness's outcome): the runs are graded differently"
        )

    @property
    def rules_differ(self) -> bool:
        return len(set(self.pass_rules.values())) > 1

    @property
    def rules_warning(self) -> str | None:
        """The line compare and the gate print when the runs were judged by different rules."""
        if not self.rules_differ:
            return None
        old, new = self.pass_rules.get("old", ""), self.pass_rules.get("new", "")
        return f"warning: the runs' pass rules differ: old {old}; new {new}"

    def row(self, metric: str) -> Row:
        return next(r for r in self.rows if r.metric == metric)

    @property
    def buckets(self) -> dict[str, int]:
        counts = Counter(t.bucket for t in self.tasks)
        return {b: counts.get(b, 0) for b in BUCKETS}

    @property
    def red_flags(self) -> list[Row]:
        return [r for r in self.rows if r.direction == RED_FLAG]

    @property
    def still_broken(self) -> list[Row]:
        return [r for r in self.rows if r.direction == STILL_BROKEN]

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old_name,
            "new": self.new_name,
            "k": self.k,
            "k_is_default": self.k_is_default,
            "summary": [r.to_dict() for r in self.rows],
            "bootstrap": [b.to_dict() for b in self.bootstrap],
            "buckets": self.buckets,
            "tasks": [t.to_dict() for t in self.tasks],
            "only_old": [t.to_dict() for t in self.only_old],
            "only_new": [t.to_dict() for t in self.only_new],
            "excluded": list(self.excluded),
            "rules": dict(self.severities),
            "left_out": {r: dict(v) for r, v in self.left_out.items()},
            "pass_rules": dict(self.pass_rules),
            "pass_rules_differ": self.rules_differ,
            "outcome_source": self.outcome_source,
            "outcome_coverage": {
                side: {"from_source": given, "trials": total}
                for side, (given, total) in self.outcome_coverage.items()
            },
            "outcome_coverage_warning": self.coverage_warning,
            # over the shared tasks' trials the harness did not crash: its own "infra" would say
            # 0 beside a run's crashes, which "left_out" counts
            "distributions": {
                side: {k: v for k, v in dist.to_dict().items() if k != "infra"}
                | {"over": "shared tasks' trials, infrastructure errors left out (left_out)"}
                for side, dist in (("old", self.old_dist), ("new", self.new_dist))
            },
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
