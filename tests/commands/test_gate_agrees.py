"""Issue 33, item 2: the gate's exit code, verdict line, Markdown, --json and JUnit tell one story
(a JUnit <failure> only for what fails the gate; per-task drops within noise are <skipped>)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import native_trial, run_cli, write_jsonl


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli("--db", "x.db", *args)


GOOD = {f"t{i:02d}": [True] * 8 for i in range(1, 13)}


def _gate_case(tmp_path: Path, new: dict[str, list[bool]]) -> tuple[int, str, str, str, Any]:
    def run(name: str, outcomes: dict[str, list[bool]]) -> list[dict[str, Any]]:
        return [
            native_trial(task, ok, run=name, trial=i)
            for task, results in outcomes.items()
            for i, ok in enumerate(results, 1)
        ]

    write_jsonl(tmp_path / "base.jsonl", run("base", GOOD))
    write_jsonl(tmp_path / "new.jsonl", run("new", new))
    assert cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))[0] == 0
    assert cli("baseline", "set", "base")[0] == 0
    code, out, err = cli(
        "gate", "new", "--k", "4", "--junit", "j.xml", "--markdown", "g.md", "--json"
    )
    assert code in (0, 1), err
    data = json.loads(out)
    code2, text, _ = cli("gate", "new", "--k", "4")
    assert code2 == code
    return (
        code,
        text.splitlines()[0],
        Path("g.md").read_text(encoding="utf-8"),
        Path("j.xml").read_text(encoding="utf-8"),
        data,
    )


CASES = {
    "nothing regressed": (GOOD, 0),
    # tasks each dropping 8/8 -> 7/8: every drop within noise (a warning), and the run-level rows
    # within noise: a PASS whose JUnit must hold no failure
    "drops within noise": (GOOD | {f"t{i:02d}": [True] * 7 + [False] for i in range(1, 3)}, 0),
    # nine such drops: pass^4 falls beyond noise, so the gate fails on its check alone (the nine
    # tasks, each within noise, are warnings, not failures)
    "nine drops within noise": (
        GOOD | {f"t{i:02d}": [True] * 7 + [False] for i in range(1, 10)},
        1,
    ),
    "one task collapses": (GOOD | {"t05": [False] * 8}, 1),
    "the whole run falls": (GOOD | {f"t{i:02d}": [False] * 8 for i in range(1, 7)}, 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_exit_code_verdict_markdown_and_junit_agree(tmp_path: Path, case: str) -> None:
    new, want = CASES[case]
    code, verdict, md, xml, data = _gate_case(tmp_path, new)
    assert code == want
    word = "PASS" if code == 0 else "FAIL"
    assert verdict.startswith(f"gate: {word}: ")
    assert md.startswith(f"## reviewer gate: {word}\n")
    assert data["verdict"] == word.lower()
    root = ET.fromstring(xml.split("\n", 1)[1])
    failures = [
        (suite.get("name"), case_.get("name"))
        for suite in root
        for case_ in suite
        if case_.find("failure") is not None
    ]
    assert int(root.get("failures") or 0) == len(failures)
    assert sum(int(s.get("failures") or 0) for s in root) == len(failures)
    # a <failure> for exactly what fails the gate: its failed checks and its failed tasks
    failed_checks = {
        c["label"]
        for c in data["checks"]
        if c["status"] in ("regressed", "red flag", "over budget")
    }
    failed_tasks = set(data["regressed_tasks"])
    assert {n for s, n in failures if s == "reviewer.gate"} == failed_checks
    assert {n for s, n in failures if s != "reviewer.gate"} == failed_tasks
    assert (code == 0) == (not failures)
    if "drops" in case:
        skipped = re.findall(r'<skipped message="warning: [^"]*within noise', xml)
        assert len(skipped) == (9 if case.startswith("nine") else 2)  # as warnings
