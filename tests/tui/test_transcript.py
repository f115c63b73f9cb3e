"""The transcript viewer: messages, tool calls, errors, rule marks, folding, stepping, and hostile text."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.pilot import Pilot

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.tui.nav import ListSequence
from reviewer.tui.screens.error import ErrorModal
from reviewer.tui.screens.transcript import TranscriptScreen
from reviewer.tui.widgets.transcript import TranscriptView
from tests.conftest import native_trial, write_jsonl
from tests.tui.conftest import settle

SIZE = (100, 30)

RULES = """
[[rule]]
id = "no-cancel"
type = "forbid_tool"
tool = "cancel_order"
severity = "forbidden"

[[rule]]
id = "fast"
type = "budget"
max_latency_s = 1
severity = "budget"
"""


def rich_trial(task_id: str = "refund", trial: int = 1, **extra: Any) -> dict[str, Any]:
    rec = native_trial(task_id, passed=False, trial=trial, latency_s=12.5)
    rec["messages"] = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": "Cancel order #W5521"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "name": "get_order", "arguments": {"order_id": "W5521", "n": 3}}
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "get_order",
            "content": "order service unavailable",
            "is_error": True,
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c2", "name": "cancel_order", "arguments": {"id": "W5521"}}],
        },
        {"role": "tool", "tool_call_id": "c2", "name": "cancel_order", "content": '{"ok": true}'},
        {"role": "assistant", "content": "\n".join(f"step {i} of the plan" for i in range(30))},
        {
            "role": "tool",
            "tool_call_id": "c3",
            "name": "refund",
            "content": "boom",
            "is_error": True,
        },
        {"role": "assistant", "content": "Done."},
    ]
    rec["judge"] = {"verdict": "fail", "rationale": "It cancelled without checking.", "model": "m1"}
    rec.update(extra)
    return rec


def make_db(tmp_path: Path, records: list[dict[str, Any]], rules: bool = False) -> Path:
    folder = tmp_path / "runs"
    folder.mkdir(exist_ok=True)
    write_jsonl(folder / "support.jsonl", records)
    if rules:
        (folder / "rules.toml").write_text(RULES, encoding="utf-8")
    db = tmp_path / "x.db"
    result = CliRunner().invoke(cli, ["--db", str(db), "import", "--run", "support", str(folder)])
    assert result.exit_code == 0, result.output
    return db


def trial_ids(db_path: Path) -> list[str]:
    db = open_store(db_path)
    try:
        return [r[0] for r in db.execute("SELECT id FROM trials ORDER BY seq").fetchall()]
    finally:
        db.close()


async def open_transcript(
    app: ReviewerApp, pilot: Pilot[None], trial_id: str, seq: ListSequence | None = None
) -> TranscriptView:
    await settle(app, pilot)
    app.push_screen(TranscriptScreen(trial_id, seq))
    await settle(app, pilot)
    assert isinstance(app.screen, TranscriptScreen)
    view = app.screen.view
    # the trial arrives from a worker and is laid out on the next refresh: wait for it (bounded), but
    # leave a screen that shows no transcript (a missing trial) to the test's own assertions
    deadline = time.monotonic() + 10
    while view.line_count == 0 and time.monotonic() < deadline:
        await settle(app, pilot)
    return view


def all_rows(view: TranscriptView) -> list[str]:
    return [view.render_row(i).text for i in range(view.line_count)]


def row_of(view: TranscriptView, needle: str) -> int:
    return next(i for i, text in enumerate(all_rows(view)) if needle in text)


def static_text(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector).render())


async def test_opens_a_trial_with_its_messages_calls_errors_and_marks(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()], rules=True)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        rows = all_rows(view)
        text = "\n".join(rows)
        for role in ("SYSTEM  #0", "USER  #1", "ASSISTANT  #2", "TOOL  get_order"):
            assert role in text
        assert "Cancel order #W5521" in text
        # tool-call arguments as pretty JSON, highlighted
        assert "→ get_order" in text
        key_row = row_of(view, '"order_id": "W5521"')
        assert rows[key_row - 1].rstrip().endswith("{")
        styles = {str(seg.style) for seg in view.render_row(key_row) if seg.text.strip()}
        assert len(styles) > 2  # key, string and punctuation styled differently
        # tool error in red with an error tag
        err = row_of(view, "order service unavailable")
        assert "error" in rows[err - 1]
        assert any(
            seg.style is not None and seg.style.color is not None and seg.style.color.name == "red"
            for seg in view.render_row(err)
            if "unavailable" in seg.text
        )
        # the violation is marked just above the message where it happened (#4), trial-level at the top
        mark = row_of(view, "⚑ rule no-cancel")
        assert "ASSISTANT  #4" in rows[mark + 1]
        assert "⚑ rule fast" in rows[0]
        summary = static_text(app, "#transcript-summary")
        assert "FAIL" in summary and "latency 12.5s" in summary and "steps" in summary
        assert "rule violation" in summary
        assert "It cancelled without checking." in static_text(app, "#transcript-judge")


async def test_n_and_p_step_through_the_list(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial("refund", i) for i in (1, 2, 3)])
    ids = trial_ids(db)
    seq = ListSequence(ids)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await open_transcript(app, pilot, ids[0], seq)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert "1 / 3" in static_text(app, "#transcript-title")
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert screen.trial_id == ids[1]
        assert "2 / 3" in static_text(app, "#transcript-title")
        await pilot.press("right_square_bracket")
        await settle(app, pilot)
        assert screen.trial_id == ids[2]
        await pilot.press("right_square_bracket")  # past the end: stays, says so
        await settle(app, pilot)
        assert screen.trial_id == ids[2]
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert screen.trial_id == ids[0]
        assert "trial 1" in static_text(app, "#transcript-title")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TranscriptScreen)


async def test_long_message_folds_and_expands(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        text = "\n".join(all_rows(view))
        assert "step 0 of the plan" in text
        assert "step 29 of the plan" not in text
        assert "… 20 more lines" in text and "press e to expand" in text
        folded_height = view.line_count
        view.scroll_to(y=row_of(view, "step 0 of the plan"), animate=False)
        await pilot.pause()
        await pilot.press("e")
        await pilot.pause()
        text = "\n".join(all_rows(view))
        assert "step 29 of the plan" in text and "more lines" not in text
        assert view.line_count == folded_height + 19
        await pilot.press("e")
        await pilot.pause()
        assert view.line_count == folded_height
        await pilot.press("E")
        await pilot.pause()
        assert "step 29 of the plan" in "\n".join(all_rows(view))
        await pilot.press("E")
        await pilot.pause()
        assert "step 29 of the plan" not in "\n".join(all_rows(view))


async def test_next_and_previous_tool_error(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        assert view.tool_errors == [3, 7]
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert view.cursor == 3
        assert "#3" in view.visible_lines()[0]
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert view.cursor == 7
        assert any("boom" in line for line in view.visible_lines())
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert view.cursor == 7
        assert any("no more tool errors" in n.message for n in app._notifications)
        await pilot.press("less_than_sign")
        await pilot.pause()
        assert view.cursor == 3


async def test_judge_block_hides_and_shows(tmp_path: Path) -> None:
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        panel = app.screen.query_one("#transcript-judge")
        assert "JUDGE  FAIL" in "\n".join(all_rows(view)) and panel.display
        shown_height = view.line_count
        await pilot.press("J")
        await pilot.pause()
        assert "JUDGE" not in "\n".join(all_rows(view))
        assert view.line_count < shown_height and not panel.display
        await pilot.press("J")
        await pilot.pause()
        assert "It cancelled without checking." in "\n".join(all_rows(view)) and panel.display


async def test_pager_in_headless_terminal_reports_instead_of_crashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGER", "true")
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("P")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal)  # the test driver cannot suspend
        assert app.is_running


@pytest.mark.parametrize("editor", [False, True])
async def test_raw_record_goes_to_pager_or_editor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, editor: bool
) -> None:
    out = tmp_path / "seen.json"
    copy = f"{sys.executable} -c 'import shutil, sys; shutil.copy(sys.argv[2], sys.argv[1])'"
    monkeypatch.setenv("EDITOR" if editor else "PAGER", f'{copy} "{out}"')
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "suspend", nullcontext)
        await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("O" if editor else "P")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
    assert '"task_id": "refund"' in out.read_text(encoding="utf-8")
    assert not list(Path(out.parent).glob("reviewer-trial-*"))


async def test_failing_pager_shows_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAGER", "false")
    db = make_db(tmp_path, [rich_trial()])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "suspend", nullcontext)
        await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("P")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal)
    monkeypatch.setenv("PAGER", "/nonexistent/pager")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        monkeypatch.setattr(app, "suspend", nullcontext)
        await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("P")
        await settle(app, pilot)
        assert isinstance(app.screen, ErrorModal)


async def test_two_thousand_messages_render_only_what_is_visible(tmp_path: Path) -> None:
    messages: list[dict[str, Any]] = []
    for i in range(2000):
        if i % 2:
            messages.append({"role": "user", "content": f"message {i} " + "word " * 40})
        else:
            messages.append(
                {
                    "role": "assistant",
                    "content": f"message {i}",
                    "tool_calls": [{"id": f"c{i}", "name": "lookup", "arguments": {"q": i}}],
                }
            )
    db = make_db(tmp_path, [native_trial("long", messages=messages)])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        await until(app, pilot, lambda: view.line_count > 10_000)
        assert len(view.blocks) > 6000
        assert len(view.rendered_blocks) < 40
        await pilot.press("end")
        await until(app, pilot, lambda: any("message 1999" in ln for ln in view.visible_lines()))
        assert len(view.rendered_blocks) < 80
        for _ in range(5):
            await pilot.press("pageup")
        await pilot.pause()
        assert len(view.rendered_blocks) < 200 and view.cache_size <= 256


@pytest.mark.parametrize("shape", ["one line", "many lines"])
async def test_twenty_megabyte_message_opens(tmp_path: Path, shape: str) -> None:
    content = (
        "word " * 4_000_000 if shape == "one line" else ("some text here " * 6 + "\n") * 220_000
    )
    rec = native_trial("huge")
    rec["messages"].append({"role": "assistant", "content": content})
    db = make_db(tmp_path, [rec])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        assert view.line_count < 100
        await pilot.press("end")
        await until(
            app, pilot, lambda: any("press e to expand" in ln for ln in view.visible_lines())
        )
        await pilot.press("E")
        await until(app, pilot, lambda: view.line_count > 100_000)
        await pilot.press("end")
        await until(
            app,
            pilot,
            lambda: any("word" in ln or "text" in ln for ln in view.visible_lines()),
        )
        # the huge block has only the chunks around the top and the end rendered
        assert view.cache_size < 2 * len(view.blocks)
        assert view.render_row(view.line_count - 1).cell_length <= view.size.width


async def until(
    app: ReviewerApp, pilot: Pilot[None], condition: Callable[[], bool], timeout: float = 30.0
) -> None:
    """Wait for the workers, then poll CONDITION between refreshes; fail after TIMEOUT seconds."""
    deadline = time.monotonic() + timeout
    while True:
        await app.workers.wait_for_complete()
        await pilot.pause()
        if condition():
            return
        assert time.monotonic() < deadline, f"not true after {timeout} s: {condition}"


INJECTIONS = [
    ("[bold]x[/bold]", "[bold]x[/bold]"),
    ("a [/] b", "a [/] b"),
    ("[link=https://evil]click[/link]", "[link=https://evil]click[/link]"),
    ("item [0] here", "item [0] here"),
    ("[unbalanced", "[unbalanced"),
    ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),
    ("\x1b[2J\x1b[H", "␛[2J␛[H"),
    ("\x1b]52;c;aGVsbG8=\x07", "␛]52;c;aGVsbG8=␇"),
    ("\x1b]0;pwned\x07", "␛]0;pwned␇"),
    ("\x1b]8;;https://evil\x1b\\click\x1b]8;;\x1b\\", "␛]8;;https://evil␛\\click␛]8;;␛\\"),
    ("nul\x00byte", "nul␀byte"),
    ("abc\u202edef", "abc<U+202E>def"),
]


def hostile_trial(payload: str) -> dict[str, Any]:
    rec = native_trial(f"task {payload}", passed=False)
    rec["outcome"]["reason"] = f"reason {payload}"
    rec["messages"] = [
        {"role": "user", "content": f"user {payload}"},
        {
            "role": "assistant",
            "content": f"assistant {payload}",
            "tool_calls": [{"id": "c1", "name": f"tool{payload}", "arguments": {"arg": payload}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f"result {payload}", "is_error": True},
    ]
    rec["judge"] = {"verdict": "fail", "rationale": f"judge {payload}"}
    rec["error"] = {"type": "ToolError", "message": f"error {payload}"}
    return rec


@pytest.mark.parametrize(("payload", "visible"), INJECTIONS, ids=[repr(p) for p, _ in INJECTIONS])
async def test_hostile_text_is_shown_literally(tmp_path: Path, payload: str, visible: str) -> None:
    db = make_db(tmp_path, [hostile_trial(payload)])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        rows = all_rows(view)
        text = "\n".join(rows)
        for where in ("user", "assistant", "result", "judge"):
            assert f"{where} {visible}" in text
        assert f"tool{visible}" in text
        header = static_text(app, "#transcript-title") + static_text(app, "#transcript-summary")
        assert f"task {visible}" in header and f"reason {visible}" in header
        assert f"error {visible}" in header
        for bad in ("\x1b", "\x07", "\x00", "\u202e"):
            assert bad not in text and bad not in header
        for i in range(view.line_count):
            for seg in view.render_row(i):
                assert seg.style is None or not seg.style.link
        assert "\x1b" not in app.export_screenshot()
        assert app.is_running and isinstance(app.screen, TranscriptScreen)


async def test_very_wide_line_wraps_within_the_view(tmp_path: Path) -> None:
    line = "abcd " * 1000
    db = make_db(tmp_path, [hostile_trial(line[:-1]), hostile_trial("x" * 5000)])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        for tid in trial_ids(db):
            view = await open_transcript(app, pilot, tid)
            await pilot.press("E")
            await pilot.pause()
            width = view.scrollable_content_region.width
            assert view.virtual_size.width <= width
            rows = [view.render_row(i) for i in range(view.line_count)]
            assert all(r.cell_length <= width for r in rows)
            assert len(rows) > 50
            app.pop_screen()
            await pilot.pause()
        assert app.is_running


async def test_resize_rewraps_and_keeps_the_place(tmp_path: Path) -> None:
    rec = rich_trial()
    rec["messages"][1]["content"] = "please " * 60
    db = make_db(tmp_path, [rec])
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        await pilot.press("greater_than_sign")
        await pilot.pause()
        wide_height = view.line_count
        await pilot.resize_terminal(50, 30)
        await pilot.pause()
        width = view.scrollable_content_region.width
        assert width < 50 and view.line_count > wide_height
        assert all(view.render_row(i).cell_length <= width for i in range(view.line_count))
        assert any("#3" in line for line in view.visible_lines())


def test_the_title_keeps_the_trial_number_and_position_whatever_the_names() -> None:
    """A long task id pushed 'trial 3' and '1 / 8' off the title line (found by a review)."""
    from types import SimpleNamespace

    from reviewer.tui.screens.transcript import title_text

    header = SimpleNamespace(
        run="tau_bench__tool-calling-grok-3-" + "x" * 60, task_id="t" * 200, trial=3
    )
    payload = SimpleNamespace(header=header, position=(1, 8))
    for width in (80, 120):
        text = title_text(payload, width).plain  # type: ignore[arg-type]
        assert len(text) <= width and text.endswith("› trial 3   1 / 8"), text
        assert text.startswith("tau_bench") and "…" in text
    short = SimpleNamespace(header=SimpleNamespace(run="r", task_id="t", trial=1), position=None)
    assert title_text(short, 80).plain == "r › t › trial 1"  # type: ignore[arg-type]
