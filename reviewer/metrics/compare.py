"""Compare two runs task by task: summary rows with a judged direction, per-task deltas, a noise check.

Only tasks present in both runs are compared (all rows, including steps and cost, are over those shared
tasks); tasks present in one run only are listed. pass^k is averaged over the shared tasks that have at
least k trials in both runs; the others are listed as excluded. The paired bootstrap resamples shared
tasks with replacement and reports a 95% percentile interval of the new - old difference.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import Any

from reviewer.metrics.compare_types import (
    BETTER,
    BUCKETS,
    DIRECTIONS,
    FORBIDDEN_ALPHA,
    INFRA_BUCKET,
    NA,
    NOISE,
    OUTCOME_WORDS,
    RED_FLAG,
    SAME,
    STILL_BROKEN,
    TOO_FEW,
    UNSCORED_BUCKET,
    WORSE,
    BootstrapCI,
    Comparison,
    Row,
    TaskCount,
    TaskDelta,
)
from reviewer.metrics.distributions import TrialStats, run_distributions
from reviewer.metrics.noise import (
    MIN_TASKS,
    PercentileSpec,
    RatioSpec,
    Spec,
    task_intervals,
)
from reviewer.metrics.passk import pass_hat_k_exact
from reviewer.text import crashed, elide_middle, natural_key, seconds_text, table_names, visible

__all__ = [
    "BUCKETS",
    "DIRECTIONS",
    "MIN_TASKS",
    "RED_FLAG",
    "BootstrapCI",
    "Comparison",
    "Row",
    "TaskCount",
    "TaskDelta",
    "compare_runs",
    "count_by_task",
    "default_k",
    "format_value",
    "render_comparison",
]

_EPS = 1e-12


def default_k(old: dict[str, tuple[int, int]], new: dict[str, tuple[int, int]]) -> int:
    """The largest k that every shared task scored in both runs supports (1 when there is none);
    a task with no scored trial in a run (infrastructure errors, unscored) does not lower it."""
    shared = old.keys() & new.keys()
    return min((min(old[t][0], new[t][0]) for t in shared if old[t][0] and new[t][0]), default=1)


def count_by_task(stats: Iterable[TrialStats]) -> dict[str, tuple[int, int]]:
    """task_id -> (n scored trials, c successes), in order of first appearance; a task whose trials
    all ended by infrastructure errors or are unscored is there with n = 0."""
    n: Counter[str] = Counter()
    c: Counter[str] = Counter()
    for s in stats:
        n[s.task_id] += s.scored
        if s.success and s.scored:
            c[s.task_id] += 1
    return {t: (m, c[t]) for t, m in n.items()}


def _crashed_tasks(stats: Iterable[TrialStats]) -> set[str]:
    return {s.task_id for s in stats if s.outcome == "infra"}


def _left_out(stats: Sequence[TrialStats]) -> dict[str, int]:
    return {
        "infra": sum(1 for s in stats if s.outcome == "infra"),
        "unscored": sum(1 for s in stats if s.outcome == "unscored"),
    }


def compare_runs(
    old: Sequence[TrialStats],
    new: Sequence[TrialStats],
    k: int | None = None,
    rules_severity: dict[str, str] | None = None,
    seed: int = 0,
    n_boot: int = 2000,
    old_name: str = "old",
    new_name: str = "new",
    scaled: Mapping[str, float] | None = None,
) -> Comparison:
    """Compare ``new`` against ``old`` over their shared tasks.

    ``scaled`` maps a summary row's metric to a ratio r: the comparison also holds the 95% interval
    of new - r x old for that row (``Comparison.scaled``), from the same resamples (the gate's ratio
    budgets with a noise allowance).

    ``k`` defaults to :func:`default_k`. ``rules_severity`` maps the configured rule ids to their
    severity; ids found in violations but not configured count as ``policy``. The forbidden-tool row
    (share of trials breaking any ``forbidden`` rule) is shown when a forbidden rule is configured; it
    and each forbidden rule's row is a RED FLAG when the baseline never broke it and the new run does,
    or when its rate rose beyond noise (``fisher.stratified_rise`` < ``FORBIDDEN_ALPHA``), and
    ``still broken`` when the new run breaks it without such a rise. The bootstrap is seeded: the
    same inputs and ``seed`` give the same intervals.
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    sev = dict(rules_severity or {})
    oc, nc = count_by_task(old), count_by_task(new)
    shared = sorted(oc.keys() & nc.keys())
    kk = default_k(oc, nc) if k is None else k
    shared_set = set(shared)
    # steps, cost, latency and rule rates are the agent's: a trial the harness crashed has none
    old_rows = [s for s in old if s.task_id in shared_set and s.outcome != "infra"]
    new_rows = [s for s in new if s.task_id in shared_set and s.outcome != "infra"]
    for trials in (old_rows, new_rows):
        for s in trials:
            for rid in s.violations:
                sev.setdefault(rid, "policy")
    od, nd = run_distributions(old_rows, sev), run_distributions(new_rows, sev)

    hat_cache: dict[tuple[int, int], Fraction] = {}

    def hat(n: int, c: int) -> Fraction:
        if (n, c) not in hat_cache:
            v = pass_hat_k_exact(n, c, kk)
            assert v is not None  # only asked for tasks with n >= k
            hat_cache[n, c] = v
        return hat_cache[n, c]

    def p1(n: int, c: int) -> Fraction:
        return Fraction(c, n)

    # a task with no scored trial in a run was not measured there: its own bucket, in no average
    scored = [t for t in shared if oc[t][0] and nc[t][0]]
    eligible = [t for t in scored if oc[t][0] >= kk and nc[t][0] >= kk]
    eligible_set = set(eligible)
    excluded = [t for t in scored if t not in eligible_set]
    crashed = _crashed_tasks(old) | _crashed_tasks(new)

    def mean_exact(
        counts: dict[str, tuple[int, int]], tasks: list[str], f: Callable[[int, int], Fraction]
    ) -> float | None:
        # Exact, like the report's averages; grouping by (n, c) keeps it fast on large runs.
        if not tasks:
            return None
        groups = Counter(counts[t] for t in tasks)
        return float(sum((f(n, c) * m for (n, c), m in groups.items()), Fraction(0)) / len(tasks))

    hat_old, hat_new = mean_exact(oc, eligible, hat), mean_exact(nc, eligible, hat)
    p1_old, p1_new = mean_exact(oc, scored, p1), mean_exact(nc, scored, p1)
    forbidden = {r for r, s in sev.items() if s == "forbidden"}
    ov, nv = od.violation_rate, nd.violation_rate
    cost_o, cost_n = od.cost_per_task.mean, nd.cost_per_task.mean
    err_o, err_n = od.tool_error_rate, nd.tool_error_rate
    specs = _Specs(shared, old_rows, new_rows)
    hat_num = [float(hat(*oc[t])) if t in eligible_set else 0.0 for t in shared]
    hat_num_new = [float(hat(*nc[t])) if t in eligible_set else 0.0 for t in shared]
    hat_den = [1.0 if t in eligible_set else 0.0 for t in shared]
    scored_set = set(scored)
    p1_num = [oc[t][1] / oc[t][0] if t in scored_set else 0.0 for t in shared]
    p1_num_new = [nc[t][1] / nc[t][0] if t in scored_set else 0.0 for t in shared]
    p1_den = [1.0 if t in scored_set else 0.0 for t in shared]
    # (metric, label, old, new, unit, higher is better, red flag on a rise, spec)
    plan: list[tuple[str, str, float | None, float | None, str, bool, bool, Spec]] = [
        ("pass_hat_k", f"pass^{kk} (overall)", hat_old, hat_new, "rate", True, False,
         RatioSpec(hat_num, hat_den, hat_num_new, hat_den)),
        ("pass_at_1", "pass@1", p1_old, p1_new, "rate", True, False,
         RatioSpec(p1_num, p1_den, p1_num_new, p1_den)),
        ("avg_steps", "avg steps", od.steps.mean, nd.steps.mean, "steps", False, False,
         specs.ratio(lambda s: s.steps, lambda s: 1)),
        ("cost_per_task", "cost / task", cost_o, cost_n, "usd", False, False, specs.cost()),
        ("p95_latency_s", "p95 latency", od.latency.p95, nd.latency.p95, "seconds", False, False,
         specs.latency(95)),
        ("tool_error_rate", "tool error rate", err_o, err_n, "pct", False, False,
         specs.ratio(lambda s: s.tool_errors, lambda s: s.tool_calls)),
    ]  # fmt: skip
    if forbidden:
        fo, fn = _share(old_rows, forbidden), _share(new_rows, forbidden)
        plan.append(
            ("forbidden_rate", "forbidden-tool rate", fo, fn, "pct", False, True,
             specs.ratio(lambda s: not forbidden.isdisjoint(s.violations), lambda s: 1))
        )  # fmt: skip
    for rid, severity in sev.items():
        o, n = ov.get(rid), nv.get(rid)
        label = f"rule {_visible(rid)}"  # a rule id is data: shown, never sent to the terminal
        plan.append(
            (f"rule:{rid}", label, o, n, "pct", False, severity == "forbidden",
             specs.ratio(lambda s, r=rid: r in s.violations, lambda s: 1))  # type: ignore[misc]
        )  # fmt: skip
    ratios = {m: r for m, r in (scaled or {}).items() if any(p[0] == m for p in plan)}
    extra = [_scale(next(p[7] for p in plan if p[0] == m), r) for m, r in ratios.items()]
    intervals = task_intervals([p[7] for p in plan] + extra, len(shared), seed, n_boot)
    scaled_cis = dict(zip(ratios, intervals[len(plan) :], strict=True))
    intervals = intervals[: len(plan)]
    rows = []
    for (metric, label, o, n, unit, hib, flag, spec), ci in zip(plan, intervals, strict=True):
        n_tasks = _tasks_with_data(spec)
        note = _too_few_note(metric, n_tasks, kk, len(scored))
        row = _row(metric, label, o, n, unit, hib, False, ci, n_tasks, note)
        if flag and isinstance(spec, RatioSpec):
            row = _forbidden(row, spec)
        rows.append(row)
    if rows[0].direction == WORSE:
        rows = [
            replace(r, quoted=True) if i and r.direction == BETTER else r
            for i, r in enumerate(rows)
        ]

    deltas = []
    for t in shared:
        (on, oc_), (nn, nc_) = oc[t], nc[t]
        ok = t in eligible_set
        exact = hat(nn, nc_) - hat(on, oc_) if ok else None
        # each run's own pass^k where it has k trials (a run's crashed task is no hole in the other's)
        oh = float(hat(on, oc_)) if on >= kk else None
        nh = float(hat(nn, nc_)) if nn >= kk else None
        if not on or not nn:
            bucket = INFRA_BUCKET if t in crashed else UNSCORED_BUCKET
        else:
            bucket = _bucket(on, oc_, nn, nc_, exact)
        deltas.append(TaskDelta(t, on, oc_, nn, nc_, oh, nh, bucket))
    # Rounded so that equal differences tie instead of being ordered by float noise.
    deltas.sort(
        key=lambda d: (
            d.delta is None,
            round(d.delta or 0.0, 12),
            round(d.pass1_delta, 12),
            natural_key(d.task_id),  # tau-bench's 2 before 11, as the report lists them
        )
    )

    boot = [
        BootstrapCI(r.metric, r.delta, r.low, r.high, r.n_tasks, n_boot, seed) for r in rows[:2]
    ]

    only_old = [TaskCount(t, *oc[t]) for t in sorted(oc.keys() - shared_set, key=natural_key)]
    only_new = [TaskCount(t, *nc[t]) for t in sorted(nc.keys() - shared_set, key=natural_key)]
    return Comparison(
        old_name,
        new_name,
        kk,
        k is None,
        rows,
        deltas,
        only_old,
        only_new,
        excluded,
        boot,
        od,
        nd,
        sev,
        {"old": _left_out(old), "new": _left_out(new)},
        scaled={m: (ratios[m], ci) for m, ci in scaled_cis.items()},
    )


