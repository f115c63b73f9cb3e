"""The CI gate: did a new run regress against the baseline?

A regression is (1) pass^k or pass@1 worse by the compare command's own rule (its summary row's
``direction`` is ``worse``), (2) a ``RED FLAG`` row (a forbidden rule the baseline never broke is broken
now, or its rate rose beyond noise: compare's one-sided exact test within tasks), (3) a task whose pass
rate fell beyond noise, or (4) a ``[gate]`` budget exceeded: cost per task, p95 latency, average steps
or the tool error rate, each as an absolute limit on the new run or as a ratio to the baseline
(``budget_noise``: a ratio only when exceeded beyond noise).

Per task: every task scored in both runs is tested (one-sided Fisher exact test that its pass rate
fell) and the p-values are Holm-adjusted over those tasks, so the chance that any task of an unchanged
agent is failed stays under 5% however many tasks there are. A task fails when its adjusted p-value is
below 0.05; a task that dropped without that (it newly fails 1/4 -> 0/4, or fell a little) is a
warning, never a failure. A forbidden rule still broken about as often as before is a warning too.
Pure: the verdict as text and JSON from a :class:`~reviewer.metrics.compare_types.Comparison`
(Markdown and JUnit XML: ``gate_formats``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from reviewer.metrics.compare_types import (
    FORBIDDEN_ALPHA,
    INFRA_BUCKET,
    OUTCOME_WORDS,
    RED_FLAG,
    STILL_BROKEN,
    UNSCORED_BUCKET,
    Comparison,
)
from reviewer.metrics.drift import AnchorReport
from reviewer.metrics.fisher import fisher_one_sided
from reviewer.metrics.multiple import holm
from reviewer.text import crashed, natural_key, visible

#: [gate] budget key -> (summary row metric, unit, the key of its ratio to the baseline)
BUDGETS: dict[str, tuple[str, str, str]] = {
    "max_cost_per_task": ("cost_per_task", "usd", "max_cost_per_task_ratio"),
    "max_p95_latency_s": ("p95_latency_s", "seconds", "max_p95_latency_ratio"),
    "max_avg_steps": ("avg_steps", "steps", "max_avg_steps_ratio"),
    "max_tool_error_rate": ("tool_error_rate", "pct", "max_tool_error_rate_ratio"),
}
RELIABILITY = ("pass_hat_k", "pass_at_1")
#: The gate's per-task verdict, named apart from compare's descriptive ``regressed`` bucket.
TASKS_FAILED = "tasks whose pass rate fell beyond noise (Fisher, Holm-adjusted p < 0.05)"
NO_TASK_FAILED = "no task's pass rate fell beyond noise (Fisher, Holm-adjusted p < 0.05)"
#: compare's buckets that say a task got worse without testing it
_DESCRIPTIVE_WORSE = ("newly failing", "newly flaky", "regressed")
#: Check statuses where nothing was decided: JUnit skips them.
UNDECIDED = (
    "too few tasks",
    "within noise",
    "n/a",
    STILL_BROKEN,
    "new, within noise",
    "judge moved",
)
#: A judged pass rate that fell while the judge itself became stricter on the anchors.
JUDGE_MOVED = "judge moved"
#: A task regressed beyond noise when its Holm-adjusted one-sided Fisher p-value is below this.
TASK_ALPHA = 0.05
_EPS = 1e-9


@dataclass(frozen=True)
class Check:
    """One summary row of the comparison with what the gate made of it."""

    metric: str
    label: str
    old: float | None
    new: float | None
    unit: str
    direction: str
    status: str  # ok | regressed | red flag | over budget | n/a
    limits: tuple[str, ...] = ()  # the budgets on this row, in words
    why: str = ""  # one clause for the verdict line when not ok

    @property
    def failed(self) -> bool:
        return self.status in ("regressed", RED_FLAG.lower(), "over budget")

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "label": self.label,
            "baseline": self.old,
            "new": self.new,
            "unit": self.unit,
            "direction": self.direction,
            "status": self.status,
            "limits": list(self.limits),
            "why": self.why or None,
        }


@dataclass(frozen=True)
class TaskVerdict:
    """One task as a JUnit case: failed (fell beyond noise), passed, warning (dropped within noise:
    a skipped case saying so) or skipped (not measured in a run)."""

    task_id: str
    status: str  # failed | passed | warning | skipped
    why: str
    old_n: int | None
    old_c: int | None
    new_n: int | None
    new_c: int | None
    bucket: str
    p_value: float | None = None
    trial_ids: tuple[str, ...] = ()
    #: ``p_value`` Holm-adjusted over the tasks tested together
    adjusted_p: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "status": self.status,
            "why": self.why,
            "baseline": None if self.old_n is None else {"n": self.old_n, "c": self.old_c},
            "new": None if self.new_n is None else {"n": self.new_n, "c": self.new_c},
            "bucket": self.bucket,
            "p_value": self.p_value,
            "holm_p_value": self.adjusted_p,
            "failed_trials": list(self.trial_ids),
        }


@dataclass
class GateResult:
    baseline: str
    new: str
    k: int
    checks: list[Check]
    tasks: list[TaskVerdict]
    comparison: Comparison
    trial_url: str | None = None
    budgets: dict[str, float] = field(default_factory=dict)
    #: the independence audit's warnings on either run (``reviewer audit``): shown under the verdict
    warnings: list[str] = field(default_factory=list)
    #: ratio budgets count only when exceeded beyond noise ([gate] budget_noise)
    budget_noise: bool = False
    #: the judge's own shift on the [gate] anchors, when configured
    anchors: AnchorReport | None = None

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def passed(self) -> bool:
        return not self.failures and not self.regressed_tasks

    @property
    def warning_checks(self) -> list[Check]:
        """Forbidden rules the new run breaks without a RED FLAG, and ratio budgets exceeded within
        noise: not regressions, but to be seen."""
        return [
            c
            for c in self.checks
            if c.status in (STILL_BROKEN, NEW_WITHIN_NOISE, JUDGE_MOVED)
            or (c.status == "within noise" and c.why)
        ]

    def forbidden_lines(self) -> list[str]:
        """Each forbidden rule the new run breaks: its trials in both runs and the exact test."""
        rows = [r for r in self.comparison.rows if r.forbidden_words]
        return [f"{_v(r.label)}: {r.forbidden_words}" for r in rows]

    def warning_lines(self) -> list[str]:
        """One line per warning check, under the verdict, then the trials a run left out."""
        out = []
        for c in self.warning_checks:
            if c.status in ("within noise", JUDGE_MOVED):
                out.append(f"warning: {c.why}")
            else:
                out.append(f"warning: {c.label} {c.status}: {c.why}")
        if self.comparison.coverage_warning:
            out.append(self.comparison.coverage_warning)
        if self.comparison.rules_warning:
            out.append(self.comparison.rules_warning)
        for c in self.unchecked_budgets:
            side = (
                "neither run has"
                if c.old is None and c.new is None
                else ("the baseline has" if c.new is not None else f"{_v(self.new)} has")
            )
            out.append(
                f"warning: {c.label} not checked against its budget ({', '.join(c.limits)}): "
                f"{side} no value for it"
            )
        return out + self.left_out_lines()

    @property
    def unchecked_budgets(self) -> list[Check]:
        """Checks with a [gate] budget that could not be held to it: a run has no value (no
        trial with a cost, say). The gate used to say 'within budgets' for them."""
        return [c for c in self.checks if c.limits and c.status == "n/a"]

    def left_out_lines(self) -> list[str]:
        """The trials of each run that no check saw (infrastructure errors, unscored) and the tasks
        that were not measured for it: a run whose harness crashed on most tasks leaves the few it
        scored to decide, and its PASS must say so."""
        out = []
        for side, name in (("old", self.baseline), ("new", self.new)):
            counts = self.comparison.left_out.get(side, {})
            parts = []
            if counts.get("infra"):
                n = counts["infra"]
                parts.append(crashed(n))
            if counts.get("unscored"):
                n = counts["unscored"]
                parts.append(f"{n} unscored trial{'' if n == 1 else 's'}")
            if parts:
                out.append(f"warning: {_v(name)}: {' and '.join(parts)}, left out")
        missing = [t for t in self.tasks if t.bucket in (INFRA_BUCKET, UNSCORED_BUCKET)]
        if missing:
            out.append(
                f"warning: {len(missing)} of {len(self.comparison.tasks)} shared tasks not measured"
                " in both runs (no scored trial in one of them); the checks are over the rest"
            )
        if gone := self.comparison.only_old:
            names = ", ".join(_v(t.task_id) for t in gone[:5])
            more = f" and {len(gone) - 5} more" if len(gone) > 5 else ""
            out.append(
                f"warning: {len(gone)} task{'' if len(gone) == 1 else 's'} of the baseline "
                f"{'is' if len(gone) == 1 else 'are'} not in {_v(self.new)}, so not gated: "
                f"{names}{more}"
            )
        return out

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    @property
    def regressed_tasks(self) -> list[TaskVerdict]:
        return [t for t in self.tasks if t.status == "failed"]

    def verdict_line(self) -> str:
        """One line: PASS or FAIL and why."""
        head = f"{_v(self.new)} vs baseline {_v(self.baseline)}"
        if self.passed:
            hk = next((c for c in self.checks if c.metric == "pass_hat_k"), None)
            extra = ""
            if hk is not None and hk.old is not None and hk.new is not None:
                extra = f" ({hk.label} {hk.old:.2f} -> {hk.new:.2f})"
            budgets = ", within budgets" if self.budgets else ""
            if unchecked := self.unchecked_budgets:
                # a budget with no value to hold it to (the run has no cost, say) is not met
                budgets = ", budgets not checked: " + ", ".join(c.label for c in unchecked)
            return f"gate: PASS: {head}: nothing regressed{extra}{budgets}"
        why = [c.why for c in self.failures]
        bad = self.regressed_tasks
        if bad:
            names = ", ".join(_v(t.task_id) for t in bad[:3]) + (", ..." if len(bad) > 3 else "")
            why.append(f"{len(bad)} task{'' if len(bad) == 1 else 's'} fell beyond noise ({names})")
        return f"gate: FAIL: {head}: " + "; ".join(why)

    def table_lines(self) -> list[str]:
        rows = [
            (
                c.label,
                _fmt(c.old, c.unit),
                _fmt(c.new, c.unit),
                ", ".join(c.limits),
                c.status.upper() if c.failed else c.status,
            )
            for c in self.checks
        ]
        head = ("check", "baseline", "new", "limit", "result")
        widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
        out = []
        for r in [head, *rows]:
            out.append(
                f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  "
                f"{r[3]:<{widths[3]}}  {r[4]}".rstrip()
            )
        return out

    @property
    def within_noise_tasks(self) -> list[TaskVerdict]:
        """Tasks that dropped (compare buckets them newly failing, newly flaky or regressed) but not
        beyond noise: warnings, not failures."""
        return [t for t in self.tasks if t.status == "warning"]

    @property
    def tested_tasks(self) -> int:
        """Tasks scored in both runs: the family the Holm adjustment is over."""
        return sum(1 for t in self.tasks if t.adjusted_p is not None)

    def descriptive_lines(self) -> list[str]:
        """The tasks that dropped within noise, named, so that nobody reads them as passes."""
        quiet = self.within_noise_tasks
        if not quiet:
            return []
        names = ", ".join(
            f"{_v(t.task_id)} ({t.old_c}/{t.old_n} -> {t.new_c}/{t.new_n})" for t in quiet[:8]
        )
        more = f" and {len(quiet) - 8} more" if len(quiet) > 8 else ""
        return [
            f"dropped within noise ({len(quiet)}; warnings, not failures):",
            f"  {names}{more}",
        ]

    def task_lines(self) -> list[str]:
        bad = self.regressed_tasks
        tested = f"; {self.tested_tasks} tasks tested"
        lines = [NO_TASK_FAILED + tested] if not bad else [f"{TASKS_FAILED} ({len(bad)}{tested}):"]
        for t in bad:
            ids = f"  trials: {', '.join(t.trial_ids)}" if t.trial_ids else ""
            lines.append(f"  {_v(t.task_id)}: {t.why}{ids}")
        return lines + self.descriptive_lines()

    def report_lines(self) -> list[str]:
        """The whole verdict as lines: the verdict, its warnings, the table, the forbidden rules'
        tests, the judge's drift on the anchors, the tasks (the CLI prints them, the app shows them)."""
        parts = [
            self.verdict_line(),
            *self.warning_lines(),
            *self.warnings,
            "",
            *self.table_lines(),
            *(["", *self.forbidden_lines()] if self.forbidden_lines() else []),
            *(["", *self.anchors.lines()] if self.anchors is not None else []),
            "",
            *self.task_lines(),
        ]
        if self.comparison.k_is_default:
            parts.append(f"k = {self.k}: the largest k every shared task supports in both runs")
        if self.comparison.outcome_source in OUTCOME_WORDS:
            parts.append(OUTCOME_WORDS[self.comparison.outcome_source])
        return parts

    def render_text(self) -> str:
        return "\n".join(self.report_lines()) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": "pass" if self.passed else "fail",
            "exit_code": self.exit_code,
            "summary": self.verdict_line(),
            "baseline": self.baseline,
            "new": self.new,
            "k": self.k,
            "budgets": dict(self.budgets),
            "budget_noise": self.budget_noise,
            "checks": [c.to_dict() for c in self.checks],
            "tasks": [t.to_dict() for t in self.tasks],
            "regressed_tasks": [t.task_id for t in self.regressed_tasks],
            "within_noise_tasks": [t.task_id for t in self.within_noise_tasks],
            "task_test": {
                "test": "one-sided Fisher exact, Holm-adjusted over the tested tasks",
                "alpha": TASK_ALPHA,
                "tested": self.tested_tasks,
            },
            "warnings": self.warning_lines(),
            "outcome_source": self.comparison.outcome_source,
            "anchors": None if self.anchors is None else self.anchors.to_dict(),
            "comparison": self.comparison.to_dict(),
            "audit_warnings": list(self.warnings),
        }


