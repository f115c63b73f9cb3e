"""The failures screen scoped to one run (b cycles every run, then each run; the title says which)
and its scorecard against the failure tags humans gave (H: each tag's best cluster)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from reviewer.store import open_store
from reviewer.tui.app import ReviewerApp
from reviewer.workflows.labels import give_label
from tests.tui.conftest import settle
from tests.tui.test_failures_screen import clustered, open_failures, run_cli

__all__ = ["clustered"]
SIZE = (120, 40)


def shown(app: ReviewerApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def test_b_scopes_the_clustering_to_one_run_and_the_title_says_so(clustered: Path) -> None:
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        await open_failures(app, pilot)
        assert shown(app, "#failures-title") == "Failure clusters — every run"
        assert not app.screen.query_one("#cluster-score").display  # no tags: no scorecard
        await pilot.press("b")
        await settle(app, pilot)
        assert shown(app, "#failures-title") == "Failure clusters — run support-v1"
        await pilot.press("b")
        await settle(app, pilot)
        assert shown(app, "#failures-title") == "Failure clusters — run support-v2"
    got = json.loads(run_cli(clustered, "cluster", "--stored", "--json"))
    assert got["scope"] == "support-v2"  # the same clustering as `reviewer cluster --run`
    assert {r for c in got["clusters"] for r in c["runs"]} == {"support-v2"}


async def test_the_scorecard_line_and_h_for_each_tag(clustered: Path) -> None:
    got = json.loads(run_cli(clustered, "cluster", "--stored", "--json"))["clusters"]
    with open_store(clustered) as db:
        from reviewer.store.clusters import cluster_members

        for i, c in enumerate(got[:3]):
            for tid in cluster_members(db, c["id"]):
                give_label(db, tid, "ann", "fail", tag=f"[red]tag{i}[/]")
    app = ReviewerApp(db_path=clustered)
    async with app.run_test(size=SIZE) as pilot:
        await open_failures(app, pilot)
        line = shown(app, "#cluster-score")
        n = sum(c["size"] for c in got[:3])
        assert line.startswith("tags vs clusters: ARI 1.00 · purity 1.00")
        assert f"over {n} tagged failures (3 tags, 3 clusters)" in line
        await pilot.press("H")
        await pilot.pause()
        lines = shown(app, "#cluster-score").splitlines()
        assert lines[1].strip().startswith("[red]tag0[/]: ")  # a tag is text, never markup
        assert f"in cluster 1 {got[0]['name']!r}" in lines[1]
