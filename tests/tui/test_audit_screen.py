"""The Audit view: U on the runs screen and the palette open it; findings with their evidence; Enter
opens a finding's trials; R audits again; untrusted run names stay literal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.audit import AuditScreen
from reviewer.tui.screens.transcript import TranscriptScreen
from tests.conftest import run_cli, write_jsonl
from tests.support.audit_sim import Sim
from tests.tui.conftest import settle

SIZE = (120, 40)
HOSTILE = "[red]x[/] \x1b[31mrun [/foo]"


@pytest.fixture
def audited_db(tmp_path: Path) -> Path:
    sim = Sim(seed=3, tasks=9, trials=4, random_ids=True, run=HOSTILE, skill={"task_05": 1.0})
    sim.plant_leak(("task_00", 0), ("task_00", 2))
    sim.plant_copy("task_01", 0, 3)
    sim.plant_hollow("task_05", 1, "no_tools")
    db = tmp_path / "a.db"
    code, _, err = run_cli(
        "--db", str(db), "import", str(write_jsonl(tmp_path / "s.jsonl", sim.records()))
    )
    assert code == 0, err
    clean = Sim(seed=4, tasks=6, trials=4, run="clean").records()
    run_cli("--db", str(db), "import", str(write_jsonl(tmp_path / "c.jsonl", clean)))
    return db


def table(app: ReviewerApp) -> DataTable[Any]:
    return app.screen.query_one("#audit-findings", DataTable)


def detail(app: ReviewerApp) -> str:
    return str(app.screen.query_one("#audit-detail", Static).render())


async def test_U_opens_the_audit_of_the_run_under_the_cursor(audited_db: Path) -> None:
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("U")  # the cursor is on the first run: the planted one
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen)
        assert app.screen.run == HOSTILE
        kinds = [str(table(app).get_row_at(i)[0]) for i in range(table(app).row_count)]
        assert sorted(kinds) == ["copy", "hollow", "leak"]
        assert "saw" in detail(app) and "did not return it" in detail(app)
        summary = str(app.screen.query_one("#audit-summary", Static).render())
        assert "[red]x[/]" in summary and "\x1b" not in summary  # shown literally, escape visible
        assert "1 leak, 1 copy group, 1 hollow pass" in summary


async def test_enter_opens_the_findings_trials_in_order(audited_db: Path) -> None:
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AuditScreen(HOSTILE))
        await settle(app, pilot)
        leak = next(f for f in app.screen.rows.values() if f["kind"] == "leak")  # type: ignore[attr-defined]
        assert str(table(app).get_row_at(0)[0]) == "leak"
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.trial_id == leak["trials"][0]["id"]  # the trial that saw the leak
        assert app.screen.sequence is not None
        assert app.screen.sequence.position(None, app.screen.trial_id) == (1, 2)  # type: ignore[arg-type]
        await pilot.press("escape")
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen)


async def test_palette_audits_every_run_and_r_audits_again(audited_db: Path) -> None:
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"audit")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen) and app.screen.run is None
        assert table(app).row_count == 3
        summary = str(app.screen.query_one("#audit-summary", Static).render())
        assert "1 run: no finding" in summary
        await pilot.press("R")
        await settle(app, pilot)
        assert table(app).row_count == 3


async def test_a_clean_run_says_so(audited_db: Path) -> None:
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AuditScreen("clean"))
        await settle(app, pilot)
        assert table(app).row_count == 0
        assert "No finding" in detail(app)
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen)


async def test_the_view_says_how_many_findings_were_not_stored(tmp_path: Path) -> None:
    """Issue 27: a run whose trials share one environment keeps 100 leaks; the view lists those
    and says how many more there are."""
    from tests.support.audit_sim import shared_records

    db = tmp_path / "shared.db"
    code, _, err = run_cli(
        "--db", str(db), "import", str(write_jsonl(tmp_path / "s.jsonl", shared_records(600)))
    )
    assert code == 0, err
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        app.push_screen(AuditScreen("shared"))
        await settle(app, pilot)
        assert table(app).row_count == 100
        summary = str(app.screen.query_one("#audit-summary", Static).render())
        assert "450 leaks" in summary
        assert "350 more leaks not stored (the first 100 of each kind are)" in summary


async def test_the_runs_and_tasks_screens_say_what_the_audit_found(
    audited_db: Path, tmp_path: Path
) -> None:
    """`reviewer report` warned of the audit's copy group beside pass^k, and the app's runs and
    tasks screens showed the same pass^k without a word: only U told (found by a review). Both
    now say it under the table, U first; a clean run says nothing."""
    from tests.support.audit_sim import Sim

    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        warning = str(app.screen.query_one("#runs-warning", Static).render())
        assert warning.startswith("⚠ U on it: audit · ")
        assert "[red]x[/]" in warning and "\x1b" not in warning
        assert "the audit found 1 leak, 1 copy group, 1 hollow pass" in warning
        assert "clean" not in warning
        await pilot.press("enter")  # the planted run's tasks
        await settle(app, pilot)
        line = str(app.screen.query_one("#tasks-warning", Static).render())
        assert line.startswith("⚠ U: audit · the audit found 1 leak, 1 copy group")
        await pilot.press("U")
        await settle(app, pilot)
        assert isinstance(app.screen, AuditScreen) and app.screen.run == HOSTILE
    # more than two flagged runs: one line names them (a line each would push the table away)
    for i in range(2):
        sim = Sim(seed=5 + i, tasks=4, trials=4, random_ids=True, run=f"more-{i}")
        sim.plant_copy("task_01", 0, 3)
        code, _, err = run_cli(
            "--db", str(audited_db), "import",
            str(write_jsonl(tmp_path / f"m{i}.jsonl", sim.records())),
        )  # fmt: skip
        assert code == 0, err
    app = ReviewerApp(db_path=audited_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        warning = str(app.screen.query_one("#runs-warning", Static).render())
        assert warning.startswith("⚠ U on it: audit · the audit found something in 3 runs: ")
        assert "'more-0'" in warning and "clean" not in warning
