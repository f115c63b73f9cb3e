"""Small cell renderers shared by the tables (numbers are right-aligned, untrusted text goes via safe)."""

from __future__ import annotations

from typing import Any

from rich.text import Text


def num(v: float | None, fmt: str = "{:.2f}") -> Text:
    return Text("-" if v is None else fmt.format(v), justify="right")


def money(v: float | None) -> Text:
    return Text("-" if v is None else f"${v:.3f}", justify="right")


_MARKS = {
    "p": ("●", "green"),
    "f": ("○", "red"),
    "i": ("⚠", "yellow"),  # an infrastructure error: the harness crashed
    "u": ("·", "dim"),  # unscored
}


def strip(outcomes: list[bool], kinds: str = "") -> Text:
    """A run of trial outcomes: ● pass, ○ fail, ⚠ infrastructure error, · unscored (``kinds``: one
    letter a trial, p f i u; without it, ``outcomes`` gives pass or fail)."""
    text = Text()
    for ch in kinds or "".join("p" if ok else "f" for ok in outcomes):
        mark, style = _MARKS.get(ch, _MARKS["f"])
        text.append(mark, style=style)
    return text


def cursor_key(table: Any) -> str | None:
    """The row key under a DataTable's cursor, or None for an empty table."""
    if not table.row_count:
        return None
    key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
    return None if key is None else str(key)
