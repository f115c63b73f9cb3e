"""The Compare screen: the same comparison as `reviewer compare` (the audit's warnings and the
forbidden rules' exact tests included), and W for where the outcomes come from."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.compare import CompareScreen
from tests.conftest import sample_copy
from tests.tui.conftest import settle


async def test_compare_screen_tests_the_forbidden_rise_and_w_switches_outcomes(
    tmp_path: Path,
) -> None:
    path = sample_copy(tmp_path / "c.db")
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        await settle(app, pilot)

        def shown() -> str:
            return str(app.screen.query_one("#comparison", Static).render())

        assert (
            "forbidden-tool rate: 0 of 40 -> 3 of 30 trials: the baseline never broke it" in shown()
        )
        assert "outcomes:" not in shown()
        await pilot.press("W")
        await settle(app, pilot)
        assert "outcomes: the standing human label where there is one" in shown()
        await pilot.press("W", "W")
        await settle(app, pilot)
        assert "outcomes:" not in shown()  # back to the harness
