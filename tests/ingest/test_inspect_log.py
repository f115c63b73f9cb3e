"""Inspect AI importer: the real .json and .eval logs written by Inspect, and broken archives made from them."""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reviewer.ingest import inspect_log, openai_chat, tau2_bench, tau_bench
from reviewer.ingest.base import IngestError
from reviewer.models import Skip, Trial

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = {
    "refund_simple": 4,
    "address_change": 3,
    "multi_order_lookup": 2,
    "cancel_after_ship": 1,
}


def real(name: str) -> Path:
    """A log written by Inspect AI itself, copied whole into tests/fixtures/inspect (see SOURCE.md)."""
    return FIXTURES / "inspect" / name


def head(path: Path) -> bytes:
    with path.open("rb") as fh:
        return fh.read(64 * 1024)


def trials_of(path: Path) -> list[Trial]:
    out = list(inspect_log.parse(path))
    assert all(isinstance(r, Trial) for r in out), out
    return [r for r in out if isinstance(r, Trial)]


def unpacked(path: Path) -> dict[str, bytes]:
    """Every member of an .eval archive, decompressed (Inspect may write them with zstd)."""
    with zipfile.ZipFile(path) as zf, path.open("rb") as raw:
        return {i.filename: inspect_log._member(zf, raw, i) for i in zf.infolist()}


