"""Defects a new user found walking the app at 80x24 and 120x40; each test is named after one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from textual.widgets import Static

from reviewer.calibration.sampling import make_queue
from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.judging import VerdictWrite, write_verdict
from reviewer.store.queues import queue_items
from reviewer.tui.app import ReviewerApp
from tests.tui.conftest import settle, until

SMALL = (80, 24)


def text_of(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_gate_still_says_no_baseline_after_B(sample_db: Path) -> None:
    from reviewer.tui.screens.gate import GateScreen

    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        app.push_screen(GateScreen("support-v1"))
        await settle(app, pilot)
        assert "no baseline set" in text_of(app, "#gate-report")
        await pilot.press("B")
        await settle(app, pilot)
        await settle(app, pilot)
        report = text_of(app, "#gate-report")
        assert "no baseline set" not in report
        assert "'support-v1' is the baseline itself" in report


async def test_import_dialog_lists_only_five_formats(sample_db: Path) -> None:
    from reviewer.ingest import FORMATS
    from reviewer.tui.screens.importing import ImportModal

    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        app.push_screen(ImportModal())
        await settle(app, pilot)
        prompt = text_of(app, "#import-formats")
        for fmt in FORMATS:
            assert fmt.NAME in prompt, fmt.NAME
        assert len(FORMATS) > 5


async def test_label_reveal_shows_two_judges_with_nothing_telling_them_apart(
    sample_db: Path,
) -> None:
    from reviewer.tui.screens.label import LabelScreen

    with open_store(sample_db) as db:
        make_queue(db, "q", 4, seed=1, labeler="ana")
        first = queue_items(db, "q")[0].trial_id
        for judge, verdict in (("judge-a[bold]", "pass"), ("judge-b", "fail")):
            write_verdict(
                db,
                VerdictWrite(
                    first,
                    judge,
                    verdict,
                    "because",
                    "m",
                    "r",
                    None,
                    None,
                    None,
                    "",
                    "test",
                    "",
                    None,
                ),
            )
    app = ReviewerApp(db_path=sample_db, labeler="ana")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = LabelScreen("q", "ana", None)
        app.push_screen(screen)
        await until(pilot, lambda: screen.payload is not None and screen.state is not None)
        assert screen.payload.trial_id == first  # type: ignore[union-attr]
        await pilot.press("p")
        await until(pilot, lambda: screen.payload is not None and screen.payload.trial_id != first)
        await pilot.press("left_square_bracket")
        await until(pilot, lambda: screen.mine is not None)
        await pilot.press("v")
        await until(pilot, lambda: "judge:" in text_of(app, "#label-judge"))
        text = text_of(app, "#label-judge")
        lines = text.splitlines()  # the id as plain text (not markup) on its verdict's line
        assert "judge: PASS  (judge-a[bold])" in lines
        assert any(line.startswith("judge: FAIL  (judge-b)") for line in lines)


def _cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _clusters(db: Path) -> dict[str, int]:
    import json

    out = json.loads(_cli(db, "cluster", "--stored", "--json"))["clusters"]
    return {str(c["id"]): int(c["size"]) for c in out}


async def _failures(app: ReviewerApp, pilot: Any) -> Any:
    from textual.widgets import DataTable

    from reviewer.tui.screens.failures import FailuresScreen

    await settle(app, pilot)
    app.push_screen(FailuresScreen())
    await settle(app, pilot)
    return app.screen.query_one("#clusters", DataTable)


def _cursor_id(table: Any) -> str:
    return str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)


async def test_failures_hint_names_keys_that_do_nothing(sample_db: Path) -> None:
    _cli(sample_db, "cluster")
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=(160, 30)) as pilot:
        await _failures(app, pilot)
        hint = text_of(app, "#clusters-status")
        assert "S split" in hint and "z undo" in hint and "R reload" in hint
        assert "s split" not in hint and "u undo" not in hint


async def test_failures_merge_leaves_the_cursor_off_the_merged_cluster(sample_db: Path) -> None:
    _cli(sample_db, "cluster")
    ids = sorted(_clusters(sample_db).items(), key=lambda kv: -kv[1])
    big, small = ids[0][0], ids[-1][0]
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        table = await _failures(app, pilot)
        table.move_cursor(row=table.get_row_index(small))
        await pilot.press("space")
        table.move_cursor(row=table.get_row_index(big))
        await pilot.press("space")
        table.move_cursor(row=table.get_row_index(small))  # the cursor on the one merged away
        await pilot.press("m")
        await settle(app, pilot)
        assert small not in _clusters(sample_db)
        assert _cursor_id(table) == big


async def test_failures_R_reloads_an_edit_made_by_the_cli(sample_db: Path) -> None:
    _cli(sample_db, "cluster")
    cid = next(iter(_clusters(sample_db)))
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        table = await _failures(app, pilot)
        _cli(sample_db, "cluster", "rename", cid, "Renamed elsewhere")
        await pilot.press("R")
        await settle(app, pilot)
        assert "Renamed elsewhere" in str(table.get_row(cid))


async def test_failures_split_cannot_choose_how_many_pieces(sample_db: Path) -> None:
    _cli(sample_db, "cluster")
    cid, size = max(_clusters(sample_db).items(), key=lambda kv: kv[1])
    assert size >= 3
    before = set(_clusters(sample_db))
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        table = await _failures(app, pilot)
        table.move_cursor(row=table.get_row_index(cid))
        await pilot.press("S")
        await pilot.pause()
        await pilot.press("9", "9", "enter")  # more pieces than trials: asked again
        await pilot.pause()
        assert "use 2 to" in text_of(app, "#split-error")
        for _ in range(2):
            await pilot.press("backspace")
        await pilot.press("2", "enter")
        await settle(app, pilot)
    after = _clusters(sample_db)
    assert len(set(after) - before) == 1 and after[cid] < size  # two pieces, one keeps the id


BUDGET_ONLY = """
[[rule]]
id = "budget"
type = "budget"
max_latency_s = 1
severity = "budget"
"""


async def test_transcript_violation_keys_say_no_violation_when_the_trial_breaks_a_budget(
    tmp_path: Path,
) -> None:
    from tests.conftest import native_trial, write_jsonl
    from tests.tui.test_transcript import open_transcript, trial_ids

    folder = tmp_path / "runs"
    folder.mkdir()
    rec = native_trial("refund", passed=False, trial=1, latency_s=12.5)
    rec["messages"] = [{"role": "user", "content": f"line {i}"} for i in range(60)]
    write_jsonl(folder / "support.jsonl", [rec])
    (folder / "rules.toml").write_text(BUDGET_ONLY, encoding="utf-8")
    db = tmp_path / "x.db"
    _cli(db, "import", "--run", "support", str(folder))
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SMALL) as pilot:
        view = await open_transcript(app, pilot, trial_ids(db)[0])
        view.action_bottom()
        await pilot.pause()
        assert view.scroll_offset.y > 0
        await pilot.press("right_curly_bracket")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert not any("no rule violation" in m for m in said)
        assert any(m.startswith("1 violation of the whole trial (budget: ") for m in said), said
        assert view.scroll_offset.y == 0  # at the ⚑ mark on top
        assert "⚑" in view.render_row(0).text or "⚑" in view.render_row(1).text


async def test_compare_rows_wrap_at_80x24(sample_db: Path) -> None:
    from reviewer.tui.screens.compare import CompareScreen

    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        app.push_screen(CompareScreen("support-v1", "support-v2"))
        await settle(app, pilot)
        comparison = app.screen.query_one("#comparison", Static)
        lines = str(comparison.render()).splitlines()
        assert any("RED FLAG" in line for line in lines)
        assert any("too few" in line for line in lines)
        assert any(line.startswith("task ") for line in lines)  # the per-task table
        assert any("noise check" in line for line in lines)
        assert max(len(line) for line in lines) <= 78, [x for x in lines if len(x) > 78]
        assert comparison.size.height == len(lines)  # nothing wrapped on screen
        assert "[+0.0%, +40.0%]" in "\n".join(lines)  # the intervals, under the table


def test_compare_cli_layout_is_unchanged_without_a_width(sample_db: Path) -> None:
    from reviewer.metrics.compare import _comparison_lines, compare_runs, comparison_lines
    from reviewer.store.trials import trial_stats

    with open_store(sample_db) as db:
        cmp = compare_runs(trial_stats(db, "support-v1"), trial_stats(db, "support-v2"))
    full = [t.plain for t in _comparison_lines(cmp)]
    assert [t.plain for t in comparison_lines(cmp)] == full
    assert [t.plain for t in comparison_lines(cmp, width=200)] == full
    assert max(len(t.plain) for t in comparison_lines(cmp, width=60)) <= 60


def _monitor_db(tmp_path: Path) -> Path:
    from tests.tui.test_monitor_screen import _db

    return _db(tmp_path)


async def _monitor(app: ReviewerApp, pilot: Any) -> Any:
    from reviewer.tui.screens.monitor import MonitorScreen

    await settle(app, pilot)
    app.push_screen(MonitorScreen())
    await settle(app, pilot)
    assert isinstance(app.screen, MonitorScreen)
    return app.screen


def _on_screen(app: ReviewerApp, selector: str) -> bool:
    region = app.screen.query_one(selector).region
    return region.height > 0 and region.bottom <= app.size.height


async def test_monitor_alert_lines_never_show_and_table_off_screen_at_80x24(
    tmp_path: Path,
) -> None:
    from textual.widgets import DataTable

    app = ReviewerApp(db_path=_monitor_db(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        screen = await _monitor(app, pilot)
        alerts = text_of(app, "#monitor-alerts")
        assert "ALERT day 2025-06-07: tool error" in alerts
        assert _on_screen(app, "#monitor-alerts-box")
        table = screen.query_one("#windows", DataTable)
        assert _on_screen(app, "#windows") and table.region.height >= 5
        # the cursor on the newest alerting window, in sight
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == "2025-06-08"


async def test_monitor_sparklines_wrap_to_three_lines_after_h(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=_monitor_db(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        screen = await _monitor(app, pilot)
        await pilot.press("h")
        await settle(app, pilot)
        assert screen.view is not None and len(screen.view.rows) > 80
        sparks = screen.query_one("#monitor-sparks", Static)
        lines = str(sparks.render()).splitlines()
        assert len(lines) == len(screen.view.series) + 1
        assert lines[0].startswith("rates per hour: the last ")
        assert f"of {len(screen.view.rows)} windows, newest right" in lines[0]
        assert max(len(line) for line in lines) <= sparks.region.width
        assert sparks.size.height == len(lines)  # one line each on screen
        assert _on_screen(app, "#windows")


async def test_monitor_flagged_list_shows_internal_ids(tmp_path: Path) -> None:
    from textual.widgets import DataTable

    from reviewer.tui.screens.monitor import FlaggedScreen, why_words

    app = ReviewerApp(db_path=_monitor_db(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        screen = await _monitor(app, pilot)
        table = screen.query_one("#windows", DataTable)
        table.move_cursor(row=table.get_row_index("2025-06-07"))
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, FlaggedScreen)
        flagged = app.screen.query_one("#flagged", DataTable)
        why = {str(flagged.get_row_at(i)[2]) for i in range(flagged.row_count)}
    assert "tool error (alert)" in why
    assert not any("_" in w or "alert:" in w for w in why)
    assert why_words(["user_repeat", "signal:thumbs_down", "rule:budget", "alert:rule:budget"]) == (
        "user repeated, thumbs_down, rule budget (alert)"
    )


async def test_monitor_with_no_data_shows_a_bare_list_of_rate_names(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    with open_store(db):
        pass
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SMALL) as pilot:
        screen = await _monitor(app, pilot)
        assert not screen.query_one("#monitor-sparks-box").display
        said = text_of(app, "#monitor-alerts")
        assert "reviewer monitor --import" in said and "generate.py --production" in said


async def test_export_toast_cuts_the_skipped_trials_at_80_columns(sample_db: Path) -> None:
    from reviewer.tui.export_action import ExportScope, run_export
    from reviewer.tui.screens.import_report import ExportReport
    from reviewer.tui.screens.transcript import TranscriptScreen

    with open_store(sample_db) as db:
        (passed,) = [
            r[0]
            for r in db.execute(
                "SELECT id FROM trials WHERE success = 1 ORDER BY seq LIMIT 1"
            ).fetchall()
        ]
        text, _, _ = run_export(db, ExportScope("this trial", trial_ids=(passed,)))
    assert len(text) > 80  # why the trial was skipped, longer than a toast's room
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await settle(app, pilot)
        app.push_screen(TranscriptScreen(passed))
        await settle(app, pilot)
        await pilot.press("T")
        await settle(app, pilot)
        assert isinstance(app.screen, ExportReport)
        report = app.screen.query_one("#import-report", Static)
        assert str(report.render()) == text  # all of it, wrapped, nothing cut
        assert report.region.bottom <= app.size.height
        assert not list(app._notifications)  # no toast over it ("Exporting…" is taken off)
        await pilot.press("escape")
        assert isinstance(app.screen, TranscriptScreen)


async def test_failures_status_hint_is_cut_at_80_columns(sample_db: Path) -> None:
    _cli(sample_db, "cluster")
    app = ReviewerApp(db_path=sample_db)
    async with app.run_test(size=SMALL) as pilot:
        await _failures(app, pilot)
        status = app.screen.query_one("#clusters-status", Static)
        hint = text_of(app, "#clusters-status")
        assert hint.endswith("R reload")
        assert status.size.height >= 2  # wrapped: every key of the hint on screen
        assert status.size.height * status.size.width >= len(hint)
