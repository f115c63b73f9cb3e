"""`reviewer bias`: position bias of pairwise judges, from the pair judgements in the store."""

from __future__ import annotations

import sys
from typing import Any

import click

from reviewer.commands.common import cli_store, echo_json, fail


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
    "--seed", type=int, default=0, show_default=True, help="Seed of the pair sample (with --pairs)."
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
    other inconsistent, error), the first-slot win rate with a 95% interval, accuracy and Cohen's
    kappa against the human preference per order and on the swap-consistent pairs, and the winners
    under "a win counts only if it survives the swap". Pair judgements come from `reviewer import`
    of a pairs JSONL file, or from --pairs.
    """
    db = cli_store(ctx)
    incomplete = False
    try:
        if n_pairs is not None:
            opts = {"model": model, "concurrency": concurrency, "max_cost": max_cost}
            judge, incomplete = _judge_pairs(ctx, db, n_pairs, seed, runs, rubric_path, batch, opts)
            if judge is None:
                return
        report_bias(db, judge=judge, as_json=as_json)
        if incomplete:
            from reviewer.commands.judge import EXIT_INCOMPLETE

            sys.exit(EXIT_INCOMPLETE)
    finally:
        db.close()


def _judge_pairs(
    ctx: click.Context,
    db: Any,
    n: int,
    seed: int,
    runs: tuple[str, str] | None,
    rubric_path: str | None,
    batch: bool,
    opts: dict[str, Any],
) -> tuple[str | None, bool]:
    """Sample ``n`` pairs and judge each in both orders: the pairwise judge id (None when sent as
    a batch) and whether some were left (cost cap, failed requests)."""
    from pathlib import Path

    from reviewer.commands.common import require_runs
    from reviewer.commands.judge import run_direct, submit_batch
    from reviewer.config import ConfigError, load_config
    from reviewer.judge.pairs import sample_pairs
    from reviewer.judge.pairwise import preference_jobs
    from reviewer.judge.runner import JudgeAbort
    from reviewer.judge.service import load_settings, pick_rubric
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.labeling.rubric import RubricError
    from reviewer.store.labels import RubricVersionError

    if runs is not None:
        require_runs(db, ctx, list(runs))
    try:
        cfg = load_config()
        settings = load_settings(cfg, **opts)
        rubric = pick_rubric(db, Path(rubric_path) if rubric_path else cfg.rubric)
        pairs = sample_pairs(db, n, seed=seed, runs=runs)
    except (ConfigError, JudgeConfigError, RubricError, RubricVersionError, ValueError) as e:
        fail(str(e))
    if not pairs:
        how = "the same task in both runs" if runs else "a pass and a fail of the same task"
        fail(f"no pairs to judge: no task has {how}")
    judge_id = settings.judge_id(rubric.ref, kind="pair")
    click.echo(f"judge {judge_id}: {len(pairs)} pairs, each in order AB and BA", err=True)
    jobs = preference_jobs(db, pairs, rubric, settings)
    try:
        if batch:
            submit_batch(db, jobs, settings, judge_id, as_json=False)
            return None, False
        stats = run_direct(db, jobs, 2 * len(pairs), settings, judge_id, quiet=False)
    except JudgeAbort as e:
        fail(str(e))
    if stats.left:
        click.echo("the report covers only the pairs judged so far", err=True)
    return judge_id, bool(stats.left)


def report_bias(db: Any, judge: str | None = None, *, as_json: bool = False) -> None:
    """Print the report on the stored pair judgements (of ``judge``); a one-line error when none."""
    from reviewer.judge.bias import bias_report, render_bias
    from reviewer.store.pairs import pair_judges, pair_rows

    judges = pair_judges(db)
    if not judges:
        fail(
            "no pair judgements stored; import a pairs JSONL file or run `reviewer bias --pairs N`"
        )
    if judge is not None and judge not in judges:
        fail(f"no pair judgements of judge {judge!r}; judges: {', '.join(judges)}")
    report = bias_report(pair_rows(db, judge), judge)
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(render_bias(report))
    inconsistent = sum(len(j.inconsistent) for j in report.judges)
    if inconsistent:
        click.echo(
            f"{inconsistent} pair judgement{'' if inconsistent == 1 else 's'} not consistent: "
            "open them side by side in the app (ctrl+p, position bias)",
            err=True,
        )