#: ``[gate] new_forbidden``: what a forbidden rule the baseline never broke is when the new run
#: breaks it. "red flag" (the default): a RED FLAG however few the trials; "test": a RED FLAG only
#: when the rise is beyond noise like any other, else a warning.
NEW_FORBIDDEN = ("red flag", "test")
#: The gate's warning when a forbidden rule the baseline never broke is broken within noise ("test").
NEW_WITHIN_NOISE = "new, within noise"


def evaluate_gate(
    cmp: Comparison,
    budgets: Mapping[str, float] | None = None,
    failed_trials: Mapping[str, Sequence[str]] | None = None,
    trial_url: str | None = None,
    *,
    budget_noise: bool = False,
    new_forbidden: str = "red flag",
) -> GateResult:
    """The gate's verdict on ``cmp`` (baseline = old, new = new) under ``budgets`` ([gate] keys).

    ``budget_noise``: a ratio budget is exceeded only when new - ratio x baseline is above zero
    beyond noise (``cmp.scaled`` holds its interval; without one the plain comparison decides).
    ``new_forbidden``: see :data:`NEW_FORBIDDEN`."""
    budgets = {k: float(v) for k, v in (budgets or {}).items() if k.startswith("max_")}
    scaled = cmp.scaled if budget_noise else {}
    checks = [_check(r, budgets, scaled, new_forbidden) for r in cmp.rows]
    tasks = _tasks(cmp, failed_trials or {})
    result = GateResult(
        cmp.old_name, cmp.new_name, cmp.k, checks, tasks, cmp, trial_url, dict(budgets)
    )
    result.budget_noise = budget_noise
    return result


