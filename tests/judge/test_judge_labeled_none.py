"""Regression: `reviewer judge --labeled` with no labels printed `0 trials` and exited 0."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli


def test_judge_labeled_without_labels_said_0_trials_and_exit_0(
    db_path: Path, standin: object
) -> None:
    r = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--labeled"])
    assert r.exit_code == 1
    assert r.stdout == ""
    assert r.stderr.strip() == (
        "reviewer: no labeled trials: label some first (reviewer sample, then the app's labeling)"
    )
    assert "0 trials" not in r.stderr
