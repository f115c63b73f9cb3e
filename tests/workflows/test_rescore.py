"""A stored run of graded rewards judged again by a pass threshold (issue 32, item 2): `reviewer
rescore` and its job, checked against the outcomes recomputed from the rewards here, against a fresh
import with the same threshold, and against every summary the store keeps."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from reviewer.store import open_store
from reviewer.store.trials import load_trial
from reviewer.workflows.audit import graded_warning
from tests.conftest import native_trial, run_cli, write_jsonl

EPS = 1e-6


def _graded(seed: int = 7, run: str = "graded") -> list[dict[str, Any]]:
    """6 tasks x 5 trials: rewards from 0 to 1, some graded; a trial whose source says fail with a
    high reward, one that says pass with a low one, one unscored and one infrastructure error."""
    rng = random.Random(seed)
    recs = []
    for t in range(6):
        for i in range(5):
            reward = rng.choice([0.0, 1.0, round(rng.uniform(0.05, 0.99), 3)])
            recs.append(native_trial(f"task{t}", run=run, trial=i, outcome={"reward": reward}))
    recs.append(native_trial("task0", run=run, trial=5, outcome={"passed": False, "reward": 0.95}))
    recs.append(native_trial("task1", run=run, trial=5, outcome={"passed": True, "reward": 0.1}))
    recs.append(native_trial("task2", run=run, trial=5, outcome=None))
    recs.append(native_trial("task3", run=run, trial=5, outcome={"infra_error": True}))
    return recs


def _expected(recs: list[dict[str, Any]], x: float) -> dict[tuple[str, int], str]:
    out = {}
    for r in recs:
        o = r["outcome"]
        key = (r["task_id"], r["trial"])
        if o is None:
            out[key] = "unscored"
        elif o.get("infra_error"):
            out[key] = "infra"
        elif "passed" in o:
            out[key] = "pass" if o["passed"] else "fail"
        else:
            out[key] = "pass" if o["reward"] >= x - EPS else "fail"
    return out


def _outcomes(db_path: str, run: str = "graded") -> dict[tuple[str, int], str]:
    with open_store(db_path) as db:
        rows = db.execute(
            "SELECT task_id, trial, outcome FROM trials WHERE run = ?", [run]
        ).fetchall()
    return {(t, n): o for t, n, o in rows}


def _consistent(db_path: str) -> None:
    """Every summary the store keeps agrees with the trials, and every record reads back as its
    columns say."""
    with open_store(db_path) as db:
        stats = db.execute(
            "SELECT run, task_id, n, c, infra, unscored FROM task_stats ORDER BY run, task_id"
        ).fetchall()
        recount = db.execute(
            "SELECT run, task_id, COUNT(*), SUM(outcome = 'pass'), SUM(outcome = 'infra'), "
            "SUM(outcome = 'unscored') FROM trials GROUP BY run, task_id ORDER BY run, task_id"
        ).fetchall()
        assert stats == recount
        for tid, outcome, success, passed in db.execute(
            "SELECT id, outcome, success, passed FROM trials"
        ).fetchall():
            trial = load_trial(db, tid)
            assert trial is not None and trial.outcome == outcome, tid
            assert success == (outcome == "pass")
            if passed is not None:
                assert trial.passed == bool(passed)


def _import(tmp_path: Path, recs: list[dict[str, Any]], *extra: str, db: str = "x.db") -> str:
    path = write_jsonl(tmp_path / f"{len(recs)}-{random.random()}.jsonl", recs)
    code, out, err = run_cli("--db", db, "import", str(path), *extra)
    assert code == 0, err
    return db


@pytest.mark.parametrize("x", [0.5, 0.9, 1.0, 0.05])
def test_rescore_gives_the_outcomes_of_the_rewards_and_keeps_the_sources_own(
    tmp_path: Path, x: float
) -> None:
    recs = _graded()
    db = _import(tmp_path, recs)
    code, out, err = run_cli("--db", db, "rescore", "graded", "--pass-threshold", str(x), "--json")
    assert code == 0, err
    got = json.loads(out)
    expected = _expected(recs, x)
    assert _outcomes(db) == expected
    before = _expected(recs, 1.0)
    assert got["to_pass"] == sum(before[k] == "fail" and v == "pass" for k, v in expected.items())
    assert got["to_fail"] == sum(before[k] == "pass" and v == "fail" for k, v in expected.items())
    assert got["passes"] == sum(v == "pass" for v in expected.values())
    assert got["scored"] == sum(v in ("pass", "fail") for v in expected.values())
    assert got["own_outcome"] == 2 and got["applied"] is True
    assert got["pass_rule"] == f"pass means reward ≥ {x:g} − 1e-6"
    _consistent(db)
    # the report counts the new outcomes, task by task
    code, out, _ = run_cli("--db", db, "report", "--run", "graded", "--json")
    assert code == 0
    (run,) = json.loads(out)["runs"]
    got_c = {t["task_id"]: t["c"] for t in run["tasks"]}
    want_c = {task: 0 for task, _ in expected}
    for (task, _), v in expected.items():
        want_c[task] += v == "pass"
    assert got_c == want_c


def test_a_second_threshold_ends_where_a_fresh_import_with_it_does(tmp_path: Path) -> None:
    recs = _graded(seed=3)
    db = _import(tmp_path, recs)
    assert run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.4")[0] == 0
    assert run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.8")[0] == 0
    fresh = _import(tmp_path, recs, "--pass-threshold", "0.8", db="fresh.db")
    assert _outcomes(db) == _outcomes(fresh) == _expected(recs, 0.8)
    # a run imported with a threshold is judged again too (its trials say which threshold)
    assert run_cli("--db", fresh, "rescore", "graded", "--pass-threshold", "0.3")[0] == 0
    assert _outcomes(fresh) == _expected(recs, 0.3)
    _consistent(db)
    _consistent(fresh)


def test_dry_run_writes_nothing_and_says_what_it_would_do(tmp_path: Path) -> None:
    recs = _graded()
    db = _import(tmp_path, recs)

    def dump() -> list[Any]:
        with open_store(db) as store:
            return [
                sorted(store.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
                for t in ("trials", "task_stats", "runs", "run_totals", "verdict_counts")
            ]

    before = dump()
    code, out, _ = run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.5", "--dry-run")
    assert code == 0 and "would turn" in out and "nothing written (a dry run)" in out
    assert dump() == before


def test_the_graded_warning_names_rescore_and_goes_once_a_threshold_is_chosen(
    tmp_path: Path,
) -> None:
    recs = [
        native_trial(f"t{i}", run="graded", outcome={"reward": 0.5 + i / 100}) for i in range(20)
    ]
    db = _import(tmp_path, recs)
    with open_store(db) as store:
        line = graded_warning(store, "graded")
    assert line is not None and "reviewer rescore graded --pass-threshold X" in line
    code, _, err = run_cli("--db", db, "export", "--harness-fails", "--out", "reg.jsonl")
    assert code == 0
    assert "warning: 20 of these harness failures got partial credit (rewards 0.5–0.69)" in err
    assert "reviewer rescore graded --pass-threshold X" in err
    assert run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.6")[0] == 0
    with open_store(db) as store:
        assert graded_warning(store, "graded") is None
    code, out, _ = run_cli("--db", db, "export", "--harness-fails", "--out", "reg2.jsonl", "--json")
    assert code == 0 and json.loads(out)["partial_credit"] == 0  # the chosen threshold failed them
    assert json.loads(out)["written"] == 10


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "--pass-threshold 0: a reward above 0 and at most 1"),
        ("1.5", "--pass-threshold 1.5: a reward above 0 and at most 1"),
        ("nan", "--pass-threshold nan: a reward above 0 and at most 1"),
        ("abc", "--pass-threshold 'abc': not a number"),
    ],
)
def test_a_bad_threshold_is_one_line_and_changes_nothing(
    tmp_path: Path, value: str, message: str
) -> None:
    db = _import(tmp_path, _graded())
    before = _outcomes(db)
    code, out, err = run_cli("--db", db, "rescore", "graded", "--pass-threshold", value)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"reviewer: {message}")
    assert _outcomes(db) == before


def test_an_unknown_run_or_one_a_success_field_decided_is_refused(tmp_path: Path) -> None:
    db = _import(tmp_path, _graded())
    code, _, err = run_cli("--db", db, "rescore", "nope", "--pass-threshold", "0.5")
    assert code == 1 and err == "reviewer: no run named 'nope'; runs: 'graded'\n"
    recs = [
        native_trial(f"t{i}", run="by-field", ok=i % 2 == 0, outcome={"reward": 0.5})
        for i in range(4)
    ]
    _import(tmp_path, recs, "--success-field", "ok", db=db)
    before = _outcomes(db, "by-field")
    code, _, err = run_cli("--db", db, "rescore", "by-field", "--pass-threshold", "0.5")
    assert code == 1 and len(err.splitlines()) == 1
    assert err.startswith("reviewer: run 'by-field': pass means ok") and "--run NAME" in err
    assert _outcomes(db, "by-field") == before


def test_the_trials_list_counts_follow_a_rescore(tmp_path: Path) -> None:
    recs = _graded(seed=11)
    db = _import(tmp_path, recs)
    code, out, _ = run_cli("--db", db, "trials", "--run", "graded", "--outcome", "pass", "--json")
    before = json.loads(out)
    assert run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.3")[0] == 0
    code, out, _ = run_cli("--db", db, "trials", "--run", "graded", "--outcome", "pass", "--json")
    after = json.loads(out)
    want = sum(v == "pass" for v in _expected(recs, 0.3).values())
    assert len(after["trials"]) == want != len(before["trials"])


def test_two_processes_rescoring_at_once_end_as_one_after_the_other(tmp_path: Path) -> None:
    """The second waits for the first and starts from what it wrote: the run ends at one of the two
    thresholds, every summary true."""
    import subprocess
    import sys

    rng = random.Random(5)
    recs = [
        native_trial(f"t{i % 50}", run="big", trial=i // 50, outcome={"reward": rng.random()})
        for i in range(2000)
    ]
    db = _import(tmp_path, recs)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "reviewer", "--db", db, "rescore", "big", "--pass-threshold", x],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for x in ("0.3", "0.8")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    got = _outcomes(db, "big")
    assert got in (_expected(recs, 0.3), _expected(recs, 0.8))
    second = 0.3 if got == _expected(recs, 0.3) else 0.8
    first = 0.8 if second == 0.3 else 0.3
    # the later one says it started from the earlier one's rule
    assert any(f"(was: pass means reward ≥ {first:g} − 1e-6)" in out for out, _ in outs)
    _consistent(db)


def test_a_run_no_reward_decided_is_refused_and_the_import_points_at_rescore(
    tmp_path: Path,
) -> None:
    own = [native_trial(f"t{i}", run="own", passed=i % 2 == 0) for i in range(4)]
    db = _import(tmp_path, own)
    code, out, err = run_cli("--db", db, "rescore", "own", "--pass-threshold", "0.7")
    assert code == 1 and out == "" and len(err.splitlines()) == 1
    assert "no trial's outcome is decided by a reward (4 of 4 scored trials" in err
    with open_store(db) as store:
        (rule,) = store.execute("SELECT pass_rule FROM runs WHERE name = 'own'").fetchone()
    assert "0.7" not in (rule or "")  # the rule is not relabelled
    recs = [native_trial(f"t{i}", run="graded", outcome={"reward": 0.8}) for i in range(5)]
    path = write_jsonl(tmp_path / "g.jsonl", recs)
    code, _, err = run_cli("--db", db, "import", str(path))
    assert "for a run already stored: reviewer rescore RUN --pass-threshold X" in err
    code, _, err = run_cli("--db", db, "import", str(path), "--pass-threshold", "0.7")
    assert "to judge the stored run by it: reviewer rescore graded --pass-threshold 0.7" in err


def test_a_record_whose_source_carried_the_key_keeps_its_own_outcome(tmp_path: Path) -> None:
    """``pass_threshold`` in a source's metadata is not a mark of ours unless the outcome is what
    that threshold gives: a trial the source passed at reward 0.1 stays a pass."""
    recs = [
        native_trial(
            "t1",
            run="g",
            passed=True,
            outcome={"passed": True, "reward": 0.1},
            metadata={"pass_threshold": 0.9},
        ),
        native_trial(
            "t1",
            run="g",
            trial=2,
            outcome={"passed": False, "reward": 0.95},
            metadata={"pass_threshold": "0.5"},
        ),
        native_trial("t2", run="g", outcome={"reward": 0.6}),
    ]
    db = _import(tmp_path, recs)
    code, out, err = run_cli("--db", db, "rescore", "g", "--pass-threshold", "0.5", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert (got["own_outcome"], got["decided_by_reward"], got["to_pass"]) == (2, 1, 1)
    assert _outcomes(db, "g") == {("t1", 1): "pass", ("t1", 2): "fail", ("t2", 1): "pass"}
    _consistent(db)


@pytest.mark.parametrize("x", ["1e-7", "0.000001", "0", "-0.5", "1.5", "nan", "inf"])
def test_a_threshold_that_would_pass_a_reward_of_0_is_refused_everywhere(
    tmp_path: Path, x: str
) -> None:
    recs = [native_trial("t1", run="g", outcome={"reward": 0.0})]
    db = _import(tmp_path, recs)
    code, out, err = run_cli("--db", db, "rescore", "g", "--pass-threshold", x)
    assert code == 2 and "a reward above 0 and at most 1" in err and len(err.splitlines()) == 1
    path = write_jsonl(tmp_path / "more.jsonl", recs)
    code, _, err = run_cli("--db", "other.db", "import", str(path), "--pass-threshold", x)
    assert code != 0 and "a reward above 0 and at most 1" in err
    assert _outcomes(db, "g") == {("t1", 1): "fail"}


def test_a_threshold_is_shown_as_typed_not_rounded(tmp_path: Path) -> None:
    recs = [native_trial("t1", run="g", outcome={"reward": 0.5}) for _ in range(2)]
    db = _import(tmp_path, recs)
    code, out, err = run_cli("--db", db, "rescore", "g", "--pass-threshold", "0.1234567")
    assert code == 0, err
    assert "pass means reward ≥ 0.1234567 − 1e-6" in out
    assert "turned 1 fail into a pass and 0 passes into fails" in out


def test_an_import_into_a_rescored_run_follows_its_threshold(tmp_path: Path) -> None:
    """New trials of a run whose threshold was chosen (here by rescore) are judged by it, not by
    the default rule, and the import says so; the run stays one rule."""
    first = [native_trial(f"t{i}", run="g", outcome={"reward": 0.7}) for i in range(3)]
    db = _import(tmp_path, first)
    assert run_cli("--db", db, "rescore", "g", "--pass-threshold", "0.6")[0] == 0
    more = [
        native_trial(f"t{i}", run="g", trial=2, outcome={"reward": r})
        for i, r in enumerate([0.65, 0.2, 1.0])
    ] + [native_trial("t9", run="g", passed=False, outcome={"passed": False, "reward": 0.9})]
    path = write_jsonl(tmp_path / "more.jsonl", more)
    code, out, err = run_cli("--db", db, "import", str(path))
    assert code == 0, err
    assert "run 'g' is judged by pass means reward ≥ 0.6 − 1e-6; its 3 new trials decided " in err
    assert "(1 that the default rule failed pass by it)" in err
    assert "rewards look graded" not in err  # the run's threshold applies: no advice to set one
    assert _outcomes(db, "g") == {
        ("t0", 1): "pass",
        ("t1", 1): "pass",
        ("t2", 1): "pass",
        ("t0", 2): "pass",
        ("t1", 2): "fail",
        ("t2", 2): "pass",
        ("t9", 1): "fail",
    }
    _consistent(db)
    code, out, _ = run_cli("--db", db, "report", "--run", "g", "--json")
    (run,) = json.loads(out)["runs"]
    assert "0.6" in json.dumps(run)  # still one rule, the threshold's


def test_a_record_no_version_reads_is_kept_and_not_counted_as_changed(tmp_path: Path) -> None:
    recs = [native_trial(f"t{i}", run="g", outcome={"reward": 0.7}) for i in range(3)]
    db = _import(tmp_path, recs)
    with open_store(db) as store, store.transaction():
        store.execute("UPDATE trials SET record = '{not json' WHERE task_id = 't0'")
    for args in (("--dry-run",), ()):  # the dry run first: it must count as the write does
        code, out, err = run_cli(
            "--db", db, "rescore", "g", "--pass-threshold", "0.6", "--json", *args
        )
        assert code == 0, err
        got = json.loads(out)
        assert (got["to_pass"], got["unreadable"], got["passes"]) == (2, 1, 2)
    assert _outcomes(db, "g") == {("t0", 1): "fail", ("t1", 1): "pass", ("t2", 1): "pass"}
    with open_store(db) as store:
        stats = dict(store.execute("SELECT task_id, c FROM task_stats").fetchall())
    assert stats == {"t0": 0, "t1": 1, "t2": 1}


def test_a_store_failure_with_json_says_so_in_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database error the command does not catch itself (here the disk filling mid-write) is one
    line on stderr and, with --json, {"error": …} on stdout."""
    from reviewer import cli
    from reviewer.workflows import rescore as job

    db = _import(tmp_path, [native_trial("t1", run="g", outcome={"reward": 0.7})])

    def full(*a: Any, **k: Any) -> Any:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(job, "rescore_run", full)
    with pytest.raises(SystemExit) as ended:
        cli._main(["--db", db, "rescore", "g", "--pass-threshold", "0.6", "--json"], "reviewer")
    assert ended.value.code == 1
    out, err = capsys.readouterr()
    assert "error" in json.loads(out) and len(err.strip().splitlines()) == 1
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("low", "high", "shown"),
    [
        (0.74, 0.96, "0.74–0.96"),
        (0.5, 0.5, "0.5"),
        (1e-9, 0.99999, "0.0001–0.9999"),
        (0.29, 0.7, "0.29–0.7"),
        (0.12345, 0.98765, "0.1235–0.9876"),
    ],
)
def test_partial_credit_rewards_read_as_they_are_never_as_0_or_1(
    low: float, high: float, shown: str
) -> None:
    from reviewer.store.rescore import PartialCredit

    assert PartialCredit(2, low, high, ("r",)).rewards() == shown