def attribute_to_judge(result: GateResult) -> None:
    """When the gate decided on judged outcomes and the judge itself became stricter beyond noise on
    the anchors, a fall the judge's shift can explain is not blamed on the agent: when pass@1 fell
    by no more than the largest shift the anchors allow (the low end of its 95% interval), the
    falls of pass^k, pass@1 and the tasks become "judge moved" warnings. A fall larger than that is
    still the agent's: it stays a regression, and its reason says how much the judge explains."""
    drift = result.anchors
    if (
        result.comparison.outcome_source != "judge"
        or drift is None
        or drift.shift is None
        or not drift.moved
        or drift.shift.shift >= 0
    ):
        return
    low, _ = drift.shift.interval()
    row = next((r for r in result.comparison.rows if r.metric == "pass_at_1"), None)
    fall = 0.0 if row is None or row.delta is None else -row.delta
    moved = f"the judge itself moved {drift.shift.shift:+.2f} on the anchors"
    if fall > -low + 1e-9:
        # the agent fell by more than the judge can account for: a regression all the same
        extra = f" ({moved}, which explains at most {-low:.2f} of pass@1's {fall:.2f} fall)"
        result.checks = [
            replace(c, why=c.why + extra)
            if c.metric in RELIABILITY and c.status == "regressed"
            else c
            for c in result.checks
        ]
        return
    result.checks = [
        replace(c, status=JUDGE_MOVED, why=f"{c.why}, but {moved}")
        if c.metric in RELIABILITY and c.status == "regressed"
        else c
        for c in result.checks
    ]
    result.tasks = [
        replace(t, status="warning", why=f"{t.why}; but {moved}", trial_ids=())
        if t.status == "failed"
        else t
        for t in result.tasks
    ]


