"""Long run names on the runs screen (issue 32, items 5 and 6): cut in the middle to the room left,
never two shown alike, the highlighted run's name on the one line under the table (whole when it
fits); at 80 columns the date moves there too, so every number column stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.runs import RunsScreen
from tests.conftest import SAMPLE_RUNS, run_cli

LONG = "tau-bench-retail-gpt-4o-2026-11-30-config-{}-temperature-0.0-seed-1"


@pytest.fixture
def long_named(tmp_path: Path) -> Path:
    db = tmp_path / "n.db"
    for c, f in (("a", "support-v1.jsonl"), ("b", "support-v2.jsonl")):
        code, _, err = run_cli(
            "--db", str(db), "import", "--run", LONG.format(c), str(SAMPLE_RUNS / f)
        )
        assert code == 0, err
    return db


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
async def test_long_names_part_and_the_whole_name_is_under_the_table(
    long_named: Path, size: tuple[int, int]
) -> None:
    app = ReviewerApp(db_path=long_named)
    async with app.run_test(size=size) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one("#runs", DataTable)
        shown = [str(table.get_row_at(i)[1]) for i in range(table.row_count)]
        assert len(set(shown)) == 2 and shown[0] != LONG.format("a")  # cut, and apart
        assert "-a-" in shown[0] and "-b-" in shown[1]
        columns = [str(k.value) for k in table.columns]
        assert {"tasks", "trials", "p1", "phk", "cost"} <= set(columns)
        assert ("imported" in columns) == (size[0] >= 100)
        used = sum(c.width for c in table.columns.values()) + 2 * len(columns)
        assert used <= size[0]  # nothing off the right edge
        detail = str(screen.query_one("#runs-detail", Static).render())
        assert ("imported 20" in detail) == (size[0] < 100)
        name = detail.split(" · ")[0]
        if size[0] >= 100:  # room for the whole name
            assert name == LONG.format("a")
        else:  # one line: the name cut in the middle, its ends and what tells it apart kept
            assert "…" in name and name.startswith("tau-") and name.endswith("seed-1")
            assert "-a-" in name
        await pilot.press("down")
        await pilot.pause()
        name = str(screen.query_one("#runs-detail", Static).render()).split(" · ")[0]
        if size[0] >= 100:
            assert name == LONG.format("b")
        else:
            assert "-b-" in name


#: a run name far longer than any terminal is wide (sorted last of the runs imported together)
HUGE = "zz-" + "x" * 90 + "-middle-" + "y" * 90 + "-end"


async def test_a_huge_name_keeps_the_line_under_the_table_to_one_line_and_the_row_in_view(
    tmp_path: Path,
) -> None:
    """At 80x24 the highlighted run's name under the table is cut to its one line, so the table keeps
    its height and the highlighted row (the last of 18) stays on screen."""
    from tests.conftest import native_trial, write_jsonl
    from tests.tui.conftest import settle
    from tests.tui.screen_picture import picture

    runs = [f"run-{i:02d}" for i in range(1, 18)] + [HUGE]
    data = write_jsonl(tmp_path / "runs.jsonl", [native_trial(run=run) for run in runs])
    db = tmp_path / "h.db"
    code, _, err = run_cli("--db", str(db), "import", str(data))
    assert code == 0, err
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        table = screen.query_one("#runs", DataTable)
        height = table.size.height
        await pilot.press(*["down"] * (len(runs) - 1))  # as a user gets there
        await settle(app, pilot)
        assert table.cursor_row == table.row_count - 1 and screen._current() == HUGE
        detail = screen.query_one("#runs-detail", Static)
        assert detail.content_size.height == 1
        assert table.size.height == height  # the detail line took no row from the table
        rows = picture(app)
        status = next(i for i, row in enumerate(rows) if row.strip().startswith("18 runs"))
        shown = rows[status - 1].strip()  # the one line between the table's border and the status
        assert set(rows[status - 2].strip()) == {"─"}
        assert shown.startswith("zz-x") and "…" in shown and "-end" in shown  # both ends
        assert any(screen.shown_names[HUGE] in row for row in rows[: status - 2])  # row on screen


async def test_a_run_that_cost_under_a_cent_says_how_much(tmp_path: Path) -> None:
    """An ATIF run of $0.00135 read $0.00 in the runs table (found by a new user)."""
    from tests.conftest import native_trial, write_jsonl

    recs = [dict(native_trial("t1"), run="tiny", usage={"cost_usd": 0.00135})]
    recs += [dict(native_trial("t1"), run="big", usage={"cost_usd": 1234.5})]
    db = tmp_path / "x.db"
    code, _, err = run_cli("--db", str(db), "import", str(write_jsonl(tmp_path / "r.jsonl", recs)))
    assert code == 0, err
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        table = app.screen.query_one("#runs", DataTable)
        cost = {
            str(table.get_row_at(i)[1]): str(
                table.get_cell_at((i, list(table.columns).index("cost")))
            )
            for i in range(table.row_count)
        }
        assert cost == {"tiny": "$0.0014", "big": "$1,234.50"}


async def test_the_detail_line_names_the_file_a_run_came_from(tmp_path: Path) -> None:
    """Runs named alike (an Inspect eval run again: 'popularity · gpt-4o-mini (2)' and '(3)')
    could not be told apart in the app (found by a new user): the line under the table names the
    file each was first imported from, after everything else (cut first when the line is full)."""
    from tests.conftest import native_trial, write_jsonl

    for name in ("monday", "tuesday"):
        f = write_jsonl(tmp_path / f"{name}.jsonl", [native_trial("t1", run=f"eval-{name}")])
        assert run_cli("--db", str(tmp_path / "x.db"), "import", str(f))[0] == 0
    app = ReviewerApp(db_path=tmp_path / "x.db")
    async with app.run_test(size=(120, 30)) as pilot:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()
        detail = app.screen.query_one("#runs-detail", Static)
        said = []
        for _ in range(2):
            said.append(str(detail.render()))
            await pilot.press("down")
            await pilot.pause()
        assert sorted(s.split(" · ")[-1] for s in said) == [
            "first imported from monday.jsonl",
            "first imported from tuesday.jsonl",
        ]
