"""The CI gate: did a new run regress against the baseline?

A regression is (1) pass^k or pass@1 worse by the compare command's own rule (its summary row's
``direction`` is ``worse``), (2) any ``RED FLAG`` row (a forbidden rule's rate rising), or (3) a
``[gate]`` budget exceeded: cost per task, p95 latency, average steps or the tool error rate, each as an
absolute limit on the new run or as a ratio to the baseline. Per task, a task *regressed* when it newly
fails (it passed some trials before, none now) or its pass rate fell beyond noise (one-sided Fisher
exact test, p < 0.05); those are the JUnit cases that fail. compare's ``regressed`` bucket is
descriptive (any drop): the gate names the tasks it passed in that bucket "within noise". Pure: the verdict as text and JSON from a
:class:`~reviewer.metrics.compare_types.Comparison` (Markdown and JUnit XML: ``gate_formats``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.compare_types import INFRA_BUCKET, RED_FLAG, UNSCORED_BUCKET, Comparison
from reviewer.metrics.fisher import fisher_one_sided
from reviewer.text import visible

#: [gate] budget key -> (summary row metric, unit, the key of its ratio to the baseline)
BUDGETS: dict[str, tuple[str, str, str]] = {
    "max_cost_per_task": ("cost_per_task", "usd", "max_cost_per_task_ratio"),
    "max_p95_latency_s": ("p95_latency_s", "seconds", "max_p95_latency_ratio"),
    "max_avg_steps": ("avg_steps", "steps", "max_avg_steps_ratio"),
    "max_tool_error_rate": ("tool_error_rate", "pct", "max_tool_error_rate_ratio"),
}
RELIABILITY = ("pass_hat_k", "pass_at_1")
#: The gate's per-task verdict, named apart from compare's descriptive ``regressed`` bucket.
TASKS_FAILED = "tasks that newly fail or fell beyond noise (Fisher p < 0.05)"
NO_TASK_FAILED = "no task newly fails or fell beyond noise (Fisher p < 0.05)"
#: compare's buckets that say a task got worse without testing it
_DESCRIPTIVE_WORSE = ("regressed", "newly flaky")
#: Check statuses where nothing was decided: JUnit skips them.
UNDECIDED = ("too few tasks", "within noise", "n/a")
#: A task regressed beyond noise when its one-sided Fisher exact p-value is below this.
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
    """One task as a JUnit case: failed (regressed), passed, or skipped (not measured in a run)."""

    task_id: str
    status: str  # failed | passed | skipped
    why: str
    old_n: int | None
    old_c: int | None
    new_n: int | None
    new_c: int | None
    bucket: str
    p_value: float | None = None
    trial_ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "status": self.status,
            "why": self.why,
            "baseline": None if self.old_n is None else {"n": self.old_n, "c": self.old_c},
            "new": None if self.new_n is None else {"n": self.new_n, "c": self.new_c},
            "bucket": self.bucket,
            "p_value": self.p_value,
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

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.failed]

    @property
    def passed(self) -> bool:
        return not self.failures

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
            return f"gate: PASS: {head}: nothing regressed{extra}{budgets}"
        return f"gate: FAIL: {head}: " + "; ".join(c.why for c in self.failures)

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
        """Tasks `reviewer compare` buckets as regressed or newly flaky that the gate passed."""
        return [t for t in self.tasks if t.status == "passed" and t.bucket in _DESCRIPTIVE_WORSE]

    def descriptive_lines(self) -> list[str]:
        """Why compare's `regressed` bucket and the gate's task verdict may differ, when they do:
        compare's buckets describe any drop, the gate tests each task."""
        quiet = self.within_noise_tasks
        if not quiet:
            return []
        names = ", ".join(_v(t.task_id) for t in quiet[:8])
        more = f" and {len(quiet) - 8} more" if len(quiet) > 8 else ""
        return [
            "within noise, though compare buckets them regressed or newly flaky (descriptive):",
            f"  {names}{more}",
        ]

    def task_lines(self) -> list[str]:
        bad = self.regressed_tasks
        lines = [NO_TASK_FAILED] if not bad else [f"{TASKS_FAILED} ({len(bad)}):"]
        for t in bad:
            ids = f"  trials: {', '.join(t.trial_ids)}" if t.trial_ids else ""
            lines.append(f"  {_v(t.task_id)}: {t.why}{ids}")
        return lines + self.descriptive_lines()

    def render_text(self) -> str:
        parts = [
            self.verdict_line(),
            *self.warnings,
            "",
            *self.table_lines(),
            "",
            *self.task_lines(),
        ]
        if self.comparison.k_is_default:
            parts.append(f"k = {self.k}: the largest k every shared task supports in both runs")
        return "\n".join(parts) + "\n"

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": "pass" if self.passed else "fail",
            "exit_code": self.exit_code,
            "summary": self.verdict_line(),
            "baseline": self.baseline,
            "new": self.new,
            "k": self.k,
            "budgets": dict(self.budgets),
            "checks": [c.to_dict() for c in self.checks],
            "tasks": [t.to_dict() for t in self.tasks],
            "regressed_tasks": [t.task_id for t in self.regressed_tasks],
            "within_noise_tasks": [t.task_id for t in self.within_noise_tasks],
            "comparison": self.comparison.to_dict(),
            "audit_warnings": list(self.warnings),
        }