def repack(members: dict[str, bytes], dest: Path, method: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(dest, "w", compression=method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return dest


@pytest.mark.parametrize("name", ["support.json", "support.eval"])
def test_real_logs_give_16_trials_with_the_known_counts(name: str) -> None:
    trials = trials_of(real(name))
    assert len(trials) == 16
    assert Counter(t.task_id for t in trials) == {task: 4 for task in EXPECTED}
    assert Counter(t.task_id for t in trials if t.success) == EXPECTED
    assert {t.trial for t in trials} == {1, 2, 3, 4}
    assert all(t.passed is not None and t.reward is None for t in trials)  # "C"/"I" letters
    assert all(t.run == "support · model" and t.fingerprint for t in trials)  # task · model
    assert sorted(t.source_line or 0 for t in trials) == list(range(1, 17))


def test_json_and_eval_hold_the_same_trials() -> None:
    def key(t: Trial) -> tuple[Any, ...]:
        msgs = tuple((m.role, m.content, m.is_error, len(m.tool_calls)) for m in t.messages)
        return (t.task_id, t.trial, t.passed, t.reason, msgs)

    from_json = sorted(map(key, trials_of(real("support.json"))))
    from_eval = sorted(map(key, trials_of(real("support.eval"))))
    assert from_json == from_eval


@pytest.mark.parametrize("name", ["support.json", "support.eval"])
def test_messages_metadata_and_reasons(name: str) -> None:
    trials = trials_of(real(name))
    failed = next(t for t in trials if t.task_id == "cancel_after_ship" and not t.success)
    assert failed.reason == "Sorry, something went wrong."
    assert failed.instruction == "Cancel order W1003 please, it already shipped yesterday."
    roles = [m.role for m in failed.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    call = failed.messages[2].tool_calls[0]
    assert call.name == "get_order_details" and call.arguments == {"order_id": "W1003"}
    tool = failed.messages[3]
    assert tool.is_error and tool.tool_call_id == call.id and tool.name == "get_order_details"
    assert tool.content == "timeout: get_order_details timed out after 30s"
    assert failed.tool_errors == 1
    assert all(t.reason is None for t in trials if t.success)
    meta = failed.metadata
    assert meta["eval_task"] == "support" and meta["model"] == "mockllm/model" and meta["run_id"]
    assert meta["scorer"] == "includes" and meta["target"] == "cannot cancel"
    assert isinstance(failed.latency_s, float)


def test_truncated_eval_raises_one_line(tmp_path: Path) -> None:
    data = real("support.eval").read_bytes()
    cut = tmp_path / "cut.eval"
    cut.write_bytes(data[: len(data) // 2])
    assert inspect_log.sniff(cut, head(cut))  # still looks like one, so the error must say why
    with pytest.raises(IngestError) as err:
        list(inspect_log.parse(cut))
    message = str(err.value)
    assert message.startswith(f"{cut}: truncated or corrupt .eval archive: ")
    assert "\n" not in message


def test_one_broken_sample_member_is_a_skip(tmp_path: Path) -> None:
    members = unpacked(real("support.eval"))
    members["samples/address_change_epoch_2.json"] = b'{"id": "address_change", "epoch": '
    out = list(inspect_log.parse(repack(members, tmp_path / "one-bad.eval")))
    skips = [r for r in out if isinstance(r, Skip)]
    assert len(skips) == 1 and skips[0].line is None
    assert skips[0].reason.startswith("samples/address_change_epoch_2.json: invalid JSON")
    assert len([r for r in out if isinstance(r, Trial)]) == 15


def test_corrupt_member_data_is_a_skip(tmp_path: Path) -> None:
    members = unpacked(real("support.eval"))
    path = repack(members, tmp_path / "flipped.eval", method=zipfile.ZIP_STORED)
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("samples/refund_simple_epoch_3.json")
    blob = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename)
    blob[start + 10] ^= 0xFF
    path.write_bytes(bytes(blob))
    out = list(inspect_log.parse(path))
    (skip,) = [r for r in out if isinstance(r, Skip)]
    assert skip.reason.startswith("samples/refund_simple_epoch_3.json: unreadable member")
    assert len(out) == 16


def test_eval_without_samples_raises(tmp_path: Path) -> None:
    members = {
        k: v for k, v in unpacked(real("support.eval")).items() if not k.startswith("samples/")
    }
    with pytest.raises(IngestError, match="no samples"):
        list(inspect_log.parse(repack(members, tmp_path / "empty.eval")))


def sample(sid: str, epoch: int, value: Any, **extra: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": sid,
        "epoch": epoch,
        "input": [{"role": "user", "content": [{"type": "text", "text": f"question {sid}"}]}],
        "target": "x",
        "messages": [
            {"role": "user", "content": f"question {sid}"},
            {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "reasoning": "hidden", "redacted": True},
                    {"type": "image", "image": "data:image/png;base64,AAAA"},
                    {"type": "text", "text": "an answer"},
                ],
            },
        ],
        "scores": {
            "first": {"value": value, "explanation": f"explained {sid}"},
            "second": {"value": "C"},
        },
        "total_time": 1.5,
        "model_usage": {
            "m1": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
            "m2": {"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
        },
    }
    if value is None:
        del rec["scores"]
    rec.update(extra)
    return rec


def write_log(tmp_path: Path, samples: list[Any]) -> Path:
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m", "run_id": "r"},
        "samples": samples,
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    return path


def test_score_values_map_to_passed_or_reward(tmp_path: Path) -> None:
    values: list[Any] = ["C", "I", "P", "N", 1, 0, 1.0, 0.5, True, False, "true", "1", "0.25"]
    path = write_log(tmp_path, [sample(f"s{i}", 1, v) for i, v in enumerate(values)])
    got = [(t.passed, t.reward, t.success) for t in trials_of(path)]
    assert got == [
        (True, None, True),
        (False, None, False),
        (None, 0.5, False),  # PARTIAL: half credit, which the default threshold fails
        (False, None, False),
        (None, 1.0, True),
        (None, 0.0, False),
        (None, 1.0, True),
        (None, 0.5, False),
        (True, None, True),
        (False, None, False),
        (True, None, True),
        (True, None, True),
        (None, 0.25, False),
    ]
    first = trials_of(path)[1]
    assert first.reason == "explained s1"  # the first scorer's explanation, since it failed
    assert first.messages[1].content == "[image]\nan answer"
    assert first.usage.input_tokens == 15 and first.usage.output_tokens == 3
    assert first.instruction == "question s1" and first.latency_s == 1.5


def test_errors_limits_and_bad_samples(tmp_path: Path) -> None:
    error = {
        "message": "RuntimeError('boom')",
        "traceback": "Traceback\n  File x\nRuntimeError: boom\n",
    }
    samples = [
        sample("err", 1, None, error=error),
        sample("lim", 1, "I", limit={"type": "message", "limit": 10}),
        sample("unscored", 1, None),
        sample("dict", 1, {"accuracy": 1}),
        {"epoch": 1, "messages": []},
        "junk",
    ]
    out = list(inspect_log.parse(write_log(tmp_path, samples)))
    err, lim, unscored = out[0], out[1], out[2]
    # a sample with no score and no error (an eval without a scorer) is an unscored trial
    assert isinstance(unscored, Trial) and unscored.outcome == "unscored"
    # a sample that errored is an infrastructure error (Inspect leaves it out of its metrics)
    assert isinstance(err, Trial) and err.passed is None and err.outcome == "infra"
    assert (
        err.error is not None
        and err.error.type == "RuntimeError"
        and err.error.message == "RuntimeError('boom')"
    )
    assert err.reason == "infrastructure error: RuntimeError('boom')"
    assert isinstance(lim, Trial) and lim.termination == "message limit"
    # a dict of per-field scores says neither pass nor fail: an unscored trial that says why
    per_field = out[3]
    assert isinstance(per_field, Trial) and per_field.outcome == "unscored"
    assert per_field.metadata["score_unread"] == (
        "score of scorer 'first' is a dict of per-field scores, not pass/fail or a number"
    )
    skips = out[4:]
    assert all(isinstance(s, Skip) for s in skips)
    assert [s.line for s in skips if isinstance(s, Skip)] == [None, None]  # named by the sample
    reasons = [s.reason for s in skips if isinstance(s, Skip)]
    assert reasons[0] == "sample 5: no sample id"
    assert reasons[1] == "sample 6: not a JSON object (str)"


def test_json_whole_file_problems(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('{"version": 2, "eval": {"task": "t"}, "samples": [')
    with pytest.raises(IngestError, match="invalid JSON"):
        list(inspect_log.parse(path))
    with pytest.raises(IngestError, match="no samples"):
        list(inspect_log.parse(write_log(tmp_path, [])))


def test_sniff_own_formats_and_not_the_others(tmp_path: Path) -> None:
    for name in ("support.json", "support.eval"):
        path = real(name)
        assert inspect_log.sniff(path, head(path)), name
        for mod in (tau_bench, tau2_bench, openai_chat):
            assert not mod.sniff(path, head(path)), (mod.NAME, name)
    renamed = tmp_path / "log.zip"
    renamed.write_bytes(real("support.eval").read_bytes())
    assert inspect_log.sniff(renamed, head(renamed))
    others = [FIXTURES / "tau2" / "airline-small.json", FIXTURES / "openai_chat" / "support.jsonl"]
    others += [FIXTURES / "tau_bench" / "gpt-4o-airline-5-tasks.json"]
    for other in others:
        assert not inspect_log.sniff(other, head(other)), other
    plain_zip = repack({"data.csv": b"a,b\n"}, tmp_path / "data.zip")
    assert not inspect_log.sniff(plain_zip, head(plain_zip))


def test_corrupt_zstd_member_is_a_skip(tmp_path: Path) -> None:
    src = real("support.eval")
    with zipfile.ZipFile(src) as zf:
        info = zf.getinfo("samples/cancel_after_ship_epoch_2.json")
    blob = bytearray(src.read_bytes())
    start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    for i in range(20, 40):
        blob[start + i] ^= 0x5A
    path = tmp_path / "flipped.eval"
    path.write_bytes(bytes(blob))
    out = list(inspect_log.parse(path))
    (skip,) = [r for r in out if isinstance(r, Skip)]
    assert skip.reason.startswith("samples/cancel_after_ship_epoch_2.json: unreadable member")
    assert len(out) == 16
