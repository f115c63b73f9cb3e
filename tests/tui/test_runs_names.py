"""Long run names on the runs screen (issue 32, items 5 and 6): cut in the middle to the room left,
never two shown alike, the highlighted run's whole name on the line under the table; at 80 columns
the date moves there too, so every number column stays."""

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
        assert detail.startswith(LONG.format("a"))
        assert ("imported 20" in detail) == (size[0] < 100)
        await pilot.press("down")
        await pilot.pause()
        assert str(screen.query_one("#runs-detail", Static).render()).startswith(LONG.format("b"))
