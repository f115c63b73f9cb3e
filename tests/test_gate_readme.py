"""The gate examples of docs/ci-and-monitoring.md run as written: the commands of the worked example
print the output the page shows, and the CI step's `reviewer` line works as given (the harness replaced by a copy
of a sample run)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from tests.conftest import REAL_SAMPLE_RUNS as SAMPLE_RUNS
from tests.conftest import REPO, run_cli


def _section() -> str:
    text = (REPO / "docs" / "ci-and-monitoring.md").read_text(encoding="utf-8")
    start = text.index("## In CI: the gate")
    end = text.find("\n## ", start + 5)
    return text[start : end if end >= 0 else len(text)]


def _blocks(section: str, lang: str) -> list[str]:
    """The fenced blocks of ``lang`` ("" for plain ones), read fence by fence."""
    out, current, kind = [], [], None
    for line in section.splitlines(keepends=True):
        if line.startswith("```"):
            if kind is None:
                kind, current = line[3:].strip(), []
            else:
                if kind == lang:
                    out.append("".join(current))
                kind = None
        elif kind is not None:
            current.append(line)
    return out


def test_worked_example_prints_what_the_docs_show(tmp_path: Path) -> None:
    shutil.copytree(SAMPLE_RUNS, tmp_path / "sample_runs")
    section = _section()
    commands = next(b for b in _blocks(section, "sh") if "reviewer gate" in b)
    shown = next(b for b in _blocks(section, "") if b.startswith("gate: "))
    lines = [ln for ln in commands.splitlines() if ln.startswith("reviewer ")]
    assert len(lines) == 4
    for line in lines[:-1]:
        code, _, err = run_cli(*shlex.split(line)[1:])
        assert code == 0, (line, err)
    code, out, err = run_cli(*shlex.split(lines[-1])[1:])
    assert code == 1, err
    assert out == shown
    assert Path("gate.xml").read_text(encoding="utf-8").startswith("<?xml")
    assert Path("gate.md").read_text(encoding="utf-8").startswith("## reviewer gate: FAIL")


def test_ci_step_runs_as_written(tmp_path: Path) -> None:
    section = _section()
    step = next(b for b in _blocks(section, "yaml") if "reviewer" in b)
    line = next(ln.strip() for ln in step.splitlines() if ln.strip().startswith("reviewer "))
    line = line.replace("${{ github.sha }}", "abc123").replace(
        '"$GITHUB_STEP_SUMMARY"', "summary.md"
    )
    for args in (
        ["--db", "eval.db", "rules", str(SAMPLE_RUNS / "rules.toml")],
        ["--db", "eval.db", "import", str(SAMPLE_RUNS / "support-v1.jsonl")],
        ["--db", "eval.db", "baseline", "set", "support-v1"],
    ):
        code, _, err = run_cli(*args)
        assert code == 0, err
    Path("runs").mkdir()
    shutil.copy(SAMPLE_RUNS / "support-v2.jsonl", "runs/ci-abc123.jsonl")  # the harness's output
    code, out, err = run_cli(*shlex.split(line)[1:])
    assert code == 1, err
    assert out.startswith("gate: FAIL: support-v2 vs baseline support-v1")
    assert Path("summary.md").read_text(encoding="utf-8").startswith("## reviewer gate: FAIL")
    assert Path("gate.xml").is_file()
