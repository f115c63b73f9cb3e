"""Regression: `reviewer audit` on an unscored run (production traffic) printed meaningless
`pass^1 - as reported; - with copies counted once` and `pass^1 - → -` lines."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli, write_jsonl
from tests.support.audit_sim import Sim


def unscored(path: Path) -> Path:
    sim = Sim(seed=3, tasks=9, trials=4, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_copy("task_01", 0, 3)
    records = sim.records()
    for r in records:
        r.pop("outcome")
    return write_jsonl(path, records)


def test_audit_of_unscored_run_printed_meaningless_pass_hat_k_lines(tmp_path: Path) -> None:
    code, _, err = run_cli("--db", "x.db", "import", str(unscored(tmp_path / "prod.jsonl")))
    assert code == 0, err
    code, out, _ = run_cli("--db", "x.db", "audit", "--run", "sim")
    assert code == 0
    assert "as reported" not in out and "→" not in out and "pass^1 -" not in out
    assert "no scored trial: no pass^k to adjust" in out
    assert "[leak] task task_00 trial 2 saw" in out
    assert "[copy]" not in out  # copies of unscored conversations change no figure: not reported
    code, out, _ = run_cli("--db", "x.db", "audit", "--json")
    (run,) = json.loads(out)["runs"]
    assert run["pass_hat_k_reported"] is None and run["pass_hat_k_copies_once"] is None
    assert run["counts"]["leak"] == 1 and run["counts"]["copy"] == 0
    assert all(f["pass_hat_k_adjusted"] is None for f in run["findings"])
