"""Regression: `reviewer gate` said "no task regressed" while `reviewer compare` on the same runs listed
tasks in its `regressed` bucket, and JUnit passed checks on which nothing was decided."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import SAMPLE_RUNS, run_cli
from tests.support.xsd_subset import validate
from tests.test_gate import XSD, _setup


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
    for name in ("pass^6 (overall)", "pass@1"):
        skipped = cases[name].find("skipped")
        assert skipped is not None and cases[name].find("failure") is None
        assert skipped.get("message", "").startswith("too few tasks: compare decides nothing")
    assert cases["avg steps"].find("skipped") is None and cases["avg steps"].find("failure") is None
    assert gate.get("skipped") == "2" and gate.get("failures") == "2"


def test_junit_skips_a_within_noise_check(tmp_path: Path) -> None:
    from tests.test_gate import GOOD

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
