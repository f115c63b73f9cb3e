"""`reviewer export`: labeled failures as regression eval tasks (native task JSONL or Inspect AI)."""

from __future__ import annotations

from collections.abc import Sequence

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
@click.option("--one-per-cluster", is_flag=True, help="One representative task per cluster.")
@click.option("--force", is_flag=True, help="Replace an existing file.")
@click.option("--append", is_flag=True, help="Add only the tasks the file does not hold (by id).")
@click.option(
    "--redact", is_flag=True, help="Mask API keys, bearer tokens, emails and phone numbers."
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
    """
    from reviewer.export.files import ExportError
    from reviewer.export.run import export_tasks
    from reviewer.export.select import Selection, SelectionError

    db = cli_store(ctx)
    require_runs(db, ctx, list(runs))
    selection = Selection(
        runs=tuple(runs),
        cluster=cluster,
        labeler=labeler,
        include_judge=judge_fails,
        one_per_cluster=one_per_cluster,
    )
    try:
        summary = export_tasks(db, selection, out, fmt, force=force, append=append, redact=redact)
    except (ExportError, SelectionError) as e:
        fail(_plain(e))
    except OSError as e:
        fail(_plain(f"{e.filename or out}: {e.strerror or e}"))
    for line in summary.lines():
        click.echo(_plain(line) if not line.startswith("  ") else "  " + _plain(line[2:]), err=True)
    if as_json:
        echo_json(summary.to_json())
