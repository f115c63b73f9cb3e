"""Names with markup, ANSI and OSC sequences in every field never crash the app and are shown literally
(issue 14, item 4): every screen, the palette (discovery and search), toasts, titles and modals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable, Static

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.clusters import latest_clusters
from reviewer.text import visible
from reviewer.tui.app import ReviewerApp
from tests.support import hostile
from tests.tui.conftest import press as shared_press
from tests.tui.conftest import settle as shared_settle

SIZE = (160, 48)


def invoke(db: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, (args, result.output)


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    """Every field a user can name carries the sequences: run, task, file, rule, rubric, judge
    rationale, cluster, queue, labeler, note; and a second run to compare."""
    db = tmp_path / ("db" + hostile.OSC0 + ".db")
    folder = hostile.build(tmp_path / "runs")
    invoke(db, "import", str(folder))
    invoke(db, "import", "--run", "second " + hostile.ARG, str(folder / hostile.FILE))
    invoke(db, "cluster")
    with open_store(db) as store:
        cid = latest_clusters(store)[0].id
    invoke(db, "cluster", "rename", cid, "cluster " + hostile.ARG)
    labeler = "who " + hostile.ARG
    # names with escapes are refused at the door now (a labels file, --labeler); a database
    # written before the checks holds them all the same, so the store takes them here
    from reviewer.store.labels import add_label, find_trial_id

    with open_store(db) as store:
        for i in (1, 2, 3):
            tid = find_trial_id(store, run=hostile.RUN, task_id=hostile.TASK, trial=i)
            assert tid is not None
            add_label(
                store,
                tid,
                labeler,
                "fail",
                note="note " + hostile.EVERYTHING,
                at="2026-01-01T00:00:00+00:00",
            )
    # the CLI takes printable names only (escapes come in through the label file above); markup
    # is printable, and the queue's labeler shows it literally
    maker = "who [bold]b[/bold] [@click=app.quit]q[/]"
    invoke(db, "sample", "--n", "3", "--labeler", maker, "--name", "queue " + hostile.ARG)
    return db


def shown(app: ReviewerApp) -> str:
    """What the current screen's texts, tables, palette hits, toasts and header show."""
    parts = [str(app.format_title(app.screen.title or app.title, app.sub_title))]
    for w in app.screen.query(Static):
        parts.append(str(w.render()))
    for t in app.screen.query(DataTable):
        for i in range(t.row_count):
            parts.append(" ".join(str(c) for c in t.get_row_at(i)))
    for lst in app.screen.query(CommandList):
        for i in range(lst.option_count):
            parts.append(str(lst.get_option_at_index(i).prompt))
    for n in app._notifications:
        parts.append(n.message + " " + n.title)
    return "\n".join(parts)


def assert_safe(app: ReviewerApp) -> str:
    text = shown(app)
    bad = hostile.DANGEROUS.search(text)
    assert bad is None, f"raw {bad.group()!r} on {type(app.screen).__name__}"
    return text


async def settle(app: ReviewerApp, pilot: Any) -> None:
    """Settle (the label writer aside), then check nothing hostile reached the screen raw."""
    await shared_settle(app, pilot, 2, tolerate_failures=True)
    assert_safe(app)


async def press(app: ReviewerApp, pilot: Any, *keys: str) -> None:
    """Press each key (failing on one after which the app never settles), checking the screen after it."""
    for key in keys:
        await shared_press(app, pilot, key)
        assert_safe(app)


async def test_palette_with_a_closing_tag_in_a_task_id_does_not_crash(hostile_db: Path) -> None:
    app = ReviewerApp(db_path=hostile_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        assert isinstance(app.screen, CommandPalette)
        assert "task: copy file to [/tmp] dir ␛]52;c;" in assert_safe(app)  # discovery
        await press(app, pilot, *"tmp")
        await pilot.pause(0.3)  # the palette gathers hits on a timer
        await settle(app, pilot)
        text = assert_safe(app)
        assert "copy file to [/tmp] dir" in text and "[@click=app.quit]" in text
        await press(app, pilot, "enter")
        assert app.is_running
        assert "copy file to [/tmp] dir ␛]52;c;" in assert_safe(app)
        await press(app, pilot, "ctrl+p", *"cluster", "enter")
        assert app.is_running


async def test_every_screen_shows_hostile_names_literally(hostile_db: Path) -> None:
    from reviewer.labeling.rubric import load_rubric

    rubric = load_rubric(hostile_db.parent / "runs" / "rubric.toml")
    app = ReviewerApp(db_path=hostile_db, rubric=rubric)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        text = assert_safe(app)
        # the run's name is longer than the one line under the table: both its ends, literally
        name = visible(hostile.RUN, single_line=True)
        assert name[:60] in text and name[-60:] in text
        assert "db␛]0;pwned␇.db" in text  # the header's sub-title: the database file
        # runs: mark both, compare, swap
        await press(app, pilot, "space", "down", "space", "d", "w")
        assert "second ␛]52;c;" in assert_safe(app)
        await press(app, pilot, "escape", "escape")
        # tasks → trials → transcript, with their keys
        await press(app, pilot, "enter", "s", "y", "y", "F")
        assert "copy file to [/tmp] dir ␛]52;c;" in assert_safe(app)
        await press(app, pilot, "o", "j", "l", "exclamation_mark", "backspace", "enter")
        text = assert_safe(app)
        await press(
            app,
            pilot,
            "J",
            "e",
            "greater_than_sign",
            "right_square_bracket",
            "left_square_bracket",
        )
        text = assert_safe(app)
        assert "because ␛]52;c;" in text or "failed ␛]52;c;" in text
        await press(app, pilot, "T")  # the export's report (a panel when it runs long)
        assert "exported 1 task" in assert_safe(app)
        await press(app, pilot, "escape", "escape", "escape", "escape")
        # failures: the renamed cluster, detail, rename modal, export toast
        await press(app, pilot, "F")
        assert "cluster ␛]52;c;" in assert_safe(app)
        await press(app, pilot, "r")
        await press(app, pilot, "escape", "T", "enter")
        await press(app, pilot, "escape", "escape")
        # queues and labeling: the queue, labeler, rubric question, judge rationale, note
        await press(app, pilot, "L")
        assert "queue ␛]52;c;" in assert_safe(app)
        await press(app, pilot, "enter", "1", "p", "v", "u", "right_square_bracket")
        text = assert_safe(app)
        assert "asked ␛]52;c;" in text
        await press(app, pilot, "escape", "escape")
        # agreement with its keys, position bias, help
        await press(app, pilot, "A", "j", "l", "g", "R", "enter")
        await press(app, pilot, "escape", "escape")
        await press(app, pilot, "question_mark", "escape")
        app.notify("toast " + hostile.EVERYTHING, title="title " + hostile.EVERYTHING)
        await settle(app, pilot)
        assert "toast ␛]52;c;" in assert_safe(app)
        app.show_error("error " + hostile.EVERYTHING, "detail " + hostile.EVERYTHING)
        await settle(app, pilot)
        assert "detail ␛]52;c;" in assert_safe(app)
        assert app.is_running
