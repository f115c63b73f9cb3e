"""The app's table: Textual's DataTable, drawn again once it has measured its rows.

Every table of the app is a `Table` (tests/tui/test_table.py keeps it so).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual.widgets import DataTable
from textual.widgets.data_table import CellKey, CellType, RowKey


class Table(DataTable[CellType]):
    """A DataTable whose lines are drawn anew when measuring its new rows widens a column.

    DataTable (textual 8.2.8) measures the cells of new rows when it is next idle and widens the
    columns, but keeps the lines it drew before under the same cache keys: a screen painted between
    the rows arriving and the table going idle (a busy machine, a test's pause) stayed drawn with
    every column cut to its label ("refu" for "refund_simple") until the cursor moved; a cell given
    a longer value by ``update_cell`` likewise."""

    def _widths(self) -> list[int]:
        return [self._label_column.content_width] + [c.content_width for c in self.columns.values()]

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        before = self._widths()
        super()._update_dimensions(new_rows)
        self._drawn_anew_if_wider(before)

    def _update_column_widths(self, updated_cells: set[CellKey]) -> None:
        """The same for a cell given a longer value (``update_cell``), measured when idle too."""
        before = self._widths()
        super()._update_column_widths(updated_cells)
        self._drawn_anew_if_wider(before)

    def _drawn_anew_if_wider(self, before: list[int]) -> None:
        if self._widths() != before:
            self._update_count += 1  # every cache of the table is keyed by it: all drawn anew
            self.refresh()
