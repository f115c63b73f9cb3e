"""The transcript widget's blind mode, and the defect behind it: a label screen passed no verdicts
but the record's own judge was drawn anyway (``J`` then ``End`` showed it)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from reviewer.models import Message, Trial, Verdict
from reviewer.tui.widgets.transcript import TranscriptView
from reviewer.tui.widgets.transcript_render import build_blocks

RATIONALE = "The agent looked up the order first"


def judged_trial() -> Trial:
    return Trial(
        task_id="t",
        messages=[Message("user", "refund please"), Message("assistant", "done")],
        judge=Verdict(judge="sonnet:policy@1", verdict="pass", rationale=RATIONALE),
    )


def test_no_verdicts_given_means_no_judge_block_not_the_records_own_judge() -> None:
    trial = judged_trial()
    assert not any(b.judge for b in build_blocks(trial, [], []))
    assert any(b.judge for b in build_blocks(trial, [], None))  # None: the record's judge


class One(App[None]):
    def compose(self) -> ComposeResult:
        view = TranscriptView(id="t", show_judge=False)
        view.blind = True
        yield view


def _all_text(view: TranscriptView) -> str:
    return "\n".join(view.render_row(y).text for y in range(view.line_count))


async def test_blind_mode_drops_the_judge_and_turns_J_off_until_it_is_left() -> None:
    app = One()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        view.focus()
        trial = judged_trial()
        view.load(trial, [], None)  # even handed the judge, blind mode keeps none of it
        await pilot.pause()
        assert not any(b.judge for b in view.blocks)
        assert view.check_action("toggle_judge", ()) is False
        await pilot.press("J", "end")
        await pilot.pause()
        assert RATIONALE not in _all_text(view) and "JUDGE" not in _all_text(view)
        view.set_blind(False)
        view.load(trial, [], None)
        await pilot.pause()
        assert RATIONALE not in _all_text(view)  # hidden until J
        await pilot.press("J")
        await pilot.pause()
        assert "JUDGE" in _all_text(view) and RATIONALE in _all_text(view)
        view.set_blind(True)  # back to blind: the judge blocks go at once
        await pilot.pause()
        assert not any(b.judge for b in view.blocks) and "JUDGE" not in _all_text(view)
