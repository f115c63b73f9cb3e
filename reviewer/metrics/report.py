"""The `reviewer report` table and JSON for pass@k / pass^k (layout fixed by DESIGN.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from reviewer.metrics.compare_types import OUTCOME_WORDS
from reviewer.metrics.distributions import Distributions
from reviewer.metrics.passk import RunPassK
from reviewer.models import PassRule
from reviewer.store.db import Store
from reviewer.text import crashed, json_ready, natural_key, seconds_text, table_names

#: Where a report's outcomes come from: the harness's, or a human label / the latest judge verdict
#: where one exists (the harness's otherwise).
OUTCOME_SOURCES = ("harness", "human", "judge")


def _known(v: float | None) -> float | None:
    return v if v is None or math.isfinite(v) else None


def _fmt(v: float | None) -> str:
    v = _known(v)
    return "-" if v is None else f"{v:.2f}"


#: Tasks a text report lists per run before it lists only the worst of them (`--all`: every one).
TASK_ROWS = 50


def worst_tasks(report: RunPassK, limit: int = TASK_ROWS) -> list[str] | None:
    """The ids of the ``limit`` worst tasks of ``report``, worst first: lowest pass^k at its largest
    k, then lowest pass@1, then fewest trials, then by id, its numbers as numbers (task 7 before
    task 67; a task with no rate counts as worst);
    None when the run has no more than ``limit`` tasks (the table lists them all)."""
    if len(report.tasks) <= limit:
        return None
    k = max(report.k)

    def key(t: Any) -> tuple[Any, ...]:
        hat = t.pass_hat_k.get(k) if k > 1 else t.pass_at_k.get(1)
        at1 = t.pass_at_k.get(1)
        return (
            -1.0 if _known(hat) is None else hat,
            -1.0 if _known(at1) is None else at1,
            t.n,
            natural_key(t.task_id),
        )

    return [t.task_id for t in sorted(report.tasks, key=key)[:limit]]


def hidden_line(report: RunPassK, shown: Sequence[str]) -> str:
    """What a shortened table leaves out, and how to see it."""
    k = max(report.k)
    listed = set(shown)
    rest = [t for t in report.tasks if t.task_id not in listed]
    name = f"pass^{k}" if k > 1 else "pass@1"
    values = [
        v
        for t in rest
        if (v := _known(t.pass_hat_k.get(k) if k > 1 else t.pass_at_k.get(1))) is not None
    ]
    span = f" ({name} {min(values):.2f} to {max(values):.2f})" if values else ""
    return (
        f"… {len(rest):,} more tasks not listed{span}: the {len(shown)} with the lowest {name} "
        "are; --all lists every task (--json gives them all)"
    )


def render_passk(
    report: RunPassK, scored_note: bool = False, shown: Sequence[str] | None = None
) -> str:
    """Text table: task, then pass@k for every k and pass^k for every k > 1, then an AVERAGE row.
    ``scored_note``: some trials were not scored, so the notes say "scored trials". ``shown``: only
    these tasks, in this order (:func:`worst_tasks`), and a line saying how many more there are;
    the averages are over every task either way."""
    cols: list[tuple[str, str, int]] = [("pass@", "at", k) for k in report.k]
    cols += [("pass^", "hat", k) for k in report.k if k > 1]
    listed = report.tasks
    if shown is not None:
        by_id = {t.task_id: t for t in report.tasks}
        listed = [by_id[t] for t in shown if t in by_id]
    names = table_names([t.task_id for t in listed])  # data, one line each, long ones cut
    width = max([20] + [len(n) + 1 for n in names] + [len("AVERAGE") + 1])
    # at least two spaces between columns, whatever k is
    ws = [max(8, len(f"{p}{k}") + 2) for p, _, k in cols]
    header = "task".ljust(width) + "".join(
        f"{p}{k}".rjust(w) for (p, _, k), w in zip(cols, ws, strict=True)
    )
    lines = [header]
    for t, name in zip(listed, names, strict=True):
        cells = [t.pass_at_k[k] if kind == "at" else t.pass_hat_k[k] for _, kind, k in cols]
        lines.append(
            name.ljust(width) + "".join(_fmt(c).rjust(w) for c, w in zip(cells, ws, strict=True))
        )
    avg = [
        report.average_at_k[k] if kind == "at" else report.average_hat_k[k] for _, kind, k in cols
    ]
    if shown is not None:
        lines.append(hidden_line(report, shown))
    lines.append(
        "AVERAGE".ljust(width) + "".join(_fmt(c).rjust(w) for c, w in zip(avg, ws, strict=True))
    )
    spans = [
        report.interval_at_k.get(k) if kind == "at" else report.interval_hat_k.get(k)
        for _, kind, k in cols
    ]
    if any(x is not None for x in spans):
        lines.append(
            "95% interval over tasks: "
            + ", ".join(f"{p}{k} {_span(x)}" for (p, _, k), x in zip(cols, spans, strict=True))
        )
    for k in report.k:
        left_out = report.excluded.get(k, 0)
        kept = len(report.tasks) - left_out
        if left_out and not kept:  # nothing to average, and no bounds worth a line
            have = "a scored trial" if k == 1 else f"{k} {'scored ' if scored_note else ''}trials"
            lines.append(f"note: no task has {have}: no k={k} average")
        elif left_out:
            lines.append(
                f"note: the k={k} averages use {kept} of {len(report.tasks)} tasks; "
                f"{left_out} with fewer than {k} {'scored ' if scored_note else ''}trials are left out"
            )
            bounds = ", ".join(
                f"{p}{k} {_span((report.bounds_at_k if kind == 'at' else report.bounds_hat_k)[k])}"
                for p, kind, kk in cols
                if kk == k
            )
            lines.append(
                "      (often the hard tasks, with crashed trials: the averages may be too"
            )
            lines.append(f"      high); with each at 0 or at 1: {bounds}")
    return "\n".join(lines)


def average_summary(report: RunPassK, k: int) -> str:
    """The averages of pass@1 and pass^k with their 95% intervals over tasks, and, when tasks
    have fewer than k trials, what pass^k would be with them at 0 or at 1 (the app's tasks
    screen)."""
    # every trial unscored or crashed: "pass@1 - (-)" said nothing
    if report.average_at_k.get(1) is None:
        return "averages: none (no task has a scored trial)"
    parts = [f"pass@1 {_fmt(report.average_at_k.get(1))} ({_span(report.interval_at_k.get(1))})"]
    if k > 1:
        parts.append(
            f"pass^{k} {_fmt(report.average_hat_k.get(k))} ({_span(report.interval_hat_k.get(k))})"
        )
    text = f"averages (95% CI): {' · '.join(parts)}"
    left = report.excluded.get(k, 0) if k > 1 else 0
    if left:
        tasks = f"{left} task{'' if left == 1 else 's'}"
        text += (
            f" · {tasks} with n < {k} left out: pass^{k} {_span(report.bounds_hat_k.get(k))}"
            f" with {'it' if left == 1 else 'them'} at 0 or 1"
        )
    return text


def _span(x: tuple[float, float] | None) -> str:
    return "-" if x is None else f"{_fmt(x[0])} .. {_fmt(x[1])}"


def header_lines(pass_rule: str | None, source: str = "harness") -> list[str]:
    """What a run's report says before its table: the pass rule when it is not the default, and
    where the outcomes come from when not from the harness."""
    lines = []
    rule = PassRule.from_json(pass_rule)
    if not rule.is_default:
        lines.append(f"pass rule: {rule.describe()}")
    if source in OUTCOME_WORDS:
        lines.append(OUTCOME_WORDS[source])
    return lines


def pass_rules(db: Store, old: str, new: str) -> dict[str, str]:
    """Each run's pass rule in words (``{"old": ..., "new": ...}``), for a comparison to say when
    they differ (``Comparison.rules_differ``)."""
    from reviewer.store.queries import run_pass_rule

    return {
        side: PassRule.from_json(run_pass_rule(db, run)).describe()
        for side, run in (("old", old), ("new", new))
    }


def left_out_lines(outcomes: dict[str, int], *, unscored: int | None = None) -> list[str]:
    """The trials left out of pass@k / pass^k, as notes: ``3 trials ended by infrastructure errors,
    left out`` and ``2 unscored trials, left out``. ``unscored`` overrides the count of unscored
    trials (with --outcome human|judge, those judged count as scored)."""
    lines = []
    infra = outcomes.get("infra", 0)
    if infra:
        lines.append(f"note: {crashed(infra)}, left out")
    n = outcomes.get("unscored", 0) if unscored is None else unscored
    if n:
        lines.append(f"note: {n} unscored, left out of pass@k and pass^k")
    return lines


def passk_json(report: RunPassK) -> dict[str, Any]:
    def keyed(d: dict[int, float | None]) -> dict[str, float | None]:
        return {str(k): v for k, v in d.items()}

    return json_ready(
        {
            "run": report.run,
            "k": report.k,
            "tasks": [
                {
                    "task_id": t.task_id,
                    "n": t.n,
                    "c": t.c,
                    "pass_at_k": keyed(t.pass_at_k),
                    "pass_hat_k": keyed(t.pass_hat_k),
                }
                for t in report.tasks
            ],
            "average": {
                "pass_at_k": keyed(report.average_at_k),
                "pass_hat_k": keyed(report.average_hat_k),
                "tasks_left_out": {str(k): v for k, v in report.excluded.items()},
                "ci95": {
                    "pass_at_k": _pairs(report.interval_at_k),
                    "pass_hat_k": _pairs(report.interval_hat_k),
                },
                # the average over every task with the left-out ones at 0, and at 1
                "left_out_bounds": {
                    "pass_at_k": _pairs(report.bounds_at_k),
                    "pass_hat_k": _pairs(report.bounds_hat_k),
                },
            },
        }
    )


def _pairs(d: dict[int, tuple[float, float] | None]) -> dict[str, list[float] | None]:
    return {str(k): None if v is None else [v[0], v[1]] for k, v in d.items()}


def _money(v: float | None) -> str:
    v = _known(v)
    return "-" if v is None else f"${v:.3f}"


def _secs(v: float | None) -> str:
    v = _known(v)
    return "-" if v is None else seconds_text(v)


def _pct(v: float | None) -> str:
    v = _known(v)
    return "-" if v is None else f"{v * 100:.1f}%"


def _avg(v: float | None) -> str:
    v = _known(v)
    return "-" if v is None else f"{v:.1f}"


def render_distributions(
    run: Distributions, tasks: dict[str, Distributions], hidden: int = 0
) -> str:
    """The second table of `reviewer report`: steps, cost, latency and tool errors per task and
    overall; ``hidden``: tasks not in ``tasks`` (a shortened report), said in one line."""
    names = dict(zip(tasks, table_names(list(tasks)), strict=True))  # data, one line each
    width = max([20] + [len(n) + 1 for n in names.values()] + [len("ALL") + 1])
    heads = [
        ("trials", 7),
        ("steps", 7),
        ("p95 st", 7),
        ("cost/trial", 11),
        ("lat p50", 8),
        ("lat p95", 8),
        ("lat max", 8),
        ("tool err", 9),
        ("rules", 6),
    ]

    def cells_of(d: Distributions) -> list[str]:
        broken = sum(d.violation_trials.values())
        return [
            str(d.measured),
            _avg(d.steps.mean),
            _avg(d.steps.p95),
            _money(d.cost_per_trial.mean),
            _secs(d.latency.p50),
            _secs(d.latency.p95),
            _secs(d.latency.max),
            _pct(d.tool_error_rate),
            str(broken),
        ]

    # each column at least two cells wider than its widest value, so a 76,778 s latency or a
    # $1,234.56 cost never runs into its neighbour
    widths = [w for _, w in heads]
    for d in [*tasks.values(), run]:
        widths = [max(w, len(c) + 2) for w, c in zip(widths, cells_of(d), strict=True)]
    lines = [
        "task".ljust(width) + "".join(h.rjust(w) for (h, _), w in zip(heads, widths, strict=True))
    ]

    def row(name: str, d: Distributions) -> str:
        return name.ljust(width) + "".join(
            c.rjust(w) for c, w in zip(cells_of(d), widths, strict=True)
        )

    for task_id, d in tasks.items():
        lines.append(row(names[task_id], d))
    if hidden:
        lines.append(f"… {hidden:,} more tasks not listed (--all); ALL is over every task")
    lines.append(row("ALL", run))
    lines.append(
        f"cost / task (mean over tasks of the mean attempt cost): {_money(run.cost_per_task.mean)}"
    )
    unknown = [
        f"{what} unknown for {n:,} trial{'' if n == 1 else 's'}"
        for what, n in (("cost", run.cost_per_trial.missing), ("latency", run.latency.missing))
        if n
    ]
    if run.infra:
        n = run.infra
        unknown.append(f"{crashed(n)}, left out")
    if unknown:
        lines.append("note: " + ", ".join(unknown))
    if run.violation_trials:
        parts = [
            f"{rule} {_pct(rate)} ({run.violation_trials[rule]} of {run.measured})"
            for rule, rate in run.violation_rate.items()
        ]
        lines.append("rule violations (share of trials): " + ", ".join(parts))
    return "\n".join(lines)
