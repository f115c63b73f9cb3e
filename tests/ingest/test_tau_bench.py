"""tau-bench importer: the real historical trajectories file, and malformed arrays made in tmp_path."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reviewer.ingest import inspect_log, openai_chat, tau2_bench, tau_bench
from reviewer.ingest.base import IngestError, canonical
from reviewer.models import Skip, Trial
from tests.conftest import real_data

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SUBSET = FIXTURES / "tau_bench" / "gpt-4o-airline-5-tasks.json"

# What each file holds: the 5-task subset (pinned by hand from the file) and the full corpus file.
FACTS: dict[str, dict[str, Any]] = {
    SUBSET.name: {
        "records": 20,
        "tasks": 5,
        "successes": 9,
        "calls": 100,
        "no_reward": 1,
        "outputs_missing": 4,
        "termination": {"user stop": 16, "transfer to human": 3, "max steps": 1},
    },
    "gpt-4o-airline.json": {
        "records": 200,
        "tasks": 50,
        "successes": 84,  # tau-bench's published 0.42 pass^1 for gpt-4o on airline
        "calls": 500,
        "no_reward": 5,
        "outputs_missing": 10,
        "termination": {"user stop": 147, "transfer to human": 48, "max steps": 5},
    },
}


@pytest.fixture(scope="module", params=real_data(SUBSET, "tau-bench", "gpt-4o-airline.json"))
def real(request: pytest.FixtureRequest) -> Path:
    path: Path = request.param
    return path


@pytest.fixture(scope="module")
def trials(real: Path) -> list[Trial]:
    records = list(tau_bench.parse(real))
    assert all(isinstance(r, Trial) for r in records)
    return [r for r in records if isinstance(r, Trial)]


def head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(64 * 1024)


def test_real_file_is_tasks_by_4_trials(real: Path, trials: list[Trial]) -> None:
    facts = FACTS[real.name]
    assert len(trials) == facts["records"]
    per_task = Counter(t.task_id for t in trials)
    assert len(per_task) == facts["tasks"]
    assert set(per_task.values()) == {4}
    assert all(isinstance(t.task_id, str) for t in trials)
    assert {t.trial for t in trials} == {0, 1, 2, 3}
    assert trials[0].task_id == "0"
    assert [t.source_line for t in trials] == list(range(1, facts["records"] + 1))


def test_real_file_pass_rate(real: Path, trials: list[Trial]) -> None:
    successes = Counter(t.task_id for t in trials if t.success)
    raw = json.loads(real.read_text())
    assert sum(successes.values()) == FACTS[real.name]["successes"]
    assert sum(successes.values()) == sum(r["reward"] >= 1 - 1e-6 for r in raw)
    assert all(t.passed is None for t in trials)
    assert {t.reward for t in trials} == {0.0, 1.0}


def test_tool_call_arguments_are_parsed_to_dicts(real: Path, trials: list[Trial]) -> None:
    calls = [c for t in trials for m in t.messages for c in m.tool_calls]
    assert len(calls) > FACTS[real.name]["calls"]
    assert all(isinstance(c.arguments, dict) for c in calls)
    first = next(c for m in trials[0].messages for c in m.tool_calls)
    assert first.name == "get_user_details"
    assert first.arguments == {"user_id": "mia_li_3668"}
    results = [m for m in trials[0].messages if m.role == "tool"]
    assert results and all(m.tool_call_id and m.name for m in results)


def test_instruction_metadata_and_fingerprint(real: Path, trials: list[Trial]) -> None:
    t = trials[0]
    assert t.instruction is not None and t.instruction.startswith("You are mia_li_3668.")
    assert t.metadata["task"]["actions"][0]["name"] == "book_reservation"
    assert t.metadata["source"] == "user"
    assert t.metadata["reward_info"]["info"]["r_actions"] == 0.0
    assert isinstance(t.metadata["user_cost"], float)
    raw = json.loads(real.read_text())
    assert t.fingerprint == canonical(raw[0])
    assert len({x.fingerprint for x in trials}) == FACTS[real.name]["records"]


def test_reasons_come_from_reward_info(real: Path, trials: list[Trial]) -> None:
    facts = FACTS[real.name]
    assert all(t.reason is None for t in trials if t.success)
    assert all(t.reason for t in trials if not t.success)
    assert trials[0].reason == "actions did not match expected (expected writes: book_reservation)"
    reasons = Counter(t.reason for t in trials if not t.success)
    assert reasons["no reward computed: the episode did not finish"] == facts["no_reward"]
    assert reasons["actions did not match expected (expected no database writes)"] > 0
    outputs = [r for r in reasons if r and r.startswith("outputs missing: ")]
    assert outputs and sum(reasons[r] for r in outputs) == facts["outputs_missing"]


def test_termination_is_inferred(real: Path, trials: list[Trial]) -> None:
    causes = Counter(t.termination for t in trials)
    assert causes == FACTS[real.name]["termination"]
    stopped = next(t for t in trials if t.termination == "user stop")
    assert "###STOP###" in stopped.messages[-1].content


def test_streaming_reader_agrees_with_small_chunks(
    real: Path, trials: list[Trial], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tau_bench, "_CHUNK", 97)
    again = [r for r in tau_bench.parse(real) if isinstance(r, Trial)]
    assert [t.fingerprint for t in again] == [t.fingerprint for t in trials]


def test_malformed_records_become_skips(tmp_path: Path) -> None:
    good = {
        "task_id": 3,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "user", "content": "hi"}],
    }
    records = [
        good,
        {"trial": 1, "reward": 1.0, "traj": []},
        "not a record",
        {"task_id": 3, "reward": "high", "traj": []},
        {"task_id": 3, "reward": 0.0, "traj": {"role": "user"}},
        dict(good, trial=1),
    ]
    path = tmp_path / "results.json"
    text = json.dumps(records, indent=2)  # as tau-bench writes its results
    path.write_text(text)
    out = list(tau_bench.parse(path))
    assert [type(r).__name__ for r in out] == ["Trial", "Skip", "Skip", "Skip", "Skip", "Trial"]
    skips = [r for r in out if isinstance(r, Skip)]
    # the line each record starts on (it was the record's index, line 2 for record 2 wherever
    # it was in the file)
    lines = text.splitlines()
    assert [s.line for s in skips] == [14, 19, 20, 25]
    assert [lines[n - 1] for n in (14, 19, 20, 25)] == ["  {", '  "not a record",', "  {", "  {"]
    assert skips[0].reason == "record 2: no task_id"
    assert skips[1].reason == "record 3: not a JSON object (str)"
    assert skips[2].reason == "record 4: no numeric reward"
    assert skips[3].reason == "record 5: traj is not a list of messages"
    assert str(skips[0]) == f"{path}:14: record 2: no task_id"
    last = out[-1]
    assert isinstance(last, Trial) and last.trial == 1 and last.source_line == 6
    assert last.reason is None and last.termination is None


def test_truncated_array_raises_after_the_good_records(tmp_path: Path) -> None:
    rec = {"task_id": 1, "trial": 0, "reward": 0.0, "info": {}, "traj": []}
    text = json.dumps([rec, rec, rec])
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) - 20])
    got: list[object] = []
    with pytest.raises(IngestError) as err:
        for r in tau_bench.parse(path):
            got.append(r)
    assert len(got) == 2
    assert "record 3: invalid JSON" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "text, reason",
    [("{}", "not a JSON array"), ("", "not a JSON array"), ("[1 2]", "record 2: expected ','")],
)
def test_whole_file_problems_raise(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(IngestError, match=reason):
        list(tau_bench.parse(path))


def test_sniff_own_format_and_not_the_others(tmp_path: Path, real: Path) -> None:
    assert tau_bench.sniff(real, head(real))
    small = tmp_path / "small.json"
    small.write_text(
        json.dumps([{"task_id": 0, "reward": 1.0, "info": {}, "traj": [], "trial": 0}])
    )
    assert tau_bench.sniff(small, head(small))
    others = [FIXTURES / "tau2" / "airline-small.json", FIXTURES / "openai_chat" / "support.jsonl"]
    others += [FIXTURES / "inspect" / "support.json", FIXTURES / "inspect" / "support.eval"]
    for other in others:
        assert not tau_bench.sniff(other, head(other)), other
    for mod in (tau2_bench, inspect_log, openai_chat):
        assert not mod.sniff(real, head(real)), mod.NAME


def test_many_small_records_are_read_in_time_proportional_to_the_file(tmp_path: Path) -> None:
    """The line each record starts on is counted once a newline: counted from the buffer's start
    at every record, a file of 100,000 small records (one line each, 1 MB read at a time) took
    some 10 s to read against a fraction of one."""
    import time

    rec = {"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": []}
    path = tmp_path / "results.json"
    path.write_text(
        "[\n" + ",\n".join(json.dumps(dict(rec, trial=i)) for i in range(100_000)) + "\n]"
    )
    started = time.perf_counter()
    with path.open(encoding="utf-8") as fh:
        lines = [line for _, _, _, line in tau_bench._iter_array(fh, tau_bench.limits())]
    took = time.perf_counter() - started
    assert lines == list(range(2, 100_002))
    assert took < 4, f"{took:.1f} s"
