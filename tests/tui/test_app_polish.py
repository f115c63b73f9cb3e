"""Issue 17's app items, each at the sizes where the layout matters (80x24 and 120x40): footers, help,
pass^k with one k, the import problems panel, the trials list's reason and search match, the
harness-fails offer, the judge run's title, the saved theme, compare's run names, the tasks header."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import DataTable, Static

from reviewer.tui.app import TOAST_MAX, TOAST_SECONDS, ReviewerApp, state_path
from reviewer.tui.screens.help import HelpScreen
from reviewer.tui.screens.runs import RunsScreen
from reviewer.tui.screens.tasks import TasksScreen
from reviewer.tui.screens.trials import TrialsScreen
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl
from tests.tui.conftest import settle
from tests.tui.screen_picture import picture
from tests.tui.test_app import import_into, screen_text

SIZES = [(80, 24), (120, 40)]


@pytest.fixture
def sample_db(tmp_path: Path) -> Path:
    return sample_copy(tmp_path / "s.db")


def footer(app: ReviewerApp) -> str:
    return picture(app)[-1]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_footers_keep_help_back_and_quit(sample_db: Path, size: tuple[int, int]) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert "? Help" in footer(app) and "q Quit" in footer(app)
        # tasks, failing trials, transcript: each footer starts with help, back, quit
        for key in ("enter", "F", "enter"):
            await pilot.press(key)
            await settle(app, pilot)
            line = footer(app)
            assert line.startswith("? Help esc Back q Quit"), (type(app.screen).__name__, line)


async def test_help_names_keys_as_typed_and_lists_the_criteria_keys(sample_db: Path) -> None:
    from reviewer.labeling.rubric import load_rubric
    from reviewer.tui.screens.label import LabelScreen
    from reviewer.tui.screens.transcript import TranscriptScreen

    def help_text(screen: object) -> str:
        console = Console(width=200, record=True, file=io.StringIO())
        console.print(HelpScreen(screen)._table())  # type: ignore[arg-type]
        return console.export_text()

    rubric = load_rubric(SAMPLE_RUNS / "rubric.toml")
    app = ReviewerApp(db_path=sample_db, rubric=rubric)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        from reviewer.store import open_store

        db = open_store(sample_db)
        tid = db.execute("SELECT id FROM trials LIMIT 1").fetchone()[0]
        db.close()
        await app.push_screen(TranscriptScreen(tid))
        await settle(app, pilot)
        text = help_text(app.screen)
        assert "right_square_bracket" not in text and "greater_than_sign" not in text
        assert "]" in text and "Next trial" in text and "id (for [keys])" in text
        label = LabelScreen("q", "ana", rubric)
        text = help_text(label)
        for c in rubric.criteria:
            assert f"criterion: {c.question}" in text


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_runs_show_their_own_k_and_k_chooses_one(
    sample_db: Path, size: tuple[int, int]
) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        table = app.screen.query_one("#runs", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        # each run at its own k (the trials a task in the run): the header says pass^k, each cell its k
        assert "pass^k" in header
        cells = [str(table.get_row_at(i)[5]) for i in range(table.row_count)]
        assert cells == ["0.26 k=6", "0.10 k=5"]
        await pilot.press("k")
        await pilot.pause()
        await pilot.press("backspace", "2", "enter")
        await settle(app, pilot)
        assert app.pass_k == 2
        header = [str(c.label) for c in table.columns.values()]
        assert "pass^2" in header
        assert "chosen with k" in str(app.screen.query_one("#runs-status", Static).render())
        await pilot.press("enter")  # the tasks of the run use the same k
        await settle(app, pilot)
        assert isinstance(app.screen, TasksScreen) and app.screen.k == 2
        await pilot.press("k", "backspace", "enter")  # empty: back to the default
        await settle(app, pilot)
        assert app.pass_k is None


async def test_the_palette_chooses_k(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"choose k")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("3", "enter")
        await settle(app, pilot)
        assert app.pass_k == 3


async def test_tasks_with_one_trial_each_show_pass_at_1_once(tmp_path: Path) -> None:
    recs = [native_trial(f"t{i}", passed=i % 2 == 0, trial=1) for i in range(4)]
    db = import_into(tmp_path / "one.db", write_jsonl(tmp_path / "one.jsonl", recs), run="one")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        table = app.screen.query_one("#tasks", DataTable)
        header = [str(c.label) for c in table.columns.values()]
        assert header.count("pass@1") == 1 and not any("^" in h for h in header)
        assert "one trial per task" in screen_text(app)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_import_problems_open_in_the_app(tmp_path: Path, size: tuple[int, int]) -> None:
    from reviewer.commands.imports import import_report_lines
    from reviewer.store import open_store
    from reviewer.tui.screens.import_report import ImportReport
    from reviewer.workflows.imports import import_paths

    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(native_trial("t1")) + "\n{not json\n", encoding="utf-8")
    db_path = tmp_path / "r.db"
    db = open_store(db_path)
    summary = import_paths(db, [path])
    db.close()
    lines = import_report_lines(summary)
    assert any("runs.jsonl:2:" in line for line in lines)
    app = ReviewerApp(db_path=db_path, import_report=lines)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, ImportReport)
        assert "runs.jsonl:2:" in str(app.screen.query_one("#import-report", Static).render())
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
    # sample_runs/ has a file reviewer does not read (ground_truth.json) and no problem: no panel
    assert import_report_lines(import_paths(open_store(tmp_path / "x.db"), [SAMPLE_RUNS])) == []


async def test_ignored_files_are_a_toast_not_a_panel(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db, import_note="ignored 1 file reviewer does not read: x")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        assert isinstance(app.screen, RunsScreen)
        assert any("ignored 1 file" in n.message for n in app._notifications)


async def test_toasts_stay_a_sensible_time(sample_db: Path) -> None:
    """The first toast of `reviewer sample_runs/` (its ignored ground_truth.json) stayed 20 s (found
    by a review): every toast follows one rule, Textual's 5 s for a note, longer for a warning or an
    error or a long text, never more than TOAST_MAX."""
    note = f"ignored 1 file reviewer does not read: {SAMPLE_RUNS / 'ground_truth.json'}"
    app = ReviewerApp(db_path=sample_db, import_note=note)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.notify("careful", severity="warning")
        app.notify("it failed", severity="error")
        app.notify("x" * 5000)
        await pilot.pause()
        stays = {n.message[:20]: n.timeout for n in app._notifications}
    assert stays[note[:20]] <= 6  # the import's note: about Textual's 5 s, not 20
    assert stays["careful"] == TOAST_SECONDS["warning"] > TOAST_SECONDS["information"] == 5
    assert stays["it failed"] == TOAST_SECONDS["error"] > TOAST_SECONDS["warning"]
    assert stays["x" * 20] == TOAST_MAX <= 12


def test_no_toast_sets_its_own_time() -> None:
    """The rule is ReviewerApp.notify's: no call in the app passes a timeout of its own."""
    import ast

    import reviewer.tui

    root = Path(reviewer.tui.__file__).parent
    timed = [
        f"{path.relative_to(root)}:{node.lineno}"
        for path in root.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "attr", getattr(node.func, "id", None)) == "notify"
        and any(k.arg == "timeout" for k in node.keywords)
        and not (path.name == "app.py" and "super" in ast.unparse(node.func))
    ]
    assert timed == []


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_the_reason_takes_the_free_width(sample_db: Path, size: tuple[int, int]) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        await pilot.press("t")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, TrialsScreen)
        table = screen.query_one(DataTable)
        widths = {str(k.value): c.width for k, c in table.columns.items()}
        used = sum(widths.values()) + 2 * len(widths) + 2
        assert used >= size[0] - 2  # the table fills the width
        assert widths["reason"] >= (20 if size[0] == 80 else 34)
        # the whole reason of the highlighted trial, under the table
        detail = str(screen.query_one("#trials-detail", Static).render())
        assert "reason: refunded 74.00, matches expected" in detail


