"""The command palette finds a trial by the first hex digits of its id (through the store's lookup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.queries import trials_by_id_prefix
from reviewer.tui.app import ReviewerApp
from tests.conftest import sample_copy


def sample_db(tmp_path: Path) -> Path:
    return sample_copy(tmp_path / "s.db")


async def pick_in_palette(app: ReviewerApp, pilot: Any, typed: str, expect: str) -> None:
    """Type TYPED in the palette, wait for its first hit to name EXPECT, and take that hit."""
    from textual.command import CommandList

    await app.workers.wait_for_complete()
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*typed)
    hits = app.screen.query_one(CommandList)
    for _ in range(200):
        await pilot.pause()
        if hits.option_count and expect in str(hits.get_option_at_index(0).prompt):
            break
    assert hits.option_count and expect in str(hits.get_option_at_index(0).prompt)
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_trials_by_id_prefix(tmp_path: Path) -> None:
    with open_store(sample_db(tmp_path)) as db:
        everything = trials_by_id_prefix(db, "", limit=1000)
        tid, run, task, trial = everything[0]
        assert [r[0] for r in everything] == sorted(r[0] for r in everything)
        assert trials_by_id_prefix(db, tid[:8]) == [(tid, run, task, trial)]
        assert len(trials_by_id_prefix(db, "", limit=3)) == 3
        assert trials_by_id_prefix(db, "zzzzzz") == []


async def test_palette_opens_a_trial_by_id_prefix(tmp_path: Path) -> None:

    from reviewer.tui.screens.transcript import TranscriptScreen

    db_path = sample_db(tmp_path)
    with open_store(db_path) as db:
        tid, run, task, trial = trials_by_id_prefix(db, "", limit=1)[0]
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=(120, 32)) as pilot:
        await pick_in_palette(app, pilot, tid[:8], tid)
        assert isinstance(app.screen, TranscriptScreen)
        assert app.screen.trial_id == tid


async def test_compare_and_gate_in_the_palette_skip_an_unscored_run(tmp_path: Path) -> None:
    """After the monitor imported production traffic (unscored), the palette's "compare the two
    newest runs" compared support-v2 with production: n/a on every row, no task shared."""
    import json

    from textual.command import CommandList

    db_path = sample_db(tmp_path)
    prod = tmp_path / "prod.jsonl"
    prod.write_text(
        json.dumps(
            {
                "run": "production",
                "task_id": "conv-1",
                "outcome": None,
                "started_at": "2025-06-01T10:00:00Z",
                "messages": [
                    {"role": "user", "content": "where is my order?"},
                    {"role": "assistant", "content": "Let me look."},
                ],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["--db", str(db_path), "import", str(prod)])
    assert result.exit_code == 0, result.stderr
    with open_store(db_path) as db, db.transaction():  # imported later (times are to the second)
        db.conn.execute(
            "UPDATE runs SET imported_at = '2999-01-01T00:00:00+00:00' WHERE name = 'production'"
        )
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=(120, 32)) as pilot:
        await app.workers.wait_for_complete()
        prompts = []
        for word in ("compare", "gate"):
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*word)
            hits = app.screen.query_one(CommandList)
            for _ in range(200):
                await pilot.pause()
                if hits.option_count and word in str(hits.get_option_at_index(0).prompt):
                    break
            prompts.append(str(hits.get_option_at_index(0).prompt))
            await pilot.press("escape")
            await pilot.pause()
    assert prompts[0].startswith("compare support-v1 → support-v2"), prompts
    assert prompts[1].startswith("gate support-v2 against the baseline"), prompts


async def test_palette_finds_a_cluster_by_its_id(tmp_path: Path) -> None:
    """The palette found a cluster by its name only, not by the id the filter line and
    `reviewer cluster` show (found by a review)."""

    from reviewer.tui.screens.trials import TrialsScreen
    from reviewer.workflows.clusters import latest_clusters

    db_path = sample_db(tmp_path)
    assert CliRunner().invoke(cli, ["--db", str(db_path), "cluster"]).exit_code == 0
    with open_store(db_path) as db:
        cid = latest_clusters(db)[0].id
    app = ReviewerApp(db_path=db_path)
    async with app.run_test(size=(120, 32)) as pilot:
        await pick_in_palette(app, pilot, cid, cid)
        assert isinstance(app.screen, TrialsScreen)
