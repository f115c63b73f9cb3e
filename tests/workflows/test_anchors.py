"""The gate's judge anchors: when the judge that graded the new run is stricter than the one that
graded the baseline on the same fixed transcripts, a judged pass rate that fell is not blamed on the
agent; when the judge held, the fall still fails the gate. Against the Messages API stand-in."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer.judge.standin import StandIn, prompt_text, tool_reply
from tests.conftest import native_trial, run_cli, write_jsonl
from tests.support.standin import serving

LENIENT, STRICT = "claude-sonnet-4-5", "claude-haiku-4-5"


def policy(params: dict[str, Any]) -> Any:
    """The lenient judge passes a transcript of quality 3 or more, the strict one 6 or more."""
    body = prompt_text(params).split("<transcript>", 1)[-1]
    quality = int(re.search(r"quality=(\d)", body).group(1))  # type: ignore[union-attr]
    bar = 3 if params["model"] == LENIENT else 6
    verdict = "pass" if quality >= bar else "fail"
    return tool_reply(params, "record_verdict", {"verdict": verdict, "rationale": f"q{quality}"})


@pytest.fixture
def standin(monkeypatch: pytest.MonkeyPatch) -> Iterator[StandIn]:
    """The stand-in grading by the quality each trial's last answer carries."""
    with serving(monkeypatch, policy) as server:
        yield server


def _run(
    name: str, tasks: int, qualities: list[int], *, vary: bool = True, scored: bool = False
) -> list[dict[str, Any]]:
    """Trials whose last answer carries its quality (``vary``: shifted by the task's number, so
    tasks differ); unscored unless ``scored`` (the judge decides)."""
    out = []
    for t in range(tasks):
        for i, q in enumerate(qualities, 1):
            rec = native_trial(f"t{t:02d}", True, run=name, trial=i)
            if not scored:
                rec["outcome"] = None
            rec["messages"][-1]["content"] = f"Done, refunded. quality={(q + t * vary) % 10}"
            out.append(rec)
    return out


def _config(tmp_path: Path, model: str, anchors: bool = True) -> None:
    gate = '[gate]\nanchors = { run = "anchors" }\n' if anchors else ""
    (tmp_path / "reviewer.toml").write_text(f'[judge]\nmodel = "{model}"\n{gate}', encoding="utf-8")


def _setup(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", 12, [0, 3, 4, 5, 7, 8, 9, 6]))
    write_jsonl(tmp_path / "new.jsonl", _run("new", 12, [0, 3, 4, 5, 7, 8, 9, 6]))
    write_jsonl(tmp_path / "anchors.jsonl", _run("anchors", 4, list(range(10))))
    code, _, err = run_cli(
        "import", *(str(tmp_path / f) for f in ("base.jsonl", "new.jsonl", "anchors.jsonl"))
    )
    assert code == 0, err
    _config(tmp_path, LENIENT)
    code, _, err = run_cli("judge", "--run", "base")
    assert code == 0, err
    code, _, err = run_cli("baseline", "set", "base")
    assert code == 0, err
    assert "anchors: 40 graded by claude-sonnet-4-5" in err
    _config(tmp_path, STRICT)  # the team changes the judge; the agent does not change
    code, _, err = run_cli("judge", "--run", "new")
    assert code == 0, err


def test_a_stricter_judge_is_not_blamed_on_the_agent(tmp_path: Path, standin: StandIn) -> None:
    _setup(tmp_path)
    code, out, err = run_cli("gate", "new", "--outcome", "judge", "--json")
    assert code == 0, (out, err)
    data = json.loads(out)
    drift = data["anchors"]
    assert drift["base_judge"].startswith(LENIENT) and drift["new_judge"].startswith(STRICT)
    assert drift["judged_now"] == 40 and drift["moved"] is True
    shift = drift["shift"]
    assert shift["base_pass_rate"] == pytest.approx(0.7) and shift[
        "new_pass_rate"
    ] == pytest.approx(0.4)
    assert (shift["pass_to_fail"], shift["fail_to_pass"]) == (12, 0)
    assert shift["mcnemar_p"] == pytest.approx(2 * 0.5**12)
    statuses = {c["metric"]: c["status"] for c in data["checks"]}
    assert statuses["pass_at_1"] == "judge moved"
    assert any("but the judge itself moved -0.30 on the anchors" in w for w in data["warnings"])
    # the text says the same; a second gate costs nothing (the anchors are cached)
    requests = standin.message_requests
    code, out, _ = run_cli("gate", "new", "--outcome", "judge")
    assert code == 0 and standin.message_requests == requests
    assert "the judge moved beyond noise" in out
    assert "exact McNemar p = 0.00049" in out


def test_without_anchors_the_same_fall_fails_the_gate(tmp_path: Path, standin: StandIn) -> None:
    _setup(tmp_path)
    _config(tmp_path, STRICT, anchors=False)
    code, out, _ = run_cli("gate", "new", "--outcome", "judge")
    assert code == 1
    assert "pass@1 fell 0.72 -> 0.42" in out.splitlines()[0]


def test_a_judge_that_held_leaves_the_verdict_alone(tmp_path: Path, standin: StandIn) -> None:
    """The same judge on both runs: no shift is possible and nothing is sent; the harness's own
    outcomes are not touched by a judge's drift either."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", 12, [9, 9, 9, 9], vary=False))
    write_jsonl(tmp_path / "new.jsonl", _run("new", 12, [0, 0, 9, 9], vary=False))
    write_jsonl(tmp_path / "anchors.jsonl", _run("anchors", 2, list(range(10))))
    run_cli("import", *(str(tmp_path / f) for f in ("base.jsonl", "new.jsonl", "anchors.jsonl")))
    _config(tmp_path, LENIENT)
    assert run_cli("judge", "--run", "base")[0] == 0
    assert run_cli("judge", "--run", "new")[0] == 0
    assert run_cli("baseline", "set", "base")[0] == 0
    requests = standin.message_requests
    code, out, _ = run_cli("gate", "new", "--outcome", "judge")
    assert code == 1 and "pass@1 fell" in out.splitlines()[0]
    assert "judge drift: none possible: both runs were judged by claude-sonnet-4-5" in out
    assert standin.message_requests == requests


def test_the_app_gate_never_spends_and_no_anchors_grades_nothing(
    tmp_path: Path, standin: StandIn
) -> None:
    """`--no-anchors` (and the app) measure on stored verdicts only: the strict judge never graded
    the anchors, so no shift is measured, nothing is sent, and the fall is the agent's."""
    _setup(tmp_path)
    requests = standin.message_requests
    code, out, _ = run_cli("gate", "new", "--outcome", "judge", "--no-anchors")
    assert code == 1
    assert standin.message_requests == requests
    assert "the new run's judge has graded none of the anchors" in out


def test_unknown_anchors_are_one_line_exit_2(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "base.jsonl", _run("base", 12, [9, 9], scored=True))
    write_jsonl(tmp_path / "new.jsonl", _run("new", 12, [9, 9], scored=True))
    run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "new.jsonl"))
    (tmp_path / "reviewer.toml").write_text('[gate]\nanchors = ["0123456789"]\n', encoding="utf-8")
    code, _, err = run_cli("baseline", "set", "base")
    assert code == 1 and err.strip().endswith(
        "[gate] anchors: no trial with id '0123456789' (give the id or its first 6+ characters)"
    )
    (tmp_path / "reviewer.toml").write_text(
        '[gate]\nanchors = { queue = "nope" }\n', encoding="utf-8"
    )
    code, _, err = run_cli("gate", "new", "--baseline", "base")
    assert code == 2 and "[gate] anchors: no queue named 'nope'" in err
    (tmp_path / "reviewer.toml").write_text("[gate]\nanchors = 3\n", encoding="utf-8")
    code, _, err = run_cli("gate", "new", "--baseline", "base")
    assert code == 2 and "[gate] anchors: a list of trial ids" in err


