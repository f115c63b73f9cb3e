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
    assert "called cancel_reservation with another reservation_id than expected" in outcome.text
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
