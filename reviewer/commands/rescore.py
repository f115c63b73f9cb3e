"""`reviewer rescore RUN --pass-threshold X`: a stored run of graded rewards judged again by a pass
threshold (the app's `P` on the Runs screen)."""

from __future__ import annotations

import click

from reviewer.commands.common import cli_store, echo_json, fail, require_runs


def register(group: click.Group) -> None:
    group.add_command(rescore)


@click.command()
@click.argument("run")
@click.option(
    "--pass-threshold",
    "threshold",
    required=True,
    metavar="X",
    help="A reward at or above X passes (1e-6 < X <= 1).",
)
@click.option("--dry-run", is_flag=True, help="Say what would change; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
@click.pass_context
def rescore(ctx: click.Context, run: str, threshold: str, dry_run: bool, as_json: bool) -> None:
    """Judge RUN's graded rewards again: each trial with a reward and no pass or fail of its own
    passes when reward >= X (the run's pass rule becomes X). Trials whose source said pass or fail,
    infrastructure errors and unscored trials keep their outcome. Reports, compare, the gate and
    the app follow; failure clusters made before are not redone (it says when they are stale).

    \b
    reviewer rescore grok-3-retail --pass-threshold 0.7 --dry-run
    reviewer rescore grok-3-retail --pass-threshold 0.7
    """
    from reviewer.workflows.rescore import RescoreError, check_threshold, rescore_run

    try:
        x = check_threshold(threshold)
    except RescoreError as e:
        fail(str(e), 2)
    with cli_store(ctx, needs_runs=True) as db:
        require_runs(db, ctx, [run])
        try:
            result = rescore_run(db, run, x, apply=not dry_run)
        except RescoreError as e:
            fail(str(e))
    if as_json:
        echo_json(result.to_json())
        return
    for line in result.lines():
        click.echo(line)