def evaluate_gate(
    cmp: Comparison,
    budgets: Mapping[str, float] | None = None,
    failed_trials: Mapping[str, Sequence[str]] | None = None,
    trial_url: str | None = None,
) -> GateResult:
    """The gate's verdict on ``cmp`` (baseline = old, new = new) under ``budgets`` ([gate] keys)."""
    budgets = {k: float(v) for k, v in (budgets or {}).items() if k.startswith("max_")}
    checks = [_check(r, budgets) for r in cmp.rows]
    tasks = _tasks(cmp, failed_trials or {})
    return GateResult(
        cmp.old_name, cmp.new_name, cmp.k, checks, tasks, cmp, trial_url, dict(budgets)
    )


def _check(row: Any, budgets: Mapping[str, float]) -> Check:
    from reviewer.metrics.compare import format_value

    label = visible(row.label, single_line=True)
    old, new = format_value(row.old, row.unit), format_value(row.new, row.unit)
    if row.metric in RELIABILITY and row.direction in ("worse", RED_FLAG):
        why = f"{label} fell {old} -> {new}"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, "regressed", (), why
        )
    if row.direction == RED_FLAG:
        why = f"{label} rose {old} -> {new} (RED FLAG)"
        return Check(
            row.metric, label, row.old, row.new, row.unit, row.direction, RED_FLAG.lower(), (), why
        )
    limits: list[str] = []
    over: list[str] = []
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
            limits.append(f"x{ratio:g} baseline")
            if row.new is not None and row.old is not None and row.new > row.old * ratio + _EPS:
                times = "from 0" if row.old == 0 else f"x{row.new / row.old:.2f}"
                over.append(f"{label} {old} -> {new} ({times}) over {ratio_key} {ratio:g}")
    if over:
        status = "over budget"
    elif row.direction == "n/a" or (
        row.metric in RELIABILITY and row.direction in ("within noise", "too few tasks")
    ):
        status = row.direction  # not a regression, but not a clean pass either: say which
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
        "; ".join(over),
    )


def _tasks(cmp: Comparison, failed_trials: Mapping[str, Sequence[str]]) -> list[TaskVerdict]:
    out: list[TaskVerdict] = []
    for t in sorted(cmp.tasks, key=lambda d: d.task_id):
        ids = tuple(failed_trials.get(t.task_id, ()))
        if t.bucket in (INFRA_BUCKET, UNSCORED_BUCKET):
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
        p = fisher_one_sided(t.old_c, t.old_n, t.new_c, t.new_n)
        rates = f"{t.old_c}/{t.old_n} -> {t.new_c}/{t.new_n} passed"
        if t.bucket == "newly failing":
            status, why = "failed", f"newly fails: {rates}"
        elif p < TASK_ALPHA:
            status, why = "failed", f"pass rate fell beyond noise: {rates} (Fisher p = {p:.3f})"
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
