"""Issue 16, item 1: clusters are named by what the trials say happened (expected vs actual actions,
answer vs target), by a statement most members share, and no two clusters share a name."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.clustering.cluster import cluster_failures
from reviewer.clustering.naming import fact_name, majority
from reviewer.clustering.outcomes import outcome_facts
from reviewer.clustering.signature import evidence_of
from reviewer.models import Message, ToolCall, Trial
from tests.conftest import CORPORA, REPO, real_data

TAU = REPO / "tests" / "fixtures" / "tau_bench"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def tau_trial(
    expected: list[dict[str, object]], calls: list[tuple[str, dict[str, object]]]
) -> Trial:
    msgs = [
        Message(
            role="assistant",
            content="",
            tool_calls=[
                ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)
            ],
        )
    ]
    return Trial(
        task_id="t",
        messages=msgs,
        reward=0.0,
        metadata={"reward_info": {"reward": 0.0, "info": {"r_actions": 0.0}, "actions": expected}},
    )


def test_tau_bench_facts_say_expected_against_actual_actions() -> None:
    want = [{"name": "cancel_reservation", "kwargs": {"reservation_id": "Z7"}}]
    assert outcome_facts(tau_trial(want, [("get_user_details", {"user_id": "u"})])) == [
        "did not call cancel_reservation (expected it)"
    ]
    wrong = outcome_facts(tau_trial(want, [("cancel_reservation", {"reservation_id": "Q1"})]))
    assert "called cancel_reservation with reservation_id other than expected" in wrong
    extra = outcome_facts(tau_trial([], [("book_reservation", {"x": 1})]))
    assert "called book_reservation (not expected)" in extra
    assert "expected no database writes" in extra
    # the right call with the right arguments says nothing went wrong with actions
    assert outcome_facts(tau_trial(want, [("cancel_reservation", {"reservation_id": "Z7"})])) == []


def test_inspect_facts_say_answer_against_target() -> None:
    trial = Trial(
        task_id="t",
        messages=[],
        passed=False,
        metadata={"target": " Yes", "scores": {"match": {"value": "I", "answer": "No"}}},
    )
    facts = outcome_facts(trial)
    assert "answered 'No', expected 'Yes'" in facts
    long = Trial(
        task_id="t",
        messages=[],
        passed=False,
        metadata={"target": "x", "scores": {"m": {"value": "I", "answer": "To assess " * 20}}},
    )
    assert outcome_facts(long) == ["scored incorrect by m"]


def test_tau2_facts_name_failed_action_checks() -> None:
    trial = Trial(
        task_id="t",
        messages=[],
        passed=False,
        metadata={
            "reward_info": {
                "db_check": {"db_match": False},
                "action_checks": [{"action": {"name": "cancel"}, "action_match": False}],
                "reward_basis": ["DB"],
            }
        },
    )
    assert outcome_facts(trial) == [
        "database state did not match expected",
        "did not call cancel (expected it)",
    ]


def test_a_name_is_never_one_members_accident() -> None:
    assert majority(1) == 1 and majority(2) == 2 and majority(4) == 3 and majority(5) == 3
    facts = Counter({"get_order: order <id> not found": 1, "did not call x (expected it)": 3})
    name, _ = fact_name(facts, 4) or ("", [])
    assert name == "did not call x (expected it) (3 of 4)"
    assert fact_name(Counter({"a typo": 1, "another": 1}), 4) is None


def test_a_recovered_tool_error_does_not_group_the_trial() -> None:
    msgs = [
        Message(role="assistant", content="", tool_calls=[ToolCall(id="1", name="get_order")]),
        Message(role="tool", content="Error: order W1 not found", name="get_order"),
        Message(role="assistant", content="", tool_calls=[ToolCall(id="2", name="get_order")]),
        Message(role="tool", content='{"order_id": "W2"}', name="get_order"),
    ]
    doc = evidence_of(Trial(task_id="t", messages=msgs, passed=False, reason="no identity check"))
    assert "not found" not in doc.signature
    assert doc.signature == "no identity check"
    assert not any("not found" in f for f in doc.facts)


def test_no_two_clusters_share_a_name() -> None:
    docs = [
        evidence_of(
            Trial(task_id=f"t{i}", messages=[], passed=False, reason="no"), trial_id=f"a{i}"
        )
        for i in range(4)
    ] + [
        evidence_of(
            Trial(task_id=f"u{i}", messages=[], passed=False, reason="no"), trial_id=f"b{i}"
        )
        for i in range(4)
    ]
    result = cluster_failures(docs, seed=0)
    names = [c.name for c in result.clusters]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    "path", real_data(TAU / "gpt-4o-airline-5-tasks.json", "tau-bench", "gpt-4o-airline.json")
)
def test_tau_bench_clusters_say_which_action_went_wrong(path: Path, tmp_path: Path) -> None:
    db = str(tmp_path / "t.db")
    assert invoke("--db", db, "import", str(path))[0] == 0
    code, out, err = invoke("--db", db, "cluster", "--json")
    assert code == 0, err
    data = json.loads(out)
    clusters = data["clusters"]
    names = [c["name"] for c in clusters]
    assert len(names) == len({n.lower() for n in names})
    assert all("expected no database writes)" not in n for n in names[:1])
    assert any(n.startswith(("did not call", "called ")) for n in names)
    if path.parent == CORPORA / "tau-bench":
        # issue 16: one cluster held 66 of 116 (57%)
        assert clusters[0]["size"] / data["n_failures"] < 0.25
        # regression: a name told apart by a fragment ("… than expected — est", from EST times)
        tails = [n.split(" — ", 1)[1].split(" (")[0] for n in names if " — " in n]
        assert tails and all(len(t) >= 4 for t in tails), tails


INSPECT = REPO / "tests" / "fixtures" / "inspect" / "support.json"


@pytest.mark.parametrize("path", real_data(INSPECT, "realworld", "inspect_scout"))
def test_inspect_clusters_are_named_by_answer_not_grader_boilerplate(
    path: Path, tmp_path: Path
) -> None:
    """Regression (issue 16): Inspect clusters were named after the grader's boilerplate ("to
    assess the correctness of the submitted answer...") and two clusters were both named "no"."""
    db = str(tmp_path / "i.db")
    assert invoke("--db", db, "import", str(path))[0] == 0
    code, out, err = invoke("--db", db, "cluster", "--json")
    assert code == 0, err
    names = [c["name"] for c in json.loads(out)["clusters"]]
    assert names and len(names) == len({n.lower() for n in names})
    assert not any(n.lower().startswith("to assess") for n in names)
    assert any(n.startswith(("answered ", "scored incorrect by ")) for n in names)