def ratio_budgets(budgets: Mapping[str, float]) -> dict[str, float]:
    """metric -> ratio of the ratio budgets among ``budgets`` (what ``compare_runs(scaled=...)``
    needs for the noise allowance)."""
    return {
        metric: float(budgets[ratio_key])
        for metric, _, ratio_key in BUDGETS.values()
        if ratio_key in budgets
    }


def _check(
    row: Any,
    budgets: Mapping[str, float],
    scaled: Mapping[str, tuple[float, tuple[float, float] | None]],
    new_forbidden: str,
) -> Check:
    from reviewer.metrics.compare import format_value

    label = visible(row.label, single_line=True)
    old, new = format_value(row.old, row.unit), format_value(row.new, row.unit)
    if row.metric in RELIABILITY and row.direction in ("worse", RED_FLAG):
        why = f"{label} fell {old} -> {new}"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, "regressed", (), why
        )
    if (
        row.direction == RED_FLAG
        and new_forbidden == "test"
        and row.counts is not None
        and row.counts[0] == 0
        and (row.p_value is None or row.p_value >= FORBIDDEN_ALPHA)
    ):
        p = "" if row.p_value is None else f", exact p = {row.p_value:.2g}"
        why = f"{old} -> {new} (the baseline never broke it; within noise{p})"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, NEW_WITHIN_NOISE, (), why
        )
    if row.direction == RED_FLAG:
        short = f": {row.forbidden_short}" if row.forbidden_short else ""
        why = f"{label} rose {old} -> {new} (RED FLAG{short})"
        if row.old is not None and row.new is not None and row.new <= row.old:
            # the test compares each task with itself: the rate over all trials can fall when the
            # new run has many more trials of tasks that never break the rule
            why = f"{label} rose within tasks ({old} -> {new} over all trials; RED FLAG{short})"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, RED_FLAG.lower(), (), why
        )
    if row.direction == STILL_BROKEN:
        why = f"{old} -> {new} ({row.forbidden_words})"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, STILL_BROKEN, (), why
        )
    limits: list[str] = []
    over: list[str] = []
    quiet: list[str] = []  # over a ratio budget, but within noise (budget_noise)
    for key, (metric, unit, ratio_key) in BUDGETS.items():
        if metric != row.metric:
            continue
        if key in budgets:
            limit = budgets[key]
            limits.append(f"max {format_value(limit, unit)}")
            if row.new is not None and row.new > limit * (1 + _EPS):
                over.append(f"{label} {new} over {key} {format_value(limit, unit)}")
        if ratio_key in budgets:
            ratio = budgets[ratio_key]
            noisy = metric in scaled
            limits.append(f"x{ratio:g} baseline" + (" beyond noise" if noisy else ""))
            if row.new is not None and row.old is not None and row.new > row.old * ratio + _EPS:
                times = "from 0" if row.old == 0 else f"x{row.new / row.old:.2f}"
                words = f"{label} {old} -> {new} ({times}) over {ratio_key} {ratio:g}"
                ci = scaled[metric][1] if noisy else None
                if noisy and (ci is None or ci[0] <= 0):
                    quiet.append(f"{words}, within noise")
                else:
                    over.append(words + (" beyond noise" if noisy else ""))
    if over:
        status = "over budget"
    elif quiet:
        status = "within noise"
    elif row.direction in ("n/a", "within noise", "too few tasks"):
        # not a regression, but not a clean pass either: say which (compare's own words: a
        # tool error rate up from 6.4% to 8.0% within noise read "ok" here)
        status = row.direction
    elif row.direction == "worse":  # beyond noise, and no budget fails it: shown, not failed
        status = "worse"
    else:
        status = "ok"
    return Check(
        row.metric,
        label,
        row.old,
        row.new,
        row.unit,
        row.direction,
        status,
        tuple(limits),
        "; ".join(over or quiet),
    )


