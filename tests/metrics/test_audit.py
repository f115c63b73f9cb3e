"""The independence audit over generated runs: planted leaks, copies and hollow passes are found
exactly; independent runs give no finding; the trend test keeps its false-alarm rate."""

from __future__ import annotations

import json
import random
from math import comb
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.metrics.audit_trial import (
    _TOKEN,
    _is_identifier,
    identifiers,
    identifiers_among,
    is_identifier,
    is_write_tool,
)
from reviewer.metrics.audit_types import MAX_KEPT
from reviewer.metrics.trend import ALPHA, trend_test
from reviewer.store import open_store
from tests.conftest import run_cli, write_jsonl
from tests.support.audit_sim import Sim, audit, shared_records


def found(result, kind: str) -> set:
    return {tuple(sorted(t.id for t in f.trials)) for f in result.findings if f.kind == kind}


def tid(task: str, trial: int) -> str:
    return f"{task}#{trial}"


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("random_ids", [False, True])
def test_independent_runs_give_no_finding(seed: int, random_ids: bool) -> None:
    # bookings hand out HATHAT in every fresh environment, cancellations echo seeded ids the
    # trial never read, lookups read those seeded ids: none of it is a leak
    result = audit(Sim(seed=seed, tasks=15, trials=5, random_ids=random_ids).records())
    assert result.findings == []
    assert result.distinct == result.reported


