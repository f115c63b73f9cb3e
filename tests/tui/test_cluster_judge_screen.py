"""The judge's pass over the clusters from the Failures screen (`V`): the estimate and Enter first,
the names on the clusters, the proposals listed, `m` merging the highlighted one, `z` undoing it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from reviewer.cli import cli
from reviewer.judge.standin import Reply, StandIn, default_policy, forced_tool, tool_reply
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.cluster_judge import ClusterJudgeScreen
from reviewer.tui.screens.failures import FailuresScreen
from tests.conftest import SAMPLE_RUNS, sample_copy
from tests.tui.conftest import settle

SIZE = (120, 40)


def run_cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def stored(db: Path) -> list[dict[str, Any]]:
    return list(json.loads(run_cli(db, "cluster", "--stored", "--json"))["clusters"])


@pytest.fixture
def clustered(tmp_path: Path) -> Path:
    db = sample_copy(tmp_path / "s.db", SAMPLE_RUNS, "cluster")
    return db


async def wait_for(pilot: Any, screen: ClusterJudgeScreen, phase: str) -> None:
    for _ in range(400):
        if screen.phase == phase:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"the window never reached {phase!r} (it is {screen.phase!r})")


async def test_names_then_accept_a_proposal_then_undo(clustered: Path, standin: StandIn) -> None:
    n = len(stored(clustered))
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        failures = app.screen
        assert isinstance(failures, FailuresScreen)
        await pilot.press("V")
        await pilot.pause()
        window = app.screen
        assert isinstance(window, ClusterJudgeScreen)
        await wait_for(pilot, window, "asking")
        asked = str(window.query_one("#cj-status").render())
        assert (
            f"{n + 1} to send" in asked
        )  # a name for each cluster, then the merges and "cost cap $10" in asked
        assert standin.message_requests == 0  # nothing is sent before Enter
        await pilot.press("enter")
        await wait_for(pilot, window, "finished")
        await settle(app, pilot)
        assert standin.message_requests == n + 1
        table = window.query_one("#cj-proposals", DataTable)
        assert table.row_count == 2
        first = str(table.coordinate_to_cell_key((0, 0)).row_key.value)
        await pilot.press("m")
        await settle(app, pilot)
        assert str(table.get_row(first)[1]) == "merged"
        # and shown: the state column, empty until then, widens to it
        assert "merged" in table.render_line(1).text
        await pilot.press("m")  # a proposal is merged once
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)
        assert app.screen is failures
        shown = failures.query_one("#clusters", DataTable)
        merged = len(stored(clustered))
        assert shown.row_count == merged < n
        names = {str(shown.get_row_at(i)[4]) for i in range(shown.row_count)}
        assert "called cancel_order on shipped orders" in names
        await pilot.press("z")
        await settle(app, pilot)
        assert shown.row_count == n
    assert len(stored(clustered)) == n


async def test_hostile_names_and_reasons_are_shown_as_text(
    clustered: Path, standin: StandIn
) -> None:
    def policy(params: dict[str, Any]) -> Reply:
        tool = forced_tool(params)
        if tool == "record_cluster_name":
            return tool_reply(params, tool, {"name": "[red]x[/] \x1b[2J broke [b]it"})
        if tool == "propose_merges":
            ids = [c["id"] for c in stored(clustered)[:2]]
            return tool_reply(params, tool, {"merges": [{"clusters": ids, "reason": "[/]"}]})
        return default_policy(params)

    standin.policy = policy
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        await pilot.press("V")
        await pilot.pause()
        window = app.screen
        assert isinstance(window, ClusterJudgeScreen)
        await wait_for(pilot, window, "asking")
        await pilot.press("enter")
        await wait_for(pilot, window, "finished")
        await settle(app, pilot)
        table = window.query_one("#cj-proposals", DataTable)
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[3].startswith("[red]x[/] [2J broke [b]it + ") and cells[4] == "[/]"
        await pilot.press("escape")
        await settle(app, pilot)
        shown = app.screen.query_one("#clusters", DataTable)
        assert str(shown.get_row_at(0)[4]) == "[red]x[/] [2J broke [b]it"


async def test_without_a_key_the_window_says_so_in_one_line(clustered: Path) -> None:
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await pilot.press("F")
        await settle(app, pilot)
        await pilot.press("V")
        await pilot.pause()
        window = app.screen
        assert isinstance(window, ClusterJudgeScreen)
        await wait_for(pilot, window, "asking")  # the estimate needs no key
        await pilot.press("enter")
        await wait_for(pilot, window, "finished")
        assert "ANTHROPIC_API_KEY is not set" in window.summary
        assert "Failed" in str(window.query_one("#cj-title").render())
