"""The failures screen's rename, merge and split run the same cluster jobs as `reviewer cluster ...`: an
edit made on one face shows on the other, and a refused edit is a warning, not a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from reviewer.cli import cli
from reviewer.tui.app import ReviewerApp
from reviewer.tui.screens.failures import FailuresScreen
from tests.conftest import SAMPLE_RUNS, native_trial, sample_copy, write_jsonl
from tests.tui.conftest import settle

SIZE = (140, 40)


def run_cli(db: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--db", str(db), *args])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def stored(db: Path) -> dict[str, dict[str, object]]:
    return {
        c["id"]: c for c in json.loads(run_cli(db, "cluster", "--stored", "--json"))["clusters"]
    }


@pytest.fixture
def clustered(tmp_path: Path) -> Path:
    db = sample_copy(tmp_path / "s.db", SAMPLE_RUNS, "cluster")
    return db


async def open_failures(app: ReviewerApp, pilot: object) -> DataTable:
    await settle(app, pilot)
    await pilot.press("F")  # type: ignore[attr-defined]
    await settle(app, pilot)
    assert isinstance(app.screen, FailuresScreen)
    return app.screen.query_one("#clusters", DataTable)


def rows(table: DataTable) -> dict[str, tuple[int, str]]:
    """cluster id -> (size, name) as the table shows them."""
    out = {}
    for i in range(table.row_count):
        key = table.coordinate_to_cell_key((i, 0)).row_key.value
        cells = table.get_row_at(i)
        out[str(key)] = (int(str(cells[2])), str(cells[4]))
    return out


def put_cursor_on(table: DataTable, cluster_id: str) -> None:
    table.move_cursor(row=table.get_row_index(cluster_id))


def warnings(app: ReviewerApp) -> list[str]:
    return [n.message for n in app._notifications if n.severity == "warning"]


async def test_edits_made_by_the_cli_show_in_the_app(clustered: Path) -> None:
    before = list(stored(clustered).values())
    a, b, c = (str(x["id"]) for x in before[:3])
    run_cli(clustered, "cluster", "merge", a, b)
    run_cli(clustered, "cluster", "rename", c, "[b]Scripted[/b] name")
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        shown = rows(await open_failures(app, pilot))
    assert b not in shown
    assert shown[a][0] == int(str(before[0]["size"])) + int(str(before[1]["size"]))
    assert shown[c][1] == "[b]Scripted[/b] name"


async def test_edits_made_in_the_app_show_in_the_cli(clustered: Path) -> None:
    before = stored(clustered)
    ids = list(before)
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        table = await open_failures(app, pilot)
        for cid in ids[:2]:
            put_cursor_on(table, cid)
            await pilot.press("space")
        await pilot.press("m")
        await settle(app, pilot)
        put_cursor_on(table, ids[2])
        await pilot.press("r")
        await pilot.pause()
        for _ in range(120):
            await pilot.press("backspace")
        await pilot.press(*"Named in the app", "enter")
        await settle(app, pilot)
        put_cursor_on(table, ids[0])
        await pilot.press("S")
        await pilot.pause()
        await pilot.press("enter")  # empty: the silhouette's choice
        await settle(app, pilot)
        shown = rows(table)
    after = stored(clustered)
    assert ids[1] not in after and after[ids[2]]["name"] == "Named in the app"
    assert len(after) > len(before) - 1  # the merged cluster was split again
    assert {k: v[0] for k, v in shown.items()} == {k: v["size"] for k, v in after.items()}
    assert sum(int(str(c["size"])) for c in after.values()) == 22


async def test_merge_of_even_clusters_then_recluster_in_the_app(clustered: Path) -> None:
    by_size: dict[object, list[str]] = {}
    for cid, c in stored(clustered).items():
        by_size.setdefault(c["size"], []).append(cid)
    pair = next(sorted(ids)[:2] for ids in by_size.values() if len(ids) >= 2)
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        table = await open_failures(app, pilot)
        for cid in reversed(pair):
            put_cursor_on(table, cid)
            await pilot.press("space")
        await pilot.press("m")
        await settle(app, pilot)
        assert pair[0] not in rows(table)
        await pilot.press("C")
        await settle(app, pilot)
        shown = rows(table)
    # re-clustering the same failures brings the merged-away cluster back under its own id (it used to
    # fail with UNIQUE constraint failed: clusters.clustering_id, clusters.id and leave the merge shown)
    assert set(pair) <= set(shown)
    assert sum(size for size, _ in shown.values()) == 22
    assert set(shown) == set(stored(clustered))


async def test_refused_edits_are_warnings(clustered: Path) -> None:
    # a cluster of one trial: one failure unlike any other, clustered with the rest
    # (a split by hand never cuts a pair into single trials)
    odd = native_trial("quantum_flux_capacitor", passed=False, trial=1, run="solo")
    odd["outcome"]["reason"] = "zygomorphic xylophone overheated beyond kelvin threshold"
    odd["messages"] = [{"role": "user", "content": "calibrate the zygomorphic xylophone"}]
    write_jsonl(clustered.parent / "solo.jsonl", [odd])
    run_cli(clustered, "import", str(clustered.parent / "solo.jsonl"))
    run_cli(clustered, "cluster")
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        table = await open_failures(app, pilot)
        before = rows(table)
        alike = None
        for cid, (size, _) in before.items():
            if size < 2:
                continue
            put_cursor_on(table, cid)
            await pilot.press("S")
            await pilot.pause()
            await pilot.press("enter")  # empty: the silhouette's choice
            await settle(app, pilot)
            if any("read alike" in w for w in warnings(app)):
                alike = cid
                break
        assert alike is not None and alike in rows(table)
        assert "nothing to split" in warnings(app)[-1]
        one = next(cid for cid, (size, _) in rows(table).items() if size == 1)
        put_cursor_on(table, one)
        await pilot.press("S")
        await settle(app, pilot)
        assert "cannot be split" in warnings(app)[-1]
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*("x" * 60))
        await pilot.press(*("y" * 160), "enter")
        await settle(app, pilot)
        assert "at most 200 characters" in warnings(app)[-1]
        assert isinstance(app.screen, FailuresScreen)


async def test_rename_split_and_undo_keep_the_cursor_on_the_cluster(clustered: Path) -> None:
    """Regression (issue 16): a rename or split moved the cursor back to row 1; u undoes an edit."""
    before = stored(clustered)
    ids = list(before)
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        table = await open_failures(app, pilot)
        for cid in ids[:2]:
            put_cursor_on(table, cid)
            await pilot.press("space")
        await pilot.press("m")
        await settle(app, pilot)
        put_cursor_on(table, ids[2])
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*"x", "enter")
        await settle(app, pilot)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == ids[2]
        put_cursor_on(table, ids[0])
        await pilot.press("S")
        await pilot.pause()
        await pilot.press("enter")  # empty: the silhouette's choice
        await settle(app, pilot)
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == ids[0]
        for _ in range(3):
            await pilot.press("z")
            await settle(app, pilot)
        shown = rows(table)
        await pilot.press("z")
        await settle(app, pilot)
        refused = warnings(app)
    assert stored(clustered) == before
    assert {k: v[0] for k, v in shown.items()} == {k: v["size"] for k, v in before.items()}
    assert any("nothing to undo" in w for w in refused)


def test_long_task_lists_are_summarised() -> None:
    from reviewer.workflows.clusters import tasks_summary

    tasks = [f"task_{i:02}" for i in range(12)]
    assert tasks_summary(tasks) == "12 tasks: task_00, task_01, task_02 and 9 more"
    assert tasks_summary(tasks[:4]) == "task_00, task_01, task_02, task_03"
    # tau-bench's numbered tasks: the cluster of tasks 3, 4 and 23 read "23, 3, 4"
    assert tasks_summary(["23", "3", "4"]) == "3, 4, 23"
    assert tasks_summary(["14", "19", "22", "7", "9"], 3) == "5 tasks: 7, 9, 14 and 2 more"


async def test_the_cli_lists_the_trials_the_app_filters_by_cluster(clustered: Path) -> None:
    """Enter on a cluster filters the trials list by it; `reviewer trials --cluster` (id, prefix or
    rank) had no such option and now lists the same trials."""
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        table = await open_failures(app, pilot)
        screen = app.screen
        assert isinstance(screen, FailuresScreen)
        table.move_cursor(row=1)
        await pilot.pause()
        cluster = screen.rows[1]
        await pilot.press("enter")
        await settle(app, pilot)
        from reviewer.tui.screens.trials import TrialsScreen

        trials = app.screen
        assert isinstance(trials, TrialsScreen) and trials.filter.cluster_id == cluster.id
        shown = trials.page.total
        first = [r.id for r in trials.page.rows]
    assert shown == cluster.size > 0
    for ref in (cluster.id, cluster.id[:6], "2"):
        listed = json.loads(
            run_cli(clustered, "trials", "--cluster", ref, "--limit", "1000", "--json")
        )
        assert listed["total"] == shown, ref
        assert listed["filter"] == {"cluster_id": cluster.id}
        assert [t["id"] for t in listed["trials"]][: len(first)] == first
