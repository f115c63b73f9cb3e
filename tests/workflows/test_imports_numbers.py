"""Numbers and tool-call arguments a record may not hold, in every format and in labels: each is one
`file:line: field: reason` line, that record skipped, the rest imported, `--check` the same."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import inspect_sample, native_trial, run_cli, stored, write_jsonl

INF = re.compile(r"\binf(inity)?\b")
NAN = re.compile(r"\bnan\b")

BIG = "9" * 5000  # more digits than Python converts (4,300)
PLACE = '"@@"'


def _lines_about(err: str, where: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith(where)]


def _native(tmp_path: Path, value: str) -> Path:
    recs = [native_trial(t) for t in "abc"]
    recs[1]["usage"] = {"input_tokens": "@@"}
    text = "\n".join(json.dumps(r) for r in recs).replace(PLACE, value)
    (tmp_path / "runs.jsonl").write_text(text + "\n")
    return tmp_path / "runs.jsonl"


def _tau_bench(tmp_path: Path, value: str) -> Path:
    rec = {"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": [{"role": "user"}]}
    recs = [rec, dict(rec, task_id=2, reward="@@"), dict(rec, task_id=3)]
    (tmp_path / "tau.json").write_text(json.dumps(recs).replace(PLACE, value))
    return tmp_path / "tau.json"


def _tau2(tmp_path: Path, value: str) -> Path:
    sim = {"task_id": "1", "trial": 0, "reward_info": {"reward": 1.0}, "messages": []}
    sims = [sim, dict(sim, task_id="2", agent_cost="@@"), dict(sim, task_id="3")]
    doc = {"timestamp": "t", "info": {}, "tasks": [], "simulations": sims}
    (tmp_path / "tau2.json").write_text(json.dumps(doc).replace(PLACE, value))
    return tmp_path / "tau2.json"


def _openai(tmp_path: Path, value: str) -> Path:
    rec = {"task_id": "a", "messages": [{"role": "user", "content": "hi"}], "passed": True}
    recs = [rec, dict(rec, task_id="b", usage={"input_tokens": "@@"}), dict(rec, task_id="c")]
    text = "\n".join(json.dumps(r) for r in recs).replace(PLACE, value)
    (tmp_path / "chat.jsonl").write_text(text + "\n")
    return tmp_path / "chat.jsonl"


def _inspect_json(tmp_path: Path, value: str) -> Path:
    samples = [inspect_sample(1), inspect_sample(2, total_time="@@"), inspect_sample(3)]
    doc = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m"},
        "samples": samples,
    }
    (tmp_path / "log.json").write_text(json.dumps(doc).replace(PLACE, value))
    return tmp_path / "log.json"


def _inspect_eval(tmp_path: Path, value: str) -> Path:
    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for i in (1, 3):
            zf.writestr(f"samples/{i}_epoch_1.json", json.dumps(inspect_sample(i)))
        bad = json.dumps(inspect_sample(2, total_time="@@")).replace(PLACE, value)
        zf.writestr("samples/2_epoch_1.json", bad)
    return path


TRIAL_FORMATS: dict[str, tuple[Callable[[Path, str], Path], str]] = {
    "native": (_native, ":2: usage.input_tokens: "),
    "tau-bench": (_tau_bench, ":1: record 2: reward: "),  # the line it starts on
    "tau2-bench": (_tau2, ": simulation 2: agent_cost: "),  # a simulation, not a line
    "openai-chat": (_openai, ":2: usage.input_tokens: "),
    "inspect-json": (_inspect_json, ": sample 2: total_time: "),  # a sample, not a line
    "inspect-eval": (_inspect_eval, ": samples/2_epoch_1.json: total_time: "),
}


@pytest.mark.parametrize("fmt", list(TRIAL_FORMATS))
def test_an_integer_of_5000_digits_is_out_of_range_with_file_line_in_every_format(
    tmp_path: Path, fmt: str
) -> None:
    make, where = TRIAL_FORMATS[fmt]
    f = make(tmp_path, BIG)
    other = write_jsonl(tmp_path / "later.jsonl", [native_trial("z")])
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f), str(other))
        assert "internal error" not in err and "Traceback" not in err, err
        assert _lines_about(err, str(f)) == [f"{f}{where}integer out of range{_tail()}"], err
    assert code == 0 and stored() == 3


def _tail() -> str:
    return " (reviewer stores 64-bit integers)"


def test_an_integer_of_5000_digits_in_a_pairs_line_is_skipped(tmp_path: Path) -> None:
    pair = {"pair_id": "p1", "judge": "j", "a": "x", "b": "y", "order_ab": "a", "order_ba": "a"}
    f = tmp_path / "pairs.jsonl"
    bad = json.dumps(dict(pair, pair_id="p2", n="@@")).replace(PLACE, "-" + BIG)
    f.write_text(f"{json.dumps(pair)}\n{bad}\n{json.dumps(dict(pair, pair_id='p3'))}\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and "internal error" not in err, err
    assert _lines_about(err, f"{f}:") == [f"{f}:2: n: integer out of range{_tail()}"]
    assert stored(table="pairs") == 2


# --- labels --------------------------------------------------------------------------------------------


def _labels_file(tmp_path: Path, lines: list[str]) -> Path:
    f = write_jsonl(tmp_path / "runs.jsonl", [native_trial("t", trial=1, run="r")])
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    labels = tmp_path / "l.jsonl"
    labels.write_text("\n".join(lines) + "\n")
    return labels


def _label(trial: str, at: str = "2024-05-01T12:00:00Z") -> str:
    return (
        '{"trial": {"run": "r", "task_id": "t", "trial": ' + trial + '}, "labeler": "ana", '
        f'"verdict": "fail", "at": "{at}"}}'
    )


def test_an_integer_of_5000_digits_in_a_label_line_is_skipped(tmp_path: Path) -> None:
    labels = _labels_file(tmp_path, [_label(BIG), _label("1")])
    code, _, err = run_cli("--db", "x.db", "labels", "import", str(labels))
    assert code == 0 and "internal error" not in err, err
    assert _lines_about(err, f"{labels}:") == [
        f"{labels}:1: trial.trial: integer out of range{_tail()}"
    ]
    assert stored(table="labels") == 1


@pytest.mark.parametrize("number", [str(2**64), str(-(2**63) - 1)])
def test_a_label_trial_number_beyond_64_bits_is_skipped_not_an_overflow(
    tmp_path: Path, number: str
) -> None:
    labels = _labels_file(tmp_path, [_label(number), _label("1", at="2024-05-02T12:00:00Z")])
    code, _, err = run_cli("--db", "x.db", "labels", "import", str(labels))
    assert code == 0 and "internal error" not in err, err
    assert _lines_about(err, f"{labels}:") == [
        f"{labels}:1: trial.trial: integer out of range{_tail()}"
    ]
    assert stored(table="labels") == 1


# --- numbers too large to sum -------------------------------------------------------------------------

HUGE = {
    "cost": (
        {"usage": {"cost_usd": 1.7e308}},
        "usage.cost_usd: 1.7e+308 is out of range (at most 1e12)",
    ),
    "latency": ({"latency_s": 1.7e308}, "latency_s: 1.7e+308 is out of range (at most 1e12)"),
    "tokens": (
        {"usage": {"output_tokens": 10**16}},
        "usage.output_tokens: 10000000000000000 is out of range (at most 1e15)",
    ),
    "reward": (
        {"outcome": {"reward": -1e300}},
        "outcome.reward: -1e+300 is out of range (at least -1e12)",
    ),
}


@pytest.mark.parametrize("case", list(HUGE))
def test_a_cost_of_1e308_is_refused_at_the_gate_and_report_still_works(
    tmp_path: Path, case: str
) -> None:
    extra, reason = HUGE[case]
    recs = [native_trial("a", run="old"), native_trial("b", run="old", **extra)]
    recs += [native_trial(t, run="new", latency_s=1.0) for t in "ab"]
    f = write_jsonl(tmp_path / "runs.jsonl", recs)
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert _lines_about(err, f"{f}:") == [f"{f}:2: {reason}"], err
    assert stored() == 3
    for args in (("report",), ("compare", "old", "new"), ("report", "--json")):
        code, out, err = run_cli("--db", "x.db", *args)
        assert code == 0 and "internal error" not in err, err
        assert not INF.search(out.lower())  # ("infra", the outcome, is not a number)


# --- tool-call arguments given as a JSON string ---------------------------------------------------------


def _call(arguments: str, content: str = "x") -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": content},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": arguments},
                    }
                ],
            },
        ],
        "passed": True,
    }


ARGUMENTS = {
    "lone surrogate": ('{"a":"\\ud800"}', "a: has a lone surrogate \\ud800"),
    "NaN": ('{"a": NaN}', "a: NaN is not a number reviewer stores"),
    "2**70": ('{"a": ' + str(2**70) + "}", "a: integer out of range"),
    "5000 digits": ('{"a": ' + BIG + "}", "a: integer out of range"),
    "5,000 deep": ("[" * 5000 + "]" * 5000, "JSON nested deeper than 200 levels"),
}


def test_a_bad_value_inside_a_tool_call_arguments_string_skips_only_its_record(
    tmp_path: Path,
) -> None:
    recs = [_call('{"ok": 1}', "fine")] + [
        _call(a, f"task {i}") for i, (a, _) in enumerate(ARGUMENTS.values())
    ]
    recs.append(_call("not json at all", "kept as text"))
    f = write_jsonl(tmp_path / "chat.jsonl", recs)
    want = [
        f"{f}:{n}: messages[1].tool_calls[0].arguments: {reason}"
        for n, (_, reason) in enumerate(ARGUMENTS.values(), start=2)
    ]
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err and "cannot import" not in err, err
        said = _lines_about(err, f"{f}:")
        assert len(said) == len(want), err
        for line, start in zip(said, want, strict=True):
            assert line.startswith(start), (line, start)
    assert code == 0 and stored() == 2


def test_tool_call_arguments_nested_5000_deep_in_tau_bench_skip_only_that_record(
    tmp_path: Path,
) -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "@@"}}
    rec = {"task_id": 1, "trial": 0, "reward": 1.0, "info": {}, "traj": [{"role": "user"}]}
    bad = dict(rec, task_id=2, traj=[{"role": "assistant", "content": "", "tool_calls": [call]}])
    deep = json.dumps("[" * 5000 + "]" * 5000)
    f = tmp_path / "tau.json"
    f.write_text(json.dumps([rec, bad, dict(rec, task_id=3)]).replace(PLACE, deep))
    for args in (("import", "--check"), ("import",)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert "internal error" not in err, err
        assert _lines_about(err, str(f)) == [
            f"{f}:2: messages[0].tool_calls[0].arguments: JSON nested deeper than 200 levels"
        ], err
    assert code == 0 and stored() == 2


def test_costs_of_1e308_stored_by_an_older_version_give_na_not_an_overflow_in_fsum(
    tmp_path: Path,
) -> None:
    from reviewer.store import open_store
    from reviewer.store.queries import list_runs
    from reviewer.store.writer import rebuild_task_stats

    recs = [
        native_trial(t, run=r, trial=k, usage={"cost_usd": 1.0}, latency_s=1.0)
        for r in ("old", "new")
        for t in "ab"
        for k in (1, 2)
    ]
    f = write_jsonl(tmp_path / "runs.jsonl", recs)
    assert run_cli("--db", "x.db", "import", str(f))[0] == 0
    with open_store("x.db") as db:
        with db.transaction():  # as a version without the bounds could have stored
            db.execute("UPDATE trials SET cost_usd = 1.7e308, latency_s = 1.7e308")
        rebuild_task_stats(db)
        assert all(r.cost_usd is None for r in list_runs(db))
    for args in (
        ("report",),
        ("report", "--run", "old"),
        ("compare", "old", "new"),
        ("report", "--json"),
        ("compare", "old", "new", "--json"),
    ):
        code, out, err = run_cli("--db", "x.db", *args)
        assert code == 0 and "internal error" not in err, (args, err)
        assert not INF.search(out.lower()) and not NAN.search(out.lower()), args
        if "--json" in args:
            json.loads(out, parse_constant=pytest.fail)


def test_a_negative_cost_or_latency_is_not_averaged_into_the_report(tmp_path: Path) -> None:
    """A harness that writes -1 for 'unknown' (cost_usd, latency_s, tokens): the import stores it,
    the report shows cost/trial $-5.000 and latency -3.0s, and a [gate] max_cost_per_task passes
    on a negative cost."""
    recs = []
    for i in range(3):
        rec = native_trial("t", True, run="r", trial=i)
        rec["usage"] = {"input_tokens": -1, "output_tokens": 5, "cost_usd": -5.0}
        rec["latency_s"] = -3.0
        recs.append(rec)
    write_jsonl(tmp_path / "neg.jsonl", recs)
    code, _, err = run_cli("--db", "x.db", "import", str(tmp_path / "neg.jsonl"))
    assert code == 0
    assert (
        "3 trials with a negative usage.input_tokens, usage.cost_usd, latency_s (first at line 1): "
        "read as unknown" in err
    )
    code, out, _ = run_cli("--db", "x.db", "report", "--run", "r")
    assert code == 0
    assert "$-" not in out and "-3.0s" not in out
    from reviewer.store import open_store

    with open_store("x.db") as db:
        row = db.execute(
            "SELECT input_tokens, output_tokens, cost_usd, latency_s FROM trials"
        ).fetchall()
    assert row == [(None, 5, None, None)] * 3
