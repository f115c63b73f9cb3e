"""`reviewer audit`, the audit after every import, and the warnings of `report` and `compare`; real
runs give exactly the findings explained in docs/tour.md (and no false alarm)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.store import open_store
from reviewer.workflows.audit import audit_warnings, stored_audit
from tests.conftest import (
    CORPORA,
    FIXTURES,
    REAL_SAMPLE_RUNS,
    SAMPLE_RUNS,
    imported,
    run_cli,
    write_jsonl,
)
from tests.support.audit_sim import Sim, planted


def test_import_audits_the_new_run_and_says_so_in_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    assert code == 0
    lines = [ln for ln in err.splitlines() if ln.startswith("audit:")]
    assert lines == [
        "audit: sim: 1 leak, 1 copy group, 1 hollow pass (pass^4 0.22, 0.25 with copies counted once) "
        "(see `reviewer audit`)"
    ]


def test_audit_json_names_the_trials_evidence_and_pass_hat_k(tmp_path: Path) -> None:
    run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    code, out, _ = run_cli("--db", "x.db", "audit", "--json")
    assert code == 0
    (run,) = json.loads(out)["runs"]
    assert run["counts"] == {"leak": 1, "copy": 1, "hollow": 1, "order": 0}
    leak = next(f for f in run["findings"] if f["kind"] == "leak")
    assert (leak["detail"]["viewer"]["task_id"], leak["detail"]["viewer"]["trial"]) == (
        "task_00",
        2,
    )
    assert (leak["detail"]["creator"]["task_id"], leak["detail"]["creator"]["trial"]) == (
        "task_00",
        0,
    )
    # the trials are stored ids: the app opens them
    with open_store("x.db") as db:
        ids = {r[0] for r in db.execute("SELECT id FROM trials").fetchall()}
    assert all(t["id"] in ids for f in run["findings"] for t in f["trials"])
    assert run["pass_hat_k_copies_once"] != run["pass_hat_k_reported"]
    assert all(f["evidence"] for f in run["findings"])


def test_audit_text_lists_each_finding_with_its_effect(tmp_path: Path) -> None:
    run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    code, out, _ = run_cli("--db", "x.db", "audit", "--run", "sim")
    assert code == 0
    assert out.splitlines()[0].startswith("sim: 1 leak, 1 copy group, 1 hollow pass")
    assert "[leak] task task_00 trial 2 saw" in out
    assert "with the copies counted once" in out
    assert "with this pass counted as a fail" in out


def test_audit_of_an_unknown_run_is_one_line(tmp_path: Path) -> None:
    run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    code, _, err = run_cli("--db", "x.db", "audit", "--run", "nope")
    assert code != 0
    assert "no run named 'nope'" in err and "Traceback" not in err


def test_report_and_compare_warn_about_flagged_runs(tmp_path: Path) -> None:
    run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    clean = Sim(seed=4, tasks=9, trials=4, run="clean").records()
    run_cli("--db", "x.db", "import", str(write_jsonl(tmp_path / "clean.jsonl", clean)))
    code, out, err = run_cli("--db", "x.db", "report", "--run", "sim")
    assert code == 0 and out.startswith("task ")  # the table keeps its layout on stdout
    assert "warning: run sim: the audit found 1 leak, 1 copy group, 1 hollow pass" in err
    code, out, err = run_cli("--db", "x.db", "report", "--run", "clean", "--json")
    assert json.loads(out)["runs"][0]["audit_warnings"] == []
    code, out, err = run_cli("--db", "x.db", "compare", "clean", "sim", "--json")
    (warning,) = json.loads(out)["audit_warnings"]
    assert warning.startswith("warning: run sim:")


def test_a_run_that_gained_trials_is_audited_again(tmp_path: Path) -> None:
    records = Sim(seed=3, tasks=9, trials=4, random_ids=True).records()
    run_cli("--db", "x.db", "import", str(write_jsonl(tmp_path / "a.jsonl", records[:20])))
    with open_store("x.db") as db:
        first = stored_audit(db, "sim", refresh=False)
        assert first is not None and first.summary["trials"] == 20
    fresh = Sim(seed=99, tasks=9, trials=4, random_ids=True).records()
    more = [dict(r, trial=r["trial"] + 10) for r in fresh[:4]]  # 4 new trials of task_00
    more[1]["messages"] = records[0]["messages"]  # one a copy of a trial already stored
    run_cli("--db", "x.db", "import", str(write_jsonl(tmp_path / "b.jsonl", more)))
    with open_store("x.db") as db:
        again = stored_audit(db, "sim", refresh=False)
        assert again is not None and not again.stale and again.summary["trials"] == 24
        assert again.summary["counts"]["copy"] == 1
        assert audit_warnings(db, ["sim"])[0].startswith("warning: run sim: the audit found")


def test_gate_function_audits_a_run_never_audited(tmp_path: Path) -> None:
    run_cli("--db", "x.db", "import", str(planted(tmp_path / "sim.jsonl")))
    with open_store("x.db") as db:
        with db.transaction():
            db.execute("DELETE FROM audit_findings")
            db.execute("DELETE FROM audit_runs")
        (line,) = audit_warnings(db, ["sim"])
        assert "1 leak" in line
        assert stored_audit(db, "sim", refresh=False) is not None


def test_sample_runs_give_no_finding() -> None:
    sample = imported(SAMPLE_RUNS)
    sample.copy("x.db")
    assert "audit: no finding in 2 runs" in sample.stderr.splitlines()
    _, out, _ = run_cli("--db", "x.db", "audit", "--json")
    assert all(r["findings"] == [] for r in json.loads(out)["runs"])


TAU = CORPORA / "tau-bench" / "gpt-4o-airline.json"


@pytest.mark.skipif(not TAU.exists(), reason="the shared tau-bench corpus is not beside the repo")
def test_real_tau_bench_run_gives_exactly_its_two_hollow_passes() -> None:
    run_cli("--db", "x.db", "import", str(TAU))
    _, out, _ = run_cli("--db", "x.db", "audit", "--json")
    (run,) = json.loads(out)["runs"]
    # tasks 12 and 21 expect no action and no output: a trial where the agent looked nothing up
    # and the user walked away scored 1.0 (see the audit section of docs/tour.md)
    assert run["counts"] == {"leak": 0, "copy": 0, "hollow": 2, "order": 0}
    hollow = {(f["trials"][0]["task_id"], f["trials"][0]["trial"]) for f in run["findings"]}
    assert hollow == {("12", 3), ("21", 1)}


REALWORLD = CORPORA / "realworld"


@pytest.mark.skipif(not REALWORLD.exists(), reason="the shared realworld corpus is not beside it")
def test_realworld_runs_give_no_finding() -> None:
    run_cli("--db", "x.db", "import", str(REALWORLD))
    _, out, _ = run_cli("--db", "x.db", "audit", "--json")
    runs = json.loads(out)["runs"]
    assert len(runs) > 30
    assert [r["run"] for r in runs if r["findings"]] == []


@pytest.mark.parametrize(
    "name", ["tau_bench/grok-3-graded-5-tasks.json", "tau2/airline-small.json"]
)
def test_real_fixtures_give_no_finding(name: str) -> None:
    code, _, err = run_cli("--db", "x.db", "import", str(FIXTURES / name))
    assert code == 0, err
    assert "audit: no finding in 1 run" in err.splitlines()


def test_tau_bench_fixture_gives_only_task_12s_hollow_pass() -> None:
    # tasks 0, 2, 12, 41, 44: a cancellation in task 41 echoes seeded flights, payment ids and birth
    # dates that other trials read with get_reservation_details; none of it is a leak
    run_cli("--db", "x.db", "import", str(FIXTURES / "tau_bench/gpt-4o-airline-5-tasks.json"))
    _, out, _ = run_cli("--db", "x.db", "audit", "--json")
    (run,) = json.loads(out)["runs"]
    assert run["counts"] == {"leak": 0, "copy": 0, "hollow": 1, "order": 0}
    (f,) = run["findings"]
    assert (f["trials"][0]["task_id"], f["trials"][0]["trial"]) == ("12", 3)


def test_gate_warns_under_its_verdict_when_the_new_run_has_findings(tmp_path: Path) -> None:
    clean = Sim(seed=3, tasks=9, trials=4, random_ids=True).records()
    for r in clean:
        r["run"] = "base"
    write_jsonl(tmp_path / "base.jsonl", clean)
    run_cli(
        "--db", "x.db", "import", str(tmp_path / "base.jsonl"), str(planted(tmp_path / "sim.jsonl"))
    )
    code, out, err = run_cli("--db", "x.db", "gate", "sim", "--baseline", "base")
    assert code in (0, 1), err
    lines = out.splitlines()
    assert lines[0].startswith("gate: ")
    assert lines[1].startswith(
        "warning: run sim: the audit found 1 leak, 1 copy group, 1 hollow pass"
    )
    assert not any("run base" in line for line in lines)
    code, out, _ = run_cli("--db", "x.db", "gate", "sim", "--baseline", "base", "--json")
    assert json.loads(out)["audit_warnings"][0].startswith("warning: run sim: the audit found")
    md = tmp_path / "summary.md"
    run_cli("--db", "x.db", "gate", "sim", "--baseline", "base", "--markdown", str(md))
    assert "> warning: run sim: the audit found" in md.read_text()


# Folded in from tests/test_audit_attacks.py:
# Regression test: audit reported a copy group among the generated production stream's unscored
# conversations, whose copies change no figure.


def test_audit_unscored_production_copies_are_no_finding(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(REAL_SAMPLE_RUNS / "generate.py"), "--production", "prod"], check=True
    )
    code, _, err = run_cli("import", "prod")
    assert code == 0, err
    assert "copy group" not in err and "audit: no finding in 1 run" in err
    code, out, err = run_cli("audit", "--run", "production", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    assert run["findings"] == [] and run["counts"]["copy"] == 0


# Folded in from tests/test_audit_unscored.py:
# Regression: `reviewer audit` on an unscored run (production traffic) printed meaningless
# `pass^1 - as reported; - with copies counted once` and `pass^1 - → -` lines.


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