def test_an_import_with_another_threshold_into_a_thresholded_run_is_refused(
    tmp_path: Path,
) -> None:
    """A run judged by a threshold of 0.6 takes no file imported with --pass-threshold 0.8: one run
    has one rule. The file is refused whole, in one line naming the three ways on; nothing of it is
    stored; with the run's own threshold it goes in."""
    first = [native_trial(f"t{i}", run="g", outcome={"reward": 0.7}) for i in range(3)]
    db = _import(tmp_path, first)
    assert run_cli("--db", db, "rescore", "g", "--pass-threshold", "0.6")[0] == 0
    more = [native_trial(f"t{i}", run="g", trial=2, outcome={"reward": 0.7}) for i in range(3)]
    path = write_jsonl(tmp_path / "more.jsonl", more)
    code, _, err = run_cli("--db", db, "import", str(path), "--pass-threshold", "0.8")
    assert code != 0
    line = next(x for x in err.splitlines() if "one run has one rule" in x)
    assert "run 'g' is judged by pass means reward ≥ 0.6 − 1e-6" in line
    assert "--pass-threshold 0.6" in line and "--run NAME" in line
    assert "reviewer rescore g --pass-threshold 0.8" in line and "Traceback" not in err
    assert len(_outcomes(db, "g")) == 3  # nothing of the file
    code, _, err = run_cli("--db", db, "import", str(path), "--pass-threshold", "0.6")
    assert code == 0, err
    assert len(_outcomes(db, "g")) == 6
    _consistent(db)


