"""`reviewer judge`: grade trials with an LLM judge through the Messages API or Message Batches."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from reviewer.commands.common import cli_store, echo_json, fail

#: Exit status when the run ended with trials left (cost cap, failed requests, interrupted).
EXIT_INCOMPLETE = 3


def register(group: click.Group) -> None:
    group.add_command(judge)


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)


@click.command()
@click.option(
    "--run", "runs", multiple=True, help="Judge this run (repeatable; default: every run)."
)
@click.option("--only-unjudged", is_flag=True, help="Leave out trials this judge already graded.")
@click.option("--retry-errors", is_flag=True, help="Ask again where this judge recorded `error`.")
@click.option("--labeled", is_flag=True, help="Only trials a human has labeled (for calibration).")
@click.option("--queue", default=None, help="Only the trials of this calibration queue.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many trials.")
@click.option(
    "--model", default=None, help="Judge model (default: [judge] model, claude-sonnet-4-5)."
)
@click.option(
    "--temperature",
    type=click.FloatRange(0, 1),
    default=None,
    help="Sampling temperature, sent only when given (Anthropic API version 2026-10-21 refuses it; for compatible endpoints that accept it).",
)
@click.option("--max-tokens", type=click.IntRange(min=16), default=None, help="Reply token limit.")
@click.option("--prompt-version", default=None, help="Prompt version recorded in the judge id.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Requests in flight.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Hard stop at this many USD.",
)
@click.option(
    "--rubric",
    "rubric_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Rubric TOML (default: the config's, else the one stored last).",
)
@click.option(
    "--batch", is_flag=True, help="Submit as Message Batches (half price; collect later)."
)
@click.option("--collect", is_flag=True, help="Only collect submitted batches, then stop.")
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
@click.pass_context
def judge(ctx: click.Context, **opts: Any) -> None:
    """Grade trials with the LLM judge (forced tool `record_verdict`) and store the verdicts.

    Replies are cached in the database: a repeated run costs nothing and an interrupted one resumes.
    Needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another Anthropic-compatible endpoint) unless
    every request is already cached. Exit status 3 means trials were left (cost cap, failed requests).
    """
    from reviewer.config import ConfigError, load_config
    from reviewer.judge.runner import JudgeAbort
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.labeling.rubric import RubricError
    from reviewer.store.labels import RubricVersionError

    try:
        cfg = load_config()
        from reviewer.judge.service import load_settings, pick_rubric

        settings = load_settings(
            cfg,
            model=opts["model"],
            temperature=opts["temperature"],
            max_tokens=opts["max_tokens"],
            prompt_version=opts["prompt_version"],
            concurrency=opts["concurrency"],
            max_cost=opts["max_cost"],
        )
        db = cli_store(ctx)
        configured = Path(opts["rubric_path"]) if opts["rubric_path"] else cfg.rubric
        rubric = pick_rubric(db, configured)
    except (ConfigError, JudgeConfigError, RubricError, RubricVersionError, OSError) as e:
        fail(str(e))
    try:
        _judge(ctx, db, settings, rubric, opts)
    except JudgeAbort as e:
        fail(str(e))
    except KeyboardInterrupt:
        click.echo(
            "reviewer: interrupted; every verdict received is stored — run again to resume",
            err=True,
        )
        sys.exit(130)


def _judge(ctx: click.Context, db: Any, settings: Any, rubric: Any, opts: dict[str, Any]) -> None:
    from reviewer.judge.batch import collect, has_open_batches
    from reviewer.judge.runner import NoApiKey

    result: dict[str, Any] = {}
    if has_open_batches(db):
        try:
            got = collect(db, settings)
        except NoApiKey as e:
            if opts["collect"]:
                raise
            click.echo(f"reviewer: batches await collection, but {e}", err=True)
        else:
            result["collected"] = got.to_dict()
            for b in got.batches:
                click.echo(_batch_line(b), err=True)
    elif opts["collect"]:
        click.echo("no batches await collection", err=True)
    if opts["collect"]:
        if opts["as_json"]:
            echo_json(result)
        return
    _run(ctx, db, settings, rubric, opts, result)


def _batch_line(b: Any) -> str:
    if b.status == "collected":
        extra = f", {b.retry_later} to send again" if b.retry_later else ""
        return f"batch {b.id}: collected {b.stored} results ({b.errors} errors{extra})"
    counts = ", ".join(f"{k} {v}" for k, v in b.counts.items() if v)
    return f"batch {b.id}: {b.status}{f' ({counts})' if counts else ''}; collect later"


def _run(
    ctx: click.Context,
    db: Any,
    settings: Any,
    rubric: Any,
    opts: dict[str, Any],
    result: dict[str, Any],
) -> None:
    from reviewer.commands.common import require_runs
    from reviewer.judge.jobs import verdict_jobs
    from reviewer.judge.service import Selection, plan

    runs = require_runs(db, ctx, list(opts["runs"]))
    queue = opts["queue"]
    if queue is not None:
        from reviewer.store.judging import queue_names

        names = queue_names(db)
        if queue not in names:
            fail(
                f"no queue named {queue!r}; queues: {', '.join(names) or 'none (reviewer sample)'}"
            )
    judge_id = settings.judge_id(rubric.ref)
    sel = Selection(
        runs=runs if opts["runs"] else (),
        labeled=opts["labeled"],
        queue=queue,
        only_unjudged=opts["only_unjudged"],
        retry_errors=opts["retry_errors"],
        limit=opts["limit"],
    )
    ids = plan(db, judge_id, sel)
    click.echo(
        f"judge {_plain(judge_id)}: {len(ids)} trials (rubric {_plain(rubric.ref)})", err=True
    )
    if not ids:
        if opts["as_json"]:
            echo_json({**result, "judge": judge_id, "trials": 0})
        return
    jobs = verdict_jobs(db, ids, rubric, settings)
    if opts["batch"]:
        sub = submit_batch(db, jobs, settings, judge_id, as_json=opts["as_json"], result=result)
        if sub.skipped_for_cost:
            sys.exit(EXIT_INCOMPLETE)
        return
    stats = run_direct(db, jobs, len(ids), settings, judge_id, quiet=opts["as_json"])
    if opts["as_json"]:
        echo_json({**result, "judge": judge_id, "rubric": rubric.ref, **stats.to_dict()})
    if stats.left:
        sys.exit(EXIT_INCOMPLETE)


def submit_batch(
    db: Any,
    jobs: Any,
    settings: Any,
    judge_id: str,
    *,
    as_json: bool,
    result: dict[str, Any] | None = None,
) -> Any:
    """Submit ``jobs`` as Message Batches and say what was sent (shared with `reviewer bias`)."""
    from reviewer.judge.batch import submit

    sub = submit(db, jobs, settings)
    if sub.batch_ids:
        ids = ", ".join(sub.batch_ids)
        click.echo(
            f"submitted {sub.requests} requests in batch {ids} (estimated ≤ ${sub.estimated_cost:.4f}); "
            "`reviewer judge --collect` stores the results when they are ready",
            err=True,
        )
    if sub.cached:
        click.echo(f"{sub.cached} answered from the cache and stored", err=True)
    if sub.already_pending:
        click.echo(f"{sub.already_pending} already in a submitted batch", err=True)
    if sub.skipped_for_cost:
        click.echo(f"{sub.skipped_for_cost} not submitted: over the cost cap", err=True)
    if as_json:
        echo_json({**(result or {}), "judge": judge_id, "submitted": sub.to_dict()})
    return sub


def run_direct(db: Any, jobs: Any, total: int, settings: Any, judge_id: str, *, quiet: bool) -> Any:
    """Run ``jobs`` with a progress bar on stderr and print the summary (shared with `reviewer bias`)."""
    from reviewer.judge.service import summary_line

    stats = _direct(db, jobs, total, settings, quiet=quiet)
    click.echo(_plain(summary_line(judge_id, stats)), err=True)
    for line in stats.failures[:5]:
        click.echo(f"  {_plain(line)}", err=True)
    return stats


def _direct(db: Any, jobs: Any, total: int, settings: Any, *, quiet: bool) -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from reviewer.judge.runner import Runner

    console = Console(stderr=True)
    show = console.is_terminal and not quiet
    with Progress(
        TextColumn("judging"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("${task.fields[cost]:.4f}  errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        console=console,
        disable=not show,
        transient=True,
    ) as progress:
        task = progress.add_task("judge", total=total, cost=0.0, errors=0)

        def on_progress(stats: Any, outcome: Any) -> None:
            progress.update(task, completed=stats.done, cost=stats.cost_usd, errors=stats.errors)

        return Runner(db, settings, on_progress=on_progress).run(jobs, total)
