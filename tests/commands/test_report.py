"""`reviewer report`: the DESIGN.md layout, JSON shape, and the published tau-bench numbers."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from tests.conftest import (
    FIXTURES,
    SAMPLE_RUNS,
    native_trial,
    on_postgres,
    real_data,
    sample_copy,
    write_jsonl,
)

EXAMPLE = """\
task                  pass@1  pass@4  pass^4
refund_simple           1.00    1.00    1.00
refund_partial          0.88    1.00    0.50
address_change          0.75    1.00    0.21
cancel_after_ship       0.50    0.99    0.01
multi_order_lookup      0.62    1.00    0.07
AVERAGE                 0.75    1.00    0.36
"""


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_example_layout_from_design(tmp_path: Path) -> None:
    counts = {
        "refund_simple": 8,
        "refund_partial": 7,
        "address_change": 6,
        "cancel_after_ship": 4,
        "multi_order_lookup": 5,
    }
    recs = [
        native_trial(task, passed=i < c, trial=i + 1, run="support-v1")
        for task, c in counts.items()
        for i in range(8)
    ]
    write_jsonl(tmp_path / "v1.jsonl", recs)
    assert invoke("--db", "x.db", "import", str(tmp_path / "v1.jsonl"))[0] == 0
    code, out, _ = invoke("--db", "x.db", "report", "--run", "support-v1", "--k", "1,4")
    assert code == 0
    # the table as the design fixes it, then the averages' intervals on a line under it
    assert out.startswith(EXAMPLE + "95% interval over tasks: pass@1 ")
    assert out.split("\n")[8] == ""


def test_sample_runs_match_the_example() -> None:
    if not (SAMPLE_RUNS / "support-v1.jsonl").exists():
        pytest.skip("sample runs not generated")
    sample_copy("x.db")
    code, out, _ = invoke("--db", "x.db", "report", "--run", "support-v1", "--k", "1,4")
    assert code == 0
    assert out.startswith(EXAMPLE + "95% interval over tasks: pass@1 ")


TAU_SUBSET = FIXTURES / "tau_bench" / "gpt-4o-airline-5-tasks.json"
# file -> (import line, tasks, pass^1..4, pass@1..4); the full file's are tau-bench's published numbers
TAU_EXPECTED = {
    TAU_SUBSET.name: (
        "imported 20 trials (1 run, 5 tasks)",
        5,
        [0.450, 0.267, 0.200, 0.200],
        [0.450, 0.633, 0.750, 0.800],
    ),
    "gpt-4o-airline.json": (
        "imported 200 trials (1 run, 50 tasks)",
        50,
        [0.420, 0.273, 0.220, 0.200],
        [0.420, 0.567, 0.660, 0.720],
    ),
}


def _by_hand(path: Path, k: int) -> tuple[float, float]:
    """pass^k and pass@k averaged over tasks, straight from the file's rewards (n = 4 per task)."""
    passed: dict[object, list[bool]] = {}
    for rec in json.loads(path.read_text()):
        passed.setdefault(rec["task_id"], []).append(rec["reward"] >= 1 - 1e-6)
    hat = [comb(sum(p), k) / comb(len(p), k) for p in passed.values()]
    at = [1 - comb(len(p) - sum(p), k) / comb(len(p), k) for p in passed.values()]
    return sum(hat) / len(hat), sum(at) / len(at)


@pytest.mark.parametrize("path", real_data(TAU_SUBSET, "tau-bench", "gpt-4o-airline.json"))
def test_tau_bench_published_pass_hat_k(path: Path) -> None:
    imported, tasks, published_hat, published_at = TAU_EXPECTED[path.name]
    code, _, err = invoke("--db", "x.db", "import", str(path))
    assert code == 0, err
    assert imported in err
    code, out, _ = invoke("--db", "x.db", "report", "--k", "1,2,3,4", "--json")
    assert code == 0
    (run,) = json.loads(out)["runs"]
    assert len(run["tasks"]) == tasks and {t["n"] for t in run["tasks"]} == {4}
    hat = [round(run["average"]["pass_hat_k"][str(k)], 3) for k in (1, 2, 3, 4)]
    at = [round(run["average"]["pass_at_k"][str(k)], 3) for k in (1, 2, 3, 4)]
    assert hat == published_hat
    assert at == published_at
    for k in (1, 2, 3, 4):
        assert (hat[k - 1], at[k - 1]) == tuple(round(x, 3) for x in _by_hand(path, k))


