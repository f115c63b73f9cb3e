"""The app served to a browser asks who is labeling first (`reviewer serve`): each session is its
own labeler, and labels go under the name it gave."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.who import WhoModal
from tests.tui.conftest import settle

SIZE = (80, 24)


async def test_the_name_typed_is_the_labeler(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "x.db", labeler="server-login", ask_labeler=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, WhoModal)
        await pilot.press(*"  Ann  Lee ", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen) and app.labeler == "Ann Lee"


async def test_esc_or_nothing_typed_gives_the_session_a_name_of_its_own(tmp_path: Path) -> None:
    names = []
    for keys in (["escape"], ["enter"]):
        app = ReviewerApp(db_path=tmp_path / "x.db", labeler="server-login", ask_labeler=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await pilot.press(*keys)
            await settle(app, pilot)
            assert isinstance(app.screen, RunsScreen)
            names.append(app.labeler)
    assert all(n.startswith("browser-") for n in names) and names[0] != names[1]


async def test_a_name_that_cannot_be_one_is_refused_in_place(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "x.db", labeler="server-login", ask_labeler=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, WhoModal)
        modal.query_one("#who-name").value = "a\x1b[31mb"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is modal and app.labeler == "server-login"
        assert "printable characters" in str(modal.query_one("#who-problem", Static).render())
        modal.query_one("#who-name").value = "x" * 61  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.screen is modal and app.labeler == "server-login"  # said, not cut short


async def test_the_app_opened_in_a_terminal_does_not_ask(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "x.db", labeler="me")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen) and app.labeler == "me"
