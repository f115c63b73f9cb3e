"""Issue 33, item 6: a run whose rewards look graded, imported with no pass rule chosen, says so on
every report, compare, gate (text, Markdown, --json) and on the app's Runs and Tasks screens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.store.db import open_store
from tests.conftest import run_cli


def cli(*args: str) -> tuple[int, str, str]:
    return run_cli("--db", "x.db", *args)


def _graded(tmp_path: Path, name: str, rewards: list[float]) -> Path:
    recs = [
        {"task_id": i, "reward": r, "traj": [{"role": "user", "content": "hi"}], "info": {}}
        for i, r in enumerate(rewards)
    ]
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(recs), encoding="utf-8")
    return path


GRADED = [0.93, 0.84, 0.74, 1.0, 0.5, 0.6, 0.0, 0.8, 0.9, 0.95, 0.7, 0.65]


def test_graded_rewards_without_a_rule_warn_on_report_compare_and_gate(tmp_path: Path) -> None:
    graded = _graded(tmp_path, "graded", GRADED)
    assert cli("import", str(graded))[0] == 0
    assert cli("import", str(graded), "--run", "ruled", "--pass-threshold", "0.5")[0] == 0
    want = "warning: run graded: rewards look graded: 10 of 12 lie strictly between 0 and 1"

    code, out, err = cli("report", "--run", "graded")
    assert code == 0 and want in err
    code, out, err = cli("report", "--run", "ruled")
    assert code == 0 and "rewards look graded" not in out + err  # a rule was chosen

    code, out, err = cli("report", "--run", "graded", "--json")
    assert any(w.startswith(want) for w in json.loads(out)["runs"][0]["audit_warnings"])
    code, out, err = cli("compare", "ruled", "graded")
    assert want in out + err
    code, out, err = cli("gate", "graded", "--baseline", "ruled", "--markdown", "g.md")
    assert want in out
    assert want in Path("g.md").read_text(encoding="utf-8")
    code, out, err = cli("gate", "graded", "--baseline", "ruled", "--json")
    assert any(w.startswith(want) for w in json.loads(out)["audit_warnings"])


async def test_graded_rewards_without_a_rule_warn_on_the_runs_and_tasks_screens(
    tmp_path: Path,
) -> None:
    from textual.widgets import DataTable, Static

    from reviewer.tui.app import ReviewerApp
    from reviewer.tui.screens.tasks import TasksScreen

    assert cli("import", str(_graded(tmp_path, "graded", GRADED)))[0] == 0
    app = ReviewerApp(db_path=Path("x.db"))
    async with app.run_test(size=(160, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()  # the warnings are read after the table is shown
        await pilot.pause()
        status = str(app.screen.query_one("#runs-warning", Static).render())
        assert "⚠ P on it: pass threshold · graded: rewards look graded: 10 of 12" in status
        app.push_screen(TasksScreen("graded"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        warning = app.screen.query_one("#tasks-warning", Static)
        assert "rewards look graded: 10 of 12" in str(warning.render()) and warning.display
        assert str(warning.render()).startswith("⚠ P: pass threshold · rewards look graded")
        # partial credit: each task's mean reward is a column
        table = app.screen.query_one("#tasks", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        assert "reward" in labels
        with open_store("x.db") as db:
            want = dict(
                db.execute(
                    "SELECT task_id, AVG(reward) FROM trials WHERE run = 'graded' GROUP BY task_id"
                ).fetchall()
            )
        col = labels.index("reward")
        shown = {
            str(table.get_row_at(i)[0]): str(table.get_row_at(i)[col])
            for i in range(table.row_count)
        }
        assert shown == {t: f"{m:.2f}" for t, m in want.items()}


def test_a_big_run_is_judged_on_its_first_trials_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.store import trials
    from reviewer.workflows.audit import graded_warning

    assert cli("import", str(_graded(tmp_path, "graded", GRADED)))[0] == 0
    monkeypatch.setattr(trials, "GRADING_SAMPLE", 5)
    with open_store("x.db") as db:
        line = graded_warning(db, "graded")
    # the first five rewards: 0.93, 0.84, 0.74, 1.0, 0.5
    assert line is not None and "rewards look graded: 4 of 5 lie strictly" in line
    assert "(of its first 5 trials)" in line
    monkeypatch.setattr(trials, "GRADING_SAMPLE", 12)
    with open_store("x.db") as db:
        line = graded_warning(db, "graded")
    assert line is not None and "10 of 12" in line and "first" not in line