def test_default_k_and_json_shape(tmp_path: Path) -> None:
    recs = [native_trial("a", passed=True, trial=i) for i in range(1, 4)]
    recs += [native_trial("b", passed=i == 1, trial=i) for i in range(1, 6)]
    write_jsonl(tmp_path / "r.jsonl", recs)
    invoke("--db", "x.db", "import", str(tmp_path / "r.jsonl"))
    code, out, _ = invoke("--db", "x.db", "report", "--json")
    data = json.loads(out)["runs"][0]
    assert data["k"] == [1, 3]
    assert data["tasks"][0] == {
        "task_id": "a",
        "n": 3,
        "c": 3,
        "pass_at_k": {"1": 1.0, "3": 1.0},
        "pass_hat_k": {"1": 1.0, "3": 1.0},
    }
    assert data["average"]["pass_hat_k"]["1"] == pytest.approx((1 + 0.2) / 2)


def test_tasks_with_too_few_trials_are_left_out_and_the_report_says_so(tmp_path: Path) -> None:
    recs = [native_trial("a", passed=True, trial=i) for i in range(1, 5)]
    recs += [native_trial("b", passed=False, trial=1)]
    write_jsonl(tmp_path / "r.jsonl", recs)
    invoke("--db", "x.db", "import", str(tmp_path / "r.jsonl"))
    code, out, _ = invoke("--db", "x.db", "report", "--k", "1,4")
    assert code == 0
    lines = out.split("\n\n")[0].splitlines()
    assert lines[2].split() == ["b", "0.00", "-", "-"]
    assert lines[3].split() == ["AVERAGE", "0.50", "1.00", "1.00"]
    assert "the k=4 averages use 1 of 2 tasks; 1 with fewer than 4 trials are left out" in out
    code, out, _ = invoke("--db", "x.db", "report", "--k", "1,4", "--json")
    avg = json.loads(out)["runs"][0]["average"]
    assert avg["tasks_left_out"] == {"1": 0, "4": 1}
    assert json.loads(out)["runs"][0]["tasks"][1]["pass_hat_k"]["4"] is None


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    code, _, err = invoke("--db", "x.db", "report")
    missing = "no runs in" if on_postgres() else "no database"  # a test's name for a database
    assert code == 1 and err.startswith(f"reviewer: {missing} x.db; import some first")
    assert not Path("x.db").exists()  # a report on a mistyped --db leaves no file behind
    write_jsonl(tmp_path / "r.jsonl", [native_trial("a")])
    invoke("--db", "x.db", "import", str(tmp_path / "r.jsonl"))
    code, _, err = invoke("--db", "x.db", "report", "--run", "nope")
    assert code == 1 and "no run named 'nope'; runs: 'r1'" in err
    code, _, err = invoke("--db", "x.db", "report", "--k", "x")
    assert code == 2 and "comma-separated" in err


def test_inspect_logs_in_both_forms_give_inspects_numbers() -> None:
    for name in ("support.eval", "support.json"):
        path = FIXTURES / "inspect" / name
        code, _, err = invoke("--db", f"{name}.db", "import", str(path))
        assert code == 0, err
        code, out, _ = invoke("--db", f"{name}.db", "report", "--k", "1,2,4", "--json")
        avg = json.loads(out)["runs"][0]["average"]
        assert [round(avg["pass_hat_k"][k], 4) for k in ("1", "2", "4")] == [0.625, 0.4167, 0.25]
        assert [round(avg["pass_at_k"][k], 4) for k in ("1", "2", "4")] == [0.625, 0.8333, 1.0]


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "bad.db").write_bytes(b"this is not sqlite" * 100)
    code, _, err = invoke("--db", str(tmp_path / "bad.db"), "report")
    assert code == 1
    assert "not a reviewer database" in err


