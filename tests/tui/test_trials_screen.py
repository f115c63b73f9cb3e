"""The trials screen on 450 generated trials: paging, filters, search, opening a transcript, literal text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input, Static

from reviewer.store import open_store
from reviewer.store.trial_list import FilterSequence, TrialFilter, clear_cache
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.trials import TrialsScreen, TrialTable
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl
from tests.tui.conftest import settle

N = 450
SIZE = (120, 30)


def make_db(tmp_path: Path) -> Path:
    recs: list[dict[str, Any]] = []
    for i in range(N):
        task = "[red]x[/]" if i == 0 else f"task{i // 5:03d}"
        rec = native_trial(task, passed=i % 3 != 0, run="support", trial=i % 5 + 1)
        words = "zebra crossing" if i % 10 == 0 else "plain reply"
        rec["messages"].append({"role": "assistant", "content": f"{words} cancel_order"})
        recs.append(rec)
    f = write_jsonl(tmp_path / "support.jsonl", recs)
    db = open_store(tmp_path / "x.db")
    try:
        assert import_paths(db, [f]).added == N
    finally:
        db.close()
    clear_cache()
    return tmp_path / "x.db"


def status(app: ReviewerApp) -> str:
    return str(app.screen.query_one("#trials-status", Static).render())


def filters(app: ReviewerApp) -> str:
    return str(app.screen.query_one("#trials-filters", Static).render())


def table(app: ReviewerApp) -> TrialTable:
    return app.screen.query_one(TrialTable)


async def open_trials(app: ReviewerApp, pilot: Pilot[None], f: TrialFilter | None = None) -> None:
    await settle(app, pilot)
    app.push_screen(TrialsScreen(f or TrialFilter(), title="All trials"))
    await settle(app, pilot)
    assert isinstance(app.screen, TrialsScreen)


async def test_pages_of_200_with_keyset_paging(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot)
        assert status(app).startswith(f"rows 1–200 of {N}")
        assert table(app).row_count == 200
        table(app).move_cursor(row=199)
        await pilot.press("pagedown")  # on the last row: the next 200
        await settle(app, pilot)
        assert status(app).startswith(f"rows 201–400 of {N}")
        # pagedown on the last row turns the page too
        table(app).move_cursor(row=199)
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert status(app).startswith(f"rows 401–450 of {N}")
        assert table(app).row_count == 50
        table(app).move_cursor(row=49)
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert "this is the last page" in status(app)
        table(app).move_cursor(row=0)
        await pilot.press("pageup")
        await settle(app, pilot)
        assert status(app).startswith(f"rows 201–400 of {N}")
        assert table(app).cursor_row == 199  # paging back lands on the page's last row
        await pilot.press("pageup")  # not on the first row: only moves the cursor
        await pilot.pause()
        assert status(app).startswith("rows 201–400")
        table(app).move_cursor(row=0)
        await pilot.press("pageup")
        await settle(app, pilot)
        assert status(app).startswith(f"rows 1–200 of {N}")


async def test_outcome_verdict_label_and_clear(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot)
        assert filters(app).startswith("no filters")
        await pilot.press("o")  # pass
        await settle(app, pilot)
        assert "outcome=pass" in filters(app)
        assert status(app).startswith("rows 1–200 of 300")
        await pilot.press("o")  # fail
        await settle(app, pilot)
        assert status(app).startswith("rows 1–150 of 150")
        t = table(app)
        outcomes = {str(t.get_row_at(i)[3]) for i in range(t.row_count)}
        assert outcomes == {"○ fail"}
        await pilot.press("j")  # judge=pass: nobody judged these trials
        await settle(app, pilot)
        assert "judge=pass" in filters(app)
        assert "no trials match" in status(app)
        await pilot.press("backspace")
        await settle(app, pilot)
        assert filters(app).startswith("no filters")
        assert status(app).startswith(f"rows 1–200 of {N}")
        await pilot.press("l", "l", "l", "l")  # pass, fail, skip, none
        await settle(app, pilot)
        assert "label=none" in filters(app)
        assert status(app).startswith(f"rows 1–200 of {N}")
        await pilot.press("exclamation_mark")
        await settle(app, pilot)
        assert "violations=any" in filters(app)
        assert "no trials match" in status(app)


async def test_search_typed_into_the_bar(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot)
        await pilot.press("slash")
        await pilot.press(*"zebra", "enter")
        await settle(app, pilot)
        assert "search='zebra'" in filters(app)
        assert status(app).startswith(f"rows 1–45 of {N // 10}")
        # keys that are filters elsewhere are text in the search bar
        await pilot.press("slash")
        app.screen.query_one("#trials-search", Input).value = ""
        await pilot.press(*"cancel_order", "enter")
        await settle(app, pilot)
        assert "search='cancel_order'" in filters(app)
        assert status(app).startswith(f"rows 1–200 of {N}")
        # Esc leaves the bar without applying what was typed; Esc again goes back
        await pilot.press("slash", "z", "escape")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)
        assert app.screen.query_one("#trials-search", Input).value == "cancel_order"
        assert table(app).has_focus
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, TrialsScreen)


async def test_invalid_search_says_so_and_keeps_the_list(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot)
        await pilot.press("slash", *"zebra AND", "enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)  # no error modal, no crash
        assert "invalid search" in status(app)
        assert filters(app).startswith("no filters")
        assert table(app).row_count == 200
        await pilot.press("o")  # the filters still work after the bad search
        await settle(app, pilot)
        assert status(app).startswith("rows 1–200 of 300")


async def test_enter_opens_the_transcript_with_this_list(tmp_path: Path) -> None:
    from reviewer.tui.screens.transcript import TranscriptScreen

    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot, TrialFilter(outcome="fail"))
        first = str(table(app).coordinate_to_cell_key(table(app).cursor_coordinate).row_key.value)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TranscriptScreen)
        assert screen.trial_id == first
        assert isinstance(screen.sequence, FilterSequence)
        assert screen.sequence.filter == TrialFilter(outcome="fail")
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, TrialsScreen)
        assert status(app).startswith("rows 1–150 of 150")


async def test_enter_goes_through_the_open_trial_seam(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    opened: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrialsScreen)
        screen.open_trial = opened.append  # type: ignore[method-assign]
        await pilot.press("down", "enter")
        await pilot.pause()
        assert opened == [table(app).ordered_rows[1].key.value]


async def test_untrusted_task_id_is_shown_literally(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_db(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await open_trials(app, pilot, TrialFilter(task_id="[red]x[/]"))
        assert status(app).startswith("rows 1–1 of 1")
        assert "task=[red]x[/]" in filters(app)
        # the filter names the task, so its column is left out for the reason's sake
        assert "task" not in [str(k.value) for k in table(app).columns]
        await open_trials(app, pilot, TrialFilter(outcome="fail"))
        t = table(app)
        cells = [[str(c) for c in t.get_row_at(i)] for i in range(t.row_count)]
        assert ["support", "[red]x[/]", "1", "○ fail"] in [row[:4] for row in cells]


def make_costed_db(tmp_path: Path) -> Path:
    """450 trials whose cost, latency and tool errors differ: trial i costs i % 37 cents; every
    seventh has no cost; tool errors i % 4."""
    recs: list[dict[str, Any]] = []
    for i in range(N):
        rec = native_trial(f"task{i // 5:03d}", passed=i % 3 != 0, run="support", trial=i % 5 + 1)
        if i % 7:
            rec["usage"] = {"cost_usd": (i % 37) / 100}
        rec["latency_s"] = float(i % 11)
        for _ in range(i % 4):
            rec["messages"].append({"role": "tool", "name": "get_order", "content": "Error: 500"})
        recs.append(rec)
    db = open_store(tmp_path / "c.db")
    try:
        assert import_paths(db, [write_jsonl(tmp_path / "c.jsonl", recs)]).added == N
    finally:
        db.close()
    clear_cache()
    return tmp_path / "c.db"


async def test_s_sorts_by_cost_latency_steps_and_tool_errors_across_pages(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=make_costed_db(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        await open_trials(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrialsScreen)
        assert "s sorts" in filters(app)
        await pilot.press("s")
        await settle(app, pilot)
        assert "sorted by cost, highest first" in filters(app)
        assert screen.page is not None
        costs = [r.cost_usd for r in screen.page.rows]
        assert costs[0] == 0.36 and costs == sorted(costs, reverse=True)  # type: ignore[type-var]
        # the next page goes on down the costs, the trials without one at the very end
        table(app).move_cursor(row=199)
        await pilot.press("pagedown")
        await settle(app, pilot)
        assert status(app).startswith(f"rows 201–400 of {N}")
        more = [r.cost_usd for r in screen.page.rows]
        assert more[0] is not None and more[0] <= costs[-1]  # type: ignore[operator]
        # Enter: the transcript's next follows the sorted list
        table(app).move_cursor(row=3)
        expected_next = screen.page.rows[4].id
        first = screen.page.rows[3].id
        sequence = FilterSequence(screen.filter)
        with open_store(tmp_path / "c.db") as db:
            assert sequence.neighbour(db, first, 1) == expected_next
            assert sequence.position(db, first) == (204, N)
        # latency, steps, then tool errors (a column of its own), then the order imported again
        for name in ("latency, slowest first", "steps, most first", "tool errors, most first"):
            await pilot.press("s")
            await settle(app, pilot)
            assert f"sorted by {name}" in filters(app)
            assert status(app).startswith(f"rows 1–200 of {N}")
        assert [r.tool_errors for r in screen.page.rows[:3]] == [3, 3, 3]
        assert "errors" in [str(k.value) for k in table(app).columns]
        # backspace clears the filters, not the order
        await pilot.press("o", "backspace")
        await settle(app, pilot)
        assert "sorted by tool errors" in filters(app)
        await pilot.press("s")
        await settle(app, pilot)
        assert "sorted" not in filters(app)
        assert [r.seq for r in screen.page.rows] == sorted(r.seq for r in screen.page.rows)


async def test_names_too_wide_for_their_columns_are_never_two_alike(tmp_path: Path) -> None:
    """A cluster's trials at 120 columns read 'support-  identity_check' for every row: run and
    task names cut at their ends (found by a review). They are cut in the middle, no two alike."""
    from tests.conftest import native_trial, write_jsonl

    recs = [
        native_trial(f"identity_verification_check_0{t}", run=run, trial=1, passed=False)
        for run in ("support-agent-release-v1", "support-agent-release-v2")
        for t in range(1, 4)
    ]
    path = write_jsonl(tmp_path / "n.jsonl", recs)
    with open_store(tmp_path / "n.db") as db:
        import_paths(db, [str(path)])
    app = ReviewerApp(db_path=tmp_path / "n.db")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(TrialsScreen(TrialFilter(outcome="fail")))
        for _ in range(20):
            await pilot.pause(0.05)
        table = app.screen.query_one(TrialTable)
        assert table.row_count == 6
        shown = {(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1])) for i in range(6)}
        assert len(shown) == 6, shown  # six trials, six different (run, task) pairs
        widths = [c.width for c in table.columns.values()][:2]
        assert all(len(run) <= widths[0] and len(task) <= widths[1] for run, task in shown)
        assert any("…" in run for run, _ in shown)  # they did not fit whole


def _sessions(tmp_path: Path, extras: list[dict[str, Any]]) -> ReviewerApp:
    """The app on Claude Code-like sessions of one project (one run, one task, no outcome), one a
    dict of EXTRAS (the record's further fields)."""
    recs = [
        native_trial("project", run="claude-code · project", trial=i + 1, outcome=None, **extra)
        for i, extra in enumerate(extras)
    ]
    path = write_jsonl(tmp_path / "cc.jsonl", recs)
    with open_store(tmp_path / "cc.db") as db:
        import_paths(db, [str(path)])
    return ReviewerApp(db_path=tmp_path / "cc.db")


async def test_a_page_without_reasons_keeps_its_task_names_and_cuts_models_visibly(
    tmp_path: Path,
) -> None:
    """Claude Code sessions at 80 columns: the trials list read 'p…ct' for the task 'project'
    while the reason column, empty on every row, kept its 24 cells, and the model column showed
    'claude-opus-4-5-2025' for 'claude-opus-4-5-20251101' with nothing saying it was cut (found
    by a new user on the realworld claude_code folder)."""
    models = ["claude-opus-4-5-20251101", "claude-opus-4-5-20251101, claude-sonnet-4-20250514"]
    app = _sessions(tmp_path, [{"metadata": {"model": models[i % 2]}} for i in range(4)])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(TrialsScreen(TrialFilter(run="claude-code · project")))  # t on the run
        for _ in range(20):
            await pilot.pause(0.05)
        table = app.screen.query_one(TrialTable)
        assert table.row_count == 4
        keys = [str(c.key.value) for c in table.columns.values()]
        rows = [dict(zip(keys, map(str, table.get_row_at(i)), strict=True)) for i in range(4)]
        assert {r["task"] for r in rows} == {"project"}
        for r in rows:
            assert r["model"] in models or (r["model"].endswith("…") and len(r["model"]) > 1)
        assert any(r["model"].endswith("…") for r in rows)  # the longer one did not fit whole


async def test_sessions_with_no_outcome_show_their_first_prompt(tmp_path: Path) -> None:
    """Claude Code sessions of one project (one run, one task, no outcome, no reason) read alike
    but for their number: the last column is then "prompt", each session's first prompt, and the
    line under the table gives the highlighted one's whole."""
    prompts = ["Explore the codebase structure", "Fix the [bold]flaky[/] test", "Plan it"]
    models = ["claude-opus-4-5-20251101", "claude-sonnet-4-20250514"]
    app = _sessions(
        tmp_path,
        [{"instruction": p, "metadata": {"model": models[i % 2]}} for i, p in enumerate(prompts)],
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(TrialsScreen(TrialFilter(run="claude-code · project")))
        await settle(app, pilot)
        table = app.screen.query_one(TrialTable)
        assert table.row_count == 3
        keys = [str(c.key.value) for c in table.ordered_columns]
        assert str(table.columns["reason"].label) == "prompt"  # type: ignore[index]
        said = [str(table.get_row_at(i)[keys.index("reason")]) for i in range(3)]
        for got, prompt in zip(said, prompts, strict=True):  # markup shown as typed
            assert got == prompt or (got.endswith("…") and prompt.startswith(got[:-1]))
        tasks = {str(table.get_row_at(i)[keys.index("task")]) for i in range(3)}
        assert tasks == {"project"}  # the prompts take what the names leave
        detail = str(app.screen.query_one("#trials-detail", Static).render())
        assert "prompt: Explore the codebase structure" in detail
        # the columns left out at 80: a count of none is 0, an unknown cost "-"
        assert "errors 0" in detail and "rules 0" in detail and "cost -" in detail
