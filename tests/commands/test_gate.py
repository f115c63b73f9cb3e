"""`reviewer baseline` and `reviewer gate`: exit codes 0 / 1 / 2, the one-line reason, budgets,
RED FLAGs, --import, --json, --markdown, and JUnit XML valid under the Jenkins JUnit schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, SAMPLE_RUNS, native_trial, run_cli, write_jsonl
from tests.support.xsd_subset import validate

XSD = FIXTURES / "junit" / "junit-10.xsd"


def _run(
    run: str,
    outcomes: dict[str, list[bool]],
    cost: float = 0.01,
    latency: float = 5.0,
    cancel: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Native trials of ``run``: per task, one trial per outcome."""
    out = []
    for task, results in outcomes.items():
        for i, ok in enumerate(results, 1):
            rec = native_trial(task, ok, run=run, trial=i)
            rec["usage"] = {"cost_usd": cost}
            rec["latency_s"] = latency
            if cancel and task in cancel:
                rec["messages"] = [
                    *rec["messages"][:2],
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": "x", "name": "cancel_order", "arguments": {}}],
                    },
                    {"role": "tool", "tool_call_id": "x", "name": "cancel_order", "content": "ok"},
                ]
            out.append(rec)
    return out


#: 12 tasks: enough for compare's noise check (it needs 10 shared tasks to call a row worse)
GOOD = {f"t{i:02d}": [True] * 8 for i in range(1, 13)}
#: five tasks newly failing and one falling to 2 of 8: worse beyond noise
DROP = {f"t{i:02d}": [False] * 8 for i in range(1, 6)} | {"t06": [True] * 2 + [False] * 6}


def _setup(tmp_path: Path, new: dict[str, list[bool]], **kw: Any) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    write_jsonl(tmp_path / "new.jsonl", _run("new", new, **kw))
    code, _, err = run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    assert code == 0, err
    code, out, err = run_cli("baseline", "set", "base")
    assert code == 0, err


def test_gate_passes_when_nothing_regressed(tmp_path: Path) -> None:
    _setup(tmp_path, GOOD)
    code, out, err = run_cli("gate", "new")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("gate: PASS: new vs baseline base: nothing regressed")
    table = [line for line in out.splitlines()[1:] if not line.startswith("warning: ")]
    assert table[0] == "" and "check" in table[1] and "result" in table[1]


def test_gate_fails_on_a_reliability_drop_with_one_line_reason(tmp_path: Path) -> None:
    _setup(tmp_path, GOOD | DROP)
    code, out, err = run_cli("gate", "new", "--k", "4")
    assert code == 1, err
    first = out.splitlines()[0]
    assert first.startswith("gate: FAIL: new vs baseline base: pass^4 (overall) fell 1.00 -> 0.50")
    assert "pass@1 fell 1.00 -> 0.52" in first
    assert first.endswith("; 6 tasks fell beyond noise (t01, t02, t03, ...)")
    assert "REGRESSED" in out
    # each task's one-sided Fisher p, Holm-adjusted over the 12 tasks tested
    assert (
        "tasks whose pass rate fell beyond noise (Fisher, Holm-adjusted p < 0.05) (6; 12 tasks"
        in out
    )
    assert (
        "t01: pass rate fell beyond noise: 8/8 -> 0/8 passed (Fisher p = 7.8e-05, Holm-adjusted 0.00093)"
        in out
    )
    assert (
        "t06: pass rate fell beyond noise: 8/8 -> 2/8 passed (Fisher p = 0.0035, Holm-adjusted 0.024)"
        in out
    )


def test_gate_passes_a_drop_within_noise_and_says_so(tmp_path: Path) -> None:
    """A task falling 8/8 -> 5/8 of twelve is within noise (Fisher p = 0.1): not a regression, but
    a warning the text names and JUnit skips with its reason, never a failed case."""
    _setup(tmp_path, GOOD | {"t05": [True] * 5 + [False] * 3})
    code, out, err = run_cli("gate", "new", "--k", "4", "--junit", "j.xml")
    assert code == 0, err
    assert out.startswith("gate: PASS: new vs baseline base: nothing regressed")
    assert "within noise" in out
    assert "dropped within noise (1; warnings, not failures):\n  t05 (8/8 -> 5/8)" in out
    xml = Path("j.xml").read_text(encoding="utf-8")
    assert 'failures="0"' in xml
    assert "warning: newly flaky, within noise: 8/8 -&gt; 5/8 passed (Fisher p = 0.1" in xml


