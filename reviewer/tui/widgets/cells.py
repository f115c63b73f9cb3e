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


#: DataTable's cell padding (one each side) and the vertical scrollbar a long table shows.
CELL_PAD = 2
SCROLLBAR = 2


def table_room(total: int, fixed: dict[str, int], shared: int = 3) -> int:
    """The cells a table ``total`` wide leaves to its ``shared`` columns (the name columns and the
    free text, :func:`share_room`) once its ``fixed`` columns, every column's padding and the
    scrollbar are taken."""
    return total - sum(fixed.values()) - CELL_PAD * (len(fixed) + shared) - SCROLLBAR


def share_room(room: int, wants: dict[str, int], free_min: int, least: int = 8) -> dict[str, int]:
    """Widths for the name columns (``wants``: each column's widest name) and the one free-text
    column (key ``"free"``) in ``room`` cells: the names keep their widths while the free text keeps
    ``free_min``; past that they give way in proportion, down to ``least`` each, and the free text
    takes whatever is left (never below 4)."""
    out = dict(wants)
    names = sum(wants.values())
    if names and room - names < free_min:
        avail = max(0, room - free_min)
        out = {k: min(w, max(least, avail * w // names)) for k, w in wants.items()}
    out["free"] = max(4, room - sum(out.values()))
    return out


def cut_end(text: Text, width: int) -> Text:
    """``text`` (free text: a cluster's name, a reason) on one line in ``width`` cells, ending with
    "…" when it is longer; its styles kept."""
    out = text.copy()
    out.no_wrap = True
    out.truncate(max(1, width), overflow="ellipsis")
    return out
