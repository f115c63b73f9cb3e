"""Regression: `reviewer signatures` left `user bob not found` / `user alice not found` /
`user carol not found` unchanged, although words that vary across otherwise equal lines become <*>."""

from __future__ import annotations

from reviewer.clustering.signature import signatures_of_lines


def test_signatures_of_three_short_lines_came_back_unchanged() -> None:
    lines = ["user bob not found", "user alice not found", "user carol not found"]
    assert list(signatures_of_lines(lines)) == ["user <*> not found"] * 3


def test_two_lines_that_differ_in_one_word_stay_apart() -> None:
    lines = ["relation orders does not exist", "relation users does not exist"]
    assert list(signatures_of_lines(lines)) == lines