async def test_search_shows_the_conversation_match_highlighted(sample_db: Path) -> None:
    from reviewer.store import open_store
    from reviewer.store.trial_list import TrialFilter, count

    db = open_store(sample_db)
    in_talk = count(db, TrialFilter(run="support-v1", search="discount"))
    everywhere = count(db, TrialFilter(run="support-v1", search="discount", search_system=True))
    db.close()
    # the system prompt of every trial names discounts; one conversation does
    assert (in_talk, everywhere) == (1, 40)
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t", "slash", *"discount", "enter")
        await settle(app, pilot)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1
        cell = table.get_row_at(0)[-1]
        assert "discount" in cell.plain.lower()
        assert any("yellow" in str(span.style) for span in cell.spans)
        await pilot.press("I")  # the system prompt too
        await settle(app, pilot)
        assert table.row_count == 40
        assert "(system prompt too)" in screen_text(app)
        assert table.get_row_at(1)[-1].plain.startswith("system: ")


async def test_search_shows_a_match_inside_tool_call_arguments(tmp_path: Path) -> None:
    rec = native_trial("move", passed=False, trial=1)
    rec["messages"][2]["tool_calls"][0]["arguments"] = {"city": "Zürich", "zip": "8001"}
    db = import_into(tmp_path / "z.db", write_jsonl(tmp_path / "z.jsonl", [rec]), run="z")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t", "slash", *"zurich", "enter")
        await settle(app, pilot)
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1
        cell = table.get_row_at(0)[-1]
        marked = [cell.plain[s.start : s.end] for s in cell.spans if "yellow" in str(s.style)]
        assert marked == ["Zürich"], cell.plain


