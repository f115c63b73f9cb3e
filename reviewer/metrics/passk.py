"""Unbiased pass@k and pass^k estimators, exact with integer arithmetic.

pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k tries drawn from the n succeeds.
pass^k = C(c, k) / C(n, k): the chance that all k tries succeed (tau-bench). A task with n < k has no
value for that k and is left out of the average for that k (tau2-bench's pass_hat_k refuses n < k too);
as those are often the hard tasks (crashed trials), the report bounds what the average would be with
them at 0 or at 1, and gives each average a 95% interval over tasks (``average_interval.py``).
n and c count scored trials only: infrastructure errors and unscored trials are in neither.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from math import comb


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction | None:
    if k < 1 or n < k:
        return None
    _check(n, c)
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_hat_k_exact(n: int, c: int, k: int) -> Fraction | None:
    if k < 1 or n < k:
        return None
    _check(n, c)
    return Fraction(comb(c, k), comb(n, k))


@lru_cache(maxsize=4096)  # a report asks for the same few (n, c, k) once per task
def pass_at_k(n: int, c: int, k: int) -> float | None:
    v = pass_at_k_exact(n, c, k)
    return None if v is None else float(v)


@lru_cache(maxsize=4096)
def pass_hat_k(n: int, c: int, k: int) -> float | None:
    v = pass_hat_k_exact(n, c, k)
    return None if v is None else float(v)


def _check(n: int, c: int) -> None:
    if n < 0 or c < 0 or c > n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")


@dataclass
class TaskPassK:
    task_id: str
    n: int
    c: int
    pass_at_k: dict[int, float | None] = field(default_factory=dict)
    pass_hat_k: dict[int, float | None] = field(default_factory=dict)


@dataclass
class RunPassK:
    run: str
    k: list[int]
    tasks: list[TaskPassK]
    average_at_k: dict[int, float | None]
    average_hat_k: dict[int, float | None]
    excluded: dict[int, int]  # k -> how many tasks had fewer than k trials
    #: k -> the 95% interval over tasks of each average (``average_interval.mean_interval``)
    interval_at_k: dict[int, tuple[float, float] | None] = field(default_factory=dict)
    interval_hat_k: dict[int, tuple[float, float] | None] = field(default_factory=dict)
    #: k -> the average over every task if the left-out ones had 0, and if they had 1
    bounds_at_k: dict[int, tuple[float, float] | None] = field(default_factory=dict)
    bounds_hat_k: dict[int, tuple[float, float] | None] = field(default_factory=dict)

    @property
    def n_trials(self) -> int:
        return sum(t.n for t in self.tasks)


def default_ks(counts: Iterable[int]) -> list[int]:
    """1 and the largest n that every task has; a task with no scored trial (all of them
    infrastructure errors or unscored) has no pass rate at all and does not lower it."""
    ns = [n for n in counts if n > 0]
    if not ns:
        return [1]
    m = min(ns)
    return [1] if m <= 1 else [1, m]


def shared_k(runs: Iterable[Iterable[tuple[int, int]]]) -> int:
    """The default k for pass^k over the runs shown together: one k every run has trials for, that
    still tells tasks apart.

    ``runs`` gives each run's tasks as (n, c) (scored trials, passes). k is at most the smallest n of
    any task (with a scored trial) of any run, and the largest such k at which at least half of the
    tasks that pass at least once still have pass^k above 0 (pass^k is 0 exactly when c < k). With
    no task that ever passes, k is that smallest n; with one trial per task, k is 1."""
    tasks = [(n, c) for run in runs for n, c in run if n > 0]
    if not tasks:
        return 1
    n_min = min(n for n, _ in tasks)
    passing = sorted((c for _, c in tasks if c > 0), reverse=True)
    if n_min <= 1:
        return 1
    if not passing:
        return n_min
    # the c of the task at the half-way mark: at least half of the passing tasks have c >= it
    half = passing[(len(passing) + 1) // 2 - 1]
    return max(1, min(n_min, half))


def run_passk(run: str, tasks: Sequence[tuple[str, int, int]], ks: Sequence[int]) -> RunPassK:
    """Per-task and averaged estimators for ``tasks`` given as (task_id, n, c)."""
    ks = sorted(set(ks))
    rows = []
    for task_id, n, c in tasks:
        rows.append(
            TaskPassK(
                task_id,
                n,
                c,
                {k: pass_at_k(n, c, k) for k in ks},
                {k: pass_hat_k(n, c, k) for k in ks},
            )
        )
    avg_at: dict[int, float | None] = {}
    avg_hat: dict[int, float | None] = {}
    excluded: dict[int, int] = {}
    # Exact averages, summed once per distinct (n, c): fast on runs of many tasks.
    groups = Counter((n, c) for _, n, c in tasks)
    for k in ks:
        total_at = total_hat = Fraction(0)
        kept = 0
        for (n, c), times in groups.items():
            at = pass_at_k_exact(n, c, k)
            hat = pass_hat_k_exact(n, c, k)
            if at is None or hat is None:
                continue
            total_at += at * times
            total_hat += hat * times
            kept += times
        excluded[k] = len(tasks) - kept
        avg_at[k] = float(total_at / kept) if kept else None
        avg_hat[k] = float(total_hat / kept) if kept else None
    out = RunPassK(run, ks, rows, avg_at, avg_hat, excluded)
    _intervals(out, groups)
    return out


def _intervals(report: RunPassK, groups: Counter[tuple[int, int]]) -> None:
    """Each average's 95% interval over tasks, and its bounds with the left-out tasks at 0 or 1."""
    from reviewer.metrics.average_interval import left_out_bounds, mean_interval

    for k in report.k:
        kept = {(n, c): t for (n, c), t in groups.items() if n >= k}
        report.interval_at_k[k] = mean_interval(
            (pass_at_k(n, c, k) or 0.0, t) for (n, c), t in kept.items()
        )
        report.interval_hat_k[k] = mean_interval(
            (pass_hat_k(n, c, k) or 0.0, t) for (n, c), t in kept.items()
        )
        count = sum(kept.values())
        left = report.excluded[k]
        report.bounds_at_k[k] = left_out_bounds(report.average_at_k[k], count, left)
        report.bounds_hat_k[k] = left_out_bounds(report.average_hat_k[k], count, left)


def average_passk(
    groups: Iterable[tuple[int, int, int]], ks: Sequence[int]
) -> tuple[dict[int, float | None], dict[int, float | None]]:
    """Run-level averages (pass@k, pass^k) from (n, c, number of tasks) groups, exactly."""
    groups = list(groups)
    at: dict[int, float | None] = {}
    hat: dict[int, float | None] = {}
    for k in ks:
        total_at = total_hat = Fraction(0)
        kept = 0
        for n, c, times in groups:
            a, h = pass_at_k_exact(n, c, k), pass_hat_k_exact(n, c, k)
            if a is None or h is None:
                continue
            total_at += a * times
            total_hat += h * times
            kept += times
        at[k] = float(total_at / kept) if kept else None
        hat[k] = float(total_hat / kept) if kept else None
    return at, hat