def test_a_task_newly_failing_1_of_4_to_0_of_4_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    """The issue's case: "newly fails" from 1/4 to 0/4 is well within noise (Fisher p = 0.5); the
    gate passes, names it, and JUnit skips its case with the reason."""
    base = {f"t{i:02d}": [True] * 4 for i in range(1, 13)} | {"t05": [True] + [False] * 3}
    new = base | {"t05": [False] * 4}
    write_jsonl(tmp_path / "base.jsonl", _run("base", base))
    write_jsonl(tmp_path / "new.jsonl", _run("new", new))
    assert run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))[0] == 0
    assert run_cli("baseline", "set", "base")[0] == 0
    code, out, err = run_cli("gate", "new", "--k", "4", "--junit", "j.xml")
    assert code == 0, err
    assert out.startswith("gate: PASS: new vs baseline base: nothing regressed")
    assert "dropped within noise (1; warnings, not failures):\n  t05 (1/4 -> 0/4)" in out
    xml = Path("j.xml").read_text(encoding="utf-8")
    assert 'failures="0"' in xml and "0/4 passed (Fisher p = 0.5" in xml


def test_one_task_collapsing_fails_the_gate_though_the_average_is_within_noise(
    tmp_path: Path,
) -> None:
    """One task of twelve going 8/8 -> 0/8 leaves pass^k's average within noise, but the task itself
    fell beyond noise (Fisher p = 7.8e-05, 9.3e-04 after Holm over 12): the gate fails, and the
    verdict, the exit code, the Markdown and the JUnit say the same."""
    _setup(tmp_path, GOOD | {"t05": [False] * 8})
    code, out, err = run_cli("gate", "new", "--k", "4", "--junit", "j.xml", "--markdown", "g.md")
    assert code == 1, err
    first = out.splitlines()[0]
    assert first == "gate: FAIL: new vs baseline base: 1 task fell beyond noise (t05)"
    assert "within noise" in out  # the average's row
    assert 'failures="1"' in Path("j.xml").read_text(encoding="utf-8")
    assert Path("g.md").read_text(encoding="utf-8").startswith("## reviewer gate: FAIL")