def _tasks(cmp: Comparison, failed_trials: Mapping[str, Sequence[str]]) -> list[TaskVerdict]:
    out: list[TaskVerdict] = []
    measured = [
        t for t in sorted(cmp.tasks, key=lambda d: natural_key(d.task_id))
        if t.bucket not in (INFRA_BUCKET, UNSCORED_BUCKET)
    ]  # fmt: skip
    raw = [fisher_one_sided(t.old_c, t.old_n, t.new_c, t.new_n) for t in measured]
    adjusted = dict(
        zip((t.task_id for t in measured), zip(raw, holm(raw), strict=True), strict=True)
    )
    for t in sorted(cmp.tasks, key=lambda d: natural_key(d.task_id)):
        ids = tuple(failed_trials.get(t.task_id, ()))
        if t.task_id not in adjusted:
            out.append(
                TaskVerdict(
                    t.task_id,
                    "skipped",
                    f"not measured: {t.bucket}",
                    t.old_n,
                    t.old_c,
                    t.new_n,
                    t.new_c,
                    t.bucket,
                )
            )
            continue
        p, p_holm = adjusted[t.task_id]
        rates = f"{t.old_c}/{t.old_n} -> {t.new_c}/{t.new_n} passed"
        test = f"Fisher p = {p:.2g}, Holm-adjusted {p_holm:.2g}"
        if p_holm < TASK_ALPHA:
            status, why = "failed", f"pass rate fell beyond noise: {rates} ({test})"
        elif t.bucket in _DESCRIPTIVE_WORSE:
            status, why = "warning", f"{t.bucket}, within noise: {rates} ({test})"
        else:
            status, why = "passed", f"{t.bucket}: {rates}"
        out.append(
            TaskVerdict(
                t.task_id,
                status,
                why,
                t.old_n,
                t.old_c,
                t.new_n,
                t.new_c,
                t.bucket,
                p,
                ids if status == "failed" else (),
                p_holm,
            )
        )
    for only in cmp.only_new:
        out.append(
            TaskVerdict(
                only.task_id,
                "skipped",
                "not in the baseline",
                None,
                None,
                only.n,
                only.c,
                "only in new",
            )
        )
    for only in cmp.only_old:
        out.append(
            TaskVerdict(
                only.task_id,
                "skipped",
                "not in the new run",
                only.n,
                only.c,
                None,
                None,
                "only in old",
            )
        )
    return out


def _fmt(v: float | None, unit: str) -> str:
    from reviewer.metrics.compare import format_value

    return format_value(v, unit)


def _v(s: str) -> str:
    return visible(s, single_line=True)
