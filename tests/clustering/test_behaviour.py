"""Issue 28, item 1: what the agent did, read from its trajectory, groups and names failures
whose only evidence is a grader's free text, however the reason was worded."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from sklearn.metrics import adjusted_rand_score, completeness_score, homogeneity_score

from reviewer.clustering.behaviour import status_of
from reviewer.clustering.cluster import cluster_failures
from reviewer.clustering.signature import FailureDoc, evidence_of
from reviewer.models import Message, ToolCall, Trial
from tests.clustering.behaviours import failures


def cancel(order: str, status: str, reason: str, ask: bool = False, tid: str = "t") -> FailureDoc:
    msgs = [
        Message("user", f"Please cancel {order}."),
        Message("assistant", "", [ToolCall("get_order_details", {"order_id": order}, "a")]),
        Message("tool", json.dumps({"order_id": order, "status": status}), tool_call_id="a"),
    ]
    if ask:
        msgs += [Message("assistant", "Shall I cancel it?"), Message("user", "yes")]
    msgs += [
        Message("assistant", "", [ToolCall("cancel_order", {"order_id": order}, "b")]),
        Message("tool", json.dumps({"order_id": order, "status": "cancelled"}), tool_call_id="b"),
        Message("assistant", "Your order is cancelled."),
    ]
    trial = Trial(task_id="t", messages=msgs, passed=False, reason=reason)
    return evidence_of(trial, trial_id=tid)


def test_a_shipped_status_read_before_cancel_order_is_a_fact() -> None:
    doc = cancel("#W1", "shipped", "bad")
    assert "called cancel_order on shipped orders" in doc.behaviour_facts
    assert "called cancel_order without asking the user to confirm" in doc.behaviour_facts
    assert "status:cancel_order@shipped" in doc.behaviour
    asked = cancel("#W1", "pending", "bad", ask=True)
    assert "called cancel_order on pending orders" in asked.behaviour_facts
    assert not any("without asking" in f for f in asked.behaviour_facts)


def test_the_status_is_of_the_record_the_write_changes() -> None:
    msgs = [
        Message("assistant", "", [ToolCall("get_order_details", {"order_id": "#W1"}, "a")]),
        Message("tool", '{"order_id": "#W1", "status": "delivered"}', tool_call_id="a"),
        Message("assistant", "", [ToolCall("get_order_details", {"order_id": "#W2"}, "b")]),
        Message("tool", '{"order_id": "#W2", "status": "pending"}', tool_call_id="b"),
        Message("assistant", "", [ToolCall("cancel_order", {"order_id": "#W1"}, "c")]),
        Message("tool", "ok", tool_call_id="c"),
    ]
    doc = evidence_of(Trial(task_id="t", messages=msgs, passed=False, reason="x"))
    assert "called cancel_order on delivered orders" in doc.behaviour_facts
    assert status_of("Order #W3: Status: in transit.") == "in transit"
    assert status_of("all good") is None


def test_gave_up_transfer_and_talk_only_are_facts() -> None:
    error = [
        Message("assistant", "", [ToolCall("get_order", {"order_id": "#W1"}, "a")]),
        Message("tool", "Error: request timed out after 30s", tool_call_id="a", name="get_order"),
        Message("assistant", "Sorry, please try again later."),
    ]
    doc = evidence_of(Trial(task_id="t", messages=error, passed=False))
    assert "gave up after a timeout from get_order" in doc.behaviour_facts
    handoff = [Message("assistant", "", [ToolCall("transfer_to_human_agents", {}, "a")])]
    doc = evidence_of(Trial(task_id="t", messages=handoff, passed=False))
    assert "ended in a transfer to human before trying any change" in doc.behaviour_facts
    talk = [Message("user", "where is it?"), Message("assistant", "It arrives Friday.")]
    doc = evidence_of(Trial(task_id="t", messages=talk, passed=False, reason="made it up"))
    assert doc.behaviour_key == "talked only:statement"
    assert evidence_of(Trial(task_id="t", messages=[], passed=False)).behaviour_key == ""


def test_two_wordings_of_one_behaviour_land_in_one_cluster_named_by_it() -> None:
    docs = [
        cancel(f"#W{i}", "delivered", reason, tid=f"a{i:02}")
        for i, reason in enumerate(
            ["cancelled a delivered order", "the package had arrived yet it was voided"] * 4
        )
    ] + [
        cancel(f"#W{i}", "pending", "wrong reason given for the cancellation", True, f"b{i:02}")
        for i in range(8)
    ]
    result = cluster_failures(docs, seed=0)
    by_trial = result.by_trial()
    assert len({by_trial[d.trial_id] for d in docs[:8]}) == 1
    assert by_trial[docs[0].trial_id] != by_trial[docs[8].trial_id]
    names = [c.name for c in result.clusters]
    assert "called cancel_order on delivered orders" in names
    # without the trajectory the two wordings stay apart, as before
    bare = [dataclasses.replace(d, behaviour=(), behaviour_key="") for d in docs[:8]]
    assert len(set(cluster_failures(bare, seed=0).by_trial().values())) == 2


def test_behaviour_paraphrases_reach_the_target_on_held_out_wordings() -> None:
    """A fast seeded version of bench/behaviour_ari.py (80 failures, 8 modes)."""
    for seed in (0, 1):
        docs, truth = failures("held_out", n=80, seed=seed)
        by_trial = cluster_failures(docs, seed=0).by_trial()
        got = [by_trial[d.trial_id] for d in docs]
        assert adjusted_rand_score(truth, got) >= 0.9
        assert homogeneity_score(truth, got) >= 0.99
        assert completeness_score(truth, got) >= 0.9
        again = cluster_failures(list(reversed(docs)), seed=0).by_trial()
        assert adjusted_rand_score(got, [again[d.trial_id] for d in docs]) == 1.0


def test_an_errors_kind_is_read_whatever_its_numbers() -> None:
    """Errors alike but for their numbers share a kind unless a number decides it (429, 403, 5xx),
    in whichever order they come."""
    from reviewer.clustering.behaviour import _error_kind

    cases = [
        ("upstream answered 429 for order W1234", "rate limit"),
        ("upstream answered 428 for order W1234", "error"),
        ("upstream answered 503 for order W9", "server error"),
        ("upstream answered 4290 for order W9", "error"),
        ("order W1234 could not be read", "error"),
        ("order W5678 could not be read", "error"),
    ]
    for ordered in (cases, cases[::-1]):
        assert [_error_kind(text) for text, _ in ordered] == [kind for _, kind in ordered]


def test_answering_without_a_tool_names_a_failure_only_where_the_run_calls_tools(
    tmp_path: Path,
) -> None:
    """A question-answering eval offers no tool: its 22 failures were named "answered without
    calling any tool" (Inspect's theory_of_mind, found by a new user). A run some trial of which
    calls a tool still names a trial that only talked so."""
    from reviewer.clustering.run import failure_docs
    from reviewer.store import open_store
    from tests.conftest import native_trial, run_cli, write_jsonl

    talk = [
        {"role": "user", "content": "Where is Sally's ball?"},
        {"role": "assistant", "content": "In the basket."},
    ]
    qa = [dict(native_trial(f"q{i}", passed=False), run="qa", messages=talk) for i in range(3)]
    agent = [dict(native_trial("t1", passed=True), run="agent")]
    agent += [dict(native_trial("t2", passed=False), run="agent", messages=talk)]
    db = tmp_path / "x.db"
    code, _, err = run_cli(
        "--db", str(db), "import", str(write_jsonl(tmp_path / "r.jsonl", qa + agent))
    )
    assert code == 0, err
    with open_store(db) as store:
        docs = {(d.run, d.task_id): d for d in failure_docs(store)}
    said = "answered without calling any tool"
    assert all(said not in docs[("qa", f"q{i}")].behaviour_facts for i in range(3))
    assert docs[("qa", "q0")].behaviour_key == ""
    assert said in docs[("agent", "t2")].behaviour_facts
