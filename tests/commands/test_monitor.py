"""`reviewer monitor`: windows, exit codes, the judged sample (cached, capped), signals, the review
queue, --follow, and regression tasks exported from production with their provenance."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reviewer.judge.standin import StandIn
from reviewer.metrics.monitor import parse_time, plausible
from tests.conftest import run_cli, write_jsonl
from tests.support.pg_server import drop_connections

START = datetime(2025, 6, 1, tzinfo=UTC)


def conversation(day: int, i: int, error: bool, escalated: bool = False) -> dict[str, Any]:
    t = START + timedelta(days=day, minutes=7 * i)
    result = "TimeoutError: order service did not respond" if error else '{"status": "delivered"}'
    return {
        "run": "prod",
        "task_id": "support",
        "started_at": t.isoformat().replace("+00:00", "Z"),
        "outcome": None,
        "messages": [
            {"role": "user", "content": f"Where is my order #W{1000 + i}? (day {day})"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c", "name": "get_order", "arguments": {"id": i}}],
            },
            {
                "role": "tool",
                "tool_call_id": "c",
                "name": "get_order",
                "content": result,
                "is_error": error,
            },
            {"role": "assistant", "content": "It is on its way." if not error else "Sorry, done."},
        ],
        "metadata": {"escalated": escalated, "conversation": f"{day}-{i}"},
    }


def stream(tmp_path: Path, days: int = 10, per_day: int = 60, incident: int | None = None) -> Path:
    """A folder with one JSONL file per day; from ``incident`` on, half the tool calls fail."""
    folder = tmp_path / "prod"
    folder.mkdir(exist_ok=True)
    rng = random.Random(7)
    for d in range(days):
        p = 0.5 if incident is not None and d >= incident else 0.05
        recs = [conversation(d, i, rng.random() < p, rng.random() < 0.03) for i in range(per_day)]
        write_jsonl(folder / f"day-{d:02d}.jsonl", recs)
    return folder


def test_stable_stream_exit_0_and_windows(tmp_path: Path) -> None:
    folder = stream(tmp_path)
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("monitor: 600 conversations in 10 day windows (run prod)")
    assert lines[2].split()[:2] == ["window", "convs"]
    assert lines[3].startswith("2025-06-01") and lines[-1] == "no alert"
    assert "imported 600 new conversations" in err


def test_incident_alerts_exit_1_with_one_line_per_alert(tmp_path: Path) -> None:
    folder = stream(tmp_path, incident=7)
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge", "--json")
    assert code == 1, err
    data = json.loads(out)
    first = data["alert_lines"][0]
    assert first.startswith("ALERT day 2025-06-08: ")  # the incident's own window
    assert {a["metric"] for a in data["alerts"] if a["window"] == "2025-06-08"} >= {
        "tool_error",
        "tool_error_rate",
    }
    code, out, _ = run_cli("monitor", "--no-judge", "--since", "2025-06-09")
    assert code == 1
    assert out.splitlines()[3].startswith("2025-06-09")  # windows from --since on
    assert "ALERT day 2025-06-08" not in out and "ALERT day 2025-06-09" in out


def test_usage_and_data_errors_exit_2(tmp_path: Path) -> None:
    stream(tmp_path, days=2, per_day=5)
    code, _, err = run_cli("monitor", "--since", "last tuesday")
    assert code == 2 and "--since 'last tuesday' is not a time" in err
    code, _, err = run_cli("monitor", "--run", "nope")
    assert code == 2 and "no run named 'nope'" in err
    code, _, err = run_cli("monitor", "--sample", "2")
    assert code == 2 and "--sample must be a share between 0 and 1" in err
    (tmp_path / "reviewer.toml").write_text('[monitor]\nsignals = "escalated"\n', encoding="utf-8")
    code, _, err = run_cli("monitor")
    assert code == 2 and "[monitor] signals: a list of field names" in err
    (tmp_path / "reviewer.toml").write_text('[monitor]\nwindow = "week"\n', encoding="utf-8")
    code, _, err = run_cli("monitor")
    assert code == 2 and "[monitor] window: day or hour" in err
    assert "Traceback" not in err


def test_signals_from_config_are_rates_and_flags(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=4, per_day=40)
    (tmp_path / "reviewer.toml").write_text(
        '[monitor]\nsignals = ["escalated"]\n', encoding="utf-8"
    )
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge", "--json")
    assert code == 0, err
    data = json.loads(out)
    esc = [w["rates"]["signal:escalated"] for w in data["windows"]]
    assert all(r["n"] == 40 for r in esc)
    bad = sum(r["bad"] for r in esc)
    flagged_escalated = [f for f in data["flagged"] if "signal:escalated" in f["why"]]
    assert len(flagged_escalated) == bad > 0


def test_judged_sample_is_cached_never_judged_twice(tmp_path: Path, standin: StandIn) -> None:
    folder = stream(tmp_path, days=6, per_day=40)
    code, out, err = run_cli("monitor", "--import", str(folder), "--sample", "0.25", "--json")
    assert code in (0, 1), err
    data = json.loads(out)
    sampled = data["sample"]["conversations"]
    assert 30 <= sampled <= 90
    assert standin.message_requests == sampled
    judged = sum(w["judge"]["judged"] for w in data["windows"])
    assert judged == sampled
    # the stand-in fails the conversations that show a tool error
    assert all(
        w["judge"]["judged"] - w["judge"]["passed"] <= w["rates"]["tool_error"]["bad"]
        for w in data["windows"]
    )
    code, out, _ = run_cli("monitor", "--sample", "0.25", "--json")
    assert standin.message_requests == sampled  # the second pass sent nothing
    assert json.loads(out)["windows"] == data["windows"]


def test_judge_cost_cap_stops_the_judge_not_the_monitor(tmp_path: Path, standin: StandIn) -> None:
    folder = stream(tmp_path, days=4, per_day=40)
    code, out, err = run_cli(
        "monitor", "--import", str(folder), "--sample", "0.5", "--max-cost", "0.02"
    )
    assert code == 0, err
    assert "stopped at the cost cap" in err
    assert 0 < standin.message_requests < 80
    assert out.startswith("monitor: 160 conversations")


def test_no_api_key_is_one_line_and_the_checks_still_run(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=3, per_day=20)
    code, out, err = run_cli("monitor", "--import", str(folder), "--sample", "0.5")
    assert code == 0
    assert "judge not run:" in err and "ANTHROPIC_API_KEY" in err
    assert out.startswith("monitor: 60 conversations")


def test_flagged_conversations_go_to_a_review_queue_and_export_as_production(
    tmp_path: Path,
) -> None:
    folder = stream(tmp_path, days=5, per_day=40, incident=4)
    code, out, err = run_cli(
        "--labeler",
        "ana",
        "monitor",
        "--import",
        str(folder),
        "--no-judge",
        "--queue",
        "prod",
        "--json",
    )
    data = json.loads(out)
    flagged = {f["trial_id"] for f in data["flagged"]}
    assert data["queue"]["name"] == "prod" and data["queue"]["created"]
    code, out, _ = run_cli("queues", "--json")
    assert any(q["name"] == "prod" for q in json.loads(out)["queues"])
    from reviewer.store import open_store
    from reviewer.store.labels import add_label
    from reviewer.store.queues import get_queue

    with open_store("reviewer.db") as db:
        items = [it.trial_id for it in get_queue(db, "prod").items]
        assert items and set(items) <= flagged
        add_label(db, items[0], "ana", "fail", note="timed out, no follow-up")
    # the same pass again resumes the queue instead of sampling it again
    code, out, _ = run_cli("--labeler", "ana", "monitor", "--no-judge", "--queue", "prod", "--json")
    assert json.loads(out)["queue"]["created"] is False
    code, out, err = run_cli("export", "--out", "reg.jsonl", "--json")
    assert code == 0, err
    task = json.loads(Path("reg.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert task["provenance"]["origin"] == "production"
    assert task["provenance"]["trial_id"] == items[0]


def test_follow_imports_a_growing_folder(tmp_path: Path) -> None:
    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorRequest, follow

    folder = stream(tmp_path, days=5, per_day=30)
    reports: list[Any] = []
    grown = [False]

    def grow(_seconds: float) -> None:  # between two looks, a new day arrives
        if not grown[0]:
            recs = [conversation(5, i, i % 2 == 0) for i in range(30)]
            write_jsonl(folder / "day-05.jsonl", recs)
            grown[0] = True

    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            folder,
            MonitorRequest(judge=False, baseline_windows=5),
            lambda report, new: reports.append((report, new)),
            passes=3,
            sleep=grow,
        )
    assert len(reports) == 2  # the third look saw nothing new
    first, second = reports
    assert len(first[0].windows) == 5 and len(second[0].windows) == 6
    assert first[1] == [] and {a.metric for a in second[1]} >= {"tool_error"}
    assert all(a.window == "2025-06-06" for a in second[1])


def test_follow_cli_prints_new_alerts(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=6, per_day=30, incident=5)
    code, out, err = run_cli(
        "monitor", "--follow", str(folder), "--no-judge", "--passes", "1", "--interval", "0.01"
    )
    assert code == 1, err
    assert out.startswith("monitor: 180 conversations")
    assert "ALERT day 2025-06-06: tool error" in out


def test_nothing_with_a_time_says_so_and_exits_0(tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_RUNS

    run_cli("import", str(SAMPLE_RUNS / "support-v1.jsonl"))
    code, out, err = run_cli("monitor", "--no-judge")
    assert code == 0, err
    assert "no conversation with a time to put in a window" in out
    assert "(no run holds a timed conversation)" in out and "(run none)" not in out
    code, out, err = run_cli("monitor", "--no-judge", "--run", "support-v1")
    assert code == 0
    assert "40 conversations without a time (started_at, timestamp) left out" in err
    code, _, err = run_cli("monitor", "--baseline-windows", "0")
    assert code == 2 and "--baseline-windows must be 1 or more" in err


@pytest.mark.parametrize("as_json", [False, True])
def test_a_huge_baseline_windows_is_refused_in_one_line(tmp_path: Path, as_json: bool) -> None:
    """--baseline-windows 99999999999 was taken and looped for minutes."""
    run_cli("import", str(stream(tmp_path, days=3, per_day=10)))
    code, out, err = run_cli(
        "monitor",
        "--no-judge",
        "--baseline-windows",
        "99999999999",
        *(["--json"] if as_json else []),
    )
    assert code == 2
    said = json.loads(out)["error"] if as_json else err.strip()
    assert said.endswith("--baseline-windows must be 1 to 10,000") and "\n" not in said
    code, _, err = run_cli("monitor", "--no-judge", "--baseline-windows", "10000")
    assert code in (0, 1), err


def test_generated_stream_before_the_change_raises_no_alert(tmp_path: Path) -> None:
    """The sample generator's production stream up to day 9 (before the new prompt ships): every
    check and signal stays quiet."""
    import subprocess
    import sys

    from tests.conftest import REAL_SAMPLE_RUNS, SAMPLE_RUNS

    subprocess.run(
        [
            sys.executable,
            str(REAL_SAMPLE_RUNS / "generate.py"),
            "--production",
            "prod",
            "--days",
            "9",
            "--per-day",
            "300",
        ],
        check=True,
    )
    run_cli("rules", str(SAMPLE_RUNS / "rules.toml"))
    (tmp_path / "reviewer.toml").write_text(
        '[monitor]\nsignals = ["escalated", "thumbs_down", "ticket_reopened"]\n', encoding="utf-8"
    )
    code, out, err = run_cli("monitor", "--import", "prod", "--no-judge", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["conversations"] == 2700 and len(data["windows"]) == 9
    assert data["alerts"] == []


def test_bad_lines_are_one_line_each_and_the_rest_is_monitored(tmp_path: Path) -> None:
    good = [conversation(d, i, False) for d in range(3) for i in range(5)]
    bad_time = conversation(1, 9, False) | {"started_at": "soon"}
    path = tmp_path / "p.jsonl"
    lines = [json.dumps(r) for r in good[:3]] + ["{not json", json.dumps(bad_time)]
    lines += [json.dumps(r) for r in good[3:]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli("monitor", "--import", str(path), "--no-judge", "--run", "prod")
    assert code == 0, err
    assert f"{path}:4: invalid JSON" in err
    assert "1 conversations without a time" in err
    assert out.startswith("monitor: 15 conversations in 3 day windows")
    assert "Traceback" not in err


def test_follow_json_is_one_document_a_line(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=4, per_day=10)
    code, out, err = run_cli(
        "monitor",
        "--follow",
        str(folder),
        "--no-judge",
        "--passes",
        "2",
        "--interval",
        "0.01",
        "--json",
    )
    assert code == 0, err
    docs = [json.loads(line) for line in out.splitlines()]
    assert len(docs) == 1  # the second look saw nothing new
    assert docs[0]["conversations"] == 40 and docs[0]["new_alerts"] == []


def test_alerts_state_their_test_and_json_has_the_detectable_changes(tmp_path: Path) -> None:
    folder = stream(tmp_path, incident=7)
    code, out, err = run_cli("monitor", "--import", str(folder), "--no-judge", "--json")
    assert code == 1, err
    data = json.loads(out)
    alert = next(a for a in data["alerts"] if a["metric"] == "tool_error")
    assert alert["test"] in ("wobble-adjusted", "fisher") and alert["tested_together"] > 1
    assert alert["p_value"] <= alert["p_holm"] < 0.01
    assert alert["baseline"]["kind"] == "recent"
    assert "Holm over" in data["alert_lines"][0] and "Fisher p" not in data["alert_lines"][0]
    assert data["alert_rule"]["baseline"] == "recent"
    d = data["detectable"]["user_repeat"]
    assert d is not None and d["base_rate"] <= d["alerts_twice_at"] <= d["alerts_alone_at"]
    # the incident's days alerted: the next day is still measured against the days before it
    tool = data["detectable"]["tool_error"]
    assert tool is not None and tool["base_rate"] < 0.15 and tool["base_windows"] == 4
    code, out, _ = run_cli("monitor", "--no-judge")
    assert "the next day alerts at (alone; twice in a row; Holm over " in out
    assert "  user repeated " in out and " -> " in out


def test_same_weekday_baseline_says_which_windows_it_cannot_test(tmp_path: Path) -> None:
    folder = stream(tmp_path, days=24, per_day=20)
    code, out, err = run_cli(
        "monitor", "--import", str(folder), "--no-judge", "--baseline", "same-weekday", "--json"
    )
    assert code in (0, 1), err
    data = json.loads(out)
    assert data["alert_rule"]["baseline"] == "same-weekday"
    note = "21 of 24 windows not tested (2025-06-01 to 2025-06-21): a window is tested against "
    assert any(
        n.startswith(note) and "the same weekday of 3 earlier weeks" in n for n in data["notes"]
    )
    code, _, err = run_cli("monitor", "--no-judge", "--baseline", "same-hour")
    assert code == 2 and "--baseline same-hour: the same-hour baseline needs hour windows" in err
    (tmp_path / "reviewer.toml").write_text('[monitor]\nbaseline = "weekly"\n', encoding="utf-8")
    code, _, err = run_cli("monitor", "--no-judge")
    assert code == 2 and "[monitor] baseline: recent, same-weekday or same-hour" in err
    (tmp_path / "reviewer.toml").write_text(
        '[monitor]\nbaseline = "same-hour"\nwindow = "hour"\n', encoding="utf-8"
    )
    code, out, err = run_cli("monitor", "--no-judge")
    assert code in (0, 1) and "at the same hour" not in err, err
    assert "alerts: each rate vs the same hour of the 7 days before" in out


# Folded in from tests/test_monitor_attacks.py:
# Regression tests for monitor defects an attacker found: implausible times, runaway windows.


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
    assert reports == [6, 7]  # the whole lines at once; the last one when its newline came


def test_monitor_follow_holds_back_a_last_line_until_its_newline(tmp_path: Path) -> None:
    """A line still being written was reported as a bad record (`live.jsonl:7: invalid JSON:
    Unterminated string …`) when the writer paused for a look; it is now left out until a look
    finds its newline, and read as an import reads it only when the follow stops."""
    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorRequest, follow

    log = tmp_path / "live.jsonl"
    write_jsonl(log, [conversation(0, i, False) for i in range(5)])
    first, second = (json.dumps(conversation(0, i, False)) for i in (40, 41))
    with log.open("a", encoding="utf-8") as f:
        f.write(first[:30])  # the writer is mid-line, and pauses for two looks
    notes: list[str] = []
    reports: list[tuple[int, list[str]]] = []
    looks = iter(range(10))

    def write(_seconds: float) -> None:
        if next(looks) == 2:  # it ends the line and starts the next one
            with log.open("a", encoding="utf-8") as f:
                f.write(first[30:] + "\n" + second[:30])

    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            log,
            MonitorRequest(judge=False),
            lambda report, new: reports.append((report.conversations, list(notes))),
            passes=5,
            sleep=write,
            on_note=notes.append,
        )
    assert [n for n, _ in reports] == [5, 6, 6]
    assert reports[1][1] == []  # not read, not reported while it was being written
    assert any(n.startswith(f"{log}:7: invalid JSON: Unterminated string") for n in notes)


def test_monitor_follow_reads_a_last_line_that_stays_without_its_newline(tmp_path: Path) -> None:
    """A file that ends without a newline (copied in whole, finished) had its last record held
    back on every look of a follow with no end, never imported nor mentioned (found by a review
    of the change that holds a half-written line): a held line that stays as it is for
    HOLD_LOOKS looks is read as it is, before the follow stops."""
    from reviewer.store import open_store
    from reviewer.workflows.monitor import HOLD_LOOKS, MonitorRequest, follow

    log = tmp_path / "done.jsonl"
    log.write_text("\n".join(json.dumps(conversation(0, i, False)) for i in range(3)))
    reports: list[int] = []
    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            log,
            MonitorRequest(judge=False),
            lambda report, new: reports.append(report.conversations),
            passes=HOLD_LOOKS + 3,  # the follow's last look is not the one that reads it
            sleep=lambda _seconds: None,
        )
    assert reports == [2, 3]


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


def _notes_of_follow(
    tmp_path: Path, path: Path, *, passes: int, sleep: Callable[[float], None]
) -> list[str]:
    """What `monitor --follow PATH` says in PASSES looks (no judge) into a new database, SLEEP
    called between looks."""
    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorRequest, follow

    notes: list[str] = []
    with open_store(tmp_path / "f.db") as db:
        follow(
            db,
            path,
            MonitorRequest(judge=False),
            lambda report, new: None,
            passes=passes,
            sleep=sleep,
            on_note=notes.append,
        )
    return notes


def test_monitor_follow_says_each_bad_line_once(tmp_path: Path) -> None:
    """A follow read its file whole on every look and said its bad lines again each time (the
    first eight only: a bad line written later, past them, was never said). Each is now said once,
    a new one when it comes, and those of a file truncated in place again (found by an
    attacker)."""

    log = tmp_path / "app.jsonl"
    good = json.dumps(conversation(0, 0, False))
    bad = [f'{{"run": "prod", "bad": {i}' for i in range(9)]
    log.write_text("\n".join([good, *bad]) + "\n", encoding="utf-8")
    looks = iter(range(10))

    def write(_seconds: float) -> None:
        step = next(looks)
        if step in (0, 1):  # good lines come, then a tenth bad one
            extra = json.dumps(conversation(0, 1, False)) if step == 0 else bad[0]
            with log.open("a", encoding="utf-8") as f:
                f.write(extra + "\n")
        elif step == 2:  # copytruncate: the file starts again, with a bad line
            log.write_text(good + "\n" + bad[0] + "\n", encoding="utf-8")

    notes = _notes_of_follow(tmp_path, log, passes=4, sleep=write)
    said = [n.split(": ", 1)[0] for n in notes if n.startswith(str(log))]
    assert said == [
        *(f"{log}:{i}" for i in range(2, 10)),  # the first look: eight of its nine
        f"{log}:10",  # the second: the ninth, not the first eight again
        f"{log}:12",  # the third: the new one
        f"{log}:2",  # the fourth: the file truncated, its line 2 another line
    ], notes


def test_monitor_follow_of_a_folder_says_an_empty_file_once(tmp_path: Path) -> None:
    """An empty file in a followed folder was said ('empty file') on every look the folder had
    changed at; it is said once (found by an attacker)."""
    folder = stream(tmp_path, days=1, per_day=3)
    (folder / "empty.jsonl").write_bytes(b"")
    looks = iter(range(10))

    def grow(_seconds: float) -> None:
        with (folder / "day-00.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(conversation(0, 10 + next(looks), False)) + "\n")

    notes = _notes_of_follow(tmp_path, folder, passes=3, sleep=grow)
    assert [n for n in notes if "empty.jsonl" in n] == [f"{folder / 'empty.jsonl'}: empty file"]


def test_monitor_follow_connects_again_when_the_server_drops_it(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`monitor --follow` on a PostgreSQL database ended (exit 2, 'lost the connection') when the
    server restarted or dropped its connection; it now says so, connects again at each look until
    the server answers, and reads the file again (found by an attacker). A drop the connection
    heals itself from (the server back at once) is not said: here the server is still down when
    the connection tries again."""
    import sqlite3

    from reviewer.store import open_store, postgres
    from reviewer.store.postgres import TEST_SERVER_VAR
    from reviewer.workflows.monitor import MonitorRequest, follow

    monkeypatch.delenv(TEST_SERVER_VAR, raising=False)
    log = tmp_path / "app.jsonl"
    write_jsonl(log, [conversation(0, i, False) for i in range(3)])
    notes: list[str] = []
    reports: list[int] = []
    opened: list[Any] = []
    looks = iter(range(10))
    refused = [True]  # the server still down at the first look after the drop
    down = [False]  # ... and when the dropped connection tries to connect again
    connect = postgres.connect

    def connect_unless_down(url: str) -> Any:
        if down[0]:
            down[0] = False
            raise sqlite3.OperationalError("connection failed: Connection refused")
        return connect(url)

    monkeypatch.setattr(postgres, "connect", connect_unless_down)

    def reopen() -> Any:
        if refused.pop() if refused else False:
            return open_store("postgresql://nobody@127.0.0.1:1/none")  # refused: StoreError
        opened.append(open_store(pg_url))
        return opened[-1]

    def drop(_seconds: float) -> None:
        step = next(looks)
        if step == 0:  # the server drops the follow's connection, and more lines come
            drop_connections(pg_url, db.conn.raw.info.backend_pid)
            down[0] = True
            with log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(conversation(0, 10, False)) + "\n")

    db = open_store(pg_url)
    follow(
        db,
        log,
        MonitorRequest(judge=False),
        lambda report, new: reports.append(report.conversations),
        passes=4,
        sleep=drop,
        on_note=notes.append,
        reopen=reopen,
    )
    for store in opened:
        store.close()
    assert reports == [3, 4]
    said = [n for n in notes if "connect" in n]
    assert len(said) == 2
    assert "lost the connection to the PostgreSQL server" in said[0]
    assert said[0].endswith("; connecting again at each look")
    assert said[1].endswith(": connected again")


