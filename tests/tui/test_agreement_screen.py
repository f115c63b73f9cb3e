"""The agreement screen: the report, its disagreements one Enter from the transcript, reload, palette."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable, Static

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.agreement import AgreementScreen
from reviewer.tui.screens.transcript import TranscriptScreen
from tests.conftest import native_trial, run_cli, sample_copy, write_jsonl
from tests.tui.conftest import settle

SIZE = (120, 40)
HOSTILE = "[red]x[/] \x1b[31mred [/foo]"


@pytest.fixture
def labeled_db(tmp_path: Path) -> Path:
    """The sample runs, ana's labels = the harness outcome on 40 trials, one hostile rationale."""
    path = sample_copy(tmp_path / "s.db")
    db = open_store(path)
    try:
        rows = db.conn.execute("SELECT id, success FROM trials ORDER BY seq LIMIT 40").fetchall()
        for tid, ok in rows:
            add_label(db, tid, "ana", "pass" if ok else "fail", rubric_ref="support-policy@1")
        db.conn.execute(
            "UPDATE verdicts SET verdict = CASE verdict WHEN 'pass' THEN 'fail' ELSE 'pass' END, "
            "rationale = ? WHERE trial_id = ?",
            [HOSTILE, rows[0][0]],
        )
        db.conn.commit()
    finally:
        db.close()
    return path


def report_text(app: ReviewerApp) -> str:
    return str(app.screen.query_one("#agreement-report", Static).render())


def table(app: ReviewerApp) -> DataTable[Any]:
    return app.screen.query_one("#disagreements", DataTable)


async def test_report_shows_and_enter_opens_the_disagreement(labeled_db: Path) -> None:
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        await settle(app, pilot)
        assert isinstance(app.screen, AgreementScreen)
        text = report_text(app)
        assert "Cohen's kappa" in text and "human    ana" in text
        # the screen names its keys where the command names its options
        assert "j: another)" in text and "l: another)" in text and "--judge" not in text
        assert "judge is trusted" in text or "judge is not trusted" in text
        t = table(app)
        assert t.row_count == len(app.screen.report.disagreements) > 0  # type: ignore[union-attr]
        first = str(t.coordinate_to_cell_key(t.cursor_coordinate).row_key.value)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.trial_id == first
        assert app.screen.sequence is not None
        assert app.screen.sequence.position(None, first) == (1, t.row_count)  # type: ignore[arg-type]
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, AgreementScreen)


async def test_untrusted_rationale_is_shown_literally(labeled_db: Path) -> None:
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        cells = [str(c) for i in range(table(app).row_count) for c in table(app).get_row_at(i)]
        hostile = [c for c in cells if "[red]x[/]" in c]
        assert hostile and "\x1b" not in hostile[0] and "[/foo]" in hostile[0]


async def test_r_reloads_as_new_labels_arrive(labeled_db: Path) -> None:
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        assert "trials with both     40" in report_text(app)
        db = open_store(labeled_db)
        try:
            row = db.conn.execute("SELECT id FROM trials ORDER BY seq LIMIT 1 OFFSET 50").fetchone()
            add_label(db, row[0], "ana", "pass", rubric_ref="support-policy@1")
        finally:
            db.close()
        await pilot.press("R")
        await settle(app, pilot)
        assert "trials with both     41" in report_text(app)


async def test_palette_opens_judge_agreement(labeled_db: Path) -> None:
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"judge agreement")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, AgreementScreen)
        assert "Judge vs human agreement" in report_text(app)