def test_a_long_run_lists_its_worst_tasks_and_all_lists_every_one(tmp_path: Path) -> None:
    """A run of 80 tasks lists the 50 with the lowest pass^k, worst first, says how many more it
    has and that the averages are over all; --all and --json give every task."""
    recs = []
    for t in range(80):
        passes = 4 if t % 3 else t % 4  # tasks 0, 3, 6, ... pass fewer than all 4 trials
        for i in range(4):
            recs.append(native_trial(f"task{t:02d}", passed=i < passes, trial=i + 1, run="big"))
    db = str(tmp_path / "r.db")
    invoke("--db", db, "import", str(write_jsonl(tmp_path / "big.jsonl", recs)))
    code, out, err = invoke("--db", db, "report")
    assert code == 0, err
    table = out.split("\n\n")[0].splitlines()
    rows = [line.split() for line in table[1:] if line.startswith("task")]
    assert len(rows) == 50
    pass_hat = [float(r[-1]) for r in rows]
    assert pass_hat == sorted(pass_hat) and pass_hat[0] == 0.0  # worst first
    weak = {f"task{t:02d}" for t in range(0, 80, 3)}
    assert weak <= {r[0] for r in rows}  # every task below 1.00 is listed
    assert "… 30 more tasks not listed (pass^4 1.00 to 1.00): the 50 with the lowest pass^4" in out
    average = next(line for line in table if line.startswith("AVERAGE")).split()
    every = sum(1.0 if t % 3 else 0.0 for t in range(80)) / 80  # pass^4 is 1 or 0 here
    assert float(average[-1]) == pytest.approx(every, abs=0.005)
    assert "… 30 more tasks not listed (--all); ALL is over every task" in out
    distribution_rows = [line for line in out.split("\n\n")[1].splitlines() if line[:4] == "task"]
    assert len(distribution_rows) == 1 + 50  # the header, then the listed tasks
    code, out, _ = invoke("--db", db, "report", "--all")
    assert code == 0 and "more tasks not listed" not in out
    assert sum(1 for line in out.split("\n\n")[0].splitlines() if line.startswith("task")) == 81
    code, out, _ = invoke("--db", db, "report", "--json")
    assert len(json.loads(out)["runs"][0]["tasks"]) == 80


def test_a_name_with_a_tab_or_a_newline_keeps_every_table_row_on_one_line(tmp_path: Path) -> None:
    """Task ids and run names are data: a tab or a newline in one is shown (⏎), never laid out,
    in the report's tables, its run lines and the trials list."""
    hollow = [{"role": "user", "content": "hi"}]  # a pass with no answer: the audit names the run
    recs = [
        native_trial(task, passed=p, trial=1, run=run, messages=hollow)
        for run in ("r\none", "r2")
        for task, p in (("a\tb\nc", True), ("plain", False))
    ]
    data = write_jsonl(tmp_path / "runs.jsonl", recs)
    db = str(tmp_path / "r.db")
    code, _, err = invoke("--db", db, "import", str(data))
    assert code == 0, err
    assert "r ⏎ one" in err and not any(line.startswith("one") for line in err.splitlines()), err
    for args in (("report",), ("trials",), ("audit",)):
        code, out, err = invoke("--db", db, *args)
        assert code == 0, err
        lines = out.splitlines() + err.splitlines()
        assert args == ("audit",) or any("a    b ⏎ c" in line for line in lines), out
        assert not any(line.startswith(("c ", "one", "b")) for line in lines), (out, err)
    code, out, _ = invoke("--db", db, "report")
    assert "run r ⏎ one: 2 tasks, 2 trials" in out


