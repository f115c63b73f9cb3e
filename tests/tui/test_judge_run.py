"""Running the judge from the app: progress, verdicts stored as they arrive, cancel, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.judge.standin import StandIn
from reviewer.store.db import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.judging import JudgeScreen
from tests.conftest import SAMPLE_RUNS

SAMPLE = SAMPLE_RUNS / "support-v1.jsonl"
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


async def _start(pilot: object, screen: JudgeScreen) -> str:
    """Wait for the estimate, then press Enter; the estimate's text."""
    for _ in range(200):
        if screen.phase == "asking":
            text = str(screen.query_one("#judge-status").render())
            await pilot.press("enter")  # type: ignore[attr-defined]
            return text
        if screen.finished:
            return ""
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("the estimate did not come")


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
            await _start(pilot, screen)
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
            await _start(pilot, screen)
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
        await _start(pilot, screen)
        await _wait_done(pilot, screen)
        assert screen.summary.startswith("judge: ANTHROPIC_API_KEY is not set")
        assert "\n" not in screen.summary


def _verdict_rows(path: Path) -> list[tuple[object, ...]]:
    db = open_store(path)
    try:
        return db.execute(
            "SELECT t.run, t.task_id, t.trial, v.judge, v.verdict, v.rationale, v.cost_usd "
            "FROM verdicts v JOIN trials t ON t.id = v.trial_id WHERE v.source LIKE 'judge%' "
            "ORDER BY t.run, t.task_id, t.trial"
        ).fetchall()
    finally:
        db.close()


def _trial_id(path: Path, task_id: str, trial: int) -> str:
    db = open_store(path)
    try:
        row = db.execute(
            "SELECT id FROM trials WHERE task_id = ? AND trial = ?", [task_id, trial]
        ).fetchone()
        return str(row[0])
    finally:
        db.close()


@pytest.mark.parametrize("one_trial", [False, True], ids=["every unjudged", "this trial"])
async def test_the_app_and_the_cli_store_the_same_verdicts(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, one_trial: bool
) -> None:
    """The app's judge window and `reviewer judge --json` run the one workflow: same rows, same line."""
    import asyncio
    import json

    from click.testing import CliRunner

    from reviewer.cli import cli
    from reviewer.workflows.imports import import_paths

    twin = tmp_path / "twin.db"
    with open_store(twin) as db:
        import_paths(db, [SAMPLE])
    app_ids = [_trial_id(db_path, "refund_partial", 2)] if one_trial else None
    cli_args = ["--trial", _trial_id(twin, "refund_partial", 2)] if one_trial else []
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = JudgeScreen(app_ids)
            app.push_screen(screen)
            await _start(pilot, screen)
            await _wait_done(pilot, screen)
        args = ["--db", str(twin), "judge", "--only-unjudged", *cli_args, "--json"]
        # the CLI runs its own event loop, so not inside the test's
        r = await asyncio.to_thread(CliRunner().invoke, cli, args)
    assert r.exit_code == 0, r.output
    rows = _verdict_rows(db_path)
    assert len(rows) == (1 if one_trial else 40)
    assert rows == _verdict_rows(twin)
    assert json.loads(r.stdout)["done"] == len(rows)
    assert screen.summary in r.stderr.splitlines()


async def test_nothing_is_sent_before_the_estimate_is_accepted(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One Enter on the palette's "judge every unjudged trial" started judging 7,301 trials with no
    estimate and no cap: the window now shows what would be sent and cost, under the default cap,
    and sends nothing until Enter; Esc there sends nothing at all."""
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = JudgeScreen()
            app.push_screen(screen)
            for _ in range(200):
                if screen.phase == "asking":
                    break
                await pilot.pause(0.05)
            text = str(screen.query_one("#judge-status").render())
            assert ": 40 trials: 40 to send, 0 answered by the cache" in text
            assert "input and" in text and "output tokens" in text and "about $" in text
            assert (
                "cost cap $10 (the default; raise it with --max-cost or [judge] max_cost)" in text
            )
            assert "Enter starts" in str(screen.query_one("#judge-hint").render())
            await pilot.pause(0.3)
            assert server.message_requests == 0
            await pilot.press("escape")
            assert not isinstance(app.screen, JudgeScreen)
        assert server.message_requests == 0
    assert _judged(db_path) == 0


async def test_the_estimate_window_fits_an_80_column_terminal(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window was 84 columns wide whatever the terminal: at 80x24 its right border (and with
    it the edge of the estimate it asks about) was cut off."""
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = JudgeScreen()
            app.push_screen(screen)
            for _ in range(200):
                if screen.phase == "asking":
                    break
                await pilot.pause(0.05)
            box = screen.query_one("#judge-box").region
            assert box.x >= 0 and box.right <= 80, box
            await pilot.press("escape")
        assert server.message_requests == 0


async def test_closing_the_app_mid_run_stops_sending_and_keeps_what_arrived(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM or a closed terminal closes the app: its judge run went on sending every request to
    the end after the app was gone (paying for them), and printed a NoActiveAppError traceback
    for each reply. The run now stops as the CLI's does: nothing more is sent, the replies on
    their way are stored."""
    import time

    with StandIn(delay=0.5) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=db_path)
        async with app.run_test(size=SIZE) as pilot:
            screen = JudgeScreen()
            app.push_screen(screen)
            await _start(pilot, screen)
            for _ in range(200):
                if server.message_requests >= 8:
                    break
                await pilot.pause(0.05)
            app.exit()
        deadline = time.monotonic() + 10
        sent = -1
        while time.monotonic() < deadline and sent != server.message_requests:
            sent = server.message_requests
            time.sleep(1.0)
        assert sent < 40
    assert _judged(db_path) == sent
