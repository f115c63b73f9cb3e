"""Hostile input never stops an import: each bad record is one `file:line: reason` line and is
skipped, `--check` says the same, and the records beside it (and the other files) are stored."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest

from reviewer.store import open_store
from tests.conftest import inspect_sample, native_trial, run_cli, stored, write_jsonl


def lines_about(err: str, where: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(where)]


def hostile_native(tmp_path: Path, bad: str) -> Path:
    """A native file whose second line is ``bad``, between two good records."""
    f = tmp_path / "runs.jsonl"
    good = [json.dumps(native_trial(t)) for t in ("a", "c")]
    f.write_text(f"{good[0]}\n{bad}\n{good[1]}\n", encoding="utf-8")
    return f


def _with(text: str) -> str:
    """A native record (task b) with ``text`` spliced in as its metadata value."""
    rec = json.dumps(native_trial("b"))
    return rec[:-1] + f', "metadata": {{"x": {text}}}}}'


HOSTILE = {
    "nan_cost": (
        json.dumps(native_trial("b", usage={"cost_usd": float("nan")})),
        "usage.cost_usd: NaN is not a number",
    ),
    "infinite_latency": (
        json.dumps(native_trial("b", latency_s=float("inf"))),
        "latency_s: Infinity is not a number",
    ),
    "overflowing_float": (_with("1e400"), "metadata.x: Infinity is not a number"),
    "integer_beyond_64_bits": (
        json.dumps(native_trial("b", usage={"input_tokens": 2**63})),
        "usage.input_tokens: integer out of range",
    ),
    "nested_100000_deep": (_with("[" * 100_000 + "]" * 100_000), "JSON nested deeper than"),
    "lone_surrogate": (_with('"\\ud800"'), "metadata.x: has a lone surrogate \\ud800"),
    "lone_surrogate_key": (_with('{"\\udc00": 1}'), "key has a lone surrogate \\udc00"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_record_is_one_line_and_the_rest_is_imported(tmp_path: Path, case: str) -> None:
    bad, reason = HOSTILE[case]
    f = hostile_native(tmp_path, bad)
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "Traceback" not in err
        said = lines_about(err, f"{f}:")
        assert len(said) == 1 and said[0].startswith(f"{f}:2: ") and reason in said[0], err
        assert code == (1 if "--check" in args else 0), err
    assert stored() == 2


def test_nan_cost_is_skipped_with_file_line_and_check_agrees(tmp_path: Path) -> None:
    f = hostile_native(
        tmp_path,
        '{"task_id": "b", "messages": [], "outcome": {"passed": true}, "usage": {"cost_usd": NaN}}',
    )
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(f))
    assert code == 1 and "0 problems" not in err and "2 valid trials" in err
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and f"{f}:2: usage.cost_usd: NaN" in err
    assert "imported 2 trials" in err and stored() == 2


def test_a_record_over_the_size_limit_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_RECORD_MB", "1")
    f = hostile_native(tmp_path, json.dumps(native_trial("b", reason="x" * 3_000_000)))
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    said = lines_about(err, f"{f}:")
    assert said == [
        f"{f}:2: record is 2.9 MiB, over the 1.0 MiB limit per record (REVIEWER_MAX_RECORD_MB)"
    ]
    assert stored() == 2


# --- every format goes through the same checks -------------------------------------------------


def _tau_bench(tmp_path: Path) -> Path:
    rec = {
        "task_id": 1,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "user", "content": "hi"}],
    }
    text = json.dumps([rec, dict(rec, task_id=2), dict(rec, task_id=3)])
    text = text.replace(
        '"task_id": 2, "trial": 0, "reward": 1.0', '"task_id": 2, "trial": 0, "reward": NaN'
    )
    (tmp_path / "tau.json").write_text(text)
    return tmp_path / "tau.json"


def _tau2(tmp_path: Path) -> Path:
    sim = {
        "task_id": "1",
        "trial": 0,
        "reward_info": {"reward": 1.0},
        "messages": [{"role": "user", "content": "hi"}],
    }
    sims = [sim, dict(sim, task_id="2", agent_cost=float("inf")), dict(sim, task_id="3")]
    doc = {"timestamp": "t", "info": {}, "tasks": [], "simulations": sims}
    (tmp_path / "tau2.json").write_text(json.dumps(doc))
    return tmp_path / "tau2.json"


def _inspect_json(tmp_path: Path) -> Path:
    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m"},
        "samples": [
            inspect_sample(1),
            inspect_sample(2, total_time=float("nan")),
            inspect_sample(3),
        ],
    }
    (tmp_path / "log.json").write_text(json.dumps(doc))
    return tmp_path / "log.json"


def _inspect_eval(tmp_path: Path) -> Path:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for i in (1, 3):
            zf.writestr(f"samples/{i}_epoch_1.json", json.dumps(inspect_sample(i)))
        zf.writestr(
            "samples/2_epoch_1.json", json.dumps(inspect_sample(2)).replace('"hi"', '"\\ud800"')
        )
    return path


def _openai(tmp_path: Path) -> Path:
    rec = {"task_id": "a", "messages": [{"role": "user", "content": "hi"}], "passed": True}
    lines = [
        json.dumps(rec),
        json.dumps(dict(rec, task_id="b", usage={"cost": float("-inf")})),
        json.dumps(dict(rec, task_id="c")),
    ]
    (tmp_path / "chat.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path / "chat.jsonl"


FORMATS = {
    "tau-bench": (_tau_bench, ":1: record 2: reward: NaN", "NaN"),
    "tau2-bench": (_tau2, ": simulation 2: agent_cost: Infinity", "Infinity"),
    "inspect-json": (_inspect_json, ": sample 2: total_time: NaN", "NaN"),
    "inspect-eval": (
        _inspect_eval,
        ": samples/2_epoch_1.json: messages[0].content: has a lone",
        "surrogate",
    ),
    "openai-chat": (_openai, ":2: usage.cost: -Infinity", "Infinity"),
}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_trial_format_skips_a_hostile_record_and_keeps_the_rest(
    tmp_path: Path, fmt: str
) -> None:
    make, where, word = FORMATS[fmt]
    f = make(tmp_path)
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "Traceback" not in err
        said = lines_about(err, str(f))
        assert len(said) == 1 and said[0].startswith(f"{f}{where}") and word in said[0], err
    assert code == 0 and stored() == 2


def test_pairs_and_task_lists_skip_a_hostile_line(tmp_path: Path) -> None:
    pair = {"pair_id": "p1", "judge": "j", "a": "x", "b": "y", "order_ab": "a", "order_ba": "a"}
    f = tmp_path / "pairs.jsonl"
    bad = json.dumps(dict(pair, pair_id="p2")).replace('"p2"', '"p\\ud800"')
    f.write_text(f"{json.dumps(pair)}\n{bad}\n{json.dumps(dict(pair, pair_id='p3'))}\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "internal error" not in err
    assert lines_about(err, f"{f}:") == [
        f"{f}:2: pair_id: has a lone surrogate \\ud800, which is not Unicode text"
    ]
    assert stored(table="pairs") == 2
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"format": "reviewer-task/1", "id": NaN}\n')
    code, _, err = run_cli("--db", "x.db", "import", str(tasks))
    assert "internal error" not in err and f"{tasks}:1: id: NaN is not a number" in err


def test_report_and_compare_never_print_infinity_or_nan(tmp_path: Path) -> None:
    runs = [native_trial(t, run=r, latency_s=1.0) for r in ("old", "new") for t in ("a", "b")]
    f = write_jsonl(tmp_path / "r.jsonl", runs)
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    with open_store("x.db") as db, db.transaction():  # as an older version could have stored
        db.execute("UPDATE trials SET latency_s = 1e999, cost_usd = -1e999")
    for args in (("report", "--json"), ("compare", "old", "new", "--json")):
        code, out, err = run_cli("--db", "x.db", *args)
        assert code == 0, err
        assert "Infinity" not in out and "NaN" not in out, args
        json.loads(out, parse_constant=pytest.fail)
    for args in (("report",), ("compare", "old", "new")):
        out = run_cli("--db", "x.db", *args)[1].lower()
        assert "inf" not in out and "nan" not in out, args


def test_tau_bench_skips_a_too_deep_and_a_too_big_record_and_reads_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REVIEWER_MAX_RECORD_MB", "1")
    rec = {
        "task_id": 1,
        "trial": 0,
        "reward": 1.0,
        "info": {},
        "traj": [{"role": "user", "content": "hi"}],
    }
    deep = json.dumps(dict(rec, task_id=2))[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    big = json.dumps(dict(rec, task_id=3, pad='x"]}' * 1_000_000))
    f = tmp_path / "tau.json"
    f.write_text(f"[{json.dumps(rec)}, {deep}, {big}, {json.dumps(dict(rec, task_id=4))}]")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "internal error" not in err, err
    assert lines_about(err, str(f)) == [
        f"{f}:1: record 2: JSON nested deeper than 200 levels",  # one line: the line it starts on
        f"{f}:1: record 3: record is 4.8 MiB, over the 1.0 MiB limit per record "
        "(REVIEWER_MAX_RECORD_MB)",
    ]
    assert stored() == 2


def test_a_file_read_whole_nested_too_deep_is_one_line(tmp_path: Path) -> None:
    f = tmp_path / "tau2.json"
    f.write_text('{"simulations": [], "tasks": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    ok = write_jsonl(tmp_path / "ok.jsonl", [native_trial("a")])
    code, _, err = run_cli("--db", "x.db", "import", str(f), str(ok))
    assert "internal error" not in err
    assert f"reviewer: {f}: JSON nested deeper than 200 levels" in err
    assert stored() == 1 and code == 1


def test_a_file_name_that_is_not_utf8_is_stored_and_shown_escaped(tmp_path: Path) -> None:
    name = os.fsdecode(b"\xffruns.jsonl")
    f = write_jsonl(tmp_path / name, [native_trial("a", run=None)])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "internal error" not in err, err
    with open_store("x.db") as db:
        assert db.execute("SELECT run FROM trials").fetchone()[0] == "\\xffruns"


def test_the_trial_number_after_the_largest_is_a_skip_not_an_overflow(tmp_path: Path) -> None:
    recs = [native_trial("a", trial=2**63 - 1), native_trial("a", passed=False), native_trial("b")]
    f = write_jsonl(tmp_path / "r.jsonl", recs)
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "internal error" not in err, err
    assert lines_about(err, f"{f}:") == [
        f"{f}:2: no trial number left for task 'a' after {2**63 - 1}; give one"
    ]
    assert stored() == 2