def test_a_fall_bigger_than_the_judges_shift_is_still_the_agents(
    tmp_path: Path, standin: StandIn
) -> None:
    """The judge moved -0.30 on the anchors, but the new run's pass@1 collapsed 0.72 -> 0.00: the
    judge cannot explain that, so the gate fails and says how much the judge accounts for."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", 12, [0, 3, 4, 5, 7, 8, 9, 6]))
    write_jsonl(tmp_path / "new.jsonl", _run("new", 12, [0] * 8, vary=False))
    write_jsonl(tmp_path / "anchors.jsonl", _run("anchors", 4, list(range(10))))
    run_cli("import", *(str(tmp_path / f) for f in ("base.jsonl", "new.jsonl", "anchors.jsonl")))
    _config(tmp_path, LENIENT)
    assert run_cli("judge", "--run", "base")[0] == 0
    assert run_cli("baseline", "set", "base")[0] == 0
    _config(tmp_path, STRICT)
    assert run_cli("judge", "--run", "new")[0] == 0
    code, out, _ = run_cli("gate", "new", "--outcome", "judge")
    assert code == 1
    first = out.splitlines()[0]
    assert "pass@1 fell 0.72 -> 0.00" in first
    assert "the judge itself moved -0.30 on the anchors, which explains at most 0.43" in first


def test_grading_the_anchors_stops_at_anchors_max_cost(tmp_path: Path, standin: StandIn) -> None:
    """The anchors' own cost cap is a hard stop: at $0.03 a few of the 40 anchors are graded, the
    rest are said to be left, and nothing more is sent."""
    write_jsonl(tmp_path / "base.jsonl", _run("base", 12, [0, 3, 4, 5], scored=True))
    write_jsonl(tmp_path / "anchors.jsonl", _run("anchors", 4, list(range(10))))
    assert run_cli("import", str(tmp_path / "base.jsonl"), str(tmp_path / "anchors.jsonl"))[0] == 0
    (tmp_path / "reviewer.toml").write_text(
        f'[judge]\nmodel = "{LENIENT}"\n[gate]\nanchors = {{ run = "anchors" }}\n'
        "anchors_max_cost = 0.03\n",
        encoding="utf-8",
    )
    before = standin.message_requests
    code, _, err = run_cli("baseline", "set", "base")
    assert code == 0, err
    sent = standin.message_requests - before
    match = re.search(r"anchors: stopped at anchors_max_cost \$0\.03: (\d+) not graded", err)
    assert match, err
    assert 0 < sent < 40 and int(match.group(1)) == 40 - sent
