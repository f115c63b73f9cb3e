"""`reviewer bias`: position bias of pairwise judges, from the pair judgements in the store."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from reviewer.commands.common import SEED, cli_store, echo_json, fail, require_runs, settings_of


def register(group: click.Group) -> None:
    group.add_command(bias)


@click.command()
@click.option("--judge", default=None, metavar="ID", help="Report one judge (default: every one).")
@click.option(
    "--pairs",
    "n_pairs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Sample N pairs and judge each in both orders before reporting.",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed of the pair sample (with --pairs).",
)
@click.option(
    "--runs",
    nargs=2,
    default=None,
    metavar="OLD NEW",
    help="Pair the same task from two runs (default: a judged pass with a judged fail).",
)
@click.option("--model", default=None, metavar="M", help="Judge model (with --pairs).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Requests in flight.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Hard stop at this many USD (with --pairs).",
)
@click.option(
    "--batch", is_flag=True, help="Submit the pairs as Message Batches; `reviewer judge --collect`."
)
@click.option(
    "--rubric",
    "rubric_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Rubric TOML (default: the config's, else the one stored last).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def bias(
    ctx: click.Context,
    judge: str | None,
    n_pairs: int | None,
    seed: int,
    runs: tuple[str, str] | None,
    model: str | None,
    concurrency: int | None,
    max_cost: float | None,
    batch: bool,
    rubric_path: str | None,
    as_json: bool,
) -> None:
    """Position bias: is the judge's winner the same when the two answers swap places?

    Reports, per judge, the MT-Bench table (consistent, biased toward first, biased toward second,
    error; a tie in one order only leans to the slot that won the other, as in MT-Bench), the first-slot win rate with a 95% interval, accuracy and Cohen's
    kappa against the human preference per order and on the swap-consistent pairs, and the winners
    under "a win counts only if it survives the swap". Pair judgements come from `reviewer import`
    of a pairs JSONL file, or from --pairs.
    """
    from reviewer.commands.judge import EXIT_INCOMPLETE, note, progress_bar
    from reviewer.workflows.bias import PairsRequest, judge_pairs, position_bias
    from reviewer.workflows.judge import JudgeFailed

    db = cli_store(ctx, needs_runs=True)
    incomplete = False
    try:
        if n_pairs is not None:
            if runs is not None:
                require_runs(db, ctx, list(runs))
            request = PairsRequest(
                n=n_pairs,
                seed=seed,
                runs=runs,
                rubric=Path(rubric_path) if rubric_path else None,
                overrides={"model": model, "concurrency": concurrency, "max_cost": max_cost},
                batch=batch,
            )
            try:
                with progress_bar("judging", quiet=batch) as (start, step):
                    pairs = judge_pairs(
                        db,
                        request,
                        cfg=settings_of(click.get_current_context()),
                        on_note=note,
                        on_start=start,
                        on_progress=step,
                    )
            except JudgeFailed as e:
                fail(_plain(e))
            for line in pairs.lines():
                note(line)
            if pairs.submitted is not None:
                return
            judge, incomplete = pairs.judge, pairs.incomplete
        view = position_bias(db, judge)
    finally:
        db.close()
    if view.empty:
        fail(_plain(view.report.explanation))
    if as_json:
        echo_json(view.report.to_dict())
    else:
        click.echo(view.text)
        if view.inconsistent:
            n = len(view.inconsistent)
            click.echo(
                f"{n} pair judgement{'' if n == 1 else 's'} not consistent: "
                "open them side by side in the app (ctrl+p, position bias)",
                err=True,
            )
    if incomplete:
        sys.exit(EXIT_INCOMPLETE)


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)