def test_long_task_ids_are_cut_in_the_middle_unless_two_would_look_alike(tmp_path: Path) -> None:
    """A task id of hundreds of characters would push every number off the screen: the report's
    tables, compare's and the trials list keep its two ends (the number that tells tasks apart is
    often last); ids that only their middle tells apart stay whole; --json has every id whole."""
    stem = "very_long_task_identifier_" * 12
    recs = [
        native_trial(f"{stem}{t}", passed=(t + k) % 2 == 0, trial=k, run=run)
        for run in ("old", "new")
        for t in range(3)
        for k in (1, 2)
    ]
    db = str(tmp_path / "r.db")
    code, _, err = invoke("--db", db, "import", str(write_jsonl(tmp_path / "runs.jsonl", recs)))
    assert code == 0, err
    for args in (("report", "--run", "old"), ("compare", "old", "new"), ("trials",)):
        code, out, err = invoke("--db", db, *args)
        assert code == 0, err
        rows = [line for line in out.splitlines() if "very_long" in line]
        assert len(rows) >= 3 and all(len(line) < 160 for line in rows), out
        assert all(
            "…" in line and line.split()[2 * (args == ("trials",))].endswith(("_0", "_1", "_2"))
            for line in rows
        ), out
        assert stem not in out
    code, out, _ = invoke("--db", db, "report", "--run", "old", "--json")
    assert {t["task_id"] for t in json.loads(out)["runs"][0]["tasks"]} == {
        f"{stem}{t}" for t in range(3)
    }
    # three ids alike but for their middle: each cut around where they differ, none alike
    middle = [f"{'a' * 40}{t}{'b' * 40}" for t in range(3)]
    recs = [native_trial(m, passed=True, trial=1, run="mid") for m in middle]
    invoke("--db", db, "import", str(write_jsonl(tmp_path / "mid.jsonl", recs)))
    code, out, _ = invoke("--db", db, "report", "--run", "mid")
    names = [line.split()[0] for line in out.splitlines() if line.startswith("a")]
    assert len(set(names)) == 3 and all(len(n) <= 60 and "…" in n for n in names), out
    code, out, _ = invoke("--db", db, "trials", "--run", "mid")
    names = [line.split()[2] for line in out.splitlines()[1:]]
    assert len(set(names)) == 3 and all(len(n) <= 32 and "…" in n for n in names), out
    # a long reason, the trials list's last column, says where it is cut
    why = {"passed": False, "reason": "the agent refunded the wrong order " * 4}
    invoke(
        "--db",
        db,
        "import",
        str(write_jsonl(tmp_path / "why.jsonl", [native_trial("w", run="why", outcome=why)])),
    )
    code, out, _ = invoke("--db", db, "trials", "--run", "why")
    line = out.splitlines()[1]
    assert line.endswith("wrong order the agent refunded the w…") and "  the agent" in line, out


def test_a_run_with_no_scored_trial_says_so_plainly(tmp_path: Path) -> None:
    """Every trial unscored (a production log, an OpenHands run without a report): no average to
    bound, no flakiness to tell, and the unknown latency said without a count of zero for cost."""
    recs = [native_trial(t, trial=1, outcome=None, usage={"cost_usd": 0.01}) for t in ("a", "b")]
    db = str(tmp_path / "r.db")
    code, _, err = invoke("--db", db, "import", str(write_jsonl(tmp_path / "u.jsonl", recs)))
    assert code == 0, err
    code, out, err = invoke("--db", db, "report")
    assert code == 0, err
    assert "note: no task has a scored trial: no k=1 average" in out, out
    assert "fewer than 1" not in out and "with each at 0 or at 1" not in out, out
    assert "note: latency unknown for 2 trials" in out and "cost unknown" not in out, out
    assert "Where the flakiness comes from: no scored trial to tell a flaky task by" in out, out


def test_all_row_leaves_out_crashed_trials_as_the_task_rows_do(tmp_path: Path) -> None:
    """Two tasks of (pass, fail, infra) where only the crashed trials had a tool error: every
    task row showed 2 trials and 0.0%, the ALL row 6 trials and 33.3% (found by an attack)."""

    def messages(error: bool) -> list[dict[str, object]]:
        call = {"id": "c1", "name": "get", "arguments": {}}
        return [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "x", "is_error": error},
            {"role": "assistant", "content": "ok"},
        ]

    outcomes = [{"passed": True}, {"passed": False}, {"infra_error": True}]
    rows = [
        {
            "run": "i",
            "task_id": t,
            "trial": k + 1,
            "outcome": o,
            "messages": messages(k == 2),
            "usage": {"cost_usd": 1.0},
            "latency_s": 1.0,
        }
        for t in "AB"
        for k, o in enumerate(outcomes)
    ]
    invoke("--db", "x.db", "import", str(write_jsonl(tmp_path / "i.jsonl", rows)))
    code, out, _ = invoke("--db", "x.db", "report", "--run", "i")
    assert code == 0
    table = out.split("\n\n")[1].splitlines()
    cells = {line.split()[0]: line.split() for line in table[1:4]}
    assert [cells[t][1] for t in ("A", "B", "ALL")] == ["2", "2", "4"]
    assert [cells[t][-2] for t in ("A", "B", "ALL")] == ["0.0%", "0.0%", "0.0%"]
    assert "note: 2 trials ended by infrastructure errors, left out" in table
    _, out, _ = invoke("--db", "x.db", "report", "--run", "i", "--json")
    run = json.loads(out)["runs"][0]["distributions"]["run"]
    assert (run["n_trials"], run["measured"], run["tool_calls"]) == (6, 4, 4)
    assert run["tool_error_rate"] == 0.0


