"""`reviewer sample --active`: a queue that decides each next trial from the labels so far, the one
workflow behind the CLI and the app, resumable, and clear when the judge has graded nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.calibration.active import choose_stratum
from reviewer.calibration.sampling import NoJudgeVerdicts
from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.store.queues import get_queue, list_queues
from reviewer.workflows.queues import agreement_table, make_queue, queue_status

JUDGE = "claude-sonnet-4-5:support-policy@1"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def outcome_of(db: object, trial_id: str) -> str:
    row = db.conn.execute("SELECT outcome FROM trials WHERE id = ?", [trial_id]).fetchone()  # type: ignore[attr-defined]
    return "pass" if row[0] == "pass" else "fail"


def test_the_next_trial_is_the_verdict_whose_label_tightens_kappa_most(sample_db: Path) -> None:
    with open_store(sample_db) as db:
        made = make_queue(db, "ana", n=12, active=True)
        queue = made.queue
        assert made.created and queue.name == "ana-active-s0" and made.total == 12
        assert queue.params["active"] and queue.params["judge"] == JUDGE
        # a reserve of up to 12 judge-fail and 12 judge-pass trials, fail first
        verdicts = [it.verdict for it in queue.items]
        assert set(verdicts) == {"pass", "fail"} and verdicts[:2] == ["fail", "pass"]
        assert all(verdicts.count(v) <= 12 for v in ("pass", "fail"))
        for step in range(12):
            status = queue_status(db, queue.name)
            assert status.active and (status.done, status.total) == (step, 12)
            table, mix, judge = agreement_table(db, "ana", JUDGE)
            left = [
                it for it in queue.items if it.trial_id not in {i.trial_id for i in status.labeled}
            ]
            available = {v: sum(1 for it in left if it.verdict == v) for v in ("pass", "fail")}
            want = choose_stratum(table, mix, available)
            assert want is not None and status.choice == want and judge == JUDGE
            assert status.next_item is not None and status.next_item.verdict == want.stratum
            # within a verdict, the reserve's seeded order
            assert status.next_item == next(it for it in left if it.verdict == want.stratum)
            assert status.why == want.neutral()
            add_label(
                db, status.next_item.trial_id, "ana", outcome_of(db, status.next_item.trial_id)
            )
            assert [it.trial_id for it in queue_status(db, queue.name).labeled][-1] == (
                status.next_item.trial_id
            )
        done = queue_status(db, queue.name)
        assert (done.done, done.total, done.next_item, done.why) == (12, 12, None, None)
        # asking again resumes it: the same queue, as far as it got
        again = make_queue(db, "ana", n=12, active=True)
        assert not again.created and (again.done, again.total) == (12, 12)


def test_the_decision_is_the_same_on_resume_and_follows_labels_given_anywhere(
    sample_db: Path,
) -> None:
    with open_store(sample_db) as db:
        queue = make_queue(db, "ana", n=8, active=True).queue
        first = queue_status(db, queue.name)
        assert first.next_item is not None
        assert queue_status(db, queue.name) == first  # nothing changed: the same decision
        # a label given elsewhere (the CLI, another window) counts and moves the decision on
        add_label(db, first.next_item.trial_id, "ana", "fail")
        after = queue_status(db, queue.name)
        assert after.done == 1 and after.next_item != first.next_item


def test_cli_sample_active_says_how_it_picks_without_naming_the_verdict(sample_db: Path) -> None:
    code, out, err = invoke("--db", str(sample_db), "--labeler", "ana", "sample", "--active")
    assert code == 0, err
    assert "queue 'ana-active-s0' for ana: active, 50 trials to label" in out
    assert f"judge    {JUDGE}" in out
    assert "each next trial comes from the judge verdict (pass or fail) whose label" in out
    assert "next     picked to tighten the kappa estimate most" in out
    assert "verdict  30+ labels to a verdict (80% assurance)" in out
    assert "judge-pass" not in out and "judge-fail" not in out
    code, raw, err = invoke(
        "--db", str(sample_db), "--labeler", "bo", "sample", "--active", "--size", "5", "--json"
    )
    assert code == 0, err
    data = json.loads(raw)
    assert data["active"]["judge"] == JUDGE and data["n"] == 5 and data["reserve"] >= 5
    with open_store(sample_db) as db:
        queue = get_queue(db, data["name"])
    nxt = next(it for it in queue.items if it.position == data["active"]["next_position"])
    assert data["active"]["next_stratum"] == nxt.verdict == "fail"  # no label yet: fail first
    assert data["active"]["labels_to_verdict"] == 30


def test_active_without_judge_verdicts_is_one_clear_line(tmp_path: Path) -> None:
    runs = tmp_path / "runs.jsonl"
    lines = []
    for i in range(4):
        trial = {
            "run": "r",
            "task_id": f"t{i % 2}",
            "outcome": {"passed": i % 2 == 0},
            "messages": [{"role": "user", "content": f"hello {i}"}],
        }
        if i == 0:  # one trial judged: the rest are left out and counted
            trial["judge"] = {"verdict": "pass", "rationale": "ok", "model": "m"}
        lines.append(json.dumps(trial))
    runs.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    db = str(tmp_path / "a.db")
    assert invoke("--db", db, "import", str(runs))[0] == 0
    code, out, err = invoke("--db", db, "--labeler", "ana", "sample", "--active")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "an active queue needs judge verdicts on the trials it picks from" in err
    assert "none of the 3 unlabeled trials in scope has a verdict of any judge" in err
    assert "`reviewer judge`" in err and "without --active" in err
    with open_store(db) as store:
        assert list_queues(store) == []
        with pytest.raises(NoJudgeVerdicts):
            make_queue(store, "ana", active=True)
    # with one judged trial the queue holds it, and says what it left out
    (tmp_path / "judged.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    assert invoke("--db", db, "import", str(tmp_path / "judged.jsonl"))[0] == 0
    code, out, err = invoke("--db", db, "--labeler", "ana", "sample", "--active")
    assert code == 0, err
    assert "left out: 3 trials without a verdict of that judge (they cannot inform kappa)" in out


def test_active_and_split_do_not_go_together(sample_db: Path) -> None:
    code, out, err = invoke("--db", str(sample_db), "sample", "--active", "--split")
    assert code == 2 and out == "" and "--split does not go with --active" in err


def test_reviewer_queues_shows_kind_and_labels_to_a_verdict(sample_db: Path) -> None:
    with open_store(sample_db) as db:
        stratified = make_queue(db, "ana", n=40).queue
        for i, it in enumerate(stratified.items[:35]):
            judged = db.conn.execute(
                "SELECT verdict FROM latest_judge_verdicts WHERE trial_id = ?", [it.trial_id]
            ).fetchone()[0]
            flipped = {"pass": "fail", "fail": "pass"}[judged]
            add_label(db, it.trial_id, "ana", flipped if i % 6 == 0 else judged)
        make_queue(db, "ana", n=10, active=True)
        want = queue_status(db, stratified.name).outlook
    assert want is not None and not want.at_least
    code, out, err = invoke("--db", str(sample_db), "queues")
    assert code == 0, err
    head, *rows = out.splitlines()
    assert "kind" in head and "to verdict" in head
    by_name = {r.split()[0]: r for r in rows}
    assert "stratified" in by_name["ana-s0"] and "active" in by_name["ana-active-s0"]
    shown = {0: "settled", None: ">20000"}.get(want.labels, f"~{want.labels}")
    assert shown in by_name["ana-s0"] and shown in by_name["ana-active-s0"]  # ana vs one judge
    code, raw, _ = invoke("--db", str(sample_db), "queues", "--json")
    rows_json = {r["name"]: r for r in json.loads(raw)["queues"]}
    assert rows_json["ana-s0"]["labels_to_verdict"] == want.labels
    assert rows_json["ana-active-s0"]["active"] is True
    assert rows_json["ana-active-s0"]["why"] == "picked to tighten the kappa estimate most" or (
        rows_json["ana-active-s0"]["why"].startswith("picked to tighten the kappa estimate most (")
    )
    assert rows_json["ana-s0"]["outlook"]["assurance"] == 0.8
