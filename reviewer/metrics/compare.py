"""Compare two runs task by task: summary rows with a judged direction, per-task deltas, a noise check.

Only tasks present in both runs are compared (all rows, including steps and cost, are over those shared
tasks); tasks present in one run only are listed. pass^k is averaged over the shared tasks that have at
least k trials in both runs; the others are listed as excluded. The paired bootstrap resamples shared
tasks with replacement and reports a 95% percentile interval of the new - old difference.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from reviewer.metrics.compare_types import (
    BUCKETS,
    INFRA_BUCKET,
    RED_FLAG,
    UNSCORED_BUCKET,
    BootstrapCI,
    Comparison,
    Row,
    TaskCount,
    TaskDelta,
)
from reviewer.metrics.distributions import TrialStats, run_distributions
from reviewer.metrics.passk import pass_hat_k_exact
from reviewer.text import visible

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "BUCKETS",
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
) -> Comparison:
    """Compare ``new`` against ``old`` over their shared tasks.

    ``k`` defaults to :func:`default_k`. ``rules_severity`` maps the configured rule ids to their
    severity; ids found in violations but not configured count as ``policy``. The forbidden-tool row
    (share of trials breaking any ``forbidden`` rule) is shown when a forbidden rule is configured; any
    rise of it, or of one forbidden rule, is a RED FLAG. The bootstrap is seeded: the same inputs and
    ``seed`` give the same intervals.
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
    rows = [
        _row("pass_hat_k", f"pass^{kk} (overall)", hat_old, hat_new),
        _row("pass_at_1", "pass@1", p1_old, p1_new),
        _row("avg_steps", "avg steps", od.steps.mean, nd.steps.mean, "steps", False),
        _row("cost_per_task", "cost / task", cost_o, cost_n, "usd", False),
        _row("p95_latency_s", "p95 latency", od.latency.p95, nd.latency.p95, "seconds", False),
        _row("tool_error_rate", "tool error rate", err_o, err_n, "pct", False),
    ]
    if forbidden:
        fo, fn = _share(old_rows, forbidden), _share(new_rows, forbidden)
        rows.append(_row("forbidden_rate", "forbidden-tool rate", fo, fn, "pct", False, True))
    for rid, severity in sev.items():
        o, n = ov.get(rid), nv.get(rid)
        label = f"rule {_visible(rid)}"  # a rule id is data: shown, never sent to the terminal
        rows.append(_row(f"rule:{rid}", label, o, n, "pct", False, severity == "forbidden"))
    if rows[0].direction == "worse":
        rows = [
            replace(r, quoted=True) if i and r.direction == "better" else r
            for i, r in enumerate(rows)
        ]

    deltas = []
    for t in shared:
        (on, oc_), (nn, nc_) = oc[t], nc[t]
        ok = t in eligible_set
        exact = hat(nn, nc_) - hat(on, oc_) if ok else None
        oh, nh = (float(hat(on, oc_)), float(hat(nn, nc_))) if ok else (None, None)
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
            d.task_id,
        )
    )

    import numpy as np  # deferred: importing this module stays light for `reviewer --help`

    by_id = {d.task_id: d for d in deltas}
    d_hat = np.array([by_id[t].delta for t in eligible], dtype=float)
    d_p1 = np.array([by_id[t].pass1_delta for t in scored], dtype=float)
    rng = np.random.default_rng(seed)
    if len(eligible) == len(scored):  # the same tasks: one set of resamples for both (paired)
        groups = [(["pass_hat_k", "pass_at_1"], np.column_stack([d_hat, d_p1]))]
    else:
        groups = [(["pass_hat_k"], d_hat[:, None]), (["pass_at_1"], d_p1[:, None])]
    boot = [ci for names, values in groups for ci in _bootstrap(names, values, rng, n_boot, seed)]
    boot.sort(key=lambda ci: ci.metric != "pass_hat_k")

    only_old = [TaskCount(t, *oc[t]) for t in sorted(oc.keys() - shared_set)]
    only_new = [TaskCount(t, *nc[t]) for t in sorted(nc.keys() - shared_set)]
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
    )


def _row(
    metric: str,
    label: str,
    old: float | None,
    new: float | None,
    unit: str = "rate",
    higher_is_better: bool = True,
    red_flag: bool = False,
) -> Row:
    if old is None or new is None:
        direction = "n/a"
    elif abs(new - old) <= _EPS * max(1.0, abs(old), abs(new)):
        direction = "same"
    elif red_flag and new > old:
        direction = RED_FLAG
    else:
        direction = "better" if (new > old) == higher_is_better else "worse"
    return Row(metric, label, old, new, unit, higher_is_better, direction)


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