async def test_export_with_nothing_labeled_offers_the_harness_failures(tmp_path: Path) -> None:
    from reviewer.tui.export_action import OfferHarness

    recs = [native_trial(f"t{i}", passed=i < 2, trial=1) for i in range(5)]  # 3 harness fails
    db = import_into(tmp_path / "h.db", write_jsonl(tmp_path / "h.jsonl", recs), run="h")
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot)
        await pilot.press("t")  # every trial of the run: nobody labeled or judged them
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        assert isinstance(app.screen, OfferHarness)
        text = str(app.screen.query_one(Static).render())
        assert "no trial is labeled fail" in text and "skipped 5 trials" in text
        assert "harness failed 3 trials" in text and "reviewer export --harness-fails" in text
        await pilot.press("enter")
        await settle(app, pilot)
        notes = [n.message for n in app._notifications]
        assert any("exported 3 tasks" in n and "skipped 2 trials: 2 passed" in n for n in notes)
    tasks = (tmp_path / "regression" / "tasks.jsonl").read_text().splitlines()
    assert len(tasks) == 3


async def test_a_failed_judge_run_is_not_titled_done(sample_db: Path) -> None:
    from reviewer.tui.screens.judging import JudgeScreen

    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = JudgeScreen()
        app.push_screen(screen)
        for _ in range(200):
            if screen.phase == "asking":
                await pilot.press("enter")
            if screen.finished:
                break
            await pilot.pause(0.05)
        title = str(screen.query_one("#judge-title", Static).render())
        assert title == "Failed" and "ANTHROPIC_API_KEY" in screen.summary


def test_end_titles() -> None:
    from types import SimpleNamespace

    from reviewer.tui.screens.judging import end_title

    def result(total: int, errors: int, incomplete: bool = False) -> object:
        return SimpleNamespace(
            stats=SimpleNamespace(total=total, errors=errors), incomplete=incomplete
        )

    assert end_title(result(4, 0), False) == "Done"
    assert end_title(result(4, 4), False) == "Failed"
    assert end_title(result(4, 1), False) == "Incomplete"
    assert end_title(result(4, 0), True) == "Cancelled"
    assert end_title(result(4, 0, incomplete=True), False) == "Incomplete"


async def test_the_theme_is_remembered(sample_db: Path) -> None:
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.theme = "nord"
        await pilot.pause()
    assert json.loads(state_path().read_text())["theme"] == "nord"
    again = ReviewerApp(db_path=sample_db)
    async with again.run_test(size=(80, 24)) as pilot:
        await settle(again, pilot)
        assert again.theme == "nord"


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
async def test_compare_fits_long_run_names(tmp_path: Path, size: tuple[int, int]) -> None:
    from reviewer.tui.screens.compare import CompareScreen

    old, new = "a" * 60 + "-baseline", "a" * 60 + "-candidate"
    db = tmp_path / "c.db"
    import_into(db, SAMPLE_RUNS / "support-v1.jsonl", run=old)
    import_into(db, SAMPLE_RUNS / "support-v2.jsonl", run=new)
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen(old, new))
        await settle(app, pilot)
        lines = str(app.screen.query_one("#comparison", Static).render()).split("\n")
        table = [line for line in lines if not line.startswith(("old: ", "new: "))][1:]
        rows = table[: table.index("")]  # the names and the metrics, before the noise check
        assert len(rows) >= 7 and max(len(line) for line in rows) <= size[0] - 2
        assert f"old: {old}" in lines and f"new: {new}" in lines
        names = table[0].split()[:2]  # then the interval column's header
        # at 120 columns the interval column; at 80 the intervals are listed under the table
        assert table[0].split()[2:] == (["95%", "CI", "of", "change"] if size[0] > 100 else [])
        assert names[0] != names[1]  # cut, still told apart
        assert all("…" in n for n in names) and names[0].endswith("line")
