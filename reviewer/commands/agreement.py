"""`reviewer agreement`: how far the judge agrees with the humans, and whether it can be trusted."""

from __future__ import annotations

import click

from reviewer.commands.common import SEED, cli_store, echo_json, fail, settings_of


def register(group: click.Group) -> None:
    group.add_command(agreement)


@click.command()
@click.option(
    "--judge", default=None, help="Judge id (default: the most verdicts on labeled trials)."
)
@click.option(
    "--labeler",
    default=None,
    help="Compare the judge with this labeler (default: reviewer --labeler, else the one with "
    "the most labels the judge graded).",
)
@click.option(
    "--rubric",
    "rubric",
    default=None,
    metavar="REF",
    help="Rubric name@version of the labels (default: the latest used).",
)
@click.option(
    "--threshold",
    type=click.FloatRange(-1, 1),
    default=None,
    help="Kappa lower bound for 'trusted' (default: [judge] trust_threshold, else 0.6).",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of the bootstrap interval and of the labels-to-a-verdict simulation.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def agreement(
    ctx: click.Context,
    judge: str | None,
    labeler: str | None,
    rubric: str | None,
    threshold: float | None,
    seed: int,
    as_json: bool,
) -> None:
    """Judge vs human agreement on trials with both a label and a verdict.

    Cohen's kappa with the one 95% interval that holds its coverage on calibration-sized sets, the
    confusion matrix, the judge's TPR / TNR (pass is positive) with Wilson intervals, the majority
    baseline, the Landis & Koch band, the human-vs-human ceiling, per-criterion agreement and the
    list of disagreements. The verdict is about kappa over the judge's own mix of verdicts: trusted
    when the interval's lower bound reaches the threshold, not trusted when its upper bound is below
    it, otherwise how many more labels settle it with 80% probability; no verdict below 30 labels.
    One plain sentence under the verdict says what it means. --json also keeps the analytic and
    bootstrap intervals (not for decisions).
    """
    from reviewer.text import visible
    from reviewer.workflows.agreement import UnknownScope, agreement_report, configured_threshold

    limit, problem = (
        (threshold, None)
        if threshold is not None
        else configured_threshold(settings_of(click.get_current_context()))
    )
    if problem is not None:
        fail(problem)
    labeler = labeler or (ctx.obj or {}).get("labeler")
    db = cli_store(ctx, needs_runs=True)
    try:
        report = agreement_report(
            db, judge=judge, labeler=labeler, rubric=rubric, threshold=limit, seed=seed
        )
    except UnknownScope as e:
        fail(visible(e, single_line=True))
    finally:
        db.close()
    if not as_json:
        click.echo(report.render())
        return
    echo_json(report.to_dict())
    for note in report.notes:
        click.echo(f"reviewer: {note}", err=True)
