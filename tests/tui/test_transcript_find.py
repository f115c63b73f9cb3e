"""`/` in a transcript: every match highlighted, the current one in another colour, n / N, "3 of 17";
`}` / `{` rule violations and `>` / `<` tool errors."""

from __future__ import annotations

from pathlib import Path

from rich.segment import Segment

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.transcript import TranscriptScreen
from reviewer.tui.widgets.transcript import TranscriptView
from reviewer.tui.widgets.transcript_search import CURRENT_STYLE, MATCH_STYLE, SearchPrompt
from tests.tui.conftest import settle
from tests.tui.test_transcript import make_db, open_transcript, rich_trial, trial_ids


def find_line(app: ReviewerApp) -> str:
    screen = app.screen
    assert isinstance(screen, TranscriptScreen)
    return str(screen.query_one("#transcript-find").render())


def styled_rows(view: TranscriptView) -> list[list[Segment]]:
    return [list(view.render_line(y)) for y in range(view.scrollable_content_region.height)]


def highlighted(view: TranscriptView, style: object) -> list[str]:
    """The text of the segments on screen drawn with ``style``'s colours."""
    out = []
    for row in styled_rows(view):
        for seg in row:
            if seg.style is not None and seg.style.bgcolor == style.bgcolor:  # type: ignore[attr-defined]
                out.append(seg.text)
    return out


async def search(app: ReviewerApp, pilot: object, text: str) -> None:
    await pilot.press("slash")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    assert isinstance(app.screen, SearchPrompt)
    await pilot.press(*text, "enter")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]


async def test_find_in_the_conversation_with_next_and_previous(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        await search(app, pilot, "STEP 2")  # case-insensitive: step 2, step 20 … step 29
        assert len(view.matches) == 11
        assert find_line(app).startswith("find 'STEP 2': 1 of 11")
        # the long message was folded (10 rows kept): the match inside it opened it
        current = highlighted(view, CURRENT_STYLE)
        assert current == ["step 2"]
        await pilot.press("n", "n")
        await pilot.pause()
        assert "3 of 11" in find_line(app)
        assert view.current_match == 2
        assert any("step 20" in line for line in view.visible_lines())
        assert highlighted(view, MATCH_STYLE)  # the other matches on screen are marked too
        await pilot.press("N", "N", "N")  # wraps round to the last match
        await pilot.pause()
        assert "11 of 11" in find_line(app)
        assert any("step 29" in line for line in view.visible_lines())


async def test_no_match_and_n_before_any_search_say_so(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("n")
        await pilot.pause()
        assert any("press / to search" in n.message for n in app._notifications)
        await search(app, pilot, "zebra")
        assert find_line(app) == "find 'zebra': no match"


async def test_the_search_follows_to_the_next_trial(tmp_path: Path) -> None:
    from reviewer.tui.nav import ListSequence

    db = make_db(tmp_path, [rich_trial("refund", i) for i in (1, 2)])
    ids = trial_ids(db)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_transcript(app, pilot, ids[0], ListSequence(ids))
        await search(app, pilot, "W5521")
        total = len(view.matches)
        assert total >= 2
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert app.screen.trial_id == ids[1]  # type: ignore[attr-defined]
        assert f"1 of {total}" in find_line(app)


async def test_next_and_previous_rule_violation(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()], rules=True)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        marks = [b.message for b in view.blocks if b.kind == "mark" and b.message is not None]
        assert marks  # cancel_order is forbidden: marked at its message
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        assert view.cursor == marks[0]
        assert "⚑ rule no-cancel" in view.visible_lines()[0]
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        assert any("no more rule violations" in n.message for n in app._notifications)
        await pilot.press("end", "left_curly_bracket")
        await pilot.pause()
        assert view.cursor == marks[-1]


async def test_tool_errors_have_their_own_keys(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(100, 30)) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert view.cursor == 3
        await pilot.press("greater_than_sign", "less_than_sign")
        await pilot.pause()
        assert view.cursor == 3


async def test_the_label_screen_counts_its_matches_on_one_plain_line(tmp_path: Path) -> None:
    """`/` while labeling shares the transcript's find, and its line: "3 of 12" as n / N move, "no
    match", the query never read as markup; at 80x24, on screen under the transcript."""
    from textual.widgets import Static

    from reviewer.calibration.sampling import make_queue
    from reviewer.store import open_store
    from reviewer.tui.screens.label import LabelScreen
    from tests.conftest import sample_copy
    from tests.tui.conftest import until
    from tests.tui.screen_picture import picture_text

    path = sample_copy(tmp_path / "s.db")
    with open_store(path) as db:
        make_queue(db, "q", 4, seed=1, labeler="ana")
    app = ReviewerApp(db_path=path, labeler="ana")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = LabelScreen("q", "ana")
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None and screen.state is not None)
        view = screen.query_one(TranscriptView)

        def line() -> str:
            find = screen.query_one("#label-find", Static)
            return str(find.render()) if find.display else ""

        assert line() == ""  # nothing searched: no line
        await search(app, pilot, "order")
        total = len(view.matches)
        assert total > 2
        assert line().startswith(f"find 'order': 1 of {total} · n next")
        assert f"'order': 1 of {total}" in picture_text(app)  # shown, not only set
        await pilot.press("n", "n")
        await pilot.pause()
        assert f"3 of {total}" in line() and view.current_match == 2
        await pilot.press("N", "N", "N")  # round to the last
        await pilot.pause()
        assert f"{total} of {total}" in line()
        await search(app, pilot, "zebra")
        assert line() == "find 'zebra': no match"
        await search(app, pilot, "[red]x[/] [/foo]")
        assert line() == "find '[red]x[/] [/foo]': no match"  # as typed, no markup read


def test_a_long_query_is_cut_so_the_count_shows_at_80_columns() -> None:
    from reviewer.tui.widgets.transcript_search import SearchChanged

    said = SearchChanged("refund " * 30, 3, 12).describe()
    assert "…" in said and len(said[: said.index("3 of 12")]) < 60
