"""The 95% interval of a report's average over tasks, and the bounds with left-out tasks."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.stats import beta, t

from reviewer.cli import cli
from reviewer.metrics.average_interval import left_out_bounds, mean_interval
from reviewer.metrics.passk import run_passk
from tests.conftest import native_trial, write_jsonl


def test_the_interval_is_clopper_pearson_over_the_effective_number_of_tasks() -> None:
    # by hand: 10 tasks at 0.5 and 10 at 1.0
    values = [0.5] * 10 + [1.0] * 10
    mean, var = float(np.mean(values)), float(np.var(values, ddof=1))
    n_eff = 20 * mean * (1 - mean) / var
    n_df = n_eff * (1.959963984540054 / t.ppf(0.975, 19)) ** 2
    x = mean * n_df
    expected = (beta.ppf(0.025, x, n_df - x + 1), beta.ppf(0.975, x + 1, n_df - x))
    got = mean_interval([(0.5, 10), (1.0, 10)])
    assert got == pytest.approx(expected, abs=1e-9)
    # near an edge the interval reaches at least as far as the exact all-at-1 bound: 19 tasks at
    # 1 and one at 0.875 would give a lower end of 0.986 by the variance alone
    near = mean_interval([(1.0, 19), (0.875, 1)])
    assert near is not None and near[0] == pytest.approx(0.025 ** (1 / 20))
    # the same values one by one give the same interval
    assert mean_interval((v, 1) for v in values) == pytest.approx(got, abs=1e-12)


def test_every_task_at_one_gets_the_exact_markov_bound() -> None:
    assert mean_interval([(1.0, 20)]) == pytest.approx((0.025 ** (1 / 20), 1.0))
    assert mean_interval([(0.0, 20)]) == pytest.approx((0.0, 1 - 0.025 ** (1 / 20)))
    assert mean_interval([(0.7, 1)]) is None and mean_interval([]) is None


def test_the_interval_covers_a_population_of_flaky_tasks() -> None:
    # a small seeded version of bench/report_intervals.py: 20 tasks x 5 trials, rates from a mix
    rng = np.random.default_rng(26)
    hits = 0
    draws = 400
    for _ in range(draws):
        kind = rng.random(20)
        p = np.where(
            kind < 0.4,
            rng.beta(18, 1.5, 20),
            np.where(kind < 0.8, rng.beta(2, 2, 20), rng.beta(1, 6, 20)),
        )
        c = rng.binomial(5, p)
        uniq, times = np.unique(c / 5, return_counts=True)
        ci = mean_interval(zip(uniq.tolist(), times.tolist(), strict=True))
        truth = 0.4 * 18 / 19.5 + 0.4 * 0.5 + 0.2 / 7
        assert ci is not None
        hits += ci[0] <= truth <= ci[1]
    assert hits / draws >= 0.93


def test_left_out_tasks_bound_the_average() -> None:
    # 4 tasks kept averaging 0.5, one left out: 2 / 5 if it had 0, 3 / 5 if it had 1
    assert left_out_bounds(0.5, 4, 1) == pytest.approx((0.4, 0.6))
    assert left_out_bounds(None, 0, 3) == (0.0, 1.0)
    assert left_out_bounds(0.3, 5, 0) == pytest.approx((0.3, 0.3))
    rep = run_passk("r", [("a", 4, 4), ("b", 4, 2), ("c", 2, 0)], [1, 4])
    assert rep.excluded[4] == 1
    assert rep.bounds_hat_k[4] == pytest.approx((1 / 3, 2 / 3))  # a: 1, b: C(2,4) = 0


def test_report_prints_and_gives_the_intervals_and_bounds(tmp_path: Path) -> None:
    # five tasks of 4 trials and one that crashed after 2: it has no pass^4
    recs = [
        native_trial(task, passed=i < c, trial=i + 1, run="r")
        for task, c in (("a", 4), ("b", 3), ("c", 2), ("d", 4), ("e", 1))
        for i in range(4)
    ] + [native_trial("f", passed=False, trial=i + 1, run="r") for i in range(2)]
    write_jsonl(tmp_path / "r.jsonl", recs)
    db = str(tmp_path / "x.db")
    assert CliRunner().invoke(cli, ["--db", db, "import", str(tmp_path / "r.jsonl")]).exit_code == 0
    out = CliRunner().invoke(cli, ["--db", db, "report", "--k", "1,4"]).stdout
    lines = out.splitlines()
    assert lines[7].startswith("AVERAGE") and lines[8].startswith(
        "95% interval over tasks: pass@1 "
    )
    assert "note: the k=4 averages use 5 of 6 tasks; 1 with fewer than 4 trials are left out" in out
    assert "with each at 0 or at 1: pass@4 " in out and ", pass^4 " in out
    data = json.loads(
        CliRunner().invoke(cli, ["--db", db, "report", "--k", "1,4", "--json"]).stdout
    )
    avg = data["runs"][0]["average"]
    rep = run_passk(
        "r", [("a", 4, 4), ("b", 4, 3), ("c", 4, 2), ("d", 4, 4), ("e", 4, 1), ("f", 2, 0)], [1, 4]
    )
    assert avg["ci95"]["pass_at_k"]["1"] == pytest.approx(list(rep.interval_at_k[1]))  # type: ignore[arg-type]
    assert avg["ci95"]["pass_hat_k"]["4"] == pytest.approx(list(rep.interval_hat_k[4]))  # type: ignore[arg-type]
    low, high = avg["left_out_bounds"]["pass_hat_k"]["4"]
    assert low == pytest.approx(avg["pass_hat_k"]["4"] * 5 / 6)
    assert high == pytest.approx((avg["pass_hat_k"]["4"] * 5 + 1) / 6)
    assert f"pass^4 {low:.2f} .. {high:.2f}" in out
    # the old keys are all still there
    assert set(avg) >= {"pass_at_k", "pass_hat_k", "tasks_left_out"}


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_tasks_screen_shows_the_averages_with_their_intervals(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    from textual.widgets import Static

    from reviewer.metrics.report import average_summary
    from reviewer.tui.app import ReviewerApp

    recs = [
        native_trial(task, passed=i < c, trial=i + 1, run="r")
        for task, c in (("a", 4), ("b", 3), ("c", 2), ("d", 4), ("e", 1))
        for i in range(4)
    ] + [native_trial("f", passed=False, trial=i + 1, run="r") for i in range(2)]
    write_jsonl(tmp_path / "r.jsonl", recs)
    db = tmp_path / "x.db"
    assert (
        CliRunner().invoke(cli, ["--db", str(db), "import", str(tmp_path / "r.jsonl")]).exit_code
        == 0
    )
    app = ReviewerApp(db_path=db)
    app.pass_k = 4  # as chosen with `k`: task f (2 trials) has no pass^4
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        await pilot.press("enter")
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        line = app.screen.query_one("#tasks-average", Static)
        k = app.screen.k  # type: ignore[attr-defined]
        rep = run_passk(
            "r",
            [("a", 4, 4), ("b", 4, 3), ("c", 4, 2), ("d", 4, 4), ("e", 4, 1), ("f", 2, 0)],
            [1, k],
        )
        expected = average_summary(rep, k)
        assert str(line.render()).replace("\n", " ") == expected
        assert k == 4 and "averages (95% CI): pass@1 0.58 (" in expected
        assert "· 1 task with n < 4 left out: pass^4 " in expected
        assert "with it at 0 or 1" in expected
        # it wraps within the screen instead of losing its end
        assert line.size.width <= size[0] and len(expected) <= 2 * (line.size.width - 2)


def test_a_failure_never_raises_the_lower_end_above_all_passing() -> None:
    """50 tasks that pass all 8 trials: pass@1 0.929 .. 1.000 (the exact bound over 50 tasks).
    The same with one task passing 7 of 8: 0.986 .. 1.000, a higher lower end for worse data (at
    10 tasks: 0.692 when all pass, 0.917 with one trial failed)."""
    for m in (10, 20, 50):
        perfect = mean_interval([(1.0, m)])
        one_failed = mean_interval([(1.0, m - 1), (0.875, 1)])
        assert perfect is not None and one_failed is not None
        assert one_failed[0] <= perfect[0]