def test_planted_leaks_are_found_exactly() -> None:
    sim = Sim(seed=3, tasks=12, trials=4, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_00", 2))  # the harness kept trial 0's database
    sim.plant_leak(("task_06", 1), ("task_00", 3))  # task 6 books for task 0's user too
    sim.plant_leak(("task_03", 2), ("task_09", 0))
    result = audit(sim.records())
    leaks = [f for f in result.findings if f.kind == "leak"]
    pairs = {(f.detail["viewer"]["id"], f.detail["creator"]["id"]) for f in leaks}
    assert pairs == {
        (tid("task_00", 2), tid("task_00", 0)),
        (tid("task_00", 3), tid("task_06", 1)),
        (tid("task_09", 0), tid("task_03", 2)),
    }
    assert {f.kind for f in result.findings} == {"leak"}
    first = next(f for f in leaks if f.detail["viewer"]["id"] == tid("task_00", 2))
    assert first.detail["viewer"]["tool"] == "get_user_details"
    assert first.detail["creator"]["tool"] == "book_reservation"
    assert any("did not return it" in e for e in first.evidence)


def test_leak_of_an_id_every_environment_hands_out_names_an_earlier_creator() -> None:
    sim = Sim(seed=5, tasks=9, trials=4)  # every booking is HATHAT, as in tau-bench
    sim.plant_leak(("task_03", 1), ("task_03", 2))
    result = audit(sim.records())
    (leak,) = [f for f in result.findings if f.kind == "leak"]
    assert leak.detail["viewer"]["id"] == tid("task_03", 2)
    assert leak.detail["values"] == ["HATHAT"]
    # trials 0 and 1 of the task both booked HATHAT: the earlier creator is named, the rest said
    assert leak.detail["creator"]["task_id"] == "task_03"
    assert leak.detail["creator"]["trial"] < 2
    assert any("also created by" in e for e in leak.evidence)


def test_leak_changes_pass_hat_k_by_leaving_the_viewer_out() -> None:
    sim = Sim(seed=3, tasks=6, trials=4, random_ids=True, skill={"task_00": 1.0})
    sim.plant_leak(("task_00", 0), ("task_00", 1))
    result = audit(sim.records())
    (leak,) = result.findings
    # task_00 passes 4 of 4; without the viewer 3 of 3: its pass^4 is gone (fewer than 4 trials)
    assert result.k == 4
    assert leak.adjusted is not None and leak.adjusted != result.reported


def test_ids_in_the_instruction_or_system_prompt_are_not_leaks() -> None:
    sim = Sim(seed=3, tasks=6, trials=4, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    records = sim.records()
    created = next(
        m["content"]
        for r in records
        if (r["task_id"], r["trial"]) == ("task_00", 0)
        for m in r["messages"]
        if m.get("name") == "book_reservation"
    )
    new_id = created.split('"reservation_id": "')[1][:6]
    for r in records:
        if (r["task_id"], r["trial"]) == ("task_00", 2):
            r["instruction"] = f"You want to change reservation {new_id}."
    assert found(audit(records), "leak") == set()
    for r in records:
        if (r["task_id"], r["trial"]) == ("task_00", 2):
            r.pop("instruction")
            r["messages"][0]["content"] += f" Known bookings: {new_id}."
    assert found(audit(records), "leak") == set()


def test_planted_copies_are_found_exactly_and_pass_hat_k_counts_them_once() -> None:
    sim = Sim(seed=4, tasks=6, trials=4, skill={"task_01": 1.0, "task_02": 0.0})
    sim.plant_copy("task_01", 0, 3)
    sim.plant_copy("task_01", 0, 2)
    sim.plant_copy("task_02", 1, 2, "replay")  # new wording, same tool results and timings
    records = sim.records()
    result = audit(records)
    assert found(result, "copy") == {
        (tid("task_01", 0), tid("task_01", 2), tid("task_01", 3)),
        (tid("task_02", 1), tid("task_02", 2)),
    }
    assert {f.kind for f in result.findings} == {"copy"}
    # by hand: pass^4 over tasks, then with task_01 as 2 distinct trials (left out, n < 4) and
    # task_02 as 3 distinct trials (left out too)
    counts = {}
    for r in records:
        n, c = counts.get(r["task_id"], (0, 0))
        counts[r["task_id"]] = (n + 1, c + r["outcome"]["passed"])
    hat = {t: comb(c, 4) / comb(n, 4) for t, (n, c) in counts.items()}
    assert result.reported == pytest.approx(sum(hat.values()) / len(hat))
    kept = [v for t, v in hat.items() if t not in ("task_01", "task_02")]
    assert result.distinct == pytest.approx(sum(kept) / len(kept))
    assert result.distinct_left_out == 2


def test_short_identical_answers_are_not_copies() -> None:
    # a multiple-choice answer is the same letter every time from a sound agent
    records = [
        {
            "run": "mc",
            "task_id": f"q{q}",
            "trial": i,
            "outcome": {"passed": True},
            "messages": [
                {"role": "user", "content": f"Question {q}?"},
                {"role": "assistant", "content": "ANSWER: C"},
            ],
        }
        for q in range(3)
        for i in range(4)
    ]
    assert audit(records, "mc").findings == []


def test_planted_hollow_passes_are_found_exactly() -> None:
    sim = Sim(seed=8, tasks=9, trials=4, skill={"task_05": 1.0})
    sim.plant_hollow("task_04", 0, "empty")
    sim.plant_hollow("task_05", 1, "no_tools")
    sim.plant_hollow("task_07", 3, "silent")
    result = audit(sim.records())
    assert found(result, "hollow") == {
        (tid("task_04", 0),),
        (tid("task_05", 1),),
        (tid("task_07", 3),),
    }
    assert {f.kind for f in result.findings} == {"hollow"}
    reasons = {f.trials[0].task_id: f.detail["reason"] for f in result.findings}
    assert reasons["task_04"].startswith("an empty final assistant turn")
    assert reasons["task_05"].startswith("no tool call, while 3 of the task's 4 passes")
    assert reasons["task_07"] == "no assistant turn at all"


def test_a_pass_without_tools_is_not_hollow_when_most_passes_use_none() -> None:
    sim = Sim(seed=8, tasks=3, trials=4, skill={"task_00": 1.0})
    for i in range(3):
        sim.plant_hollow("task_00", i, "no_tools")
    assert found(audit(sim.records()), "hollow") == set()


def test_trend_false_alarm_rate_on_independent_runs() -> None:
    rng = random.Random(20)
    runs = 3000
    flagged = 0
    for _ in range(runs):
        tasks = rng.choice([5, 20, 50])
        trials = rng.choice([2, 4, 8])
        outcomes = []
        for _ in range(tasks):
            p = rng.random()
            outcomes.append([rng.random() < p for _ in range(trials)])
        flagged += trend_test(outcomes).significant
    # expected ALPHA * runs = 3; more than 10 would be a false-alarm rate over 3x ALPHA
    assert flagged <= 10


def test_trend_finds_a_pass_rate_that_falls_with_trial_order() -> None:
    rng = random.Random(21)
    hits = 0
    for _ in range(200):
        outcomes = []
        for _ in range(80):  # 80 tasks x 4 trials, pass chance down a fifth per trial
            p = rng.uniform(0.5, 0.95)
            outcomes.append([rng.random() < p * (1 - 0.2 * i) for i in range(4)])
        t = trend_test(outcomes)
        hits += t.significant and t.z < 0
    assert hits >= 190


def test_order_effect_is_a_run_finding() -> None:
    sim = Sim(seed=9, tasks=40, trials=4)
    records = sim.records()
    for r in records:  # state carried along: every later trial fails more
        r["outcome"] = {"passed": r["trial"] < 2}
    result = audit(records)
    (order,) = [f for f in result.findings if f.kind == "order"]
    assert result.trend.z < 0 and result.trend.p < ALPHA
    assert "falls" in order.title


def test_words_of_tool_names_and_identifiers() -> None:
    assert is_write_tool("book_reservation") and is_write_tool("cancelOrder")
    assert is_write_tool("exchange_delivered_order_items")
    assert not is_write_tool("get_user_details") and not is_write_tool("search_direct_flight")
    assert not is_write_tool("bookmarks_list") and not is_write_tool(None)
    assert is_identifier("HATHAT") and is_identifier("W5521") and is_identifier("certificate_750")
    assert is_identifier("1234567") and not is_identifier("12345")
    assert not is_identifier("2024-05-20") and not is_identifier("2024-05-02T06:02:56")
    assert not is_identifier("Hello") and not is_identifier("economy")
    assert identifiers('{"reservation_id": "4WQ150", "date": "2024-05-20"}') == {"4WQ150"}


#: Tokens as ``_TOKEN`` finds them, drawn to land on every edge of ``is_identifier``: dates and
#: times, digits with and without letters, runs of capitals with ``_`` and ``-``, lengths 4 and 100.
_token_parts = st.sampled_from(
    [
        "2024-05-20",
        "T06:02:56",
        "12:30",
        "1:05:59",
        "W",
        "Q",
        "HAT",
        "hat",
        "_",
        "-",
        "#",
        ".",
        ":",
        "/",
    ]
    + list("0123456789ABZaz")
)
_tokens = (
    st.lists(_token_parts, min_size=1, max_size=40)
    .map("".join)
    .filter(lambda t: _TOKEN.fullmatch(t) is not None)
)


@settings(max_examples=600, deadline=None)
@given(
    st.sets(_tokens | st.sampled_from(["A" * 100, "A" * 101, "1a" * 50, "1a" * 51]), max_size=12)
)
def test_identifiers_sorted_out_together_are_those_sorted_out_one_by_one(tokens: set[str]) -> None:
    want = {t for t in tokens if 4 <= len(t) <= 100 and _is_identifier(t)}
    assert identifiers_among(tokens) == want


def test_same_latency_without_token_counts_is_no_copy() -> None:
    # regression: the 100,000-trial bench flagged two independent trials of a deterministic
    # environment whose millisecond latencies matched by chance; tokens unknown, so no evidence
    sim = Sim(seed=2, tasks=3, trials=4)
    records = sim.records()
    for r in records:
        r.pop("usage")
        r["latency_s"] = 12.345
    a, b = records[0], records[1]  # task_00 trials 0 and 1: same tool results when booking HATHAT
    assert [m["content"] for m in a["messages"] if m["role"] == "tool"] == [
        m["content"] for m in b["messages"] if m["role"] == "tool"
    ]
    assert found(audit(records), "copy") == set()


# Folded in from tests/test_audit_grouped.py:
# A run whose trials all share one environment: each trial that saw others' state is one leak (the
# first creator named, the rest counted), only the first MAX_KEPT findings of a kind are kept and
# stored, and every report says how many more there are. Regression tests for issue 27 part 11
# (20,000 such trials gave 998,725 findings, 4.3 GB of memory and a 1.1 GB database).


N = 600  # 150 tasks x 4 trials, 10 users: most trials see bookings of other trials


def test_a_shared_environment_gives_one_leak_per_viewer_and_keeps_the_first_hundred() -> None:
    result = audit(shared_records(N), run="shared")
    leaks = [f for f in result.findings if f.kind == "leak"]
    counts = result.counts()
    assert len(leaks) == MAX_KEPT == 100
    assert result.not_kept == {"leak": counts["leak"] - MAX_KEPT}
    # trials 1-3 of every task saw trial 0's booking, which trial 0's own lookup lacked (trial 0
    # saw only what every later trial of its task saw too): one leak each, not one per (viewer,
    # creator) pair (there are thousands of those)
    assert counts["leak"] == 3 * N // 4
    viewers = [f.detail["viewer"]["id"] for f in leaks]
    assert len(set(viewers)) == len(viewers)
    crowded = [f for f in leaks if "other_creators" in f.detail]
    assert crowded
    f = crowded[-1]
    others = f.detail["other_creators"]
    assert others["trials"] >= 1 and others["values"] >= others["trials"]
    assert any(e.startswith("it also saw ") for e in f.evidence)
    # the kept findings still carry their own adjusted pass^k
    assert all(f.adjusted is not None for f in leaks)
    summary = result.to_dict()
    assert summary["counts"]["leak"] == counts["leak"]
    assert summary["not_stored"]["leak"] == counts["leak"] - MAX_KEPT
    assert summary["stored_per_kind"] == MAX_KEPT and len(summary["findings"]) == MAX_KEPT


def test_a_viewer_of_two_creators_is_one_leak_naming_the_first() -> None:
    sim = Sim(seed=3, tasks=12, trials=4, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_leak(("task_00", 2), ("task_00", 3))  # trial 3 sees trial 0's and trial 2's
    result = audit(sim.records())
    by_viewer = {f.detail["viewer"]["trial"]: f for f in result.findings if f.kind == "leak"}
    assert sorted(by_viewer) == [2, 3]
    three = by_viewer[3]
    assert three.detail["creator"]["trial"] == 0  # the earliest creator before it
    assert three.detail["other_creators"]["trials"] == 1
    assert three.detail["other_creators"]["first"][0]["trial"] == 2
    assert result.not_kept == {}


def test_cli_and_store_keep_the_cap_and_say_how_many_more(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "shared.jsonl", shared_records(N))
    db = str(tmp_path / "a.db")
    code, _, err = run_cli("--db", db, "import", str(tmp_path / "shared.jsonl"))
    assert code == 0, err
    with open_store(db) as store:
        (stored,) = store.execute("SELECT COUNT(*) FROM audit_findings").fetchone()
    assert stored == MAX_KEPT
    code, out, err = run_cli("--db", db, "audit", "--run", "shared", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    more = run["not_stored"]["leak"]
    assert more > 0 and run["counts"]["leak"] == MAX_KEPT + more
    code, out, err = run_cli("--db", db, "audit", "--run", "shared")
    assert code == 0, err
    assert f"{run['counts']['leak']} leaks" in out.splitlines()[0]
    assert f"{more:,} more leaks not stored (the first {MAX_KEPT} of each kind are)" in out
    assert out.count("[leak]") == MAX_KEPT
    code, _, err = run_cli("--db", db, "report")
    assert f"the audit found {run['counts']['leak']} leaks" in err