def test_gate_exit_2_on_usage_and_data_errors(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    run_cli("import", str(tmp_path / "base.jsonl"))
    code, _, err = run_cli("gate", "base")
    assert code == 2 and "no baseline set" in err
    code, _, err = run_cli("baseline", "set", "nope")
    assert code == 1 and "no run named 'nope'" in err
    run_cli("baseline", "set", "base")
    code, _, err = run_cli("gate", "nope")
    assert code == 2 and "no run named 'nope'" in err
    code, _, err = run_cli("gate", "base")
    assert code == 2 and "is the baseline itself" in err
    code, _, err = run_cli("gate")
    assert code == 2 and "name the run to gate" in err
    code, _, err = run_cli("gate", "base", "--k", "0")
    assert code == 2 and "--k must be from 1 to 1000" in err
    code, _, err = run_cli("gate", "--import", str(tmp_path / "missing.jsonl"))
    assert code == 2 and "missing.jsonl" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ("max_cost = 1", "[gate] max_cost: unknown setting"),
        ("max_cost_per_task = -1", "[gate] max_cost_per_task: must be a number above 0"),
        ("max_tool_error_rate = 2", "[gate] max_tool_error_rate: a rate between 0 and 1"),
        ('max_avg_steps_ratio = "x"', "[gate] max_avg_steps_ratio: must be a number above 0"),
        ("k = 0", "[gate] k: a whole number from 1 to 1,000, got 0"),
        ('trial_url = "https://ci"', "[gate] trial_url: must be a string holding {trial_id}"),
        ('budget_noise = "yes"', "[gate] budget_noise: true or false, got 'yes'"),
        ('new_forbidden = "never"', '[gate] new_forbidden: "red flag" or "test", got \'never\''),
    ],
)
def test_gate_config_errors_name_the_key(tmp_path: Path, toml: str, expected: str) -> None:
    _setup(tmp_path, GOOD)
    (tmp_path / "reviewer.toml").write_text(f"[gate]\n{toml}\n", encoding="utf-8")
    code, out, err = run_cli("gate", "new")
    assert code == 2
    assert expected in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_gate_budget_absolute_and_ratio(tmp_path: Path) -> None:
    _setup(tmp_path, GOOD, cost=0.03, latency=12.0)
    (tmp_path / "reviewer.toml").write_text(
        "[gate]\nmax_cost_per_task = 0.02\nmax_p95_latency_ratio = 2.0\nmax_avg_steps = 50\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("gate", "new")
    assert code == 1, err
    first = out.splitlines()[0]
    assert "cost / task $0.030 over max_cost_per_task $0.020" in first
    assert "p95 latency 5.0s -> 12.0s (x2.40) over max_p95_latency_ratio 2" in first
    assert "steps" not in first  # within its budget
    assert "OVER BUDGET" in out
    # within every budget: exit 0
    (tmp_path / "reviewer.toml").write_text(
        "[gate]\nmax_cost_per_task = 0.05\nmax_p95_latency_ratio = 2.5\n", encoding="utf-8"
    )
    code, out, _ = run_cli("gate", "new")
    assert code == 0 and "within budgets" in out.splitlines()[0]


def test_gate_red_flag_when_a_forbidden_rule_rises(tmp_path: Path) -> None:
    (tmp_path / "rules.toml").write_text(
        '[[rule]]\nid = "never-cancel"\ntype = "forbid_tool"\ntool = "cancel_order"\n'
        'severity = "forbidden"\n',
        encoding="utf-8",
    )
    run_cli("rules", str(tmp_path / "rules.toml"))
    _setup(tmp_path, GOOD, cancel={"t03"})
    code, out, _ = run_cli("gate", "new")
    assert code == 1
    first = out.splitlines()[0]
    assert "rule never-cancel rose 0.0% -> 8.3% (RED FLAG: the baseline never broke it)" in first
    assert "rule never-cancel: 0 of 96 -> 8 of 96 trials: the baseline never broke it" in out


def test_gate_import_then_gate_in_one_line(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    run_cli("import", str(tmp_path / "base.jsonl"))
    run_cli("baseline", "set", "base")
    write_jsonl(tmp_path / "ci.jsonl", _run("ci-1234", GOOD | DROP))
    code, out, err = run_cli("gate", "--import", str(tmp_path / "ci.jsonl"), "--json")
    assert code == 1, err
    data = json.loads(out)
    assert data["new"] == "ci-1234" and data["baseline"] == "base"
    assert data["verdict"] == "fail" and data["exit_code"] == 1
    assert data["regressed_tasks"] == ["t01", "t02", "t03", "t04", "t05", "t06"]
    assert "imported 96 new trials" in err
    task = next(t for t in data["tasks"] if t["task_id"] == "t05")
    assert len(task["failed_trials"]) == 3  # links to the first three failed trials


def test_gate_junit_is_valid_under_the_jenkins_schema(tmp_path: Path) -> None:
    hostile = "t\x1b]0;x\x07<&>\"'|[b]"
    new = {**GOOD, **DROP, hostile: [False] * 8}
    write_jsonl(tmp_path / "base.jsonl", _run("base", {**GOOD, hostile: [True] * 8}))
    write_jsonl(tmp_path / "new.jsonl", _run("new", {**new, "extra": [True] * 8}))
    run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    run_cli("baseline", "set", "base")
    code, _, err = run_cli("gate", "new", "--junit", "out.xml", "--markdown", "out.md")
    assert code == 1, err
    xml = Path("out.xml").read_text(encoding="utf-8")
    assert validate(xml, XSD) == []
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml)
    suites = root.findall("testsuite")
    tasks = suites[1]
    cases = {c.get("name"): c for c in tasks.findall("testcase")}
    assert cases["t01"].find("failure") is not None
    assert cases["t07"].find("failure") is None and cases["t07"].find("skipped") is None
    assert cases["extra"].find("skipped") is not None  # not in the baseline
    assert tasks.get("tests") == str(len(cases)) and tasks.get("failures") == "7"
    assert "\x1b" not in xml and "␛]0;x␇" in xml
    md = Path("out.md").read_text(encoding="utf-8")
    assert md.startswith("## reviewer gate: FAIL\n")
    assert "| t01 | 8/8 | 0/8 |" in md
    assert "\\|\\[b\\]" in md and "&lt;&amp;&gt;" in md  # data never becomes Markdown or HTML


def test_the_schema_check_catches_broken_documents() -> None:
    """The checker is not a rubber stamp: each rule of the schema is enforced."""
    ok = '<testsuites><testsuite tests="1"><testcase name="a"/></testsuite></testsuites>'
    assert validate(ok, XSD) == []
    assert validate("<testsuites><testsuite><testcase name='a'/></testsuite></testsuites>", XSD)
    assert validate('<testsuites><testsuite tests="1"><testcase/></testsuite></testsuites>', XSD)
    assert validate('<testsuites><testcase name="a"/></testsuites>', XSD)
    assert validate('<testsuites bogus="1"/>', XSD)
    assert validate('<testsuites><testsuite tests="1">text</testsuite></testsuites>', XSD)
    assert validate("<report/>", XSD)


def test_baseline_show_and_history(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", _run("a", GOOD))
    write_jsonl(tmp_path / "b.jsonl", _run("b", GOOD))
    run_cli("import", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"))
    code, out, err = run_cli("baseline", "show")
    assert code == 1 and "no baseline set" in err
    run_cli("--labeler", "ana", "baseline", "set", "a", "--note", "release 1")
    run_cli("baseline", "set", "b")
    code, out, _ = run_cli("baseline", "show", "--json")
    assert json.loads(out)["baseline"]["run"] == "b"
    code, out, _ = run_cli("baseline", "history", "--json")
    hist = json.loads(out)["history"]
    assert [h["run"] for h in hist] == ["b", "a"]
    assert hist[1]["set_by"] == "ana" and hist[1]["note"] == "release 1"
    # --baseline overrides the stored one
    code, out, _ = run_cli("gate", "b", "--baseline", "a")
    assert code == 0 and "b vs baseline a" in out


def test_fisher_one_sided_matches_scipy() -> None:
    import random

    from scipy.stats import fisher_exact

    from reviewer.metrics.fisher import fisher_one_sided

    rng = random.Random(0)
    cases = [(8, 8, 2, 8), (5, 8, 3, 8), (3, 6, 6, 6), (0, 4, 0, 4), (10, 12, 4, 9)]
    cases += [(3300, 3500, 470, 500), (3450, 3500, 340, 500)]
    for _ in range(300):
        on, nn = rng.randint(1, 80), rng.randint(1, 80)
        cases.append((rng.randint(0, on), on, rng.randint(0, nn), nn))
    for oc, on, nc, nn in cases:
        ref = fisher_exact([[oc, on - oc], [nc, nn - nc]], alternative="greater").pvalue
        assert fisher_one_sided(oc, on, nc, nn) == pytest.approx(ref, rel=1e-9)


def test_gate_import_reports_bad_lines_and_gates_the_rest(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    run_cli("import", str(tmp_path / "base.jsonl"))
    run_cli("baseline", "set", "base")
    lines = [json.dumps(r) for r in _run("new", GOOD)]
    lines.insert(2, '{"task_id": "t01", "messages": []}')  # no outcome
    (tmp_path / "new.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run_cli("gate", "--import", str(tmp_path / "new.jsonl"))
    assert code == 0, err
    assert f"{tmp_path / 'new.jsonl'}:3: missing outcome" in err
    assert out.startswith("gate: PASS: new vs baseline base")


def _forbid(tmp_path: Path) -> None:
    (tmp_path / "rules.toml").write_text(
        '[[rule]]\nid = "never-cancel"\ntype = "forbid_tool"\ntool = "cancel_order"\n'
        'severity = "forbidden"\n',
        encoding="utf-8",
    )
    run_cli("rules", str(tmp_path / "rules.toml"))


def test_a_forbidden_rule_still_broken_at_the_old_rate_warns_and_passes(tmp_path: Path) -> None:
    """The issue's case: a forbidden tool in both runs at about the same rate (exact p = 0.5) is a
    warning under the verdict and a skipped JUnit case, not a RED FLAG and not exit 1."""
    _forbid(tmp_path)
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD, cancel={"t03"}))
    write_jsonl(tmp_path / "new.jsonl", _run("new", GOOD, cancel={"t03"}))
    run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    run_cli("baseline", "set", "base")
    code, out, err = run_cli("gate", "new", "--junit", "j.xml")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("gate: PASS")
    assert lines[1] == (
        "warning: forbidden-tool rate still broken: 8.3% -> 8.3% (8 of 96 -> 8 of 96 trials: "
        "still broken, not a rise, one-sided exact p = 1)"
    )
    assert "RED FLAG" not in out
    xml = Path("j.xml").read_text(encoding="utf-8")
    assert validate(xml, XSD) == []
    assert 'message="warning: still broken: 8.3% -&gt; 8.3%' in xml


def test_new_forbidden_test_setting_makes_a_first_break_within_noise_a_warning(
    tmp_path: Path,
) -> None:
    """One trial in 96 breaking a rule the baseline never broke: a RED FLAG by default, a warning
    with [gate] new_forbidden = "test" (exact p = 0.5), and a RED FLAG again when beyond noise."""
    _forbid(tmp_path)
    one = _run("new", GOOD)
    one[0] = _run("new", {"t01": [True]}, cancel={"t01"})[0]
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    write_jsonl(tmp_path / "new.jsonl", one)
    write_jsonl(tmp_path / "many.jsonl", _run("many", GOOD, cancel={"t03"}))
    run_cli("import", *(str(tmp_path / f) for f in ("base.jsonl", "new.jsonl", "many.jsonl")))
    run_cli("baseline", "set", "base")
    code, out, _ = run_cli("gate", "new")
    assert code == 1 and "(RED FLAG: the baseline never broke it)" in out.splitlines()[0]
    (tmp_path / "reviewer.toml").write_text('[gate]\nnew_forbidden = "test"\n', encoding="utf-8")
    code, out, _ = run_cli("gate", "new")
    assert code == 0, out
    assert (
        "warning: forbidden-tool rate new, within noise: 0.0% -> 1.0% (the baseline never " in out
    )
    code, out, _ = run_cli("gate", "many")
    assert code == 1 and "RED FLAG" in out.splitlines()[0]


def test_budget_noise_fails_a_ratio_budget_only_beyond_noise(tmp_path: Path) -> None:
    """Cost x1.3 on every task is over max_cost_per_task_ratio = 1.2 beyond noise; cost x1.3 on
    one task in twelve (the run's average x1.025) over a ratio of 1.0 is within noise with
    budget_noise, and over budget without it."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD, cost=0.010))
    write_jsonl(tmp_path / "dear.jsonl", _run("dear", GOOD, cost=0.013))
    write_jsonl(
        tmp_path / "bit.jsonl",
        _run("bit", {k: v for k, v in GOOD.items() if k != "t01"})
        + _run("bit", {"t01": GOOD["t01"]}, cost=0.013),
    )
    run_cli("import", *(str(tmp_path / f) for f in ("base.jsonl", "dear.jsonl", "bit.jsonl")))
    run_cli("baseline", "set", "base")
    (tmp_path / "reviewer.toml").write_text(
        "[gate]\nmax_cost_per_task_ratio = 1.0\nbudget_noise = true\n", encoding="utf-8"
    )
    code, out, _ = run_cli("gate", "dear")
    assert code == 1
    assert "over max_cost_per_task_ratio 1 beyond noise" in out.splitlines()[0]
    code, out, _ = run_cli("gate", "bit", "--json")
    data = json.loads(out)
    assert code == 0 and data["budget_noise"] is True
    cost = next(c for c in data["checks"] if c["metric"] == "cost_per_task")
    assert cost["status"] == "within noise"
    assert cost["limits"] == ["x1 baseline beyond noise"]
    assert any(w.startswith("warning: cost / task $0.010 -> $0.010") for w in data["warnings"])
    (tmp_path / "reviewer.toml").write_text(
        "[gate]\nmax_cost_per_task_ratio = 1.0\n", encoding="utf-8"
    )
    code, out, _ = run_cli("gate", "bit")
    assert code == 1 and "over max_cost_per_task_ratio 1" in out.splitlines()[0]


def test_a_pass_on_a_run_whose_harness_crashed_on_most_tasks_says_so(tmp_path: Path) -> None:
    """The harness crashed on 10 of the new run's 12 tasks (every trial an infrastructure error):
    the gate printed 'PASS: nothing regressed' over the 2 tasks left, and neither its text nor its
    Markdown said a word about the crashed trials or the tasks not measured."""
    base = _run("base", GOOD)
    new = _run("new", GOOD)
    for rec in new:
        if rec["task_id"] not in ("t01", "t02"):
            rec["outcome"] = {"infra_error": True, "reason": "rate limited"}
    write_jsonl(tmp_path / "base.jsonl", base)
    write_jsonl(tmp_path / "new.jsonl", new)
    assert run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))[0] == 0
    assert run_cli("baseline", "set", "base")[0] == 0
    code, out, err = run_cli("gate", "new", "--markdown", str(tmp_path / "g.md"), "--json")
    data = json.loads(out)
    said = [
        "warning: new: 80 trials ended by infrastructure errors, left out",
        "warning: 10 of 12 shared tasks not measured in both runs (no scored trial in one of "
        "them); the checks are over the rest",
    ]
    assert data["verdict"] == "pass" and data["warnings"] == said
    code, out, err = run_cli("gate", "new")
    assert code == 0 and out.splitlines()[1:3] == said
    markdown = (tmp_path / "g.md").read_text()
    assert "> warning: new: 80 trials ended by infrastructure errors, left out" in markdown


def test_a_new_run_missing_most_of_the_baselines_tasks_says_which(tmp_path: Path) -> None:
    """The harness ran 2 of the baseline's 12 tasks: 'PASS: nothing regressed' with no word that
    10 tasks were never run, so never gated."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    write_jsonl(tmp_path / "new.jsonl", _run("new", {"t01": [True] * 8, "t02": [True] * 8}))
    assert run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))[0] == 0
    assert run_cli("baseline", "set", "base")[0] == 0
    code, out, err = run_cli("gate", "new")
    assert code == 0, err
    assert out.splitlines()[1] == (
        "warning: 10 tasks of the baseline are not in new, so not gated: t03, t04, t05, t06, "
        "t07 and 5 more"
    )


def test_junit_says_which_ratio_budget_was_exceeded_within_noise(tmp_path: Path) -> None:
    """A ratio budget exceeded within noise (budget_noise) is a warning under the verdict, but its
    JUnit case was skipped with compare's generic 'the interval of the difference includes zero':
    the budget and the figures were not in the report CI shows."""
    import xml.etree.ElementTree as ET

    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD, cost=0.010))
    write_jsonl(
        tmp_path / "bit.jsonl",
        _run("bit", {k: v for k, v in GOOD.items() if k != "t01"})
        + _run("bit", {"t01": GOOD["t01"]}, cost=0.013),
    )
    run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "bit.jsonl"))
    run_cli("baseline", "set", "base")
    (tmp_path / "reviewer.toml").write_text(
        "[gate]\nmax_cost_per_task_ratio = 1.0\nbudget_noise = true\n", encoding="utf-8"
    )
    code, _, err = run_cli("gate", "bit", "--junit", str(tmp_path / "g.xml"))
    assert code == 0, err
    case = next(
        c for c in ET.parse(tmp_path / "g.xml").iter("testcase") if c.get("name") == "cost / task"
    )
    skipped = case.find("skipped")
    assert skipped is not None
    assert "over max_cost_per_task_ratio 1, within noise" in skipped.get("message", "")


