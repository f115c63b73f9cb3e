"""Regression tests for monitor defects an attacker found: implausible times, runaway windows."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer.metrics.monitor import parse_time, plausible
from tests.conftest import run_cli, write_jsonl
from tests.test_monitor_cli import conversation, stream


def test_monitor_far_future_or_ancient_time_is_left_out_not_a_crash(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=3, per_day=5)
    odd = [conversation(0, 90, False), conversation(0, 91, False), conversation(0, 92, False)]
    odd[0]["started_at"] = "9999-12-31T23:59:59Z"
    odd[1]["started_at"] = "0001-01-01T00:00:00Z"
    odd[2]["started_at"] = 99999999999999999  # epoch read as year 5138
    write_jsonl(folder / "odd.jsonl", odd)
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge", "--window", "hour")
    assert code == 0, err
    assert "3 conversations with implausible times" in err and "left out" in err
    assert out.startswith("monitor: 15 conversations in 49 hour windows")
    code, out, err = run_cli("monitor", "--no-judge", "--json")
    assert code == 0 and len(json.loads(out)["windows"]) == 3


def test_monitor_out_of_range_epochs_are_implausible() -> None:
    for value in (99999999999999999, 1e21, 1e30):
        t = parse_time(value)
        assert t is not None and not plausible(t.isoformat())
    t = parse_time(1_750_000_000_000)  # milliseconds still read
    assert t is not None and t.year == 2025 and plausible(t.isoformat())


def test_monitor_stray_time_years_apart_lists_only_windows_with_conversations(
    tmp_path: Path,
) -> None:
    folder = stream(tmp_path, days=2, per_day=3)
    old = conversation(0, 50, False)
    old["started_at"] = "1990-01-01T00:00:00Z"  # plausible, but 35 years before the rest
    write_jsonl(folder / "old.jsonl", [old])
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge", "--window", "hour")
    assert code == 0, err
    assert out.startswith("monitor: 7 conversations in 3 hour windows")
    assert "only windows with conversations are listed" in err