def _scale(spec: Spec, r: float) -> Spec:
    """``spec`` with the old run's statistic multiplied by ``r`` (a ratio of sums scales its
    numerator; a percentile scales with its values), so its interval is that of new - r x old."""
    if isinstance(spec, RatioSpec):
        return replace(spec, num_old=[r * x for x in spec.num_old])
    return replace(spec, values_old=[r * x for x in spec.values_old])


def _row(
    metric: str,
    label: str,
    old: float | None,
    new: float | None,
    unit: str = "rate",
    higher_is_better: bool = True,
    red_flag: bool = False,
    ci: tuple[float, float] | None = None,
    n_tasks: int = 0,
    note: str = "",
) -> Row:
    """A row with its direction (see ``compare_types.DIRECTIONS``): better or worse only when the
    interval ``ci`` of new - old excludes zero over at least ``MIN_TASKS`` tasks; ``red_flag`` makes
    any rise a RED FLAG (a forbidden rule's row is decided by :func:`_forbidden` instead)."""
    low, high = ci if ci is not None else (None, None)
    if old is None or new is None:
        direction = NA
    elif abs(new - old) <= _EPS * max(1.0, abs(old), abs(new)):
        direction = SAME
    elif red_flag and new > old:
        direction = RED_FLAG
    elif n_tasks < MIN_TASKS:
        direction = TOO_FEW
    elif low is None or high is None or low <= 0 <= high:
        direction = NOISE
    else:
        direction = BETTER if (low > 0) == higher_is_better else WORSE
    if direction != TOO_FEW:
        note = ""
    return Row(
        metric, label, old, new, unit, higher_is_better, direction, False, low, high, n_tasks, note
    )


