"""`reviewer plan`: how small a drop a comparison of two runs like this one can detect, and what it
would take to detect a given drop."""

from __future__ import annotations

from collections.abc import Sequence

import click

from reviewer.commands.common import cli_store, echo_json, fail, require_runs


def register(group: click.Group) -> None:
    group.add_command(plan)


@click.command()
@click.option(
    "--run", "runs", multiple=True, help="Run to plan from (repeatable; default: every run)."
)
@click.option(
    "--delta",
    type=float,
    default=None,
    help="A drop to detect, e.g. 0.05 (the average falling by 0.05): how many tasks or trials "
    "per task it takes, and their cost.",
)
@click.option(
    "--k",
    "k",
    type=int,
    default=None,
    help="k for pass^k (default: the report's own k for the run, at most every task's trials: "
    "the k `reviewer report` and the app show).",
)
@click.option(
    "--power", type=float, default=0.8, show_default=True, help="Chance of detecting the drop."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def plan(
    ctx: click.Context,
    runs: Sequence[str],
    delta: float | None,
    k: int | None,
    power: float,
    as_json: bool,
) -> None:
    """From a run's own per-task pass rates: the smallest drop in pass@1 and in pass^k that
    `reviewer compare` of two such runs would call worse (with the given power), and with --delta,
    how many tasks or trials per task would detect a drop of that size and what the runs cost.

    A drop of D is the average over tasks falling by D (0.75 -> 0.65 for D = 0.1). Power is
    simulated for a drop spread evenly over the tasks and for one carried by a fifth of them; the
    lower counts."""
    from reviewer.workflows.plan import plan_for_run

    if k is not None and k < 1:
        fail(f"--k must be at least 1, got {k}", 2)
    db = cli_store(ctx, needs_runs=True)
    try:
        selected = require_runs(db, ctx, list(runs))
        try:
            plans = [plan_for_run(db, r, k=k, delta=delta, power=power) for r in selected]
        except ValueError as e:  # a power, delta or k out of range: a usage error
            fail(str(e), 2)
    finally:
        db.close()
    if as_json:
        echo_json({"plans": [p.to_dict() for p in plans]})
        return
    click.echo("\n\n".join(p.render() for p in plans))
