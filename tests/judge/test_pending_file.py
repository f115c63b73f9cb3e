"""A damaged judge side file (``<db>.judge-pending.jsonl``) is read with the import's checked
decoder: each bad line is one ``file:line: reason; skipped`` note, the good lines are stored, and
no later run fails on it."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from reviewer.judge import sinks
from reviewer.judge.pending import pending_path, shown_path
from reviewer.judge.standin import StandIn
from reviewer.store.db import Store
from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials


def _full_disk(*args: Any, **kw: Any) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def _kept_lines(db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The side file of a run whose replies could not be stored, as its lines."""
    with monkeypatch.context() as mp, pytest.raises(JudgeFailed):
        mp.setattr(sinks, "write_verdict", _full_disk)
        judge_trials(db, JudgeRequest(limit=3, overrides={"concurrency": 1}))
    path = pending_path(db)
    assert path is not None
    return path.read_text().splitlines()


def test_a_corrupt_judge_pending_line_is_reported_once_and_the_rest_stored(
    db: Store, standin: StandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _kept_lines(db, standin, monkeypatch)
    assert len(lines) >= 1
    good = json.loads(lines[0])
    name = shown_path(pending_path(db))  # type: ignore[arg-type]
    bad = [
        "[" * 100_000 + "]" * 100_000,  # nested 100,000 deep
        json.dumps({**good, "input_tokens": 2**70}),
        json.dumps({**good, "latency_s": float("inf")}),
        json.dumps({**good, "cost_usd": 1.7e308}),
        json.dumps({**good, "job": "x"}),
        '{"cut',
    ]
    path = pending_path(db)
    assert path is not None
    path.write_text("\n".join(lines[:1] + bad + lines[1:]) + "\n")
    notes: list[str] = []
    result = judge_trials(db, JudgeRequest(limit=3), on_note=notes.append)
    problems = [n for n in notes if n.startswith(f"{name}:")]
    assert [p.split(": ", 1)[0] for p in problems] == [f"{name}:{i}" for i in range(2, 8)], notes
    assert all(p.endswith("; skipped") for p in problems)
    assert "JSON nested deeper than 200 levels" in problems[0]
    assert "input_tokens: integer out of range" in problems[1]
    assert "latency_s: Infinity is not a number" in problems[2]
    assert "cost_usd: 1.7e+308 is not an amount" in problems[3]
    assert (
        f"stored {len(lines)} judge replies an earlier run kept in {name} (6 left out"
        in "\n".join(notes)
    )
    assert result.stats is not None and not path.exists()
    verdicts = db.execute("SELECT latency_s, cost_usd FROM verdicts").fetchall()
    assert all(v is None or v < 1e12 for row in verdicts for v in row)
    notes.clear()
    judge_trials(db, JudgeRequest(limit=3), on_note=notes.append)  # the next run: nothing to tell
    assert not [n for n in notes if n.startswith(f"{name}:")]
