"""Regression: the `reviewer monitor` table was ~220 columns wide whatever the terminal, and its
`judge pass` column named the rate the alerts call `judge fail rate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.judge.standin import StandIn
from tests.conftest import run_cli
from tests.test_monitor_cli import stream

SIGNALS = '[monitor]\nsignals = ["escalated", "thumbs_down", "ticket_reopened", "refund"]\n'


def _table(out: str) -> list[str]:
    lines = out.splitlines()
    return lines[2 : lines.index("no alert") if "no alert" in lines else len(lines)]


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_monitor_table_was_220_columns_wide(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    folder = stream(tmp_path, days=4, per_day=30)
    (tmp_path / "reviewer.toml").write_text(SIGNALS, encoding="utf-8")
    code, _, err = run_cli("rules", str(Path(__file__).parent.parent / "sample_runs/rules.toml"))
    assert code == 0, err
    monkeypatch.setenv("COLUMNS", "300")
    code, wide, err = run_cli("monitor", "--import", str(folder), "--sample", "0.5")
    assert code in (0, 1), err
    assert max(len(line) for line in _table(wide)) > columns  # the full table does not fit
    assert "judge fail rate" in wide and "judge pass" not in wide
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run_cli("monitor", "--sample", "0.5")
    table = _table(out)
    assert table and all(len(line) <= columns for line in table), table
    assert "judge fail rate" in out and "rule no-cancel-after-shipped" in out
    assert "2025-06-04" in out
    # --json does not depend on the terminal
    code, a, _ = run_cli("monitor", "--sample", "0.5", "--json")
    monkeypatch.setenv("COLUMNS", "300")
    code, b, _ = run_cli("monitor", "--sample", "0.5", "--json")
    assert json.loads(a)["windows"] == json.loads(b)["windows"]


def test_monitor_judge_column_shows_the_fail_rate_the_alerts_use(
    tmp_path: Path, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    folder = stream(tmp_path, days=3, per_day=40)
    code, out, err = run_cli("monitor", "--import", str(folder), "--sample", "0.5")
    assert code in (0, 1), err
    code, js, _ = run_cli("monitor", "--sample", "0.5", "--json")
    window = json.loads(js)["windows"][0]
    fail = 1 - window["judge"]["passed"] / window["judge"]["judged"]
    row = next(line for line in out.splitlines() if line.startswith(window["start"]))
    assert f"{100 * fail:.1f}% [" in row and f"n={window['judge']['judged']}" in row