def test_monitor_follow_refuses_a_pipe_rotated_into_its_place(tmp_path: Path) -> None:
    """A follow whose file came back from rotation as a pipe hung for good (the look for a whole
    line opened it, waiting for a writer that never came): the pipe is now refused in one line, as
    a pipe named to --follow is (found by an attacker)."""
    import os
    import threading

    from reviewer.store import open_store
    from reviewer.workflows.monitor import MonitorError, MonitorRequest, follow

    log = tmp_path / "app.jsonl"
    write_jsonl(log, [conversation(0, i, False) for i in range(3)])
    reports: list[int] = []
    looks = iter(range(10))

    def unblock() -> None:  # without the check, a writer that comes at last lets the open return
        with open(log, "wb"):
            pass

    timer = threading.Timer(5.0, unblock)

    def rotate(_seconds: float) -> None:
        if next(looks) == 0:
            log.unlink()
            os.mkfifo(log)
            timer.start()

    with open_store(tmp_path / "f.db") as db, pytest.raises(MonitorError) as e:
        follow(
            db,
            log,
            MonitorRequest(judge=False),
            lambda report, new: reports.append(report.conversations),
            passes=3,
            sleep=rotate,
        )
    timer.cancel()
    assert str(e.value) == (
        f"{log}: not a file or folder (a pipe, a device or a socket): --follow watches a log file "
        "or a folder of them grow"
    )
    assert reports == [3]


# Folded in from tests/test_monitor_width.py:
# Regression: the `reviewer monitor` table was ~220 columns wide whatever the terminal, and its
# `judge pass` column named the rate the alerts call `judge fail rate`.


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
    code, _, err = run_cli("rules", str(Path(__file__).parents[2] / "sample_runs/rules.toml"))
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
