"""Issue 33, item 1: a run is one model and configuration. A file whose model or configuration
differs from the stored run of its name goes to a run of its own, with one line saying so. Built on
SWE-agent's own test trajectory (``tests/fixtures/swe_agent``, MIT, see its SOURCE.md)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from reviewer.store.db import open_store
from tests.conftest import FIXTURES, run_cli

SWE = FIXTURES / "swe_agent" / "swe-agent__test-repo-i1.traj"


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli("--db", "x.db", *args)


def _runs(db: str = "x.db") -> dict[str, list[tuple[str, int]]]:
    with open_store(db) as s:
        rows = s.execute("SELECT run, task_id, trial FROM trials ORDER BY run, task_id, trial")
        out: dict[str, list[tuple[str, int]]] = {}
        for run, task, trial in rows:
            out.setdefault(run, []).append((task, trial))
    return out


def _other_config(tmp_path: Path, folder: str) -> Path:
    """The same instance run with other demonstrations (another SWE-agent configuration)."""
    data = json.loads(SWE.read_text(encoding="utf-8"))
    for h in data["history"]:
        if h.get("is_demo"):
            h["content"] = "another demonstration: " + h["content"][:200]
    path = tmp_path / folder / "swe_agent" / SWE.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_swe_agent_file_of_another_configuration_is_named_apart_with_one_line(
    tmp_path: Path,
) -> None:
    first = tmp_path / "a" / "swe_agent" / SWE.name
    first.parent.mkdir(parents=True)
    shutil.copy(SWE, first)
    same = tmp_path / "b" / "swe_agent" / SWE.name  # the same configuration, from another folder
    same.parent.mkdir(parents=True)
    data = json.loads(SWE.read_text(encoding="utf-8"))
    data["info"]["model_stats"]["instance_cost"] = 0.5  # another attempt, same settings
    same.write_text(json.dumps(data), encoding="utf-8")
    other = _other_config(tmp_path, "c")

    code, _, err = cli("import", str(first))
    assert code == 0, err
    code, _, err = cli("import", str(same), str(other))
    assert code == 0, err
    lines = [line for line in err.splitlines() if "holds another" in line]
    assert len(lines) == 1, err
    assert re.search(
        r"run 'swe_agent' holds another model or configuration \(model unnamed, config (\w{8}); "
        r"this file: model unnamed, config (?!\1)\w{8}\): imported as run 'swe_agent \(2\)' "
        r"\(--run NAME to name it yourself\)$",
        lines[0],
    ), lines[0]
    assert str(other) in lines[0]
    task = "swe-agent__test-repo-i1"
    # the same configuration is a second trial of its task; the other is a run of its own
    assert _runs() == {"swe_agent": [(task, 1), (task, 2)], "swe_agent (2)": [(task, 1)]}

    # importing the same files again changes nothing and says nothing about runs
    code, out, err = cli("import", str(first), str(same), str(other))
    assert code == 0, err
    assert "holds another" not in err and "nothing new" in out + err
    assert _runs() == {"swe_agent": [(task, 1), (task, 2)], "swe_agent (2)": [(task, 1)]}


def test_run_identity_reads_each_formats_own_model_and_configuration() -> None:
    from reviewer.ingest import openhands, swe_agent, tau2_bench, tau_bench

    assert {m.RUN_KEY for m in (swe_agent, openhands, tau2_bench, tau_bench)} == {"run_config"}
    data = json.loads(SWE.read_text(encoding="utf-8"))
    base = swe_agent.run_config(data, None)
    data["replay_config"] = {"agent": {"model": {"name": "gpt-4o"}, "templates": {"x": 1}}}
    assert swe_agent.run_config(data, "gpt-4o") != base
    assert swe_agent.run_config(data, "gpt-4o").startswith("model gpt-4o, config ")  # type: ignore[union-attr]
    meta = tau_bench.run_metadata(
        Path("tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json")
    )
    assert meta == {
        "model": "grok-3",
        "run_config": "agent tool-calling, model grok-3, temperature 0.0, user grok-3 (llm)",
    }
    assert tau_bench.run_metadata(Path("results.json")) == {}


def test_run_name_given_is_obeyed_and_a_mixed_configuration_is_said(tmp_path: Path) -> None:
    other = _other_config(tmp_path, "c")
    assert cli("import", str(SWE), "--run", "mine")[0] == 0
    code, _, err = cli("import", str(other), "--run", "mine")
    assert code == 0, err
    lines = [line for line in err.splitlines() if "holds another" in line]
    assert len(lines) == 1 and str(other) in lines[0]
    assert "imported into it as --run asked, so its pass^k mixes the two" in lines[0]
    task = "swe-agent__test-repo-i1"
    assert _runs() == {"mine": [(task, 1), (task, 2)]}
    # the same configuration again under --run: nothing to say
    code, _, err = cli("import", str(SWE), "--run", "mine2")
    assert code == 0 and "holds another" not in err
