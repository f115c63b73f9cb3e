"""Run and task names cut in the middle to a width, never two shown alike (issue 32, item 6)."""

from __future__ import annotations

import random

import pytest

from reviewer.text import distinct_elisions, elide_middle

LONG = "tau-bench-retail-gpt-4o-2026-11-30-config-{}-temperature-0.0-seed-{}"


def test_a_name_that_fits_is_whole_and_a_long_one_keeps_both_ends() -> None:
    assert elide_middle("support-v1", 20) == "support-v1"
    cut = elide_middle(LONG.format("a", 1), 20)
    assert len(cut) == 20 and cut.startswith("tau-bench") and cut.endswith("seed-1")


@pytest.mark.parametrize("width", [6, 8, 12, 20, 30, 40])
def test_names_alike_at_both_ends_still_part(width: int) -> None:
    names = [LONG.format(c, s) for c in "ab" for s in (1, 2)] + ["short", "x" * 90 + "1" + "y" * 90]
    names.append("x" * 90 + "2" + "y" * 90)
    shown = distinct_elisions(names, width)
    assert len(set(shown.values())) == len(names)
    assert all(len(v) <= width for v in shown.values())
    assert shown["short"] == ("short" if width >= 5 else shown["short"])


def test_random_names_are_always_distinct_and_within_the_width() -> None:
    rng = random.Random(3)
    for _ in range(200):
        width = rng.randrange(4, 30)
        stem = "".join(rng.choice("ab-") for _ in range(rng.randrange(0, 40)))
        names = sorted(
            {
                stem + "".join(rng.choice("ab") for _ in range(rng.randrange(0, 6))) + stem
                for _ in range(rng.randrange(2, 12))
            }
        )
        shown = distinct_elisions(names, width)
        assert len(set(shown.values())) == len(names), (names, width, shown)
        assert all(len(v) <= width for v in shown.values()), (names, width, shown)
