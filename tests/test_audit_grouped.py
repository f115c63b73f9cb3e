"""A run whose trials all share one environment: each trial that saw others' state is one leak (the
first creator named, the rest counted), only the first MAX_KEPT findings of a kind are kept and
stored, and every report says how many more there are. Regression tests for issue 27 part 11
(20,000 such trials gave 998,725 findings, 4.3 GB of memory and a 1.1 GB database)."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer.metrics.audit_types import MAX_KEPT
from reviewer.store import open_store
from tests.conftest import run_cli, write_jsonl
from tests.support.audit_sim import Sim, audit, shared_records

N = 600  # 150 tasks x 4 trials, 10 users: most trials see bookings of other trials


def test_a_shared_environment_gives_one_leak_per_viewer_and_keeps_the_first_hundred() -> None:
    result = audit(shared_records(N), run="shared")
    leaks = [f for f in result.findings if f.kind == "leak"]
    counts = result.counts()
    assert len(leaks) == MAX_KEPT == 100
    assert result.not_kept == {"leak": counts["leak"] - MAX_KEPT}
    # trials 1-3 of every task saw trial 0's booking, which trial 0's own lookup lacked (trial 0
    # saw only what every later trial of its task saw too): one leak each, not one per (viewer,
    # creator) pair (there are thousands of those)
    assert counts["leak"] == 3 * N // 4
    viewers = [f.detail["viewer"]["id"] for f in leaks]
    assert len(set(viewers)) == len(viewers)
    crowded = [f for f in leaks if "other_creators" in f.detail]
    assert crowded
    f = crowded[-1]
    others = f.detail["other_creators"]
    assert others["trials"] >= 1 and others["values"] >= others["trials"]
    assert any(e.startswith("it also saw ") for e in f.evidence)
    # the kept findings still carry their own adjusted pass^k
    assert all(f.adjusted is not None for f in leaks)
    summary = result.to_dict()
    assert summary["counts"]["leak"] == counts["leak"]
    assert summary["not_stored"]["leak"] == counts["leak"] - MAX_KEPT
    assert summary["stored_per_kind"] == MAX_KEPT and len(summary["findings"]) == MAX_KEPT


def test_a_viewer_of_two_creators_is_one_leak_naming_the_first() -> None:
    sim = Sim(seed=3, tasks=12, trials=4, random_ids=True)
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_leak(("task_00", 2), ("task_00", 3))  # trial 3 sees trial 0's and trial 2's
    result = audit(sim.records())
    by_viewer = {f.detail["viewer"]["trial"]: f for f in result.findings if f.kind == "leak"}
    assert sorted(by_viewer) == [2, 3]
    three = by_viewer[3]
    assert three.detail["creator"]["trial"] == 0  # the earliest creator before it
    assert three.detail["other_creators"]["trials"] == 1
    assert three.detail["other_creators"]["first"][0]["trial"] == 2
    assert result.not_kept == {}


def test_cli_and_store_keep_the_cap_and_say_how_many_more(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "shared.jsonl", shared_records(N))
    db = str(tmp_path / "a.db")
    code, _, err = run_cli("--db", db, "import", str(tmp_path / "shared.jsonl"))
    assert code == 0, err
    with open_store(db) as store:
        (stored,) = store.execute("SELECT COUNT(*) FROM audit_findings").fetchone()
    assert stored == MAX_KEPT
    code, out, err = run_cli("--db", db, "audit", "--run", "shared", "--json")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    more = run["not_stored"]["leak"]
    assert more > 0 and run["counts"]["leak"] == MAX_KEPT + more
    code, out, err = run_cli("--db", db, "audit", "--run", "shared")
    assert code == 0, err
    assert f"{run['counts']['leak']} leaks" in out.splitlines()[0]
    assert f"{more:,} more leaks not stored (the first {MAX_KEPT} of each kind are)" in out
    assert out.count("[leak]") == MAX_KEPT
    code, _, err = run_cli("--db", db, "report")
    assert f"the audit found {run['counts']['leak']} leaks" in err
