"""Regression tests for gate defects an attacker found: a gate that passed when it could not decide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import native_trial, run_cli, write_jsonl


def _runs(tmp_path: Path, base: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    write_jsonl(tmp_path / "base.jsonl", base)
    write_jsonl(tmp_path / "new.jsonl", new)
    code, _, err = run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    assert code == 0, err


def _trials(run: str, tasks: list[str], n: int = 4, scored: bool = True) -> list[dict[str, Any]]:
    out = []
    for t in tasks:
        for i in range(1, n + 1):
            rec = native_trial(t, True, run=run, trial=i)
            if not scored:
                del rec["outcome"]
            out.append(rec)
    return out


def test_gate_no_task_in_common_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["a1", "a2"]), _trials("new", ["b1", "b2"]))
    assert run_cli("baseline", "set", "base")[0] == 0
    code, out, err = run_cli("gate", "new")
    assert code == 2, out
    assert "no task in common with the baseline (baseline tasks: a1, a2, new: b1, b2)" in err


def test_gate_baseline_without_scored_trial_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["t1"], scored=False), _trials("new", ["t1"]))
    code, _, err = run_cli("baseline", "set", "base")
    # `baseline set` errors exit 1, as its other refusals (no such run)
    assert code == 1 and "'base' has no scored trial" in err and "cannot be the baseline" in err
    code, out, err = run_cli("gate", "new", "--baseline", "base")
    assert code == 2, out
    assert "baseline 'base' has no scored trial" in err


def test_gate_k_out_of_range_or_above_trials_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["t1", "t2"]), _trials("new", ["t1", "t2"]))
    assert run_cli("baseline", "set", "base")[0] == 0
    for bad in ("0", "1001"):
        code, _, err = run_cli("gate", "new", "--k", bad)
        assert code == 2 and "from 1 to 1000" in err
    code, out, err = run_cli("gate", "new", "--k", "5")
    assert code == 2, out
    assert "k = 5 is more than the 4 trials per task both runs have" in err
    Path("reviewer.toml").write_text("[gate]\nk = 5\n")
    code, _, err = run_cli("gate", "new")
    assert code == 2 and "k = 5 is more than the 4 trials" in err
    assert run_cli("gate", "new", "--k", "4")[0] == 0
