"""The app on a small database: runs screen, then a run's tasks."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp, RunsScreen, TasksScreen
from tests.conftest import native_trial, write_jsonl


def make_db(tmp_path: Path, name: str = "x.db") -> Path:
    recs = [
        native_trial("refund", passed=p, trial=i + 1)
        for i, p in enumerate([True, False, True, True])
    ]
    recs += [native_trial("[red]evil[/] [link=x]", passed=True, trial=1)]
    f = write_jsonl(tmp_path / "support.jsonl", recs)
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / name), "import", "--run", "support", str(f)]
    )
    assert result.exit_code == 0, result.stderr
    return tmp_path / name


async def test_runs_then_tasks(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one("#runs")
        assert table.row_count == 1  # type: ignore[attr-defined]
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, TasksScreen)
        tasks = app.screen.query_one("#tasks")
        assert tasks.row_count == 2  # type: ignore[attr-defined]
        rows = [tasks.get_row_at(i) for i in range(tasks.row_count)]  # type: ignore[attr-defined]
        names = [str(r[0]) for r in rows]
        assert "[red]evil[/] [link=x]" in names
        strip = {str(r[0]): str(r[-1]) for r in rows}
        assert strip["refund"] == "●○●●"
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_empty_database_says_how_to_import(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "empty.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = app.screen.query_one("#runs-status")
        assert "reviewer import" in str(status.render())
