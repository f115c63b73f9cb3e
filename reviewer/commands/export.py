"""`reviewer export`: labeled failures as regression eval tasks (native task JSONL or Inspect AI)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from reviewer.commands.common import cli_store, echo_json, fail, require_runs


def register(group: click.Group) -> None:
    group.add_command(export)


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)


@click.command()
@click.option(
    "--out",
    "out",
    default="regression",
    show_default=True,
    type=click.Path(),
    help="Folder (gets tasks.jsonl or inspect.jsonl) or a file ending in .jsonl.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["native", "inspect"]),
    default="native",
    show_default=True,
    help="native: reviewer task JSONL; inspect: an Inspect AI dataset (json_dataset reads it).",
)
@click.option("--run", "runs", multiple=True, help="Only trials of this run (repeatable).")
@click.option("--cluster", default=None, help="Only this failure cluster: id, id prefix or rank.")
@click.option(
    "--labeler", default=None, help="Only this labeler's fail labels (default: anyone's)."
)
@click.option(
    "--judge-fails", is_flag=True, help="Also judge fail verdicts that no human labeled pass."
)
@click.option(
    "--harness-fails",
    is_flag=True,
    help="Also trials the harness scored as failed that no human labeled pass.",
)
@click.option(
    "--trial", "trial_ids", multiple=True, metavar="ID", help="Only this trial (repeatable)."
)
@click.option("--task", default=None, help="Only trials of this task (as the trials list filters).")
@click.option(
    "--outcome", type=click.Choice(["pass", "fail"]), default=None, help="Only this outcome."
)
@click.option(
    "--verdict",
    type=click.Choice(["pass", "fail", "error", "none"]),
    default=None,
    help="Only trials whose latest judge verdict is this (none: no verdict).",
)
@click.option(
    "--label",
    type=click.Choice(["pass", "fail", "skip", "none"]),
    default=None,
    help="Only trials whose standing human label is this (none: no label).",
)
@click.option(
    "--rule", default=None, metavar="ID", help="Only trials breaking this rule (any: any rule)."
)
@click.option("--search", default=None, help="Only trials whose conversation matches (FTS5 query).")
@click.option("--search-system", is_flag=True, help="--search matches the system prompt too.")
@click.option("--one-per-cluster", is_flag=True, help="One representative task per cluster.")
@click.option("--force", is_flag=True, help="Replace an existing file.")
@click.option("--append", is_flag=True, help="Add only the tasks the file does not hold (by id).")
@click.option(
    "--redact",
    is_flag=True,
    help="Mask secrets and personal data (keys, passwords, cards, SSNs, IBANs, emails, phones).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.pass_context
def export(
    ctx: click.Context,
    out: str,
    fmt: str,
    runs: Sequence[str],
    cluster: str | None,
    labeler: str | None,
    judge_fails: bool,
    harness_fails: bool,
    trial_ids: Sequence[str],
    task: str | None,
    outcome: Any,
    verdict: Any,
    label: Any,
    rule: str | None,
    search: str | None,
    search_system: bool,
    one_per_cluster: bool,
    force: bool,
    append: bool,
    redact: bool,
    as_json: bool,
) -> None:
    """Export failures a human labeled fail as regression tasks a harness can run.

    Each task holds the input (system prompt and conversation up to the first user turn, or the task
    instruction), the expected behaviour, grading hints and provenance. The same selection gives a
    byte-identical file; the file is written atomically and never replaced without --force.
    --trial, --task, --outcome, --verdict, --label, --rule and --search narrow the selection the way
    the app's trials list filters (what `T` exports there).
    """
    from reviewer.workflows.export import (
        ExportFailed,
        ExportRequest,
        Selection,
        export_regression_tasks,
    )
    from reviewer.workflows.trials import TrialFilter

    listed = TrialFilter(
        task_id=task,
        outcome=outcome,
        verdict=verdict,
        label=label,
        rule_id=rule,
        search=search,
        search_system=search_system,
    )
    request = ExportRequest(
        selection=Selection(
            runs=tuple(runs),
            cluster=cluster,
            labeler=labeler,
            include_judge=judge_fails,
            include_harness=harness_fails,
            one_per_cluster=one_per_cluster,
            trial_ids=tuple(trial_ids) or None,
        ),
        trials=None if listed.is_empty else listed,
        out=out,
        fmt=fmt,
        force=force,
        append=append,
        redact=redact,
    )
    with cli_store(ctx, needs_runs=True) as db:
        require_runs(db, ctx, list(runs))
        try:
            summary = export_regression_tasks(db, request)
        except ExportFailed as e:
            fail(_plain(e))
    for line in summary.lines():
        click.echo(_plain(line) if not line.startswith("  ") else "  " + _plain(line[2:]), err=True)
    if as_json:
        echo_json(summary.to_json())