def _forbidden(row: Row, spec: RatioSpec) -> Row:
    """A forbidden rule's row (trials breaking it over trials, per task in ``spec``): RED FLAG
    when the baseline never broke it and the new run does, or its rate rose beyond noise; still
    broken when the new run breaks it otherwise; else the row as it was (none broken now)."""
    from reviewer.metrics.fisher import stratified_rise

    strata = [
        (round(a), round(b), round(c), round(d))
        for a, b, c, d in zip(spec.num_old, spec.den_old, spec.num_new, spec.den_new, strict=True)
    ]
    counts = (
        sum(s[0] for s in strata),
        sum(s[1] for s in strata),
        sum(s[2] for s in strata),
        sum(s[3] for s in strata),
    )
    if row.old is None or row.new is None or not counts[2]:
        return replace(row, counts=counts)
    p = stratified_rise(strata)
    direction = RED_FLAG if counts[0] == 0 or p < FORBIDDEN_ALPHA else STILL_BROKEN
    return replace(row, direction=direction, note="", counts=counts, p_value=p)


def _tasks_with_data(spec: Spec) -> int:
    """Tasks that give the row a value in both runs."""
    if isinstance(spec, RatioSpec):
        return sum(1 for a, b in zip(spec.den_old, spec.den_new, strict=True) if a > 0 and b > 0)
    return len(set(spec.task_old) & set(spec.task_new))


