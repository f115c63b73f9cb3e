"""The position-bias screen: the table per judge, the inconsistent pairs, Enter opens A | B."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot
from textual.widgets import DataTable

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.bias import BiasScreen, PairScreen
from reviewer.tui.widgets.transcript import TranscriptView
from tests.conftest import native_trial, write_jsonl
from tests.tui.conftest import settle

SIZE = (120, 36)
HOSTILE = "[red]x[/] [b \x1b]0;pwned\x07 [0]"


def pair(
    pair_id: str, a: Any, b: Any, ab: str | None, ba: str | None, **extra: Any
) -> dict[str, Any]:
    rec = {"pair_id": pair_id, "task_id": "t1", "a": a, "b": b, "judge": "j1"}
    rec.update({"order_ab": ab, "order_ba": ba, "human": "a", **extra})
    return rec


@pytest.fixture
def bias_db(tmp_path: Path) -> Path:
    first = native_trial("t1", passed=True, trial=1)
    first["messages"][-1]["content"] = "Refund sent for the first answer."
    second = native_trial("t1", passed=False, trial=2)
    second["messages"][-1]["content"] = "I cannot help with that, second answer."
    db = tmp_path / "b.db"
    runner = CliRunner()
    trials = write_jsonl(tmp_path / "r1.jsonl", [first, second])
    assert runner.invoke(cli, ["--db", str(db), "import", str(trials)]).exit_code == 0
    a = {"run": "r1", "task_id": "t1", "trial": 1}
    b = {"run": "r1", "task_id": "t1", "trial": 2}
    pairs = [
        pair(
            "p1", a, b, "a", "b", rationale_ab=f"first is better {HOSTILE}", rationale_ba="B wins"
        ),
        pair("p2", a, b, "a", "a"),
        pair("p3", "ghost-a", "ghost-b", "b", "a", rationale_ab="second", rationale_ba="first"),
    ]
    f = write_jsonl(tmp_path / "pairs.jsonl", pairs)
    assert runner.invoke(cli, ["--db", str(db), "import", str(f)]).exit_code == 0
    return db


def text_of(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


def rows(view: TranscriptView) -> str:
    return "\n".join(view.render_row(i).text for i in range(view.line_count))


async def open_bias(app: ReviewerApp, pilot: Pilot[None]) -> BiasScreen:
    await settle(app, pilot)
    app.push_screen(BiasScreen())
    await settle(app, pilot)
    assert isinstance(app.screen, BiasScreen)
    return app.screen


async def test_table_per_judge_and_the_inconsistent_pairs(bias_db: Path) -> None:
    app = ReviewerApp(db_path=bias_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bias(app, pilot)
        report = text_of(app, "#bias-report")
        assert "biased toward first" in report and "1 (33.3%)" in report
        assert "first-slot win rate" in report
        table = screen.query_one("#bias-pairs", DataTable)
        assert table.row_count == 2  # p1 and p3; the consistent p2 is not listed
        assert [p.pair_id for p in screen.lines] == ["p1", "p3"]
        assert "2 pair judgements not consistent" in text_of(app, "#bias-status")


async def test_enter_opens_the_pair_side_by_side_with_both_rationales(bias_db: Path) -> None:
    app = ReviewerApp(db_path=bias_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_bias(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, PairScreen)
        rationales = text_of(app, "#pair-rationales")
        assert "biased toward first" in rationales
        assert "order AB (a shown first): winner a" in rationales
        assert "order BA (b shown first): winner b — B wins" in rationales
        assert "[red]x[/] [b ␛]0;pwned␇ [0]" in rationales and "\x1b" not in rationales
        a = app.screen.query_one("#pair-a", TranscriptView)
        b = app.screen.query_one("#pair-b", TranscriptView)
        assert a.display and b.display
        assert "first answer" in rows(a) and "second answer" in rows(b)
        assert "r1 › t1 › trial 1" in text_of(app, "#pair-head-a")
        assert "FAIL" in text_of(app, "#pair-head-b")
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, BiasScreen)


async def test_a_pair_whose_trials_are_not_stored_shows_refs_and_rationales(
    bias_db: Path,
) -> None:
    app = ReviewerApp(db_path=bias_db)
    async with app.run_test(size=SIZE) as pilot:
        await open_bias(app, pilot)
        await pilot.press("down", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, PairScreen) and app.screen.pair_id == "p3"
        assert "biased toward second" in text_of(app, "#pair-rationales")
        assert "not in the store: ghost-a" in text_of(app, "#pair-head-a")
        assert "not in the store: ghost-b" in text_of(app, "#pair-head-b")
        assert not app.screen.query_one("#pair-a", TranscriptView).display


async def test_palette_opens_position_bias(bias_db: Path) -> None:
    app = ReviewerApp(db_path=bias_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"position bias")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, BiasScreen)


async def test_no_pairs_explains_itself(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "empty.db")
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_bias(app, pilot)
        assert "no pair judgements" in text_of(app, "#bias-report")
        assert screen.query_one("#bias-pairs", DataTable).row_count == 0
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, BiasScreen)
