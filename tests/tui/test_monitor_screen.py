"""The Monitor screen: M on the runs screen (and the palette) shows one row per window with the
alerts marked and a sparkline per rate; Enter on a window lists its flagged conversations, Enter on
one opens the transcript."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from textual.widgets import DataTable, Static

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.monitor import FlaggedScreen, MonitorScreen, spark_lines, sparkline
from reviewer.tui.screens.transcript import TranscriptScreen
from tests.commands.test_monitor import conversation
from tests.conftest import write_jsonl
from tests.tui.conftest import settle

SIZE = (160, 45)
HOSTILE = "[red]x[/] \x1b[31m hostile [/foo]"


def _db(tmp_path: Path) -> Path:
    recs = [
        conversation(d, i, error=(d >= 6 and i % 2 == 0) or i == 3)
        for d in range(8)
        for i in range(30)
    ]
    recs[6 * 30]["task_id"] = HOSTILE  # flagged on 2025-06-07 (a tool error)
    write_jsonl(tmp_path / "prod.jsonl", recs)
    path = tmp_path / "m.db"
    r = CliRunner().invoke(cli, ["--db", str(path), "import", str(tmp_path / "prod.jsonl")])
    assert r.exit_code == 0, r.stderr
    return path


def test_one_window_is_one_window_not_1_windows() -> None:
    """A day of Claude Code sessions opened the monitor on 'rates per day, 1 windows'."""
    one = spark_lines([("tool error", [0.0])], 80)[0].plain
    assert one.startswith("rates per day, 1 window, newest right"), one
    two = spark_lines([("tool error", [0.0, 0.1])], 80)[0].plain
    assert two.startswith("rates per day, 2 windows, newest right"), two


def test_sparkline_scales_to_the_largest() -> None:
    assert sparkline([0.0, 0.5, 1.0, None]) == "▁▅█ "
    assert sparkline([0.0, 0.0]) == "▁▁"


async def test_monitor_screen_windows_alerts_and_flagged(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("M")
        await settle(app, pilot)
        assert isinstance(app.screen, MonitorScreen)
        table = app.screen.query_one("#windows", DataTable)
        assert table.row_count == 8
        alerts = str(app.screen.query_one("#monitor-alerts", Static).render())
        assert "ALERT day 2025-06-07: tool error" in alerts
        row = table.get_row("2025-06-07")
        assert any(str(c).endswith("!") for c in row)  # the alert marked in its window
        sparks = str(app.screen.query_one("#monitor-sparks", Static).render())
        assert "tool error" in sparks and "█" in sparks
        table.move_cursor(row=6)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, FlaggedScreen) and app.screen.window == "2025-06-07"
        flagged = app.screen.query_one("#flagged", DataTable)
        assert flagged.row_count == 16  # the 15 even ones and i == 3 had a tool error
        names = [str(flagged.get_row_at(i)[1]) for i in range(flagged.row_count)]
        assert any("[red]x[/] ␛[31m hostile [/foo]" in n for n in names)  # shown, not markup
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)


async def test_palette_opens_the_monitor_and_h_switches_to_hours(
    tmp_path: Path,
) -> None:
    app = ReviewerApp(db_path=_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"monitor production")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MonitorScreen)
        assert app.screen.query_one("#windows", DataTable).row_count == 8
        await pilot.press("h")  # hour windows
        await settle(app, pilot)
        assert app.screen.query_one("#windows", DataTable).row_count > 8


async def test_v_shows_the_judges_estimate_and_sends_nothing_until_enter(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """V judged the sample at once; now it opens the judge window on the sample's unjudged
    conversations with what that would send and cost under the monitor's cap, and Esc sends
    nothing."""
    from reviewer.judge.standin import StandIn
    from reviewer.tui.screens.judging import JudgeScreen

    (tmp_path / "reviewer.toml").write_text(
        "[monitor]\nsample = 0.5\nmax_cost = 0.25\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        app = ReviewerApp(db_path=_db(tmp_path))
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            app.push_screen(MonitorScreen())
            await settle(app, pilot)
            sampled = len(app.screen.view.sampled)  # type: ignore[attr-defined]
            assert 60 < sampled < 180
            await pilot.press("V")
            await settle(app, pilot)
            assert isinstance(app.screen, JudgeScreen) and app.screen.phase == "asking"
            text = str(app.screen.query_one("#judge-status", Static).render())
            assert f": {sampled} trials: {sampled} to send" in text
            assert "cost cap $0.25" in text
            await pilot.press("escape")
            await settle(app, pilot)
            assert isinstance(app.screen, MonitorScreen)
        assert server.message_requests == 0


async def test_i_on_the_monitor_opens_the_import_it_offers(tmp_path: Path) -> None:
    """With no production data the monitor says "or i here": i did nothing there (found by a
    review). It opens the import dialog, as on the runs screen."""
    from reviewer.tui.screens.importing import ImportModal
    from reviewer.tui.screens.monitor import NO_DATA

    assert "i here" in NO_DATA
    app = ReviewerApp(db_path=tmp_path / "empty.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(MonitorScreen())
        await settle(app, pilot)
        await pilot.press("i")
        await settle(app, pilot)
        assert isinstance(app.screen, ImportModal)


async def test_an_import_from_the_monitor_shows_on_the_runs_screen_at_once(tmp_path: Path) -> None:
    """An import made from the monitor left the runs screen listing the runs before it until R
    (found by a review): any import, from any screen, makes the runs screen read them again."""
    from reviewer.tui.screens.importing import ImportModal
    from reviewer.tui.screens.runs import RunsScreen
    from tests.conftest import native_trial, sample_copy

    db = sample_copy(tmp_path / "s.db")
    prod = write_jsonl(
        tmp_path / "prod.jsonl", [dict(native_trial(f"t{i}"), run="prod") for i in range(3)]
    )
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert sorted(r.name for r in app.screen.rows) == ["support-v1", "support-v2"]
        await pilot.press("M")
        await settle(app, pilot)
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("i")
        await settle(app, pilot)
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(prod), "enter")
        await settle(app, pilot)
        assert "imported 3 trials" in str(app.screen.query_one("#import-status", Static).render())
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, MonitorScreen)
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert sorted(r.name for r in app.screen.rows) == ["prod", "support-v1", "support-v2"]


async def test_the_judge_column_is_the_fail_rate_the_cli_shows(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """The app's column read "judge pass 0.38 n=8" where `reviewer monitor` reads "judge fail rate
    62.5%! [..] n=8" for the same window, beside a "judge fail" sparkline: now both show the fail
    rate, the rate that alerts."""
    from reviewer.judge.standin import StandIn

    (tmp_path / "reviewer.toml").write_text("[monitor]\nsample = 0.5\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    db = _db(tmp_path)
    with StandIn() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-test-key")
        # the judge runs its own event loop: not inside this test's
        r = await asyncio.to_thread(CliRunner().invoke, cli, ["--db", str(db), "monitor"])
    cli_cells = {}
    for line in r.stdout.splitlines():
        if line.startswith("2025-06-"):
            window, *_, n, flagged = line.split()
            cli_cells[window] = (line.split("%")[-3].split()[-1] + "%", n)
    assert len(cli_cells) == 8, (r.stdout, r.stderr, r.exception)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(MonitorScreen())
        await settle(app, pilot)
        table = app.screen.query_one("#windows", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        assert "judge fail" in header and "judge pass" not in header
        for window, (rate, n) in cli_cells.items():
            cell = str(table.get_row(window)[header.index("judge fail")])
            assert cell.startswith(rate) and cell.endswith(n), (window, cell, rate, n)