def _too_few_note(metric: str, n_tasks: int, k: int, n_scored: int) -> str:
    if n_tasks >= MIN_TASKS:
        return ""
    more = MIN_TASKS - n_tasks
    text = (
        f"{n_tasks} shared task{' carries' if n_tasks == 1 else 's carry'} this row; an interval needs"
        f" {MIN_TASKS} ({more} more)"
    )
    if metric == "pass_hat_k" and n_scored > n_tasks:
        text += f", or give more tasks {k} trials in both runs, or a smaller --k"
    return text


class _Specs:
    """Per-task sums of the trial-level rows, for the paired task bootstrap (``noise``)."""

    def __init__(
        self, shared: Sequence[str], old: Sequence[TrialStats], new: Sequence[TrialStats]
    ) -> None:
        self.index = {t: i for i, t in enumerate(shared)}
        self.m = len(shared)
        self.old, self.new = old, new
        self._idx_old = [self.index[s.task_id] for s in old]
        self._idx_new = [self.index[s.task_id] for s in new]

    def _sums(self, rows: Sequence[TrialStats], f: Callable[[TrialStats], float]) -> list[float]:
        import numpy as np

        if rows is self.old:
            idx = self._idx_old
        elif rows is self.new:
            idx = self._idx_new
        else:
            idx = [self.index[s.task_id] for s in rows]
        vals = np.fromiter((f(s) for s in rows), float, len(rows))
        sums: list[float] = np.bincount(
            np.asarray(idx, dtype=np.intp), weights=vals, minlength=self.m
        ).tolist()
        return sums

    def ratio(
        self, num: Callable[[TrialStats], float], den: Callable[[TrialStats], float]
    ) -> RatioSpec:
        return RatioSpec(
            self._sums(self.old, num),
            self._sums(self.old, den),
            self._sums(self.new, num),
            self._sums(self.new, den),
        )

    def _task_cost(self, rows: Sequence[TrialStats]) -> tuple[list[float], list[float]]:
        total, count = [0.0] * self.m, [0] * self.m
        for s in rows:
            if s.cost_usd is not None and math.isfinite(s.cost_usd):
                total[self.index[s.task_id]] += s.cost_usd
                count[self.index[s.task_id]] += 1
        num = [t / c if c else 0.0 for t, c in zip(total, count, strict=True)]
        return num, [1.0 if c else 0.0 for c in count]

    def cost(self) -> RatioSpec:
        """The macro mean: every task's mean cost weighs the same."""
        (no, do), (nn, dn) = self._task_cost(self.old), self._task_cost(self.new)
        return RatioSpec(no, do, nn, dn)

    def latency(self, q: float) -> PercentileSpec:
        def known(rows: Sequence[TrialStats]) -> tuple[list[float], list[int]]:
            pairs = [
                (float(s.latency_s), self.index[s.task_id])
                for s in rows
                if s.latency_s is not None and math.isfinite(s.latency_s)
            ]
            return [p[0] for p in pairs], [p[1] for p in pairs]

        (vo, to), (vn, tn) = known(self.old), known(self.new)
        return PercentileSpec(q, vo, to, vn, tn)


