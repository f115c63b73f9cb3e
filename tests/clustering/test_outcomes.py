"""Issue 33, items 3 and 5: a failing tau2 transcript shows the task's expected actions, the
source's own assertions with the grader's verdict and reward breakdown, in the header and in the
clustering evidence; tau2 simulations with no reward are unscored trials; runs name their model.
Built on the tau2 results file made after tau2-bench's schema (``tests/fixtures/tau2``)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from reviewer.store.db import open_store
from tests.conftest import FIXTURES, run_cli

TAU2 = FIXTURES / "tau2" / "airline-small.json"


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli("--db", "x.db", *args)


def _tau2(tmp_path: Path, edit: Any = None) -> Path:
    data = json.loads(TAU2.read_text(encoding="utf-8"))
    if edit is not None:
        edit(data)
    path = tmp_path / "airline.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _graded_assertion(data: dict[str, Any]) -> None:
    said = "Agent should not approve the cancellation."
    data["tasks"][0]["evaluation_criteria"]["nl_assertions"] = [said]
    failing = data["simulations"][1]
    failing["reward_info"]["action_checks"] = None  # the actions were not checked
    failing["reward_info"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    failing["reward_info"]["nl_assertions"] = [
        {"nl_assertion": said, "met": False, "justification": "The agent cancelled 60RX9E."}
    ]
    failing["reward_info"]["reward_breakdown"] = {"DB": 0.0, "NL_ASSERTION": 0.0}


def test_a_failing_tau2_transcript_shows_the_expectation_and_the_graders_reason(
    tmp_path: Path,
) -> None:
    from reviewer.clustering.signature import evidence_of
    from reviewer.tui.screens.transcript import load_payload, summary_text

    path = _tau2(tmp_path, _graded_assertion)
    code, _, err = cli("import", str(path))
    assert code == 0, err
    with open_store("x.db") as db:
        (tid,) = [
            r[0] for r in db.execute("SELECT id FROM trials WHERE task_id = '0' AND trial = 1")
        ]
        payload = load_payload(db, tid, None)
    assert payload is not None
    lines = summary_text(payload).plain.splitlines()
    assert lines[0].startswith(" FAIL ")
    assert 'expected actions: cancel_reservation(reservation_id="MZDDS4")' in lines
    assert (
        "assertion: NOT MET: Agent should not approve the cancellation. — "
        "The agent cancelled 60RX9E." in lines
    )
    assert "reward breakdown: DB 0, NL_ASSERTION 0" in lines
    reason = next(line for line in lines if line.startswith("reason: "))
    assert "assertion not met: Agent should not approve the cancellation." in reason

    # the clustering's evidence says the same: the expected action against the call made, and
    # the source's own assertion
    doc = evidence_of(payload.trial, trial_id=tid)
    outcome = next(e for e in doc.evidence if e.kind == "outcome")
    assert "called cancel_reservation with other arguments than expected" in outcome.text
    assert "called cancel_reservation with reservation_id other than expected" in outcome.text
    assert "assertion not met: Agent should not approve the cancellation." in outcome.text


def test_tau2_simulations_without_reward_are_unscored_trials_and_runs_name_their_model(
    tmp_path: Path,
) -> None:
    from reviewer.store.queries import list_runs

    def no_reward(data: dict[str, Any]) -> None:
        extra = copy.deepcopy(data["simulations"][0])
        extra["id"], extra["trial"], extra["reward_info"] = "sim-9", 2, None
        data["simulations"].append(extra)

    code, out, err = cli("import", str(_tau2(tmp_path, no_reward)))
    assert code == 0, err
    assert "0 skipped" in out + err
    with open_store("x.db") as db:
        rows = db.execute("SELECT outcome FROM trials WHERE task_id = '0' AND trial = 2").fetchall()
        (run,) = list_runs(db)
    assert rows == [("unscored",)]
    assert run.unscored == 1 and run.model == "gpt-4.1-2025-04-14"


def test_a_tau_bench_run_names_the_model_its_file_name_gives(tmp_path: Path) -> None:
    from reviewer.store.queries import list_runs

    recs = [
        {"task_id": 0, "reward": 1.0, "traj": [{"role": "user", "content": "hi"}], "info": {}},
    ]
    path = tmp_path / "tool-calling-gpt-4o-0.0_range_0-1_user-gpt-4o-llm_0101120000.json"
    path.write_text(json.dumps(recs), encoding="utf-8")
    assert cli("import", str(path))[0] == 0
    with open_store("x.db") as db:
        (run,) = list_runs(db)
    assert run.model == "gpt-4o"


def test_a_failing_tau_bench_transcript_shows_its_expected_actions_and_outputs(
    tmp_path: Path,
) -> None:
    from reviewer.tui.screens.transcript import load_payload, summary_text

    rec = {
        "task_id": 3,
        "reward": 0.0,
        "traj": [
            {"role": "user", "content": "cancel order #W1"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "cancel_pending_order",
                            "arguments": '{"order_id": "#W2", "reason": "no longer needed"}',
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "cancel_pending_order", "content": "ok"},
        ],
        "info": {
            "task": {
                "user_id": "u1",
                "instruction": "Cancel order #W1.",
                "actions": [
                    {
                        "name": "cancel_pending_order",
                        "kwargs": {"order_id": "#W1", "reason": "no longer needed"},
                    }
                ],
                "outputs": ["W1 cancelled"],
            },
            "reward_info": {
                "reward": 0.0,
                "info": {"r_actions": 0.0, "r_outputs": 0.0, "outputs": {"W1 cancelled": False}},
                "actions": [
                    {
                        "name": "cancel_pending_order",
                        "kwargs": {"order_id": "#W1", "reason": "no longer needed"},
                    }
                ],
            },
        },
    }
    path = tmp_path / "retail.json"
    path.write_text(json.dumps([rec]), encoding="utf-8")
    assert cli("import", str(path))[0] == 0
    with open_store("x.db") as db:
        (tid,) = [r[0] for r in db.execute("SELECT id FROM trials")]
        payload = load_payload(db, tid, None)
    assert payload is not None
    lines = summary_text(payload).plain.splitlines()
    assert (
        'expected actions: cancel_pending_order(order_id="#W1", reason="no longer needed")' in lines
    )
    assert "expected outputs: W1 cancelled (MISSING)" in lines
    assert "reward breakdown: r_actions 0, r_outputs 0" in lines


def test_a_composite_tau_bench_reward_shows_its_parts() -> None:
    from reviewer.clustering.outcomes import expectation_lines
    from reviewer.models import Trial

    trial = Trial(
        task_id="0",
        messages=[],
        reward=0.93,
        metadata={
            "reward_info": {
                "reward": 0.93,
                "info": {"r_actions": 1.0},
                "actions": [],
                "components": {
                    "base_success": 1.0,
                    "efficiency_penalty": -0.17,
                    "resilience_bonus": 0.1,
                    "steps": 17,
                    "composite": 0.93,
                },
            }
        },
    )
    assert expectation_lines(trial) == [
        ("expected actions", "none"),
        (
            "reward breakdown",
            "r_actions 1, base_success 1, efficiency_penalty -0.17, resilience_bonus 0.1, "
            "composite 0.93",
        ),
    ]


def test_an_expected_action_list_cut_for_the_header_says_it_was_cut() -> None:
    # the transcript header of a real tau-bench trial (grok-3, task 1) showed its five expected
    # actions cut at 300 characters mid-name, `... item_ids=["4983901480"], new_item_id`, with
    # nothing saying more followed: the call the task turns on read as a whole (wrong) one
    from reviewer.clustering.outcomes import EXPECTATION_CHARS, expectation_lines
    from reviewer.models import Trial

    actions = [
        {"name": "get_product_details", "kwargs": {"product_id": str(1656367028 + i)}}
        for i in range(12)
    ]
    trial = Trial(
        task_id="1",
        messages=[],
        reward=0.84,
        metadata={"reward_info": {"reward": 0.84, "info": {"r_actions": 1.0}, "actions": actions}},
    )
    (label, text), *_ = expectation_lines(trial)
    assert label == "expected actions"
    assert len(text) == EXPECTATION_CHARS and text.endswith("…")
    short = Trial(
        task_id="1",
        messages=[],
        reward=1.0,
        metadata={"reward_info": {"reward": 1.0, "info": {}, "actions": actions[:1]}},
    )
    assert expectation_lines(short)[0] == (
        "expected actions",
        'get_product_details(product_id="1656367028")',
    )


def test_a_wrong_argument_of_an_expected_write_is_shown_whole() -> None:
    """gpt-4o on tau-bench airline task 0: the header's expected book_reservation(...) is cut at 300
    characters after its flights and passengers, and the cluster says "another payment_methods
    than expected" (or baggages): nowhere but --json showed what was expected there. Each argument
    of the agent's closest call that differs now has its own line, expected against made."""
    from reviewer.clustering.outcomes import expectation_lines
    from reviewer.ingest import tau_bench
    from reviewer.models import Trial
    from tests.conftest import FIXTURES

    trials = [
        t
        for t in tau_bench.parse(FIXTURES / "tau_bench" / "gpt-4o-airline-5-tasks.json")
        if isinstance(t, Trial)
    ]
    task0 = next(t for t in trials if t.task_id == "0" and t.trial == 0)
    lines = dict(expectation_lines(task0))
    assert lines["expected actions"].endswith("…")  # the call itself stays cut
    assert lines["book_reservation nonfree_baggages"] == "expected 0; the agent's call: 1"
    # a pass, and a read-only expectation, add no such line
    for t in trials:
        if t.success or t.task_id == "41":
            labels = [label for label, _ in expectation_lines(t)]
            assert not [x for x in labels if x.startswith(("book_", "update_"))], t.task_id


def test_an_expected_write_made_right_is_not_compared_again() -> None:
    """A task expecting two cancellations: the agent made one exactly and never the other. It
    called cancel_reservation too few times, not 'with other arguments' (6 of gpt-4o-airline's
    116 failures were named so); with a second, wrong call, that call is the one compared."""
    from reviewer.clustering.outcomes import _action_facts

    expected = [
        ("cancel_reservation", {"reservation_id": "A"}),
        ("cancel_reservation", {"reservation_id": "B"}),
    ]
    right = ("cancel_reservation", {"reservation_id": "A"})
    assert _action_facts(expected, [right]) == [
        "called cancel_reservation fewer times than expected"
    ]
    assert _action_facts(expected, [right, ("cancel_reservation", {"reservation_id": "C"})]) == [
        "called cancel_reservation with other arguments than expected",
        "called cancel_reservation with reservation_id other than expected",
    ]
    assert _action_facts(expected, [right, ("cancel_reservation", {"reservation_id": "B"})]) == []
