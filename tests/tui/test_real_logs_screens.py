"""The app says what the CLI says about issue 15's second pass: differing pass rules in compare, and
infrastructure errors left out of a new calibration queue (the `a` key)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.compare import CompareScreen
from reviewer.tui.screens.queues import QueuesScreen
from tests.conftest import FIXTURES, native_trial, write_jsonl
from tests.tui.conftest import settle, until
from tests.tui.test_app import import_into

GRADED = FIXTURES / "tau_bench" / "grok-3-graded-5-tasks.json"


async def test_compare_screen_warns_when_the_pass_rules_differ(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from reviewer.cli import cli

    db = import_into(tmp_path / "x.db", GRADED, run="a")
    args = ["--db", str(db), "import", "--run", "b", "--pass-threshold", "0.8", str(GRADED)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    app = ReviewerApp(db_path=db)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(app, pilot)
        await pilot.press("space", "down", "space", "d")
        await settle(app, pilot)
        assert isinstance(app.screen, CompareScreen)
        text = str(app.screen.query_one("#comparison", Static).render())
        assert "warning: the runs' pass rules differ" in text
        assert "0.8 − 1e-6" in text


async def test_new_queue_key_leaves_out_infrastructure_errors_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recs = [
        native_trial("a", passed=True, trial=1, run="r"),
        native_trial("a", passed=False, trial=2, run="r"),
        dict(native_trial("a", trial=3, run="r"), outcome={"infra_error": True}),
    ]
    write_jsonl(tmp_path / "r.jsonl", recs)
    db = import_into(tmp_path / "x.db", tmp_path / "r.jsonl")
    said: list[str] = []

    def notify(self: Any, message: str, **_: Any) -> None:
        said.append(message)

    monkeypatch.setattr(QueuesScreen, "notify", notify)
    app = ReviewerApp(db_path=db, labeler="ana")
    async with app.run_test(size=(140, 40)) as pilot:
        await app.push_screen(QueuesScreen())
        await pilot.pause()
        await pilot.press("a")  # the new-queue form: its defaults, then ctrl+s makes the queue
        await pilot.pause()
        await pilot.press("ctrl+s")
        await until(pilot, lambda: any(m.startswith("Queue ") for m in said))
    assert any(
        m.startswith("Queue ")
        and "2 trials sampled (asked for 50, the database has 2 trials: the queue holds 2)." in m
        and m.endswith(" 1 ended by an infrastructure error left out.")
        for m in said
    ), said
