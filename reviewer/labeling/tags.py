"""Failure tags: the category a labeler gives a fail (a rubric category or their own words), and
the one key each category gets on the label screen's tag picker."""

from __future__ import annotations

from collections.abc import Sequence

#: Longest tag (a category name or free text); it is shown on one line beside a cluster's name.
MAX_TAG = 80
#: Most categories a rubric may list: each needs a key a labeler can find at a glance.
MAX_CATEGORIES = 30
#: Keys the picker keeps for itself (Enter: no tag, Esc: back, Tab: type a tag of your own).
_PICKER_KEYS = ("enter", "escape", "tab")


class TagError(ValueError):
    """A tag that cannot be stored, said in one line."""


def normalize_tag(tag: str | None) -> str | None:
    """``tag`` on one line with single spaces, None when empty; TagError when over MAX_TAG or not
    printable text."""
    if tag is None:
        return None
    out = " ".join(str(tag).split())
    if not out:
        return None
    if not out.isprintable():
        raise TagError("a tag must be printable text")
    if len(out) > MAX_TAG:
        raise TagError(f"a tag is at most {MAX_TAG} characters, not {len(out)}")
    return out


def check_tag(verdict: str, tag: str | None) -> str | None:
    """The tag to store with a label of ``verdict``: a tag names a failure, so only a fail has one."""
    out = normalize_tag(tag)
    if out is not None and verdict != "fail":
        raise TagError(f"a tag names a failure: give it with fail, not {verdict}")
    return out


def category_keys(categories: Sequence[str]) -> list[tuple[str, str]]:
    """(key, category) for the picker, in the rubric's order: each category's first letter
    (lower case) while it is free, else the next free digit 1-9, 0, else the next free letter."""
    taken: set[str] = set()
    out: list[tuple[str, str]] = []
    pending: list[int] = []
    for i, cat in enumerate(categories):
        first = cat[:1].lower()
        if first.isascii() and first.isalpha() and first not in taken:
            taken.add(first)
            out.append((first, cat))
        else:
            out.append(("", cat))
            pending.append(i)
    free = [k for k in "1234567890abcdefghijklmnopqrstuvwxyz" if k not in taken]
    for i in pending:
        out[i] = (free.pop(0), out[i][1])
    return out


def resolve_category(categories: Sequence[str], tag: str) -> str:
    """A category named case-insensitively stands for its rubric spelling; other text is itself."""
    low = tag.casefold()
    return next((c for c in categories if c.casefold() == low), tag)
