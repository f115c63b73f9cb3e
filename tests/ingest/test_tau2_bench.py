"""tau2-bench importer, on the hand-made fixture written after tau2's public results schema."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from reviewer.ingest import inspect_log, openai_chat, tau2_bench, tau_bench
from reviewer.ingest.base import IngestError, canonical
from reviewer.models import Skip, Trial

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tau2" / "airline-small.json"


def head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(64 * 1024)


def trials_of(path: Path) -> list[Trial]:
    out = list(tau2_bench.parse(path))
    assert all(isinstance(r, Trial) for r in out), out
    return [r for r in out if isinstance(r, Trial)]


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


def write(tmp_path: Path, data: dict[str, Any], name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_fixture_gives_two_tasks_by_two_trials() -> None:
    trials = trials_of(FIXTURE)
    assert [(t.task_id, t.trial, t.reward) for t in trials] == [
        ("0", 0, 1.0),
        ("0", 1, 0.0),
        ("1", 0, 0.0),
        ("1", 1, 1.0),
    ]
    assert [t.success for t in trials] == [True, False, False, True]
    assert all(t.passed is None for t in trials)
    assert [t.source_line for t in trials] == [1, 2, 3, 4]
    sims = load()["simulations"]
    assert [t.fingerprint for t in trials] == [canonical(s) for s in sims]


def test_termination_cost_latency_and_usage() -> None:
    t0, t1, t2, t3 = trials_of(FIXTURE)
    assert [t.termination for t in (t0, t1, t2, t3)] == [
        "user stop",
        "user stop",
        "max steps",
        "transfer to human",
    ]
    assert t0.usage.cost_usd == pytest.approx(0.01342)
    assert t0.latency_s == pytest.approx(41.118)
    assert t0.usage.input_tokens == 5 * 2400  # the greeting has no usage
    assert t0.usage.output_tokens == 5 * 60
    assert t0.metadata["user_cost"] == pytest.approx(0.00215)
    assert t0.metadata["domain"] == "airline"
    assert t0.metadata["agent_llm"] == "gpt-4.1-2025-04-14"
    assert t0.metadata["simulation_id"].endswith("0001")
    assert t0.metadata["task"]["evaluation_criteria"]["actions"][0]["name"] == "cancel_reservation"
    assert t0.error is None


def test_messages_tool_calls_and_results() -> None:
    t0, t1, _, _ = trials_of(FIXTURE)
    assert t0.messages[0].role == "assistant"  # tau2's agent greets first
    call = t0.messages[2].tool_calls[0]
    assert (call.name, call.arguments, call.id) == (
        "get_user_details",
        {"user_id": "raj_sanchez_7340"},
        "call_k2V1",
    )
    result = t0.messages[3]
    assert (result.role, result.tool_call_id, result.name, result.is_error) == (
        "tool",
        "call_k2V1",
        "get_user_details",
        False,
    )
    assert t0.tool_call_count == 3 and t0.tool_errors == 0
    assert t1.tool_errors == 1
    assert t1.messages[3].content == "Error: Reservation MZDDS not found"


def test_reasons_name_the_failed_checks() -> None:
    t0, t1, t2, t3 = trials_of(FIXTURE)
    assert t0.reason is None and t3.reason is None
    assert (
        t1.reason
        == "database state did not match expected; expected actions not taken: cancel_reservation"
    )
    assert t2.reason == "Simulation terminated prematurely. Termination reason: max_steps"


def test_instructions_structured_and_plain() -> None:
    t0, _, t2, _ = trials_of(FIXTURE)
    assert t0.instruction is not None
    assert (
        t0.instruction.splitlines()[0] == "Reason for call: You want to cancel reservation MZDDS4."
    )
    assert "Task instructions: If the agent asks for confirmation" in t0.instruction
    assert (
        t2.instruction
        == "You want to add a checked bag to reservation 60RX9E. Your user id is raj_sanchez_7340."
    )


def test_multi_tool_messages_are_flattened(tmp_path: Path) -> None:
    data = load()
    sim = data["simulations"][0]
    calls = [
        {
            "id": "a",
            "name": "get_user_details",
            "arguments": {"user_id": "u"},
            "requestor": "assistant",
        },
        {
            "id": "b",
            "name": "get_reservation_details",
            "arguments": {"reservation_id": "r"},
            "requestor": "assistant",
        },
    ]
    sim["messages"] = sim["messages"][:2] + [
        {"role": "assistant", "content": None, "tool_calls": calls},
        {
            "role": "tool",
            "tool_messages": [
                {"id": "a", "role": "tool", "content": "{}", "error": False},
                {"id": "b", "role": "tool", "content": "not found", "error": True},
            ],
        },
    ]
    data["simulations"] = [sim]
    (trial,) = trials_of(write(tmp_path, data))
    assert [(m.role, m.name, m.is_error) for m in trial.messages[3:]] == [
        ("tool", "get_user_details", False),
        ("tool", "get_reservation_details", True),
    ]


def test_malformed_simulations_become_skips(tmp_path: Path) -> None:
    data = load()
    good = data["simulations"][0]
    no_task = copy.deepcopy(good)
    del no_task["task_id"]
    infra = copy.deepcopy(good)
    infra.update(reward_info=None, termination_reason="infrastructure_error")
    no_messages = copy.deepcopy(good)
    no_messages["messages"] = None
    agent_error = copy.deepcopy(good)
    agent_error.update(termination_reason="agent_error")
    agent_error["reward_info"] = {"reward": 0.0, "info": {"note": "agent raised"}}
    data["simulations"] = [no_task, 42, infra, no_messages, agent_error, good]
    out = list(tau2_bench.parse(write(tmp_path, data)))
    assert [type(r).__name__ for r in out] == ["Skip", "Skip", "Trial", "Skip", "Trial", "Trial"]
    reasons = [r.reason for r in out if isinstance(r, Skip)]
    sim_id = good["id"]
    # a skip names the simulation and its id: a results file has no line worth naming
    assert reasons == [
        f"simulation 1 (id {sim_id}): no task_id",
        "simulation 2: not a JSON object (int)",
        f"simulation 4 (id {sim_id}): task 0: no messages list (full-duplex ticks are not read)",
    ]
    assert [r.line for r in out if isinstance(r, Skip)] == [None, None, None]
    crashed = out[2]  # tau2 leaves infrastructure errors out of its denominators
    assert isinstance(crashed, Trial) and crashed.outcome == "infra" and crashed.reward is None
    errored = out[4]
    assert isinstance(errored, Trial)
    assert errored.error is not None and errored.error.type == "agent_error"
    assert errored.error.message == "agent raised" and errored.reason == "agent raised"
    assert errored.termination == "agent error"


def test_dir_format_reads_the_simulations_folder(tmp_path: Path) -> None:
    data = load()
    sims = data["simulations"]
    data["simulations"] = []
    results = write(tmp_path, data)
    folder = tmp_path / "simulations"
    folder.mkdir()
    for sim in sims:
        (folder / f"{sim['id']}.json").write_text(json.dumps(sim))
    (folder / "zz-broken.json").write_text("{")
    out = list(tau2_bench.parse(results))
    assert [r.task_id for r in out if isinstance(r, Trial)] == ["0", "0", "1", "1"]
    (skip,) = [r for r in out if isinstance(r, Skip)]
    assert skip.file.endswith("zz-broken.json") and skip.reason.startswith("invalid JSON")


def test_folder_format_skip_names_the_simulation_not_a_line(tmp_path: Path) -> None:
    data = load()
    sims = data["simulations"]
    data["simulations"] = []
    results = write(tmp_path, data)
    folder = tmp_path / "simulations"
    folder.mkdir()
    bad = dict(sims[0], id="sim-abc", messages=None)
    (folder / "sim-abc.json").write_text(json.dumps(bad))
    (skip,) = list(tau2_bench.parse(results))
    assert isinstance(skip, Skip) and skip.line is None
    assert skip.reason.startswith("simulation 1 (id sim-abc): task 0: no messages list")
    assert str(skip).startswith(f"{folder / 'sim-abc.json'}: simulation 1 (id sim-abc)")


def test_whole_file_problems_raise_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"timestamp": "x", "info": {')
    with pytest.raises(IngestError, match="invalid JSON") as err:
        list(tau2_bench.parse(broken))
    assert "\n" not in str(err.value)
    data = load()
    data["simulations"] = []
    with pytest.raises(IngestError, match="no simulations"):
        list(tau2_bench.parse(write(tmp_path, data, "empty.json")))
    with pytest.raises(IngestError, match="not a tau2-bench results object"):
        list(tau2_bench.parse(write(tmp_path, [], "list.json")))  # type: ignore[arg-type]


def test_sniff_own_format_and_not_the_others(tmp_path: Path) -> None:
    assert tau2_bench.sniff(FIXTURE, head(FIXTURE))
    # a big tasks list can push "simulations" past the 64 KiB head: the info block still tells
    data = load()
    data["tasks"] = data["tasks"] * 200
    big = write(tmp_path, data, "big.json")
    assert b'"simulations"' not in head(big)
    assert tau2_bench.sniff(big, head(big))
    for mod in (tau_bench, inspect_log, openai_chat):
        assert not mod.sniff(FIXTURE, head(FIXTURE)), mod.NAME
        assert not mod.sniff(big, head(big)), mod.NAME
    others = [Path(__file__).resolve().parents[1] / "fixtures" / "openai_chat" / "support.jsonl"]
    real = Path(__file__).resolve().parents[1] / "fixtures"
    others += [
        real / "tau_bench" / "gpt-4o-airline-5-tasks.json",
        real / "inspect" / "support.json",
        real / "inspect" / "support.eval",
    ]
    for other in others:
        assert not tau2_bench.sniff(other, head(other)), other
