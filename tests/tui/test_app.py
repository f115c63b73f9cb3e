"""The app's main screens on the sample runs: runs, tasks, compare, failures, help, keymap."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from textual.widgets import DataTable, Input, Static

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.compare import CompareScreen
from reviewer.tui.screens.failures import FailuresScreen
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.tasks import TasksScreen
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl
from tests.tui.conftest import settle


def import_into(db: Path, *paths: Path, run: str | None = None) -> Path:
    args = ["--db", str(db), "import", *(["--run", run] if run else []), *map(str, paths)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    return db


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    return sample_copy(tmp_path / "s.db")


def screen_text(app: ReviewerApp) -> str:
    """Everything the static widgets and tables of the current screen show, as plain text."""
    parts = []
    for w in app.screen.query(Static):
        parts.append(str(w.render()))
    for t in app.screen.query(DataTable):
        for i in range(t.row_count):
            parts.append(" ".join(str(c) for c in t.get_row_at(i)))
    return "\n".join(parts)


async def test_runs_then_tasks_of_a_run(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        table = app.screen.query_one("#runs", DataTable)
        assert table.row_count == 2
        text = screen_text(app)
        assert "support-v1" in text and "0.75" in text and "each run's own k" in text
        cells = " ".join(str(c) for i in range(table.row_count) for c in table.get_row_at(i))
        assert "(k=" not in cells  # no k in the cells: one k, in the header
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TasksScreen) and app.screen.run == "support-v1"
        tasks = app.screen.query_one("#tasks", DataTable)
        rows = {str(tasks.get_row_at(i)[0]): tasks.get_row_at(i) for i in range(tasks.row_count)}
        assert set(rows) == {
            "refund_simple",
            "refund_partial",
            "address_change",
            "cancel_after_ship",
            "multi_order_lookup",
        }
        assert (
            str(rows["cancel_after_ship"][6]).count("●") == 4
            and str(rows["cancel_after_ship"][6]).count("○") == 4
        )
        assert "4 flaky" in screen_text(app)
        await pilot.press("s")  # sort: pass^k worst first
        first = str(tasks.get_row_at(0)[0])
        assert first in ("cancel_after_ship", "multi_order_lookup")
        await pilot.press("y")  # flaky only
        assert tasks.row_count == 4
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)


async def test_mark_two_runs_and_compare(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("d")
        assert isinstance(app.screen, RunsScreen)  # nothing marked: a warning, no screen
        await pilot.press("space", "down", "space", "d")
        await settle(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        text = str(app.screen.query_one("#comparison", Static).render())
        assert "RED FLAG" in text and "forbidden-tool rate" in text and "too few tasks" in text
        chart = str(app.screen.query_one("#chart", Static).render())
        assert "support-v1" in chart and "support-v2" in chart


async def test_failures_screen_recluster_and_rename(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        assert isinstance(app.screen, FailuresScreen)
        assert "No clustering yet" in screen_text(app)
        await pilot.press("C")
        await settle(app, pilot)
        table = app.screen.query_one("#clusters", DataTable)
        assert table.row_count >= 3
        sizes = [int(str(table.get_row_at(i)[2])) for i in range(table.row_count)]
        assert sizes == sorted(sizes, reverse=True) and sum(sizes) == 22
        await pilot.press("r")
        await pilot.pause()
        for _ in range(80):
            await pilot.press("backspace")
        await pilot.press(*"[b]Shipped orders cancelled[/b]", "enter")
        await settle(app, pilot)
        names = [str(table.get_row_at(i)[4]) for i in range(table.row_count)]
        assert "[b]Shipped orders cancelled[/b]" in names


async def test_help_lists_the_keys_of_the_screen(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(app.screen._table())
        text = console.export_text()
        assert "Compare" in text and "runs.compare" in text and "Quit" in text
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_the_help_title_is_one_line_at_80_columns(sample_db: Path) -> None:
    """At 80x24 the title wrapped and left "id" on a line of its own (found by a new user)."""
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        room = app.screen.query_one("#help-table").content_region.width
        console = Console(width=room, record=True, file=io.StringIO())
        console.print(app.screen._table())
        first = console.export_text().splitlines()[0].strip()
        assert first.startswith("Keys (Esc closes)") and first.endswith("by id"), first


async def test_keys_can_be_remapped_by_binding_id(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db, keymap={"runs.failures": "u"})
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("u")
        await settle(app, pilot)
        assert isinstance(app.screen, FailuresScreen)


async def test_empty_database_says_how_to_import(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "empty.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert "press i to import" in screen_text(app)


async def test_hostile_run_and_task_names_are_shown_literally(tmp_path: Path) -> None:
    recs = [native_trial("[red]evil[/] [link=x]\x1b]0;pwned\x07", passed=True, trial=1)]
    db = import_into(tmp_path / "x.db", write_jsonl(tmp_path / "r.jsonl", recs), run="[bold]run[/")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert "[bold]run[/" in screen_text(app)
        await pilot.press("enter")
        await settle(app, pilot)
        text = screen_text(app)
        assert "[red]evil[/] [link=x]␛]0;pwned␇" in text
        assert "\x1b" not in text


async def test_palette_jumps_to_a_task(sample_db: Path) -> None:
    from reviewer.tui.screens.trials import TrialsScreen

    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"task: cancel_after_ship (support-v2)")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)
        assert (
            app.screen.filter.task_id == "cancel_after_ship"
            and app.screen.filter.run == "support-v2"
        )


async def test_light_theme_renders_the_runs_screen(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(100, 30)) as pilot:
        app.theme = "textual-light"
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert "support-v2" in screen_text(app)
        assert not app.dark if hasattr(app, "dark") else app.current_theme.dark is False


async def test_a_worker_failure_shows_the_error_modal_and_the_app_keeps_running(
    tmp_path: Path,
) -> None:
    from reviewer.tui.screens.error import ErrorModal

    (tmp_path / "broken.db").write_bytes(b"not a database at all" * 50)
    app = ReviewerApp(db_path=tmp_path / "broken.db")
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot, tolerate_failures=True)  # the failure is what is tested
        assert isinstance(app.screen, ErrorModal)
        assert "not a reviewer database" in str(
            app.screen.query_one("#error-detail", Static).render()
        )
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)


async def test_import_from_inside_the_app(tmp_path: Path) -> None:
    from reviewer.tui.screens.importing import ImportModal

    app = ReviewerApp(db_path=tmp_path / "new.db")
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one("#runs", DataTable).row_count == 0
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(SAMPLE_RUNS), "enter")
        await settle(app, pilot)
        status = str(app.screen.query_one("#import-status", Static).render())
        assert "imported 88 trials (2 runs, 8 tasks)" in status
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert app.screen.query_one("#runs", DataTable).row_count == 2


async def test_a_cancelled_import_rolls_back_the_file_being_read(tmp_path: Path) -> None:
    from reviewer.tui.screens.importing import ImportModal

    big = write_jsonl(
        tmp_path / "big.jsonl", [native_trial(f"t{i}", passed=True) for i in range(6000)]
    )
    app = ReviewerApp(db_path=tmp_path / "new.db")
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ImportModal)
        modal.query_one("#import-path").value = str(big)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.press("escape")  # cancel while it runs
        await settle(app, pilot)
        assert app.is_running
        from reviewer.store import open_store

        n = open_store(tmp_path / "new.db").execute("SELECT COUNT(*) FROM trials").fetchone()[0]
        assert n in (0, 6000)  # never half a file


async def test_the_apps_import_names_each_skipped_record_by_file_and_line(tmp_path: Path) -> None:
    """The app shows the CLI's `file:line: reason` lines, not only how many records were skipped."""
    from reviewer.tui.screens.importing import ImportModal

    runs = tmp_path / "runs.jsonl"
    good = json.dumps(native_trial("t1"))
    runs.write_text(
        good + "\n" + good.replace('"passed": true', '"passed": true, "latency_s": NaN') + "\n"
    )
    app = ReviewerApp(db_path=tmp_path / "new.db")
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, ImportModal)
        await pilot.press(*str(runs), "enter")
        await settle(app, pilot)
        status = str(app.screen.query_one("#import-status", Static).render())
        assert "runs.jsonl:2:" in status and "NaN" in status
        assert "imported 1 trial (1 run, 1 task)" in status
        path = app.screen.query_one("#import-path", Input)
        assert path.value == "" and not path.disabled and "imports another path" in status


