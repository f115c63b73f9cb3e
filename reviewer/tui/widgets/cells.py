"""Small cell renderers shared by the tables (numbers are right-aligned, untrusted text goes via safe)."""

from __future__ import annotations

from rich.text import Text


def num(v: float | None, fmt: str = "{:.2f}") -> Text:
    return Text("-" if v is None else fmt.format(v), justify="right")


def money(v: float | None) -> Text:
    return Text("-" if v is None else f"${v:.3f}", justify="right")


def strip(outcomes: list[bool]) -> Text:
    """A run of trial outcomes: ● pass, ○ fail."""
    text = Text()
    for ok in outcomes:
        text.append("●" if ok else "○", style="green" if ok else "red")
    return text
