"""Failure tags on the label screen: f asks for the category when the rubric lists categories (one
key), K tags a failure at any time, free text by Tab; Esc leaves the trial unlabeled."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import LabelScreen, TagModal
from tests.conftest import SAMPLE_RUNS
from tests.tui.conftest import until
from tests.tui.test_label import queued_db, text_of, wait_loaded

__all__ = ["queued_db"]

CATEGORIES = ["wrong_refund", "cancelled_shipped", "[red]x[/] hostile"]


def _labels(path: Path) -> dict[str, object]:
    with open_store(path) as db:
        return {t: lab for (t, _), lab in current_labels(db, "ana").items()}


async def test_fail_asks_for_the_tag_and_one_key_stores_it(queued_db: Path) -> None:
    rubric = dataclasses.replace(
        load_rubric(SAMPLE_RUNS / "rubric.toml"), pass_rule="overall", categories=CATEGORIES
    )
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        first = screen.payload.trial_id  # type: ignore[union-attr]

        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, TagModal))
        keys = str(app.screen.query_one("#tag-keys").render())
        assert "[w] wrong_refund" in keys and "[c] cancelled_shipped" in keys
        assert "[1] [red]x[/] hostile" in keys  # a category is text, never markup
        await pilot.press("escape")  # back: nothing stored, still on the trial
        await until(pilot, lambda: app.screen is screen)
        assert first not in _labels(queued_db)

        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, TagModal))
        await pilot.press("c")
        await until(pilot, lambda: first in screen.state.done)  # type: ignore[union-attr]
        second = screen.payload.trial_id  # type: ignore[union-attr]
        await until(pilot, lambda: screen.payload.trial_id != first)  # type: ignore[union-attr]
        stored = _labels(queued_db)[first]
        assert stored.verdict == "fail" and stored.tag == "cancelled_shipped"  # type: ignore[attr-defined]

        # Enter: a fail without a tag; p never asks
        second = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("f")
        await until(pilot, lambda: isinstance(app.screen, TagModal))
        await pilot.press("enter")
        await until(pilot, lambda: second in screen.state.done)  # type: ignore[union-attr]
        assert _labels(queued_db)[second].tag is None  # type: ignore[attr-defined]


async def test_k_tags_in_free_words_and_retags_a_standing_fail(queued_db: Path) -> None:
    rubric = dataclasses.replace(load_rubric(SAMPLE_RUNS / "rubric.toml"), pass_rule="overall")
    app = ReviewerApp(db_path=queued_db, labeler="ana", rubric=rubric)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await wait_loaded(app, pilot, screen)
        first = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("f")  # no categories in the rubric: f labels at once, as before
        await until(pilot, lambda: first in screen.state.done)  # type: ignore[union-attr]
        assert not isinstance(app.screen, TagModal)
        await pilot.press("left_square_bracket")  # back to the fail just given
        await until(pilot, lambda: screen.mine is not None and screen.mine.trial_id == first)

        await pilot.press("K", "tab", *"asked twice", "enter")
        await until(pilot, lambda: _labels(queued_db)[first].tag == "asked twice")  # type: ignore[attr-defined]
        await until(pilot, lambda: screen.mine is not None and screen.mine.tag is not None)
        assert "tag: asked twice" in text_of(app, "#label-mine")
        assert screen.payload.trial_id == first  # type: ignore[union-attr]  # a retag stays

        await pilot.press("right_square_bracket")
        await until(pilot, lambda: screen.payload.trial_id != first)  # type: ignore[union-attr]
        nxt = screen.payload.trial_id  # type: ignore[union-attr]
        await pilot.press("K", "tab", *"no lookup", "enter")  # an unlabeled trial: K labels it fail
        await until(pilot, lambda: nxt in _labels(queued_db))
        stored = _labels(queued_db)[nxt]
        assert stored.verdict == "fail" and stored.tag == "no lookup"  # type: ignore[attr-defined]
