"""The gate in the app: G on the runs screen gates the run under the cursor, B makes it the
baseline; the palette's "gate" entry opens the same screen."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from textual.widgets import DataTable, Static

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.baseline import current_baseline
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.gate import GateScreen
from tests.conftest import sample_copy
from tests.tui.conftest import settle

SIZE = (120, 40)


def _db(tmp_path: Path) -> Path:
    return sample_copy(tmp_path / "g.db")


def _report(app: ReviewerApp) -> str:
    return str(app.screen.query_one("#gate-report", Static).render())


async def test_gate_key_without_baseline_then_with_one(tmp_path: Path) -> None:
    path = _db(tmp_path)
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("G")  # cursor on the first run, support-v1
        await settle(app, pilot)
        assert isinstance(app.screen, GateScreen) and app.screen.run == "support-v1"
        assert "no baseline set" in _report(app)
        assert "B makes support-v1 the baseline" in _report(app)  # the key that mends it
        assert app.screen.result_code == 2
        await pilot.press("B")  # support-v1 becomes the baseline
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=1)
        await pilot.press("G")
        await settle(app, pilot)
        assert isinstance(app.screen, GateScreen) and app.screen.run == "support-v2"
        text = _report(app)
        assert text.startswith("gate: FAIL: support-v2 vs baseline support-v1")
        assert "RED FLAG" in text and app.screen.result_code == 1
    with open_store(path) as db:
        entry = current_baseline(db)
        assert entry is not None and entry.run == "support-v1"


async def test_palette_gate_entry_opens_the_newest_run(tmp_path: Path) -> None:
    path = _db(tmp_path)
    CliRunner().invoke(cli, ["--db", str(path), "baseline", "set", "support-v1"])
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"gate support-v2")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, GateScreen) and app.screen.run == "support-v2"
        assert "gate: FAIL" in _report(app)


async def test_gate_screen_shows_the_whole_verdict_and_w_cycles_the_outcomes(
    tmp_path: Path,
) -> None:
    """The screen shows what `reviewer gate` prints (the forbidden rules' exact tests and the
    tasks that dropped within noise too), and W gates again on the human labels, then the judge."""
    path = _db(tmp_path)
    CliRunner().invoke(cli, ["--db", str(path), "baseline", "set", "support-v1"])
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(GateScreen("support-v2"))
        await settle(app, pilot)
        text = _report(app)
        assert "the baseline never broke it, one-sided exact p = 0.055" in text
        assert "dropped within noise (3; warnings, not failures):" in text
        assert "outcomes:" not in text
        await pilot.press("W")
        await settle(app, pilot)
        assert app.screen.outcome == "human"
        assert "outcomes: the standing human label where there is one" in _report(app)
        await pilot.press("W")
        await settle(app, pilot)
        assert "outcomes: the latest judge verdict where there is one" in _report(app)