@pytest.mark.parametrize(
    ("n", "said"),
    [
        (1, "1 trial whose source said pass or fail keeps its outcome"),
        (2, "2 trials whose source said pass or fail keep their outcome"),
    ],
)
def test_rescore_lines_agree_in_number(n: int, said: str) -> None:
    """'1 trial whose source said pass or fail keep their outcome' read wrong."""
    from reviewer.workflows.rescore import RescoreResult

    result = RescoreResult(
        run="r", threshold=0.5, before="b", after="a", decided=0, own=n, to_pass=0,
        to_fail=0, unreadable=n, passes=0, scored=0, tasks=0, clustered=n, applied=True,
    )  # fmt: skip
    lines = result.lines()
    assert said in lines
    one = n == 1
    assert any(
        line.startswith(f"{n} trial{'' if one else 's'} whose stored record")
        and f"{'keeps its' if one else 'keep their'} outcome (import the file again to fix "
        f"{'it' if one else 'them'})"
        in line
        for line in lines
    )
    assert any(f"{n} changed trial{'' if one else 's'} {'sits' if one else 'sit'} in" in line
               for line in lines)  # fmt: skip


def test_the_audit_after_a_rescore_reads_the_new_outcomes(tmp_path: Path) -> None:
    """The audit read each trial's outcome from its import-time fingerprint, and a rescore left
    the stored audit as it was: after `rescore` to 0.7 the audit's "pass^1 as reported" stayed
    0.00 beside the report's 0.67 on tau-bench's graded grok-3 run (found by a review). The audit
    reads the outcomes the run has now, and a rescore audits the run again."""
    recs = [
        native_trial(f"task{t}", run="graded", trial=i, outcome={"reward": 0.5 + t / 10})
        for t in range(4)
        for i in range(3)
    ]
    db = str(tmp_path / "g.db")
    assert run_cli("--db", db, "import", str(write_jsonl(tmp_path / "g.jsonl", recs)))[0] == 0

    def audited() -> float:
        code, out, err = run_cli("--db", db, "audit", "--run", "graded", "--json")
        assert code == 0, err
        data = json.loads(out)
        return float((data["runs"][0] if "runs" in data else data)["pass_hat_k_reported"])

    def reported(k: int) -> float:
        code, out, err = run_cli("--db", db, "report", "--run", "graded", "--json")
        assert code == 0, err
        return float(json.loads(out)["runs"][0]["average"]["pass_hat_k"][str(k)])

    code, out, _ = run_cli("--db", db, "audit", "--run", "graded", "--json")
    k = int((json.loads(out).get("runs") or [json.loads(out)])[0]["k"])
    before = audited()
    assert before == pytest.approx(reported(k))
    assert run_cli("--db", db, "rescore", "graded", "--pass-threshold", "0.65")[0] == 0
    assert reported(k) == 0.5 and before == 0.0  # tasks 2 and 3 pass now
    assert audited() == pytest.approx(reported(k))
