"""The app served to a browser asks who is labeling first (`reviewer serve`): each session is its
own labeler, and labels go under the name it gave."""

from __future__ import annotations

from pathlib import Path

import pytest
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


async def test_the_app_with_no_login_name_to_go_by_asks_who_is_labeling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`reviewer` in a container whose user has no login name labeled as "unknown", everyone alike
    (their labels replaced each other's); now it asks, as a browser session does."""
    import getpass

    from reviewer.tui import app as app_module
    from tests.conftest import run_cli

    def no_login_name() -> str:
        raise KeyError("getpwuid(): uid not found: 12345")

    opened: list[ReviewerApp] = []
    monkeypatch.setattr(getpass, "getuser", no_login_name)
    monkeypatch.setattr(app_module.ReviewerApp, "run", lambda self: opened.append(self))
    code, _, err = run_cli("--db", str(tmp_path / "x.db"))
    assert code == 0, err
    (app,) = opened
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        modal = app.screen
        assert isinstance(modal, WhoModal)
        said = " ".join(str(s.render()) for s in modal.query(Static))
        assert "no login name to store your labels under" in said
        assert "Each browser session" not in said
        await pilot.press(*"ann", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen) and app.labeler == "ann"
    opened.clear()
    code, _, err = run_cli("--db", str(tmp_path / "x.db"), "--labeler", "bob")
    assert code == 0 and opened[0].ask_labeler is False and opened[0].labeler == "bob", err
