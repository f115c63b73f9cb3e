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
    assert "3 conversations with an implausible time" in err and "left out" in err
    assert "without a time" not in err  # counted once, as implausible
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


def test_monitor_follow_interval_nan_inf_huge_is_a_usage_error(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=1, per_day=2)
    for bad in ("nan", "inf", "1e300", "0"):
        code, _, err = run_cli("monitor", "--follow", str(folder), "--interval", bad)
        assert code == 2, (bad, err)
        assert "--interval must be seconds above 0" in err and "internal error" not in err


def test_monitor_follow_waits_for_a_half_written_last_line(tmp_path: Path) -> None:
    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorRequest, follow

    folder = stream(tmp_path, days=2, per_day=3)
    line = json.dumps(conversation(1, 40, False))
    partial = folder / "day-01.jsonl"
    with partial.open("a", encoding="utf-8") as f:
        f.write(line[:30])  # the writer is mid-line
    notes: list[str] = []
    reports: list[int] = []

    def finish(_seconds: float) -> None:  # between two looks, the writer ends its line
        if not partial.read_text(encoding="utf-8").endswith("\n"):
            with partial.open("a", encoding="utf-8") as f:
                f.write(line[30:] + "\n")

    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            folder,
            MonitorRequest(judge=False),
            lambda report, new: reports.append(report.conversations),
            passes=2,
            sleep=finish,
            on_note=notes.append,
        )
    assert not any("invalid JSON" in n for n in notes), notes
    assert reports == [7]


def test_monitor_follow_survives_log_rotation(tmp_path: Path) -> None:
    """`--follow app.jsonl` exited when logrotate moved the file away; it now waits for it to come
    back and reads the new one (records already stored are recognised and skipped)."""
    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorRequest, follow

    log = tmp_path / "app.jsonl"
    write_jsonl(log, [conversation(0, i, False) for i in range(5)])
    notes: list[str] = []
    reports: list[int] = []
    looks = iter(range(10))

    def rotate(_seconds: float) -> None:
        step = next(looks)
        if step == 0:  # logrotate: the file is moved away
            log.rename(tmp_path / "app.jsonl.1")
        elif step == 2:  # ... and a new one starts
            write_jsonl(log, [conversation(1, i, False) for i in range(3)])

    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            log,
            MonitorRequest(judge=False),
            lambda report, new: reports.append(report.conversations),
            passes=5,
            sleep=rotate,
            on_note=notes.append,
        )
    assert f"{log} is gone (rotated?): waiting for it to come back" in notes
    assert f"{log} is back: reading it again" in notes
    assert reports == [5, 8]


def test_monitor_follow_refuses_a_pipe_instead_of_hanging(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "pipe")
    code, out, err = run_cli("monitor", "--follow", str(tmp_path / "pipe"), "--no-judge")
    assert code == 2 and out == ""
    assert "pipe: not a file or folder (a pipe, a device or a socket)" in err
    assert len(err.strip().splitlines()) == 1