def _bootstrap(
    metrics: list[str], values: np.ndarray, rng: np.random.Generator, n_boot: int, seed: int
) -> list[BootstrapCI]:
    """Percentile intervals of the mean of each column of ``values`` (tasks x metrics) over resamples of
    the tasks with replacement; all columns share the resamples."""
    import numpy as np

    m = len(values)
    if m == 0:
        return [BootstrapCI(name, None, None, None, 0, n_boot, seed) for name in metrics]
    classes, counts = np.unique(values, axis=0, return_counts=True)
    means: list[np.ndarray] = []
    if len(classes) * 4 <= m:
        # Tasks with equal values are interchangeable, so drawing m tasks with replacement is a
        # multinomial draw over the distinct values: the same distribution, far less work.
        p = counts / m
        chunk = max(1, 2_000_000 // len(classes))
        for start in range(0, n_boot, chunk):
            draws = rng.multinomial(m, p, size=min(chunk, n_boot - start))
            means.append(draws @ classes / m)
    else:
        chunk = max(1, 2_000_000 // m)  # bounds memory at a few MB whatever the run size
        for start in range(0, n_boot, chunk):
            idx = rng.integers(0, m, size=(min(chunk, n_boot - start), m))
            means.append(values[idx].mean(axis=1))
    boot = np.concatenate(means)
    out: list[BootstrapCI] = []
    for j, name in enumerate(metrics):
        low, high = np.percentile(boot[:, j], [2.5, 97.5])
        diff = float(values[:, j].mean())
        out.append(BootstrapCI(name, diff, float(low), float(high), m, n_boot, seed))
    return out


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
        return f"{v:.1f}s" if abs(v) < 1e9 else f"{v:.3g}s"
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


def comparison_lines(cmp: Comparison, max_tasks: int | None = None) -> list[Any]:
    """The comparison as styled rich ``Text`` lines (what the CLI prints and the TUI shows)."""
    from rich.text import Text

    lines: list[Text] = []
    names = (_visible(cmp.old_name), _visible(cmp.new_name))
    cells = [
        (r.label, format_value(r.old, r.unit), format_value(r.new, r.unit), r) for r in cmp.rows
    ]
    w0 = max([len(c[0]) for c in cells] + [10]) + 2
    w1 = max([len(c[1]) for c in cells] + [len(names[0])]) + 4
    w2 = max([len(c[2]) for c in cells] + [len(names[1])]) + 4
    lines.append(Text(" " * w0 + names[0].rjust(w1) + names[1].rjust(w2)))
    for label, o, n, r in cells:
        line = Text(label.ljust(w0) + o.rjust(w1) + n.rjust(w2))
        if r.mark:
            line.append("     ")
            line.append(r.mark, style=_STYLES.get(r.direction, ""))
        lines.append(line)
    if cmp.k_is_default:
        lines.append(Text(f"k = {cmp.k}: the largest k every shared task supports in both runs"))
    if cmp.rules_differ:
        old_rule, new_rule = cmp.pass_rules.get("old", ""), cmp.pass_rules.get("new", "")
        lines.append(Text(f"warning: the runs' pass rules differ: old {old_rule}; new {new_rule}"))

    b0 = cmp.bootstrap[0] if cmp.bootstrap else None
    if b0 is not None:
        lines.append(Text(""))
        lines.append(
            Text(
                f"noise check: paired bootstrap over shared tasks, {b0.n_boot} resamples, seed {b0.seed}"
            )
        )
    for b in cmp.bootstrap:
        name = f"pass^{cmp.k}" if b.metric == "pass_hat_k" else "pass@1"
        if b.diff is None or b.low is None or b.high is None:
            lines.append(Text(f"  {name:<8} no tasks to compare"))
            continue
        verdict = "larger than noise" if b.significant else "within noise"
        line = Text(
            f"  {name:<8} diff {b.diff:+.3f}  95% CI [{b.low:+.3f}, {b.high:+.3f}]  over {b.n_tasks} tasks  "
        )
        line.append(verdict, style=("red" if b.diff < 0 else "green") if b.significant else "")
        lines.append(line)

    if cmp.tasks:
        lines.append(Text(""))
        lines.append(Text(f"per task, largest pass^{cmp.k} drop first"))
        shown = cmp.tasks if max_tasks is None else cmp.tasks[:max_tasks]
        ids = [_visible(t.task_id) for t in shown]
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
            lines.append(
                Text(
                    f"{name}: {n_infra} trial{'' if n_infra == 1 else 's'} ended by "
                    "infrastructure errors, left out"
                )
            )
        if counts.get("unscored"):
            n_un = counts["unscored"]
            lines.append(Text(f"{name}: {n_un} unscored trial{'' if n_un == 1 else 's'}, left out"))
    if cmp.excluded:
        lines.append(
            Text(
                f"no pass^{cmp.k} for {len(cmp.excluded)} shared task(s) with fewer than {cmp.k} trials in a run: "
                + ", ".join(_visible(t) for t in cmp.excluded)
            )
        )
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
