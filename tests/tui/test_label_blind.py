"""Labeling is blind: every key of the label screen (its own, its widgets', the app's and each
palette command) on an unlabeled judged trial leaves no judge verdict, rationale, judge id or other
labeler's label anywhere on screen, in the whole transcript or in a notification.

The scan is proved to see such text: after labeling, ``v`` shows the same markers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.app import App
from textual.command import CommandList, CommandPalette
from textual.geometry import Region
from textual.widget import Widget

from reviewer.calibration.sampling import make_queue
from reviewer.labeling.rubric import load_rubric
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.store.queries import verdicts_for
from reviewer.store.queues import queue_items
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.label import ConfirmModal, LabelScreen
from reviewer.tui.widgets.transcript import TranscriptView
from tests.conftest import SAMPLE_RUNS, sample_copy
from tests.tui.conftest import settle, until

SIZE = (120, 40)
OTHER = "zed-otherlabeler"
#: keys that end the app: checked to exist, never pressed
QUIT_KEYS = {"q", "ctrl+q", "ctrl+c"}
#: keys that commit a label: pressed last, in their own steps
LABEL_KEYS = {"p", "f", "x"}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.fixture
def judged_queue(tmp_path: Path) -> tuple[Path, dict[str, list[str]]]:
    """Sample runs (every trial judged on import), a queue for ana, and a label by another labeler
    on every queued trial; the markers that must not show per trial."""
    path = sample_copy(tmp_path / "s.db")
    markers: dict[str, list[str]] = {}
    with open_store(path) as db:
        make_queue(db, "q", 6, seed=3, labeler="ana")
        for item in queue_items(db, "q"):
            add_label(db, item.trial_id, OTHER, "fail", note="other labeler's note")
            verdicts = list(verdicts_for(db, item.trial_id))
            assert verdicts, "every sample trial has a judge verdict"
            found = [OTHER, "JUDGE", "judge:", "≠you"]
            for v in verdicts:
                found.append(_squash(v.judge))
                found.append(_squash(v.rationale or "")[:30])
            markers[item.trial_id] = [m for m in found if m]
    return path, markers


def _widget_text(widget: Widget) -> str:
    if isinstance(widget, TranscriptView):  # every row, not only those on screen
        return "".join(widget.render_row(y).text for y in range(widget.line_count))
    width, height = widget.size
    if not width or not height:
        return ""
    try:
        return "".join(s.text for s in widget.render_lines(Region(0, 0, width, height)))
    except Exception:  # a widget that cannot render outside a paint has nothing on screen
        return ""


def screen_text(app: App[None]) -> str:
    """Every widget's rendered rows on every screen from the label screen up, the titles, the
    footer and every notification, whitespace removed (so wrapped text still matches)."""
    parts = [app.title, app.sub_title]
    stack = app.screen_stack
    first = next((i for i, s in enumerate(stack) if isinstance(s, LabelScreen)), 0)
    for screen in stack[first:]:
        for widget in screen.query("*"):
            parts.append(_widget_text(widget))
    parts.extend(n.message for n in app._notifications)
    return _squash("".join(parts))


def leaks(app: App[None], markers: dict[str, list[str]]) -> list[str]:
    text = screen_text(app)
    return sorted({m for ms in markers.values() for m in ms if m in text})


def every_key(app: App[None], screen: LabelScreen) -> list[str]:
    """The keys of the label screen, of each widget on it, and of the app (Textual's own too)."""
    keys: set[str] = set()
    for node in [app, screen, *screen.query("*")]:
        keys.update(node._bindings.key_to_bindings)
    if screen.rubric is not None:
        keys.update(c.key for c in screen.rubric.criteria)
    return sorted(keys)


async def back_to(app: App[None], pilot: object, screen: LabelScreen) -> None:
    for _ in range(5):
        if app.screen is screen:
            if screen.maximized is not None:  # the palette's "Maximize"
                screen.minimize()
                await settle(app, pilot)
            return
        await pilot.press("escape")  # type: ignore[attr-defined]
        await settle(app, pilot)
    raise AssertionError(f"stuck on {app.screen!r}")


async def stable_count(pilot: object, options: CommandList) -> None:
    """Wait until every palette provider has answered: the count stays the same a while."""
    last, same = -1, 0
    for _ in range(500):
        await pilot.pause(0.01)  # type: ignore[attr-defined]
        count = options.option_count
        same = same + 1 if count == last and count > 0 else 0
        last = count
        if same >= 20:
            return
    raise AssertionError("the palette never settled")


async def test_no_key_reveals_the_judge_or_another_label_before_labeling(
    judged_queue: tuple[Path, dict[str, list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, markers = judged_queue
    monkeypatch.chdir(tmp_path)  # the palette's screenshot command writes here
    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=path, labeler="ana", rubric=rubric)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        screen = LabelScreen("q", "ana", rubric)
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None)
        await settle(app, pilot)
        assert leaks(app, markers) == []

        keys = every_key(app, screen)
        for must in ("J", "v", "e", "E", "end", "right_square_bracket", "question_mark", "ctrl+p"):
            assert must in keys, must
        assert QUIT_KEYS & set(keys)
        # v before labeling reveals nothing and says why (a greyed key said nothing, found by a
        # new-user review)
        await pilot.press("v")
        await settle(app, pilot)
        assert not screen.revealed and leaks(app, markers) == []
        assert "Label this trial first: the judge stays hidden until you do." in [
            n.message for n in app._notifications
        ]
        pressed = []
        for key in keys:
            if key in QUIT_KEYS | LABEL_KEYS or key == "escape":
                continue
            await pilot.press(key)
            await settle(app, pilot)
            assert leaks(app, markers) == [], f"after {key!r}"
            if isinstance(app.screen, CommandPalette):
                await back_to(app, pilot, screen)
            await back_to(app, pilot, screen)
            assert screen.mine is None, f"{key!r} labeled the trial"
            pressed.append(key)
        # the same keys again at the end of the transcript, with every block unfolded
        for key in ("end", "E", "J", "v", "J", "end"):
            await pilot.press(key)
            await settle(app, pilot)
            assert leaks(app, markers) == [], f"after {key!r} at the end"

        # every palette command (the app's own and Textual's), and a trial id typed into it
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        options = app.screen.query_one(CommandList)
        await stable_count(pilot, options)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert leaks(app, markers) == []
        await back_to(app, pilot, screen)
        for prompt in prompts:
            if "Quit" in prompt:
                continue
            await pilot.press("ctrl+p")
            await settle(app, pilot)
            options = app.screen.query_one(CommandList)
            await stable_count(pilot, options)
            now = [str(options.get_option_at_index(j).prompt) for j in range(options.option_count)]
            assert prompt in now, prompt
            await pilot.press(*["down"] * now.index(prompt), "enter")
            await settle(app, pilot)
            assert leaks(app, markers) == [], f"after palette command {prompt!r}"
            await back_to(app, pilot, screen)
        assert screen.payload is not None
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await pilot.press(*screen.payload.trial_id[:10])
        await settle(app, pilot)
        assert screen.payload.trial_id[:10] not in _squash(
            " ".join(
                str(o.prompt)
                for o in (
                    app.screen.query_one(CommandList).get_option_at_index(j)
                    for j in range(app.screen.query_one(CommandList).option_count)
                )
            )
        )
        assert leaks(app, markers) == []
        await back_to(app, pilot, screen)

        # label it (against the rubric: asked once), then the next trial is as blind as the first
        first = screen.payload.trial_id
        screen.criteria = {}
        await pilot.press("f")
        await settle(app, pilot)
        if isinstance(app.screen, ConfirmModal):
            assert leaks(app, markers) == []
            await pilot.press("enter")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        await settle(app, pilot)
        assert screen.mine is None and not screen.revealed
        assert screen.query_one(TranscriptView).blind
        assert leaks(app, markers) == []

        # the scan sees the judge and the other label once they may be seen: back, then v
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id == first)
        await settle(app, pilot)
        assert leaks(app, markers) == []  # labeled, but not revealed
        await pilot.press("v")
        await settle(app, pilot)
        shown = leaks(app, markers)
        assert OTHER in shown and "JUDGE" in shown
        assert any(m in shown for m in markers[first] if m not in (OTHER, "JUDGE", "judge:"))
        # the reveal never carries to the next trial
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        await settle(app, pilot)
        assert not screen.revealed and leaks(app, markers) == []

        # the other label keys, and undo back to an unlabeled trial
        for key in ("x", "p"):
            before = screen.payload.trial_id
            await pilot.press(key)
            await settle(app, pilot)
            if isinstance(app.screen, ConfirmModal):
                await pilot.press("enter")
            await until(
                pilot,
                lambda b=before: screen.payload is not None and screen.payload.trial_id != b,  # type: ignore[misc]
            )
            await settle(app, pilot)
            assert leaks(app, markers) == [], f"after {key!r}"
        await pilot.press("u")
        await until(pilot, lambda: screen.mine is None and screen.payload is not None)
        await settle(app, pilot)
        assert leaks(app, markers) == []