async def test_help_shows_brackets_literally_and_names_bracket_keys(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(HelpScreen(app.screen)._table())
        text = console.export_text()
        assert "reviewer.toml [keys] by id" in text and "id (for [keys])" in text
    from reviewer.tui.screens.help import _pretty

    assert _pretty("right_square_bracket,left_square_bracket") == "], ["


async def test_an_empty_database_says_to_press_i(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "new.db")
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        assert "press i to import" in str(app.screen.query_one("#runs-status", Static).render())


async def test_a_long_run_name_stays_in_sight_in_the_titles(tmp_path: Path) -> None:
    from reviewer.tui.screens.tasks import TasksScreen

    run = "b" * 130
    db = tmp_path / "long.db"
    runs = write_jsonl(tmp_path / "r.jsonl", [native_trial("t1", run=run)])
    assert CliRunner().invoke(cli, ["--db", str(db), "import", str(runs)]).exit_code == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        await app.push_screen(TasksScreen(run))
        await settle(app, pilot)
        title = app.screen.query_one(".title", Static)
        shown = "".join(s.text for s in title.render_lines(title.region.reset_offset)[0])
        assert shown.strip().startswith("Tasks of bbbb") and "…" in shown


async def test_flaky_only_on_a_run_without_flaky_tasks_says_so_and_keeps_the_tasks(
    tmp_path: Path,
) -> None:
    """A tau-bench run of one trial per task: y emptied the table without a word, under a line
    'not flaky: no trial passed' about a task no longer shown, and F then did nothing (found by
    a new user on the realworld grok-3 run). It says why and keeps the tasks; one run is '1 run'."""
    recs = [native_trial(f"t{i}", passed=i % 2 == 0, run="one-each", trial=1) for i in range(4)]
    db = import_into(tmp_path / "o.db", write_jsonl(tmp_path / "o.jsonl", recs))
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 32)) as pilot:
        await settle(app, pilot)
        assert "1 run ·" in str(app.screen.query_one("#runs-status", Static).render())
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TasksScreen)
        tasks = app.screen.query_one("#tasks", DataTable)
        assert tasks.row_count == 4
        await pilot.press("y")
        await settle(app, pilot)
        assert tasks.row_count == 4
        toasts = [str(n.message) for n in app._notifications]
        assert any("No flaky task" in t and "one scored trial per task" in t for t in toasts)