def test_rules_counts_leave_out_crashed_trials_as_the_report_does(tmp_path: Path) -> None:
    """`rules` listed a rule broken by 2 trials the harness crashed while the report said 0 of 4
    (found by a review): both leave crashed trials out."""
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nid = "no-get"\ntype = "forbid_tool"\ntool = "get"\n')

    def messages(called: bool) -> list[dict[str, object]]:
        out: list[dict[str, object]] = [{"role": "user", "content": "hi"}]
        if called:
            call = {"id": "c1", "name": "get", "arguments": {}}
            out += [
                {"role": "assistant", "content": "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "c1", "content": "x"},
            ]
        return [*out, {"role": "assistant", "content": "ok"}]

    outcomes = [{"passed": True}, {"passed": False}, {"infra_error": True}]
    rows = [
        {"run": "i", "task_id": t, "trial": k + 1, "outcome": o, "messages": messages(k == 2)}
        for t in "AB"
        for k, o in enumerate(outcomes)
    ]
    assert invoke("--db", "x.db", "rules", str(rules))[0] == 0
    invoke("--db", "x.db", "import", str(write_jsonl(tmp_path / "i.jsonl", rows)))
    code, out, _ = invoke("--db", "x.db", "rules")
    assert code == 0 and "none broken" in out
    _, out, _ = invoke("--db", "x.db", "report", "--run", "i")
    assert "no-get 0.0% (0 of 4)" in out


def _reported_tasks(tmp_path: Path, recs: list[dict[str, Any]]) -> list[str]:
    """The task ids of `reviewer report`'s first table, RECS imported, in the order listed."""
    db = str(tmp_path / "r.db")
    invoke("--db", db, "import", str(write_jsonl(tmp_path / "r.jsonl", recs)))
    code, out, err = invoke("--db", db, "report")
    assert code == 0, err
    table = out.split("\n\n")[0].splitlines()
    return [line.split()[0] for line in table[1:] if line.split()]


def test_tied_worst_tasks_are_listed_in_the_order_of_their_numbers(tmp_path: Path) -> None:
    """Tasks numbered 0..59 that all fail were listed 0, 1, 10, 11, ... (ids sorted as text): now
    0, 1, 2, ..., the 50 lowest numbers."""
    recs = [
        native_trial(str(t), passed=False, trial=i + 1, run="r")
        for t in range(60)
        for i in range(2)
    ]
    ids = _reported_tasks(tmp_path, recs)
    assert [i for i in ids if i.isdigit()] == [str(t) for t in range(50)]


def test_a_task_numbered_past_python_s_int_text_limit_is_sorted_not_a_crash(
    tmp_path: Path,
) -> None:
    """A task id of 5,000 digits stopped the report with an internal error (the tied worst tasks
    were sorted by their numbers made ints, and Python reads no more than 4,300 digits)."""
    huge = "9" * 5000
    recs = [
        native_trial(t, passed=False, trial=i + 1, run="r")
        for t in [f"t{huge}", f"t1{huge}", *(f"t{n}" for n in range(60))]
        for i in range(2)
    ]
    ids = _reported_tasks(tmp_path, recs)
    assert ids[:3] == ["t0", "t1", "t2"] and ids[9:11] == ["t9", "t10"]
