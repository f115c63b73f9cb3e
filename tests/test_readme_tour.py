"""The tours run as written: every command of the README's short tour succeeds on a fresh import of
`sample_runs/`, and each output block of docs/tour.md shown after a command is what that command
prints there (a `...` line stands for lines left out; the others appear in order, exactly). The
gate's and the monitor's examples have their own tests (test_gate_readme.py,
test_monitor_readme.py)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest

from tests.conftest import REAL_SAMPLE_RUNS, REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")
TOUR = (REPO / "docs" / "tour.md").read_text(encoding="utf-8")


def block_after(lead: str) -> list[str]:
    """The lines of the first code block after the docs/tour.md line that holds ``lead``."""
    rest = TOUR.split(lead, 1)[1]
    body = rest.split("```", 1)[1].split("\n", 1)[1]
    return body.split("```", 1)[0].rstrip("\n").split("\n")


def shown_in(shown: list[str], out: str) -> None:
    """Every shown line is a line of ``out``, in order and one after another (the block may start
    anywhere in the output); ``...`` skips any number of lines."""
    lines = out.rstrip("\n").split("\n")
    at = 0
    gap = True
    for line in shown:
        if line == "...":
            gap = True
            continue
        if gap:
            assert line in lines[at:], f"tour line not in the output after line {at}: {line!r}"
            at = lines.index(line, at) + 1
        else:
            assert at < len(lines) and lines[at] == line, (
                f"tour line {line!r} is not output line {at + 1}: "
                f"{lines[at] if at < len(lines) else 'end of output'!r}"
            )
            at += 1
        gap = False


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tour")
    shutil.copytree(REAL_SAMPLE_RUNS, folder / "sample_runs")
    return folder


def _run(tour: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    monkeypatch.chdir(tour)
    if not (tour / "reviewer.db").exists():
        code, _, err = run_cli("import", "sample_runs/")
        assert code == 0, err
    code, out, err = run_cli(*args)
    assert code == 0, err
    return out


@pytest.mark.parametrize(
    ("lead", "command"),
    [
        (
            "`reviewer report --run support-v1 --k 1,4` on the sample data prints:",
            "report --run support-v1 --k 1,4",
        ),
        (
            "says it for the highlighted task under the table. On the sample data:",
            "report --run support-v1 --k 1,4",
        ),
        ("which v1 never did:", "compare support-v1 support-v2"),
        (
            "On the sample data, `reviewer plan --run support-v1 --delta 0.1 --k 4` prints:",
            "plan --run support-v1 --delta 0.1 --k 4",
        ),
    ],
)
def test_the_tour_block_is_real_output(
    tour: Path, monkeypatch: pytest.MonkeyPatch, lead: str, command: str
) -> None:
    shown_in(block_after(lead), _run(tour, monkeypatch, *command.split()))


def test_the_comparison_tells_the_seeds_story(tour: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """cheaper and faster, but less reliable and breaking a rule: as the README and the tour say."""
    import json

    data = json.loads(_run(tour, monkeypatch, "compare", "support-v1", "support-v2", "--json"))
    rows = {r["metric"]: r for r in data["summary"]}
    assert rows["pass_hat_k"]["direction"] == "worse"
    assert (
        rows["avg_steps"]["direction"] == "better" and rows["avg_steps"]["mark"] == '<-- "better"'
    )
    assert rows["cost_per_task"]["mark"] == '<-- "better"'
    assert rows["forbidden_rate"]["direction"] == "RED FLAG" and rows["forbidden_rate"]["old"] == 0


def short_tour() -> list[list[str]]:
    """The README's short tour: each command's words, its comment dropped."""
    section = README.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_readme_short_tour_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line of the README's tour but the last (which opens the app) succeeds, in order, on a
    fresh clone's `sample_runs/`; the last is the bare `reviewer`."""
    shutil.copytree(REAL_SAMPLE_RUNS, tmp_path / "sample_runs")
    monkeypatch.chdir(tmp_path)
    tour = short_tour()
    assert 8 <= len(tour) <= 12 and tour[-1] == ["reviewer"]
    assert tour[0] == ["reviewer", "import", "sample_runs/"]
    for words in tour[:-1]:
        assert words[0] == "reviewer", words
        code, out, err = run_cli(*words[1:])
        assert code == 0, (words, err)
        assert out.strip() or words[1] == "import", words  # an answer on stdout (import: stderr)
    import json

    code, out, err = run_cli("queues", "--json")
    assert code == 0, err
    (queue,) = json.loads(out)["queues"]  # the tour made one queue of 50, none labeled yet
    assert (queue["done"], queue["total"]) == (0, 50)
    assert "0 / 50" in run_cli("queues")[1]  # as the tour's comment says
