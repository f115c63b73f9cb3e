"""Issue 21: the distributions skip per-value checks when a group's exact sum is finite; on any
values (None, NaN, ±Infinity, sums beyond a float, integers) they equal the code that checked
every value (kept here as the reference)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from typing import Any

from reviewer.metrics.distributions import (
    Summary,
    _mean,
    _percentile_sorted,
    finite_sum,
    run_distributions,
    run_distributions_of_rows,
    task_distributions,
)
from reviewer.models import TrialStats


def reference_summary(values: Iterable[float | None]) -> Summary:
    given = list(values)
    known = [float(v) for v in given if v is not None and math.isfinite(v)]
    missing = len(given) - len(known)
    if not known:
        return Summary(0, None, None, None, None, None, missing, None)
    known.sort()
    total = finite_sum(known)
    return Summary(
        n=len(known),
        mean=None if total is None else total / len(known),
        p50=_percentile_sorted(known, 50),
        p95=_percentile_sorted(known, 95),
        max=known[-1],
        min=known[0],
        missing=missing,
        total=total,
    )


def reference_mean(values: Sequence[float]) -> float | None:
    known = [v for v in values if math.isfinite(v)]
    total = finite_sum(known) if known else None
    return None if total is None else total / len(known)


def _value(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            math.nan,
            math.inf,
            -math.inf,
            1e308,
            -1e308,
            rng.randint(0, 40),
            rng.random() * 30,
            rng.random() / 20,
            0.1,
            0.2,
            0.0,
            -0.0,
        ]
    )


def _same(a: Any, b: Any) -> bool:
    return repr(a) == repr(b)  # NaN-safe, and tells 8 from 8.0


def test_summary_and_mean_equal_the_per_value_reference_on_awkward_values() -> None:
    rng = random.Random(21)
    plain = 0
    for _ in range(3000):
        values = [_value(rng) for _ in range(rng.randint(0, 12))]
        if rng.random() < 0.5:  # groups with only ordinary numbers, the fast path
            values = [v for v in values if v is None or (abs(v) < 1e300)]
            plain += 1
        assert _same(Summary.of(values), reference_summary(values)), values
        assert _same(Summary.of(iter(values)), reference_summary(values)), values
        known = [float(v) for v in values if v is not None]
        assert _same(_mean(known), reference_mean(known)), known
    assert plain > 1000


def test_distributions_count_successes_only_among_scored_trials() -> None:
    """An outcome that is neither pass, fail, infra nor unscored (an old database) is not a
    success, "" reads by ``success``; infrastructure errors measure nothing."""
    rows = [
        TrialStats("a", True, 3, 0.1, 1.0, 2, 1, frozenset({"r"}), "pass"),
        TrialStats("a", True, 4, None, 2.0, 1, 0, frozenset(), ""),
        TrialStats("a", True, 5, 0.2, None, 0, 0, frozenset(), "odd"),
        TrialStats("b", False, 9, 0.3, 9.0, 3, 3, frozenset({"r", "s"}), "infra"),
        TrialStats("b", False, 2, math.inf, 1.0, 1, 0, frozenset(), "unscored"),
        TrialStats("b", False, 1, 0.4, math.nan, 1, 1, frozenset(), "fail"),
    ]
    d = run_distributions(rows, ["r", "x"])
    assert (d.n_trials, d.successes, d.infra, d.unscored) == (6, 2, 1, 1)
    # the crashed trial's tool calls and broken rules are left out with its steps (issue: the
    # report's ALL row counted them while every task row left them out)
    assert (d.tool_calls, d.tool_errors, d.measured) == (5, 2, 5)
    assert d.violation_trials == {"r": 1, "x": 0}
    assert d.violation_rate == {"r": 1 / 5, "x": 0.0}
    assert d.steps.n == 5 and d.steps.max == 5.0 and repr(d.steps.max) == "5.0"
    assert (d.cost_per_trial.n, d.cost_per_trial.missing) == (3, 2)
    assert (d.latency.n, d.latency.missing) == (3, 2)
    tasks = task_distributions(rows, ["r"])
    assert tasks["b"].n_trials == 2 and tasks["b"].successes == 0
    assert tasks["a"].successes == 2


def test_a_runs_distributions_from_rows_are_those_from_trial_stats(tmp_path: Any) -> None:
    """The report's path for a long run (a tuple per trial, rule counts from SQL) gives exactly
    the distributions of the TrialStats path, on the sample runs, crashed and graded tau-bench
    runs and a cost or latency of ±Infinity or one near the float's limit (an older database)."""
    from reviewer.store import open_store
    from reviewer.store.trials import run_metric_rows, trial_stats
    from reviewer.workflows.imports import import_paths
    from tests.conftest import FIXTURES, sample_copy

    path = sample_copy(tmp_path / "d.db")
    with open_store(path) as db:
        for name in ("deepseek-v3-crashed.json", "grok-3-graded-5-tasks.json"):
            import_paths(db, [str(FIXTURES / "tau_bench" / name)], run=name.split("-")[0])
        with db.transaction():
            seqs = [r[0] for r in db.execute("SELECT seq FROM trials ORDER BY seq LIMIT 4")]
            db.execute("UPDATE trials SET cost_usd = 9e999 WHERE seq = ?", [seqs[0]])
            db.execute("UPDATE trials SET latency_s = -9e999 WHERE seq = ?", [seqs[1]])
            db.execute("UPDATE trials SET cost_usd = 1.7e308 WHERE seq IN (?, ?)", seqs[2:4])
        runs = [r[0] for r in db.execute("SELECT DISTINCT run FROM trials ORDER BY run")]
        assert len(runs) >= 4
        rules = ["never_cancel_shipped", "unknown_rule"]
        seen_broken = 0
        for run in runs:
            rows, broken = run_metric_rows(db, run)
            seen_broken += sum(broken.values())
            fast = run_distributions_of_rows(rows, broken, rules)
            assert fast == run_distributions(trial_stats(db, run), rules), run
            assert list(fast.violation_trials)[:2] == rules
        assert seen_broken  # rules were broken: their counts came from SQL
    assert run_distributions_of_rows([], {}, rules) == run_distributions([], rules)
