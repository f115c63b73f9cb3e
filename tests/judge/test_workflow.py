"""The judge and position-bias workflows that `reviewer judge`, `reviewer bias` and the app share."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from reviewer.judge.standin import StandIn
from reviewer.store.db import Store
from reviewer.workflows.bias import position_bias
from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials

JUDGE = "claude-sonnet-4-5/v1/task-success@builtin-1"


def _ids(db: Store) -> list[str]:
    return [r[0] for r in db.execute("SELECT id FROM trials ORDER BY seq").fetchall()]


def test_judge_trials_calls_back_and_sums_up(db: Store, standin: StandIn) -> None:
    notes: list[str] = []
    starts: list[tuple[str, str, int]] = []
    seen: list[int] = []
    result = judge_trials(
        db,
        JudgeRequest(limit=5),
        on_note=notes.append,
        on_start=lambda *a: starts.append(a),
        on_progress=lambda stats, o: seen.append(stats.done),
    )
    assert starts == [(JUDGE, "task-success@builtin-1", 5)]
    assert notes == [
        f"judge {JUDGE}: 5 trials (rubric task-success@builtin-1); cost cap $10 (the default; "
        "raise it with --max-cost or [judge] max_cost)"
    ]
    assert seen == [1, 2, 3, 4, 5]
    assert result.summary.startswith(f"judged 5 of 5 with {JUDGE}: ")
    assert result.lines() == [result.summary] and not result.incomplete
    data = result.to_dict()
    assert (data["judge"], data["done"], data["requests"]) == (JUDGE, 5, 5)
    done = [r[0] for r in db.execute("SELECT trial_id FROM verdicts WHERE judge = ?", [JUDGE])]
    again = judge_trials(db, JudgeRequest(trial_ids=done, only_unjudged=True))
    assert again.to_dict() == {"judge": JUDGE, "trials": 0}
    assert again.summary.startswith(f"judged 0 of 0 with {JUDGE}")
    assert standin.message_requests == 5


def test_judge_these_trials_only(db: Store, standin: StandIn) -> None:
    ids = _ids(db)[3:5]
    result = judge_trials(db, JudgeRequest(trial_ids=ids))
    assert result.planned == 2
    judged = {r[0] for r in db.execute("SELECT trial_id FROM verdicts WHERE judge = ?", [JUDGE])}
    assert judged == set(ids)


def test_a_set_cancel_sends_nothing(db: Store, standin: StandIn) -> None:
    cancel = threading.Event()
    cancel.set()
    result = judge_trials(db, JudgeRequest(limit=3), cancel=cancel)
    assert result.incomplete and "3 cancelled" in result.summary
    assert standin.message_requests == 0


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (JudgeRequest(runs=("nope",)), "no run named 'nope'; runs: 'support-v1'"),
        (JudgeRequest(queue="q"), "no queue named 'q'; queues: none (reviewer sample)"),
        (JudgeRequest(overrides={"concurrency": 0}), "concurrency must be at least 1, got 0"),
    ],
)
def test_what_a_user_can_fix_is_one_line(db: Store, request_: JudgeRequest, message: str) -> None:
    with pytest.raises(JudgeFailed) as e:
        judge_trials(db, request_)
    assert str(e.value) == message


def test_no_key_is_one_line(db: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(JudgeFailed, match="^ANTHROPIC_API_KEY is not set"):
        judge_trials(db, JudgeRequest(limit=1))


def test_collect_only_and_batches(db: Store, standin: StandIn) -> None:
    notes: list[str] = []
    got = judge_trials(db, JudgeRequest(collect_only=True), on_note=notes.append)
    assert got.mode == "collect" and got.to_dict() == {}
    assert notes == ["no batches await collection"]
    standin.polls_until_ended = 1
    sub = judge_trials(db, JudgeRequest(limit=4, batch=True))
    assert sub.submitted is not None and sub.submitted.requests == 4
    assert sub.lines()[0].startswith("submitted 4 requests in batch msgbatch_0001")
    notes.clear()
    got = judge_trials(db, JudgeRequest(collect_only=True), on_note=notes.append)
    assert got.collected is not None and got.collected.stored == 4
    assert notes == ["batch msgbatch_0001: collected 4 results (0 errors)"]


def test_position_bias_says_why_it_is_empty(db: Store) -> None:
    view = position_bias(db)
    assert view.empty and view.inconsistent == []
    assert view.report.explanation is not None
    assert view.report.explanation.startswith("no pair judgements stored")
    assert "no pair judgements stored" in view.text


def test_the_cli_judges_one_trial(db_path: Any, db: Store, standin: StandIn) -> None:
    import json

    from click.testing import CliRunner

    from reviewer.cli import cli

    tid = _ids(db)[7]
    args = ["--db", str(db_path), "judge", "--trial", tid, "--json"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["done"] == 1
    assert db.execute("SELECT trial_id FROM verdicts WHERE judge = ?", [JUDGE]).fetchall() == [
        (tid,)
    ]
