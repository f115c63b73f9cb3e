"""Export as regression tasks from the app: the transcript's trial, the cluster under the cursor and
the trials list, appended to regression/tasks.jsonl by a worker; the summary comes as a notification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.store.trial_list import TrialFilter, clear_cache
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.failures import FailuresScreen
from reviewer.tui.screens.transcript import TranscriptScreen
from reviewer.tui.screens.trials import TrialsScreen
from tests.conftest import SAMPLE_RUNS, sample_copy
from tests.tui.conftest import settle

SIZE = (120, 32)
TASKS = Path("regression/tasks.jsonl")  # relative to the test's cwd, tmp_path


@pytest.fixture
def db_and_ids(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The sample runs, clustered; one failure labeled fail, with a note holding markup."""
    db_path = sample_copy(tmp_path / "s.db", SAMPLE_RUNS, "cluster")
    db = open_store(db_path)
    try:
        failed = db.execute(
            "SELECT id FROM trials WHERE success = 0 AND run = 'support-v1' ORDER BY seq"
        ).fetchall()
        passed = db.execute(
            "SELECT t.id FROM trials t JOIN verdicts v ON v.trial_id = t.id "
            "WHERE t.success = 1 AND v.verdict = 'pass' ORDER BY t.seq LIMIT 1"
        ).fetchone()
        add_label(db, failed[0][0], "ana", "fail", note="[red]x[/] must not happen")
    finally:
        db.close()
    clear_cache()
    return db_path, {"labeled": failed[0][0], "passed": passed[0]}


def tasks() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines()]


def messages(app: ReviewerApp) -> list[str]:
    """The toasts, and an export summary too long for one (shown in a report that wraps)."""
    from reviewer.tui.screens.import_report import ExportReport

    said = [n.message for n in app._notifications]
    for screen in app.screen_stack:
        if isinstance(screen, ExportReport):
            said.append("\n".join(screen.lines))
    return said


async def test_export_this_trial_from_the_transcript(
    db_and_ids: tuple[Path, dict[str, str]],
) -> None:
    db_path, ids = db_and_ids
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(TranscriptScreen(ids["labeled"]))
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        (task,) = tasks()
        assert task["provenance"]["trial_id"] == ids["labeled"]
        assert task["expected"]["note"] == "[red]x[/] must not happen"
        assert any(m.startswith("exported 1 task to regression/tasks.jsonl") for m in messages(app))
        assert not any(m.startswith("Exporting") for m in messages(app))  # done: taken off
        await pilot.press("T")  # again: appended, nothing new
        await settle(app, pilot)
        assert len(tasks()) == 1
        assert any("1 already in the file, 1 in all" in m for m in messages(app))
        app.push_screen(TranscriptScreen(ids["passed"]))
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        nothing = [m for m in messages(app) if m.startswith("Nothing to export from this trial")]
        assert nothing and not any("nothing to export" in m for m in nothing)  # said once
        assert type(app.screen).__name__ in ("TranscriptScreen", "ExportReport")  # no error modal


async def test_export_the_cluster_under_the_cursor(db_and_ids: tuple[Path, dict[str, str]]) -> None:
    db_path, _ = db_and_ids
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(FailuresScreen())
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, FailuresScreen)
        table = screen.query_one("#clusters", DataTable)
        table.move_cursor(row=1)
        await pilot.pause()
        cluster = screen.rows[1]
        await pilot.press("T")
        await settle(app, pilot)
        exported = tasks()
        assert exported and {t["provenance"]["cluster"]["id"] for t in exported} == {cluster.id}
        said = "\n".join(messages(app))
        assert f"from {cluster.name} [{cluster.id}]" in said
        # every member left out is counted with its reason (the judge's passes were left unsaid)
        (skipped,) = [line for line in said.splitlines() if line.startswith("skipped ")]
        assert len(exported) + int(skipped.split()[1]) == cluster.size
        assert "harness failures the judge passed" in skipped


async def test_export_the_filtered_list_and_from_the_palette(
    db_and_ids: tuple[Path, dict[str, str]],
) -> None:
    db_path, ids = db_and_ids
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(TrialsScreen(TrialFilter(run="support-v2", outcome="fail")))
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        first = tasks()
        assert first and {t["provenance"]["run"] for t in first} == {"support-v2"}
        app.push_screen(TranscriptScreen(ids["labeled"]))
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"export as regression tasks")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        after = tasks()
        assert after[: len(first)] == first
        assert [t["provenance"]["trial_id"] for t in after[len(first) :]] == [ids["labeled"]]


async def test_the_cli_exports_what_the_app_exports(
    db_and_ids: tuple[Path, dict[str, str]],
) -> None:
    """Each of the app's exports has a `reviewer export` line giving the same tasks, byte for byte."""
    db_path, ids = db_and_ids
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(FailuresScreen())
        await settle(app, pilot)
        assert isinstance(app.screen, FailuresScreen)
        cluster = app.screen.rows[1].id
        scopes = {
            "trial": (TranscriptScreen(ids["labeled"]), ["--trial", ids["labeled"]]),
            "cluster": (None, ["--cluster", cluster]),
            "list": (
                TrialsScreen(TrialFilter(run="support-v2", outcome="fail")),
                ["--run", "support-v2", "--outcome", "fail"],
            ),
        }
        for name, (screen, args) in scopes.items():
            if TASKS.exists():
                TASKS.unlink()
            if screen is not None:
                app.push_screen(screen)
                await settle(app, pilot)
            else:
                app.screen.query_one("#clusters", DataTable).move_cursor(row=1)
                await pilot.pause()
            await pilot.press("T")
            await settle(app, pilot)
            out = Path(f"cli-{name}.jsonl")
            cli_args = ["--db", str(db_path), "export", "--judge-fails", "--append"]
            result = CliRunner().invoke(cli, [*cli_args, *args, "--out", str(out), "--json"])
            assert result.exit_code == 0, result.stderr
            assert json.loads(result.stdout)["written"] > 0
            assert out.read_bytes() == TASKS.read_bytes(), name
            if screen is not None:
                app.pop_screen()
                await settle(app, pilot)
