"""compare_runs: summary directions, buckets, default k, one-run tasks, the bootstrap, rendering."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest

from reviewer.metrics.compare import BUCKETS, compare_runs, render_comparison
from reviewer.metrics.distributions import TrialStats
from reviewer.metrics.passk import run_passk

SEV = {"no-cancel": "forbidden", "lookup": "policy"}


def trials(
    task: str,
    passes: Iterable[bool],
    steps: int = 5,
    cost: float = 0.03,
    latency: float = 10.0,
    violations: Iterable[frozenset[str]] | None = None,
) -> list[TrialStats]:
    ps = list(passes)
    vs = list(violations) if violations is not None else [frozenset()] * len(ps)
    return [TrialStats(task, p, steps, cost, latency, 2, 0, v) for p, v in zip(ps, vs, strict=True)]


def run(spec: dict[str, str], **kw: object) -> list[TrialStats]:
    """{"task": "11100"} -> trials with those outcomes."""
    out: list[TrialStats] = []
    for task, outcomes in spec.items():
        out += trials(task, (ch == "1" for ch in outcomes), **kw)  # type: ignore[arg-type]
    return out


def wide(spec: dict[str, str], copies: int = 2) -> dict[str, str]:
    """Each task ``copies`` times (``a`` -> ``a0``, ``a1``): enough tasks for an interval."""
    return {f"{t}{i}": v for i in range(copies) for t, v in spec.items()}


OLD = {"a": "11111", "b": "11111", "c": "11100", "d": "00000", "e": "11000"}
NEW = {"a": "11111", "b": "11011", "c": "00000", "d": "11111", "e": "11100"}


def test_summary_rows_and_marks() -> None:
    old = run(wide(OLD), steps=6, cost=0.031, latency=20.0)
    new = run(wide(NEW), steps=4, cost=0.024, latency=30.0)
    new[0] = TrialStats("a0", True, 4, 0.024, 30.0, 2, 0, frozenset({"no-cancel"}))
    cmp = compare_runs(old, new, None, SEV, old_name="old prompt", new_name="new prompt")
    assert cmp.k == 5 and cmp.k_is_default
    hat, p1 = cmp.row("pass_hat_k"), cmp.row("pass_at_1")
    assert hat.label == "pass^5 (overall)"
    assert (hat.old, hat.new) == pytest.approx((0.4, 0.4))  # a, b -> a, d
    assert hat.direction == "same" and hat.mark == ""
    # +0.08 from two tasks moving a lot in opposite directions: the interval straddles zero
    assert (p1.old, p1.new) == pytest.approx((15 / 25, 17 / 25))
    assert p1.direction == "within noise" and p1.mark == "within noise"
    assert p1.low is not None and p1.high is not None and p1.low < 0 < p1.high
    assert cmp.row("avg_steps").mark == "<-- better"  # every task took fewer steps
    assert cmp.row("p95_latency_s").mark == "<-- worse"
    assert cmp.row("forbidden_rate").direction == "RED FLAG"
    assert cmp.row("forbidden_rate").mark == "<-- RED FLAG"
    assert cmp.row("rule:no-cancel").direction == "RED FLAG"
    assert cmp.row("rule:lookup").direction == "same"


def test_cheaper_while_less_reliable_is_quoted_better() -> None:
    old = run({f"t{i}": "11111" for i in range(12)}, steps=6, cost=0.031)
    new = run({f"t{i}": "11111" if i % 2 else "11110" for i in range(12)}, steps=4, cost=0.024)
    cmp = compare_runs(old, new, None, {})
    assert cmp.row("pass_hat_k").mark == "<-- worse"
    assert cmp.row("avg_steps").mark == '<-- "better"'
    assert cmp.row("cost_per_task").mark == '<-- "better"'
    assert "forbidden_rate" not in {r.metric for r in cmp.rows}  # no forbidden rule configured


def test_policy_rule_rise_is_worse_not_red_flag() -> None:
    old = run({f"t{i}": "11" for i in range(12)})
    new = [
        s
        for i in range(12)
        for s in trials(f"t{i}", [True, True], violations=[frozenset({"lookup"}), frozenset()])
    ]
    cmp = compare_runs(old, new, None, SEV)
    assert cmp.row("rule:lookup").direction == "worse"
    assert cmp.row("forbidden_rate").direction == "same"


def test_forbidden_rise_within_noise_is_still_broken_not_a_red_flag() -> None:
    """1 of 4 -> 2 of 4 trials (one-sided exact p = 0.5) is a rule still broken, a warning; the
    same rise on a rule the new run stops breaking is a fall."""
    v = frozenset({"no-cancel"})
    old = trials("a", [True] * 4, violations=[v, frozenset(), frozenset(), frozenset()])
    new = trials("a", [True] * 4, violations=[v, v, frozenset(), frozenset()])
    row = compare_runs(old, new, None, SEV).row("forbidden_rate")
    assert row.direction == "still broken"
    assert row.counts == (1, 4, 2, 4)
    assert row.p_value == pytest.approx(0.5)
    assert row.forbidden_words == (
        "1 of 4 -> 2 of 4 trials: still broken, a rise within noise, one-sided exact p = 0.5"
    )
    # a fall that still breaks it is a warning too; the mark says so
    fell = compare_runs(new, old, None, SEV).row("forbidden_rate")
    assert fell.direction == "still broken" and fell.mark == "still broken"
    assert "not a rise" in fell.forbidden_words
    many_old = [
        s
        for i in range(12)
        for s in trials(f"t{i}", [True] * 4, violations=[v, v, frozenset(), frozenset()])
    ]
    many_new = [
        s for i in range(12) for s in trials(f"t{i}", [True] * 4, violations=[frozenset()] * 4)
    ]
    stopped = compare_runs(many_old, many_new, None, SEV).row("forbidden_rate")
    assert stopped.direction == "better" and stopped.high is not None and stopped.high < 0


def test_forbidden_rise_beyond_noise_is_a_red_flag_and_says_its_p() -> None:
    """1 of 48 -> 12 of 48 trials over 12 tasks: beyond noise (exact p < 0.05), a RED FLAG."""
    v, ok = frozenset({"no-cancel"}), frozenset()
    old = [s for i in range(12) for s in trials(f"t{i}", [True] * 4, violations=[ok] * 4)]
    old[0] = trials("t0", [True], violations=[v])[0]
    new = [s for i in range(12) for s in trials(f"t{i}", [True] * 4, violations=[v, ok, ok, ok])]
    row = compare_runs(old, new, None, SEV).row("forbidden_rate")
    assert row.direction == "RED FLAG"
    assert row.counts == (1, 48, 12, 48)
    assert row.p_value is not None and row.p_value < 0.01
    assert row.forbidden_words.startswith("1 of 48 -> 12 of 48 trials: a rise beyond noise")
    text = render_comparison(compare_runs(old, new, None, SEV), color=False)
    assert "forbidden-tool rate: 1 of 48 -> 12 of 48 trials: a rise beyond noise" in text


def test_a_forbidden_rule_the_baseline_never_broke_is_a_red_flag_however_few() -> None:
    v, ok = frozenset({"no-cancel"}), frozenset()
    old = trials("a", [True] * 4, violations=[ok] * 4)
    new = trials("a", [True] * 4, violations=[v, ok, ok, ok])
    row = compare_runs(old, new, None, SEV).row("rule:no-cancel")
    assert row.direction == "RED FLAG"
    assert row.forbidden_words.startswith("0 of 4 -> 1 of 4 trials: the baseline never broke it")


def test_buckets_and_order() -> None:
    old = run({**OLD, "f": "10000", "g": "11110"})
    new = run({**NEW, "f": "11000", "g": "10000"})
    cmp = compare_runs(old, new, None, {})
    bucket = {t.task_id: t.bucket for t in cmp.tasks}
    assert bucket == {
        "a": "unchanged",
        "b": "newly flaky",
        "c": "newly failing",
        "d": "fixed",
        "e": "improved",
        "f": "improved",
        "g": "regressed",
    }
    assert cmp.buckets == {b: list(bucket.values()).count(b) for b in BUCKETS}
    # Largest pass^k drop first; ties broken by the pass@1 drop.
    assert [t.task_id for t in cmp.tasks] == ["b", "c", "g", "a", "e", "f", "d"]
    assert [t.delta for t in cmp.tasks] == [-1.0, 0, 0, 0, 0, 0, 1.0]


def test_pass_hat_matches_report_average() -> None:
    old, new = run(OLD), run(NEW)
    cmp = compare_runs(old, new, 3, {})
    for stats, value in ((old, cmp.row("pass_hat_k").old), (new, cmp.row("pass_hat_k").new)):
        outcomes = {t: [x.success for x in stats if x.task_id == t] for t in OLD}
        rep = run_passk("r", [(t, len(o), sum(o)) for t, o in outcomes.items()], [1, 3])
        assert value == rep.average_hat_k[3]


def test_disjoint_task_sets() -> None:
    old = run({"a": "111", "b": "000"})
    new = run({"c": "111", "d": "1"})
    cmp = compare_runs(old, new, None, SEV)
    assert [(t.task_id, t.n, t.c) for t in cmp.only_old] == [("a", 3, 3), ("b", 3, 0)]
    assert [(t.task_id, t.n, t.c) for t in cmp.only_new] == [("c", 3, 3), ("d", 1, 1)]
    assert cmp.tasks == [] and cmp.k == 1
    assert all(r.direction == "n/a" for r in cmp.rows)
    assert all(b.diff is None and not b.significant for b in cmp.bootstrap)
    text = render_comparison(cmp, color=False)
    assert "only in old (2): a, b" in text and "only in new (2): c, d" in text
    assert "no tasks to compare" in text
    json.loads(cmp.to_json())


def test_partly_overlapping_tasks_are_listed_not_dropped() -> None:
    cmp = compare_runs(run({"a": "11", "b": "10"}), run({"b": "11", "c": "00"}), None, {})
    assert [t.task_id for t in cmp.tasks] == ["b"]
    assert [t.task_id for t in cmp.only_old] == ["a"] and [t.task_id for t in cmp.only_new] == ["c"]
    data = cmp.to_dict()
    assert data["only_old"] == [{"task_id": "a", "n": 2, "c": 2}]


def test_runs_of_different_n() -> None:
    old = run({"a": "11111", "b": "11100"})  # n = 5
    new = run({"a": "1111111111", "b": "1111111000"})  # n = 10
    cmp = compare_runs(old, new, None, {})
    assert cmp.k == 5
    t = {x.task_id: x for x in cmp.tasks}
    assert (t["b"].old_n, t["b"].new_n) == (5, 10)
    assert t["b"].old_pass_hat == 0.0
    assert t["b"].new_pass_hat == pytest.approx(21 / 252)  # C(7,5)/C(10,5)
    # An explicit k larger than one run's n: those tasks have no pass^k and are listed.
    big = compare_runs(old, new, 8, {})
    assert big.excluded == ["a", "b"] and big.row("pass_hat_k").direction == "n/a"
    assert big.row("pass_at_1").old == pytest.approx(0.8)
    assert "no pass^8 for 2 shared task(s) with fewer than 8 scored trials in a run" in (
        render_comparison(big, color=False)
    )


def test_uneven_n_within_a_run_sets_default_k() -> None:
    old = run({"a": "1111", "b": "11"})
    new = run({"a": "111", "b": "111111"})
    assert compare_runs(old, new, None, {}).k == 2
    with pytest.raises(ValueError):
        compare_runs(old, new, 0, {})


def big_runs() -> tuple[list[TrialStats], list[TrialStats]]:
    import random

    r = random.Random(7)
    old: list[TrialStats] = []
    new: list[TrialStats] = []
    for i in range(40):
        p = r.random()
        old += trials(f"t{i:02d}", (r.random() < p for _ in range(5)))
        new += trials(f"t{i:02d}", (r.random() < p - 0.05 for _ in range(5)))
    return old, new


def test_bootstrap_is_reproducible_under_a_seed() -> None:
    old, new = big_runs()
    a = compare_runs(old, new, None, {}, seed=3, n_boot=500).bootstrap
    b = compare_runs(old, new, None, {}, seed=3, n_boot=500).bootstrap
    c = compare_runs(old, new, None, {}, seed=4, n_boot=500).bootstrap
    assert a == b
    assert [(x.low, x.high) for x in a] != [(x.low, x.high) for x in c]
    for ci in a:
        assert (
            ci.n_tasks == 40 and ci.low is not None and ci.high is not None and ci.diff is not None
        )
        assert ci.low <= ci.diff <= ci.high


def test_bootstrap_significance() -> None:
    old = run({f"t{i}": "11111" for i in range(30)})
    new = run({f"t{i}": "11111" if i % 3 else "00000" for i in range(30)})
    ci = compare_runs(old, new, None, {}, n_boot=300).bootstrap[0]
    assert ci.metric == "pass_hat_k" and ci.significant and ci.high is not None and ci.high < 0
    same = compare_runs(old, old, None, {}, n_boot=300).bootstrap[0]
    assert (same.low, same.high, same.significant) == (0.0, 0.0, False)


def test_render_plain_and_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    old = run({f"t{i:02}": "11111" for i in range(12)}, steps=6, cost=0.031)
    new = run({f"t{i:02}": "11111" if i % 2 else "11110" for i in range(12)}, steps=4, cost=0.024)
    new[0] = TrialStats("t00", True, 4, 0.024, 10.0, 2, 0, frozenset({"no-cancel"}))
    cmp = compare_runs(old, new, None, SEV, old_name="old prompt", new_name="new prompt")
    plain = render_comparison(cmp, color=False)
    lines = plain.splitlines()
    assert lines[0].split() == ["old", "prompt", "new", "prompt", "95%", "CI", "of", "change"]
    assert lines[1].split()[:3] == ["pass^5", "(overall)", "1.00"] and lines[1].endswith(
        "<-- worse"
    )
    assert '<-- "better"' in plain
    flag = next(line for line in lines if line.startswith("forbidden-tool rate"))
    assert flag.split()[2:4] == ["0.0%", "1.7%"] and flag.endswith("<-- RED FLAG")
    assert "\x1b" not in plain
    coloured = render_comparison(cmp, color=True)
    assert "\x1b[" in coloured and "RED FLAG" in coloured
    red = next(line for line in coloured.splitlines() if "RED FLAG" in line)
    assert "\x1b[1;31m<-- RED FLAG" in red


def test_untrusted_names_are_made_visible() -> None:
    old = run({"evil\x1b[31m": "1"})
    cmp = compare_runs(old, old, None, {}, old_name="a\x07", new_name="[red]x[/]")
    text = render_comparison(cmp, color=True)
    assert "\x1b[31m" not in text and "␛[31m" in text and "␇" in text
    assert "[red]x[/]" in text


def test_json_has_everything() -> None:
    cmp = compare_runs(run(OLD), run({**NEW, "z": "1"}), None, SEV)
    data = json.loads(cmp.to_json())
    assert set(data) >= {"summary", "bootstrap", "buckets", "tasks", "only_old", "only_new", "k"}
    assert data["summary"][0]["metric"] == "pass_hat_k"
    assert data["bootstrap"][0]["ci95"][0] is not None
    assert data["only_new"] == [{"task_id": "z", "n": 1, "c": 1}]
    assert data["distributions"]["old"]["n_trials"] == 25
    assert data["tasks"][0]["bucket"] in BUCKETS


def test_bucket_follows_pass_hat_before_pass_rate() -> None:
    # 6/8 -> 5/6: the pass rate rose, but pass^6 fell from 1/28 to 0, so the task regressed.
    old = run({"a": "11111100", "b": "11111000"})
    new = run({"a": "111110", "b": "111100"})
    cmp = compare_runs(old, new, None, {})
    assert cmp.k == 6
    bucket = {t.task_id: t.bucket for t in cmp.tasks}
    # b: pass^6 is 0 in both, so the pass rate (5/8 -> 4/6) decides.
    assert bucket == {"a": "regressed", "b": "improved"}


def test_each_run_shows_its_own_pass_hat_where_the_other_has_none() -> None:
    """A task whose every old trial crashed read "0/0 -> 1/1, n/a, n/a" (found by a numbers
    review on tau-bench's real runs): the new run's pass^1 of 1.00 was there to show. Each run
    shows its own where it has k trials; the change stays n/a, as it needs both."""
    from dataclasses import replace

    crashed = [replace(t, success=False, outcome="infra") for t in trials("c", [False] * 2)]
    old = run({"a": "11", "b": "10"}) + crashed
    new = run({"a": "11", "b": "11", "c": "11"})
    t = {x.task_id: x for x in compare_runs(old, new, None, {}).tasks}
    assert (t["c"].old_pass_hat, t["c"].new_pass_hat, t["c"].delta) == (None, 1.0, None)
    assert t["c"].bucket == "infrastructure error"
    assert (t["b"].old_pass_hat, t["b"].new_pass_hat) == (0.0, 1.0)
    # a k past one run's trials: that run's pass^k alone is n/a
    t = {x.task_id: x for x in compare_runs(old, run({"b": "1111"}), 3, {}).tasks}
    assert (t["b"].old_pass_hat, t["b"].new_pass_hat, t["b"].delta) == (None, 1.0, None)


def test_json_distributions_do_not_say_no_crash_beside_a_run_s_crashes() -> None:
    """The distributions are over the trials the harness did not crash; their own "infra" said 0
    for a run of two crashed trials, which "left_out" counts (found by a numbers audit)."""
    from dataclasses import replace

    crashed = [replace(t, success=False, outcome="infra") for t in trials("a", [False] * 2)]
    old = run({"a": "11", "b": "10"}) + crashed
    data = json.loads(compare_runs(old, run({"a": "11", "b": "11"}), None, {}).to_json())
    assert data["left_out"]["old"]["infra"] == 2
    for side in ("old", "new"):
        dist = data["distributions"][side]
        assert "infra" not in dist and "infrastructure errors left out" in dist["over"]
        assert dist["n_trials"] == dist["measured"] == 4
