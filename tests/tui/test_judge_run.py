"""Running the judge from the app: progress, verdicts stored as they arrive, cancel, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.judging import JudgeScreen

SAMPLE = Path(__file__).resolve().parents[2] / "sample_runs" / "support-v1.jsonl"
SIZE = (110, 32)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    from reviewer.workflows.imports import import_paths

    path = tmp_path / "r.db"
    db = open_store(path)
    import_paths(db, [SAMPLE])
    db.close()
    return path


def _judged(path: Path) -> int:
    db = open_store(path)
    try:
        return db.execute("SELECT COUNT(*) FROM verdicts WHERE source LIKE 'judge%'").fetchone()[0]
    finally:
        db.close()


async def _wait_done(pilot: object, screen: JudgeScreen) -> None:
    for _ in range(200):
        if screen.finished:
            return
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("the judge run did not finish")


async def test_judge_every_trial_from_the_app(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = JudgeScreen()
            app.push_screen(screen)
            await _wait_done(pilot, screen)
            assert "judged 40 of 40" in screen.summary
            status = str(screen.query_one("#judge-status").render())
            assert "judged 40 of 40" in status
            await pilot.press("escape")
            assert not isinstance(app.screen, JudgeScreen)
        assert server.message_requests == 40
    assert _judged(db_path) == 40


async def test_cancel_keeps_what_arrived(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with StandIn(delay=0.1) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        monkeypatch.chdir(db_path.parent)
        Path("reviewer.toml").write_text("[judge]\nconcurrency = 1\n")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = JudgeScreen()
            app.push_screen(screen)
            while server.message_requests < 3:
                await pilot.pause(0.05)
            await pilot.press("escape")
            await _wait_done(pilot, screen)
            assert "cancelled" in screen.summary
    assert 2 <= _judged(db_path) < 40


async def test_no_key_is_one_line(db_path: Path) -> None:
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        screen = JudgeScreen()
        app.push_screen(screen)
        await _wait_done(pilot, screen)
        assert screen.summary.startswith("judge: ANTHROPIC_API_KEY is not set")
        assert "\n" not in screen.summary