def test_a_red_flag_from_a_rise_within_tasks_does_not_say_the_rate_rose_when_it_fell() -> None:
    """Task A broke the rule in 5 of 20 trials and now in 20 of 20; task B never did, and the new
    run has 400 trials of it instead of 20. Within tasks it is a rise beyond noise (a RED FLAG),
    but over all trials the rate fell 6.2% -> 4.3%, and the verdict said 'rose 6.2% -> 4.3%'."""
    from reviewer.metrics.compare import compare_runs
    from reviewer.metrics.distributions import TrialStats
    from reviewer.metrics.gate import evaluate_gate

    def trials(task: str, bad: int, n: int) -> list[TrialStats]:
        return [
            TrialStats(task, True, 2, 0.01, 1.0, 0, 0, frozenset({"nc"} if i < bad else ()), "pass")
            for i in range(n)
        ]

    rest = [t for i in range(10) for t in trials(f"c{i}", 0, 4)]
    old = trials("a", 5, 20) + trials("b", 0, 20) + rest
    new = trials("a", 20, 20) + trials("b", 0, 400) + rest
    result = evaluate_gate(compare_runs(old, new, rules_severity={"nc": "forbidden"}))
    line = result.verdict_line()
    assert result.exit_code == 1
    assert "rose 6.2% -> 4.3%" not in line
    assert "rule nc rose within tasks (6.2% -> 4.3% over all trials; RED FLAG: a rise" in line


