"""The app's tables are `Table`s: drawn anew once their rows are measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from reviewer.tui.widgets.table import Table

TUI = Path(__file__).resolve().parents[2] / "reviewer" / "tui"


class _OneTable(App[None]):
    CSS = "DataTable { height: 1fr; }"  # as on the app's screens: rows arriving do not resize it

    def __init__(self, table: DataTable[str]) -> None:
        super().__init__()
        self.table = table

    def compose(self) -> ComposeResult:
        yield self.table


async def _drawn_before_measured(table: DataTable[str]) -> str:
    """The first row's line after the table was drawn between its rows arriving and its next idle
    (as a busy machine's screen refresh does), then left to measure them."""
    app = _OneTable(table)
    async with app.run_test(size=(60, 8)) as pilot:
        await pilot.pause()
        table.add_column("task", key="task")
        table.add_row("refund_simple", key="a")
        early = table.render_line(1).text
        assert early.strip() == "refu"  # the column is as wide as its label until measured
        await pilot.pause()
        await pilot.pause()
        return table.render_line(1).text.strip()


async def test_a_table_drawn_before_it_measured_its_rows_is_drawn_anew() -> None:
    assert await _drawn_before_measured(Table()) == "refund_simple"


async def test_textual_datatable_keeps_the_cut_lines() -> None:
    """What Table works around (textual 8.2.8): when this fails, DataTable draws anew by itself and
    Table can go."""
    assert await _drawn_before_measured(DataTable()) == "refu"


async def test_a_cell_given_a_longer_value_is_drawn_whole_once_measured() -> None:
    table: Table[str] = Table()
    app = _OneTable(table)
    async with app.run_test(size=(60, 8)) as pilot:
        table.add_column("state", key="state")
        table.add_row("new", key="a")
        await pilot.pause()
        await pilot.pause()
        table.update_cell("a", "state", "merged into cluster 12", update_width=True)
        assert table.render_line(1).text.strip() == "merge"  # drawn before it was measured
        await pilot.pause()
        await pilot.pause()
        assert table.render_line(1).text.strip() == "merged into cluster 12"


@pytest.mark.parametrize(
    "path", sorted(set(TUI.rglob("*.py")) - {TUI / "widgets" / "table.py"}), ids=lambda p: p.name
)
def test_every_table_of_the_app_is_a_table(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"\bDataTable\(|\(DataTable\[", text), f"{path.name}: use Table"
