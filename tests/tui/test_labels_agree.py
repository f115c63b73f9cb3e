"""The trials list, the label screen and `reviewer agreement` show the same labels after imports with
retractions (one naming a label that is not in the database), relabels and undos."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot
from textual.widgets import Static

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.queues import Queue, QueueItem, save_queue
from reviewer.store.trial_filter import TrialFilter
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen
from reviewer.tui.screens.trials import TrialsScreen, TrialTable
from reviewer.workflows.labels import give_label, undo_label
from tests.conftest import sample_copy

JUDGE = "claude-sonnet-4-5:support-policy@1"
RUBRIC = "support-policy@1"
SIZE = (140, 40)
#: trial name -> the label every face must show (None: no label)
EXPECTED = {
    "plain": "fail",
    "relabeled": "fail",
    "undone relabel": "pass",
    "orphan retraction": "fail",
    "undone": None,
    "undone in the app": None,
}


def _line(ref: dict[str, object], verdict: str, minute: int, retracted: bool = False) -> str:
    return json.dumps(
        {
            "trial": ref,
            "labeler": "ana",
            "verdict": verdict,
            "rubric": RUBRIC,
            "at": f"2025-03-01T10:{minute:02d}:00Z",
            "retracted": retracted,
        }
    )


@pytest.fixture
def labeled(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Sample runs; six trials the judge passed, labeled by ana through every path there is."""
    path = sample_copy(tmp_path / "s.db")
    with open_store(path) as db:
        rows = db.execute(
            "SELECT t.id, t.run, t.task_id, t.trial FROM trials t JOIN verdicts v ON v.trial_id = t.id "
            "WHERE v.verdict = 'pass' ORDER BY t.seq LIMIT 6"
        ).fetchall()
    names = list(EXPECTED)
    ids = {name: r[0] for name, r in zip(names, rows, strict=True)}
    ref = {
        name: {"run": r[1], "task_id": r[2], "trial": r[3]}
        for name, r in zip(names, rows, strict=True)
    }
    lines = [
        _line(ref["plain"], "fail", 1),
        _line(ref["relabeled"], "pass", 1),
        _line(ref["relabeled"], "fail", 2),
        _line(ref["undone relabel"], "pass", 1),
        _line(ref["undone relabel"], "fail", 2),
        _line(ref["undone relabel"], "fail", 2, retracted=True),
        _line(ref["orphan retraction"], "fail", 1),
        # the retraction of a label given at :05 on another machine, never imported here
        _line(ref["orphan retraction"], "pass", 5, retracted=True),
        _line(ref["undone"], "fail", 1),
        _line(ref["undone"], "fail", 1, retracted=True),
    ]
    # retractions first: the same labels stand whatever order the lines arrive in
    (tmp_path / "labels.jsonl").write_text(
        "\n".join(sorted(lines, key=lambda s: '"retracted": true' not in s)) + "\n"
    )
    result = CliRunner().invoke(cli, ["--db", str(path), "labels", "import", "labels.jsonl"])
    assert result.exit_code == 0, result.stderr
    assert "imported 10 labels" in result.stderr
    with open_store(path) as db:
        give_label(db, ids["undone in the app"], "ana", "fail", rubric_ref=RUBRIC)
        assert undo_label(db, "ana") is not None
        items = [QueueItem(i, tid, None, "pass", None) for i, tid in enumerate(ids.values())]
        save_queue(db, Queue("mixed", "ana", 0, "", items=items))
    return path, ids


async def _settle(app: ReviewerApp) -> None:
    await app.workers.wait_for_complete()


async def _until(pilot: Pilot[None], cond: Callable[[], bool]) -> None:
    """Wait for a condition the screen's workers bring about (the label writer never completes)."""
    for _ in range(500):
        if cond():
            await pilot.pause()
            return
        await pilot.pause(0.01)
    raise AssertionError("condition never met")


async def test_trials_list_shows_and_filters_the_standing_labels(
    labeled: tuple[Path, dict[str, str]],
) -> None:
    path, ids = labeled
    app = ReviewerApp(db_path=path, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app)
        for label in ("pass", "fail", "none", None):
            app.push_screen(TrialsScreen(TrialFilter(label=label), title="trials"))
            await _settle(app)
            await pilot.pause()
            table = app.screen.query_one(TrialTable)
            shown = {
                str(table.coordinate_to_cell_key((i, 0)).row_key.value): str(table.get_row_at(i)[5])
                for i in range(table.row_count)
            }
            for name, tid in ids.items():
                want = EXPECTED[name]
                if label is None:
                    assert shown[tid] == (want or "-"), name
                else:
                    assert (tid in shown) == ((want or "none") == label), (name, label)
            app.pop_screen()
            await pilot.pause()


def _showing(screen: LabelScreen, trial_id: str) -> Callable[[], bool]:
    return lambda: screen.payload is not None and screen.payload.trial_id == trial_id


async def test_label_screen_shows_the_standing_labels(
    labeled: tuple[Path, dict[str, str]],
) -> None:
    path, ids = labeled
    app = ReviewerApp(db_path=path, labeler="ana")
    async with app.run_test(size=SIZE) as pilot:
        await _settle(app)
        screen = LabelScreen("mixed", "ana")
        app.push_screen(screen)
        await _until(pilot, lambda: screen.state is not None and screen.payload is not None)
        assert screen.state is not None
        assert screen.state.done == {tid for name, tid in ids.items() if EXPECTED[name]}
        for index, name in enumerate(ids):
            screen.load_item(index)
            await _until(pilot, _showing(screen, ids[name]))
            mine = str(app.screen.query_one("#label-mine", Static).render())
            want = EXPECTED[name]
            assert mine == (f"your label: {want.upper()}" if want else "not labeled by you yet"), (
                name
            )


def test_agreement_counts_the_standing_labels(labeled: tuple[Path, dict[str, str]]) -> None:
    path, ids = labeled
    result = CliRunner().invoke(
        cli, ["--db", str(path), "agreement", "--judge", JUDGE, "--labeler", "ana", "--json"]
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["labeler"] == "ana" and report["rubric"] == RUBRIC
    # the judge passed all six: every standing fail is a disagreement, the standing pass is not
    fails = {tid for name, tid in ids.items() if EXPECTED[name] == "fail"}
    assert {d["trial_id"] for d in report["disagreements"]} == fails
    assert {d["human"] for d in report["disagreements"]} == {"fail"}
    assert report["agreement"]["n"] == sum(1 for v in EXPECTED.values() if v)