def test_a_budget_the_new_run_gives_no_value_for_is_not_within_budget(tmp_path: Path) -> None:
    """The new run's harness stopped reporting costs: the cost budget was 'n/a' in the table and
    the verdict said 'PASS ... within budgets'."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", GOOD))
    new = _run("new", GOOD)
    for rec in new:
        del rec["usage"]
    write_jsonl(tmp_path / "new.jsonl", new)
    run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    run_cli("baseline", "set", "base")
    (tmp_path / "reviewer.toml").write_text("[gate]\nmax_cost_per_task = 0.05\n", encoding="utf-8")
    code, out, _ = run_cli("gate", "new")
    first, second = out.splitlines()[:2]
    assert code == 0 and "within budgets" not in first
    assert first.endswith(
        "nothing regressed (pass^8 (overall) 1.00 -> 1.00), budgets not checked: cost / task"
    )
    assert second == (
        "warning: cost / task not checked against its budget (max $0.050): new has no value for it"
    )


# Folded in from tests/test_gate_attacks.py:
# Regression tests for gate defects an attacker found: a gate that passed when it could not decide.


def _runs(tmp_path: Path, base: list[dict[str, Any]], new: list[dict[str, Any]]) -> None:
    write_jsonl(tmp_path / "base.jsonl", base)
    write_jsonl(tmp_path / "new.jsonl", new)
    code, _, err = run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    assert code == 0, err


def _trials(run: str, tasks: list[str], n: int = 4, scored: bool = True) -> list[dict[str, Any]]:
    out = []
    for t in tasks:
        for i in range(1, n + 1):
            rec = native_trial(t, True, run=run, trial=i)
            if not scored:
                del rec["outcome"]
            out.append(rec)
    return out


def test_gate_no_task_in_common_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["a1", "a2"]), _trials("new", ["b1", "b2"]))
    assert run_cli("baseline", "set", "base")[0] == 0
    code, out, err = run_cli("gate", "new")
    assert code == 2, out
    assert "no task in common with the baseline (baseline tasks: a1, a2, new: b1, b2)" in err


def test_gate_baseline_without_scored_trial_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["t1"], scored=False), _trials("new", ["t1"]))
    code, _, err = run_cli("baseline", "set", "base")
    # `baseline set` errors exit 1, as its other refusals (no such run)
    assert code == 1 and "'base' has no scored trial" in err and "cannot be the baseline" in err
    code, out, err = run_cli("gate", "new", "--baseline", "base")
    assert code == 2, out
    assert "baseline 'base' has no scored trial" in err


def test_gate_k_out_of_range_or_above_trials_exits_2(tmp_path: Path) -> None:
    _runs(tmp_path, _trials("base", ["t1", "t2"]), _trials("new", ["t1", "t2"]))
    assert run_cli("baseline", "set", "base")[0] == 0
    for bad in ("0", "1001"):
        code, _, err = run_cli("gate", "new", "--k", bad)
        assert code == 2 and "from 1 to 1000" in err
    code, out, err = run_cli("gate", "new", "--k", "5")
    assert code == 2, out
    assert "k = 5 is more than the 4 trials per task both runs have" in err
    Path("reviewer.toml").write_text("[gate]\nk = 5\n")
    code, _, err = run_cli("gate", "new")
    assert code == 2 and "k = 5 is more than the 4 trials" in err
    assert run_cli("gate", "new", "--k", "4")[0] == 0


# Folded in from tests/test_gate_wording.py:
# Regression: `reviewer gate` said "no task regressed" while `reviewer compare` on the same runs listed
# tasks in its `regressed` bucket, and JUnit passed checks on which nothing was decided.


def _sample_gate() -> tuple[int, str]:
    for args in (
        ("rules", str(SAMPLE_RUNS / "rules.toml")),
        ("import", str(SAMPLE_RUNS / "support-v1.jsonl"), str(SAMPLE_RUNS / "support-v2.jsonl")),
        ("baseline", "set", "support-v1"),
    ):
        code, _, err = run_cli(*args)
        assert code == 0, err
    code, out, _ = run_cli("gate", "support-v2", "--junit", "g.xml", "--markdown", "g.md")
    return code, out


def test_gate_said_no_task_regressed_while_compare_lists_regressed_tasks(tmp_path: Path) -> None:
    code, out = _sample_gate()
    assert code == 1
    _, cmp_out, _ = run_cli("compare", "support-v1", "support-v2", "--json")
    regressed = sorted(
        t["task_id"]
        for t in json.loads(cmp_out)["tasks"]
        if t["bucket"] in ("newly failing", "regressed", "newly flaky")
    )
    assert regressed  # the sample runs show the confusion
    assert "no task regressed" not in out
    assert "no task's pass rate fell beyond noise (Fisher, Holm-adjusted p < 0.05); 5 tasks" in out
    assert f"dropped within noise ({len(regressed)}; warnings, not failures):" in out
    for task in regressed:
        assert f"{task} (" in out.split("dropped within noise")[1]
    md = Path("g.md").read_text(encoding="utf-8")
    assert "Tasks that regressed" not in md
    assert (
        "### Tasks whose pass rate fell beyond noise (Fisher, Holm-adjusted p < 0.05) (0 of 5)"
        in md
    )
    assert "dropped within noise" in md
    _, js, _ = run_cli("gate", "support-v2", "--json")
    assert sorted(json.loads(js)["within_noise_tasks"]) == regressed


def test_junit_passed_undecided_checks_instead_of_skipping_them(tmp_path: Path) -> None:
    code, _ = _sample_gate()
    xml = Path("g.xml").read_text(encoding="utf-8")
    assert validate(xml, XSD) == []
    gate = ET.fromstring(xml).findall("testsuite")[0]
    cases = {c.get("name"): c for c in gate.findall("testcase")}
    # every check compare decides nothing on is skipped, not only the reliability ones: "avg
    # steps" read "ok" (a passed case) on too few tasks (found by a review)
    undecided = [
        name
        for name, c in cases.items()
        if (sk := c.find("skipped")) is not None
        and sk.get("message", "").startswith("too few tasks: compare decides nothing")
    ]
    assert {"pass^6 (overall)", "pass@1", "avg steps"} <= set(undecided)
    for name in undecided:
        assert cases[name].find("failure") is None
    assert gate.get("skipped") == str(len(undecided)) and gate.get("failures") == "2"


def test_junit_skips_a_within_noise_check(tmp_path: Path) -> None:

    _setup(tmp_path, GOOD | {"t05": [True] * 5 + [False] * 3})
    code, out, err = run_cli("gate", "new", "--k", "4", "--junit", "j.xml")
    assert code == 0, err
    xml = Path("j.xml").read_text(encoding="utf-8")
    assert validate(xml, XSD) == []
    gate, tasks = ET.fromstring(xml).findall("testsuite")
    skipped = [c.find("skipped") for c in gate.findall("testcase")]
    messages = [s.get("message", "") for s in skipped if s is not None]
    assert any(m.startswith("within noise: ") for m in messages)
    # the task that dropped within noise is a skipped case with a warning, never a failure
    t05 = next(c for c in tasks.findall("testcase") if c.get("name") == "t05")
    assert t05.find("failure") is None
    warning = t05.find("skipped")
    assert warning is not None
    assert warning.get("message", "").startswith("warning: newly flaky, within noise: 8/8 -> 5/8")
    assert tasks.get("failures") == "0" and tasks.get("skipped") == "1"
    assert "no task's pass rate fell beyond noise" in out