def _share(rows: Sequence[TrialStats], rule_ids: set[str]) -> float | None:
    if not rows:
        return None
    return sum(1 for s in rows if not rule_ids.isdisjoint(s.violations)) / len(rows)


def _bucket(on: int, oc: int, nn: int, nc: int, hat_delta: Fraction | None) -> str:
    """See BUCKETS; regressed / improved follow pass^k, or pass@1 where pass^k did not move."""
    if oc > 0 and nc == 0:
        return "newly failing"
    if oc == on and 0 < nc < nn:
        return "newly flaky"
    if nc == nn and oc < on:
        return "fixed"
    change = hat_delta or Fraction(nc, nn) - Fraction(oc, on)
    if change < 0:
        return "regressed"
    if change > 0:
        return "improved"
    return "unchanged"


# --- rendering -----------------------------------------------------------------------------------------


def _visible(s: str) -> str:
    """A name with its control characters and escapes shown (the one rule set of ``reviewer.text``)."""
    return visible(s, single_line=True)


def format_value(v: float | None, unit: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if unit == "rate":
        return f"{v:.2f}"
    if unit == "steps":
        return f"{v:.1f}"
    if unit == "usd":
        return f"${v:.4f}" if 0 < abs(v) < 0.001 else f"${v:.3f}"
    if unit == "seconds":
        return seconds_text(v)
    return f"{v * 100:.1f}%"


_STYLES = {RED_FLAG: "bold red", "worse": "red", "better": "green"}


def render_comparison(cmp: Comparison, color: bool, max_tasks: int | None = None) -> str:
    """The comparison as text: the summary table, the noise check, per-task deltas, one-run tasks.

    ``color`` adds ANSI colours (RED FLAG and worse in red); without it the markers are plain words.
    ``max_tasks`` limits the per-task table to the first (largest-drop) rows.
    """
    lines = comparison_lines(cmp, max_tasks)
    if not color:
        return "\n".join(t.plain for t in lines) + "\n"
    return _ansi(lines)


def comparison_lines(
    cmp: Comparison, max_tasks: int | None = None, width: int | None = None
) -> list[Any]:
    """The comparison as styled rich ``Text`` lines (what the CLI prints and the TUI shows).

    ``width`` (the app's screen) asks for lines that fit it when the full layout does not: the
    summary table without padding, the intervals listed under it, a narrower per-task table and the
    prose wrapped. Without it (the CLI) the layout is the full one whatever the terminal."""
    lines = _comparison_lines(cmp, max_tasks)
    if width is None or max((len(t.plain) for t in lines), default=0) <= width:
        return lines
    return _narrow_lines(cmp, max_tasks, width)


def _comparison_lines(cmp: Comparison, max_tasks: int | None = None) -> list[Any]:
    from rich.text import Text

    lines: list[Text] = []
    names = (_visible(cmp.old_name), _visible(cmp.new_name))
    cells = [
        (r.label, format_value(r.old, r.unit), format_value(r.new, r.unit), r) for r in cmp.rows
    ]
    w0 = max([len(c[0]) for c in cells] + [10]) + 2
    w1 = max([len(c[1]) for c in cells] + [len(names[0])]) + 4
    w2 = max([len(c[2]) for c in cells] + [len(names[1])]) + 4
    cis = [_ci_text(r) for r in cmp.rows]
    w3 = max([len(c) for c in cis] + [len("95% CI of change")]) + 4
    head = " " * w0 + names[0].rjust(w1) + names[1].rjust(w2) + "95% CI of change".rjust(w3)
    lines.append(Text(head))
    for (label, o, n, r), ci in zip(cells, cis, strict=True):
        line = Text(label.ljust(w0) + o.rjust(w1) + n.rjust(w2) + ci.rjust(w3))
        if r.mark:
            line.append("     ")
            line.append(r.mark, style=_STYLES.get(r.direction, ""))
        lines.append(line)
    if cmp.k_is_default:
        lines.append(Text(f"k = {cmp.k}: the largest k every shared task supports in both runs"))
    if cmp.outcome_source in OUTCOME_WORDS:
        lines.append(Text(OUTCOME_WORDS[cmp.outcome_source]))
    if cmp.coverage_warning:
        lines.append(Text(cmp.coverage_warning))
    if cmp.rules_warning:
        lines.append(Text(cmp.rules_warning))
    lines += [Text(t) for t in noise_lines(cmp)]

    if cmp.tasks:
        lines.append(Text(""))
        lines.append(Text(f"per task, largest pass^{cmp.k} drop first"))
        shown = cmp.tasks if max_tasks is None else cmp.tasks[:max_tasks]
        ids = table_names([t.task_id for t in shown])
        wt = max([len(i) for i in ids] + [4]) + 2
        hk = f"pass^{cmp.k}"
        lines.append(
            Text(
                f"{'task':<{wt}}{'old c/n':>9}{'new c/n':>9}{'old ' + hk:>12}{'new ' + hk:>12}{'delta':>8}  bucket"
            )
        )
        for tid, t in zip(ids, shown, strict=True):
            d = "n/a" if t.delta is None else f"{t.delta:+.2f}"
            line = Text(
                f"{tid:<{wt}}{f'{t.old_c}/{t.old_n}':>9}{f'{t.new_c}/{t.new_n}':>9}"
                f"{format_value(t.old_pass_hat, 'rate'):>12}{format_value(t.new_pass_hat, 'rate'):>12}{d:>8}  "
            )
            line.append(
                t.bucket,
                style="red" if t.bucket in ("newly failing", "newly flaky", "regressed") else "",
            )
            lines.append(line)
        if len(shown) < len(cmp.tasks):
            lines.append(Text(f"... {len(cmp.tasks) - len(shown)} more tasks"))
        shown_buckets = [
            f"{b} {n}"
            for b, n in cmp.buckets.items()
            if n or b not in (INFRA_BUCKET, UNSCORED_BUCKET)  # those two only when they occur
        ]
        lines.append(Text("buckets: " + ", ".join(shown_buckets)))
    for label, only in (("only in old", cmp.only_old), ("only in new", cmp.only_new)):
        if only:
            lines.append(
                Text(f"{label} ({len(only)}): " + ", ".join(_visible(t.task_id) for t in only))
            )
    for side, name in (("old", names[0]), ("new", names[1])):
        counts = cmp.left_out.get(side, {})
        if counts.get("infra"):
            n_infra = counts["infra"]
            lines.append(Text(f"{name}: {crashed(n_infra)}, left out"))
        if counts.get("unscored"):
            n_un = counts["unscored"]
            lines.append(Text(f"{name}: {n_un} unscored trial{'' if n_un == 1 else 's'}, left out"))
    if cmp.excluded:
        lines.append(
            Text(
                f"no pass^{cmp.k} for {len(cmp.excluded)} shared task(s) with fewer than {cmp.k} scored trials in a run: "
                + ", ".join(_visible(t) for t in cmp.excluded)
            )
        )
    return lines


def _narrow_lines(cmp: Comparison, max_tasks: int | None, width: int) -> list[Any]:
    """The comparison for a narrow screen: every line at most ``width`` cells (see comparison_lines)."""
    import textwrap

    from rich.text import Text

    def wrapped(text: str, indent: str = "  ", first: str = "") -> list[Text]:
        if not text:
            return [Text("")]
        return [
            Text(t)
            for t in textwrap.wrap(text, width, initial_indent=first, subsequent_indent=indent)
        ]

    short = {"too few tasks": "too few", "within noise": "noise"}
    lines: list[Text] = []
    names = (_visible(cmp.old_name), _visible(cmp.new_name))
    cells = [
        (r.label, format_value(r.old, r.unit), format_value(r.new, r.unit), r) for r in cmp.rows
    ]
    marks = [short.get(r.mark, r.mark.removeprefix("<-- ")) for r in cmp.rows]
    w1 = max([len(c[1]) for c in cells] + [len(names[0])]) + 2
    w2 = max([len(c[2]) for c in cells] + [len(names[1])]) + 2
    wm = max([len(m) for m in marks] + [0]) + 2
    w0 = min(max([len(c[0]) for c in cells] + [10]) + 1, max(10, width - w1 - w2 - wm))
    lines.append(
        Text(
            " " * w0
            + elide_middle(names[0], max(4, w1 - 1)).rjust(w1)
            + elide_middle(names[1], max(4, w2 - 1)).rjust(w2)
        )
    )
    for (label, o, n, r), mark in zip(cells, marks, strict=True):
        line = Text(elide_middle(label, max(4, w0 - 1)).ljust(w0) + o.rjust(w1) + n.rjust(w2))
        if mark:
            line.append("  ")
            line.append(mark, style=_STYLES.get(r.direction, ""))
        lines.append(line)
    cis = [(r.label, _ci_text(r)) for r in cmp.rows if _ci_text(r)]
    if cis:
        lines.append(Text("95% CI of the change:"))
        wl = min(max(len(label) for label, _ in cis) + 2, max(10, width - 24))
        for label, ci in cis:
            if len(label) < wl:
                lines.append(Text("  " + label.ljust(wl) + ci))
            else:  # a label that does not fit is whole on its line, its interval under it
                lines += wrapped(label, first="  ", indent="    ")
                lines.append(Text("  " + " " * min(wl, max(0, width - 2 - len(ci))) + ci))
    if cmp.k_is_default:
        lines += wrapped(f"k = {cmp.k}: the largest k every shared task supports in both runs")
    if cmp.outcome_source in OUTCOME_WORDS:
        lines += wrapped(OUTCOME_WORDS[cmp.outcome_source])
    if cmp.coverage_warning:
        lines += wrapped(cmp.coverage_warning)
    if cmp.rules_warning:
        lines += wrapped(cmp.rules_warning)
    noise = noise_lines(cmp)
    # the noise check's paragraph is written for the CLI's width: join it and wrap it again
    end = 2 + len(NOISE_PARAGRAPH)
    lines += [Text(""), *wrapped(noise[1])]
    lines += wrapped(" ".join(t.strip() for t in noise[2:end]), first="  ")
    for note in noise[end:]:
        lines += wrapped(note)
    if cmp.tasks:
        lines.append(Text(""))
        lines.append(Text(f"per task, largest pass^{cmp.k} drop first"))
        shown = cmp.tasks if max_tasks is None else cmp.tasks[:max_tasks]
        hk = f"p^{cmp.k}"
        rest = 8 + 8 + 9 + 9 + 7 + 2 + max([len(t.bucket) for t in shown] + [6])
        wt = min(max([len(_visible(t.task_id)) for t in shown] + [4]) + 1, max(6, width - rest))
        lines.append(
            Text(
                f"{'task':<{wt}}{'old c/n':>8}{'new c/n':>8}{'old ' + hk:>9}{'new ' + hk:>9}{'delta':>7}  bucket"
            )
        )
        ids = table_names([t.task_id for t in shown], max(4, wt - 1))
        for t, tid in zip(shown, ids, strict=True):
            d = "n/a" if t.delta is None else f"{t.delta:+.2f}"
            line = Text(
                f"{tid:<{wt}}{f'{t.old_c}/{t.old_n}':>8}"
                f"{f'{t.new_c}/{t.new_n}':>8}{format_value(t.old_pass_hat, 'rate'):>9}"
                f"{format_value(t.new_pass_hat, 'rate'):>9}{d:>7}  "
            )
            line.append(
                t.bucket,
                style="red" if t.bucket in ("newly failing", "newly flaky", "regressed") else "",
            )
            lines.append(line)
    # the lines after the per-task rows are prose: the full layout's, wrapped
    full = _comparison_lines(cmp, max_tasks)
    if cmp.tasks:
        tail = full[next(i for i, t in enumerate(full) if t.plain.startswith("task ")) + 1 :]
        tail = tail[len(cmp.tasks if max_tasks is None else cmp.tasks[:max_tasks]) :]
        for t in tail:
            lines += wrapped(t.plain)
    else:
        start = full.index(next(t for t in full if t.plain.startswith("noise check")))
        for t in full[start + 1 + len(NOISE_PARAGRAPH) :]:
            if t.plain.startswith(("too few tasks to tell", "no tasks to compare")):
                continue
            if any(t.plain == f"{r.label}: {r.forbidden_words}" for r in cmp.rows):
                continue  # already wrapped among the noise check's notes
            lines += wrapped(t.plain)
    return lines


def _ci_text(r: Row) -> str:
    if r.low is None or r.high is None or r.direction in (NA, TOO_FEW):
        return ""
    return f"[{format_delta(r.low, r.unit)}, {format_delta(r.high, r.unit)}]"


def format_delta(v: float, unit: str) -> str:
    """A signed change in the row's unit."""
    if unit == "rate":
        return f"{v:+.2f}"
    if unit == "steps":
        return f"{v:+.1f}"
    if unit == "usd":
        return (
            f"{'-' if v < 0 else '+'}${abs(v):.4f}"
            if abs(v) < 0.001
            else f"{'-' if v < 0 else '+'}${abs(v):.3f}"
        )
    if unit == "seconds":
        return seconds_text(v, signed=True)
    return f"{v * 100:+.1f}%"


#: What the marks mean (the CLI's layout; the app wraps it again).
NOISE_PARAGRAPH = (
    "  a row gets a mark only when the 95% interval of its change excludes zero, and is",
    "  'within noise' otherwise (it may be luck). A forbidden rule is a RED FLAG when the",
    "  baseline never broke it or its rise is beyond noise (one-sided exact test within",
    "  tasks, p < 0.05); broken about as often as before it is 'still broken' (a warning).",
)


def noise_lines(cmp: Comparison) -> list[str]:
    """What the verdicts mean, in plain words, and what more data the undecided rows need."""
    n_boot = cmp.bootstrap[0].n_boot if cmp.bootstrap else 0
    seed = cmp.bootstrap[0].seed if cmp.bootstrap else 0
    lines = [
        "",
        f"noise check: paired bootstrap over shared tasks, {n_boot} resamples, seed {seed}.",
        *NOISE_PARAGRAPH,
    ]
    if not cmp.tasks:
        lines.append("no tasks to compare: the runs share no task")
    for r in cmp.rows:
        if r.forbidden_words:
            lines.append(f"{r.label}: {r.forbidden_words}")
    seen: list[str] = []
    for r in cmp.rows:
        if r.direction == TOO_FEW and r.note and r.note not in seen:
            seen.append(r.note)
    lines += [
        f"too few tasks to tell: {note.replace(' this row', ' the rows so marked')}."
        for note in seen
    ]
    return lines


def _ansi(lines: Sequence[Any]) -> str:
    import io

    from rich.console import Console

    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=True,
        color_system="standard",
        width=100_000,
        highlight=False,
        emoji=False,
    )
    for line in lines:
        console.print(line, soft_wrap=True)
    return buf.getvalue()