async def test_an_empty_database_explains_itself(tmp_path: Path) -> None:
    app = ReviewerApp(db_path=tmp_path / "empty.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        assert "no pass/fail labels yet" in report_text(app)
        assert table(app).row_count == 0
        await pilot.press("j")
        await settle(app, pilot)
        assert isinstance(app.screen, AgreementScreen)


async def test_j_switches_to_the_next_judge(labeled_db: Path) -> None:
    db = open_store(labeled_db)
    try:
        for (tid,) in db.conn.execute("SELECT id FROM trials ORDER BY seq LIMIT 5").fetchall():
            db.conn.execute(
                "INSERT INTO verdicts (trial_id, judge, verdict, source, created_at) "
                "VALUES (?, 'second-judge', 'pass', 'test', '2025-01-01T00:00:00')",
                [tid],
            )
        db.conn.commit()
    finally:
        db.close()
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        assert "judge    claude-sonnet-4-5:support-policy@1" in report_text(app)
        await pilot.press("j")
        await settle(app, pilot)
        assert "judge    second-judge" in report_text(app)
        assert "trials with both     5" in report_text(app)


async def test_the_verdict_and_its_plain_sentence_stay_visible_at_80x24(labeled_db: Path) -> None:
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        await pilot.press("A")
        await settle(app, pilot)
        assert isinstance(app.screen, AgreementScreen)
        verdict = app.screen.query_one("#agreement-verdict", Static)
        text = str(verdict.render())
        report = app.screen.report
        assert report is not None
        assert report.agreement.verdict_line in text
        assert "Kappa" in text and "stand in for ana" in text
        region = verdict.region
        assert region.height >= 3 and region.y >= 0 and region.bottom <= 24 - 3
        assert verdict.visible and verdict.display


async def test_an_unusable_threshold_is_the_line_the_cli_refuses_with(
    labeled_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("reviewer.toml").write_text('[judge]\ntrust_threshold = "high"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", str(labeled_db), "agreement"])
    (line,) = result.stderr.splitlines()
    assert result.exit_code == 1 and line.startswith("reviewer: ")
    assert "reviewer.toml" in line and "trust_threshold must be a number" in line
    app = ReviewerApp(db_path=labeled_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        status = str(app.screen.query_one("#agreement-status", Static).render())
    # the app goes on with the default and says why, in the CLI's words
    assert status.startswith(f"threshold 0.6 used: {line.removeprefix('reviewer: ')} · ")


async def test_at_80_columns_long_names_leave_both_verdicts_in_view(tmp_path: Path) -> None:
    """Run, task and trial id of 50-odd characters: the table fits the screen, the names are cut
    in the middle (still told apart), the rationale ends with "…", and the verdicts never move
    off to the right."""
    run = "customer-support-agent-v2-2026-12-01-nightly-long-run-name"
    records = [
        native_trial(
            f"airline/cancel_reservation_with_travel_insurance_{i}",
            True,
            run=run,
            id=f"{run}-trial-{i:04d}",
            judge={"verdict": "fail", "rationale": "The agent skipped the policy check. " * 6},
        )
        for i in range(3)
    ]
    path = tmp_path / "long.db"
    assert (
        run_cli("--db", str(path), "import", str(write_jsonl(tmp_path / "t.jsonl", records)))[0]
        == 0
    )
    db = open_store(path)
    try:
        for (tid,) in db.conn.execute("SELECT id FROM trials").fetchall():
            add_label(db, tid, "ana", "pass")
    finally:
        db.close()
    app = ReviewerApp(db_path=path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot)
        app.push_screen(AgreementScreen())
        await settle(app, pilot)
        t = table(app)
        assert t.row_count == 3
        keys = [str(c.key.value) for c in t.ordered_columns]
        widths = [c.get_render_width(t) for c in t.ordered_columns]
        assert sum(widths) <= t.size.width  # nothing to scroll to
        assert sum(widths[: keys.index("judge") + 1]) < 40  # the verdicts near the left edge
        rows = [[str(c) for c in t.get_row_at(i)] for i in range(3)]
        assert {r[keys.index("judge")] for r in rows} == {"fail"}
        assert all(r[keys.index("why")].endswith("…") for r in rows)
        tasks = [r[keys.index("task")] for r in rows]
        assert len(set(tasks)) == 3 and all("…" in x for x in tasks)
