"""`reviewer judge`: grade trials with an LLM judge through the Messages API or Message Batches."""

from __future__ import annotations

import atexit
import gc
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reviewer.commands.common import (
    Terminated,
    cli_store,
    echo_json,
    fail,
    require_runs,
    settings_of,
    terminate_stops_sending,
)

if TYPE_CHECKING:
    from reviewer.workflows.judge import Outcome, Progress, RunStats, Start

#: Exit status when the run ended with trials left (cost cap, failed requests, interrupted).
EXIT_INCOMPLETE = 3
DEFAULT_CAP = 10.0  # reviewer.judge.settings.DEFAULT_MAX_COST (not imported: --help stays light)
#: The options that override a [judge] setting for one run.
OVERRIDES = (
    "model",
    "temperature",
    "max_tokens",
    "prompt_version",
    "concurrency",
    "max_cost",
    "max_wait_s",
)


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
@click.option(
    "--trial", "trial_ids", multiple=True, metavar="ID", help="Only this trial (repeatable)."
)
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
    help=f"Hard stop at this many USD (default: [judge] max_cost, else ${DEFAULT_CAP:g}).",
)
@click.option(
    "--max-wait",
    "max_wait_s",
    type=click.FloatRange(min=0),
    default=None,
    metavar="SECONDS",
    help="Longest retry-after to wait for (default: [judge] max_wait_s, 60); longer stops the run.",
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
@click.option(
    "--estimate",
    is_flag=True,
    help="Say what the run would send and cost (tokens, dollars, the cap); send nothing.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run summary as JSON.")
@click.pass_context
def judge(ctx: click.Context, **opts: Any) -> None:
    """Grade trials with the LLM judge (forced tool `record_verdict`) and store the verdicts.

    Replies are cached in the database: a repeated run costs nothing and an interrupted one resumes.
    Needs ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another Anthropic-compatible endpoint) unless
    every request is already cached. Exit status 3 means trials were left (cost cap, failed requests).
    """
    from reviewer.workflows.judge import JudgeFailed, JudgeRequest, judge_trials

    db = cli_store(ctx, needs_runs=True)
    if not opts["collect"]:
        require_runs(db, ctx, list(opts["runs"]))
        if opts["labeled"] and not opts["trial_ids"] and not _any_labeled(db, opts["runs"]):
            db.close()
            fail("no labeled trials: label some first (reviewer sample, then the app's labeling)")
    request = JudgeRequest(
        runs=tuple(opts["runs"]),
        trial_ids=tuple(opts["trial_ids"]) or None,
        labeled=opts["labeled"],
        queue=opts["queue"],
        only_unjudged=opts["only_unjudged"],
        retry_errors=opts["retry_errors"],
        limit=opts["limit"],
        rubric=Path(opts["rubric_path"]) if opts["rubric_path"] else None,
        overrides={k: opts[k] for k in OVERRIDES},
        batch=opts["batch"],
        collect_only=opts["collect"],
    )
    if opts["estimate"]:
        from reviewer.workflows.judge import estimate_judging

        try:
            estimate = estimate_judging(db, request, cfg=settings_of(click.get_current_context()))
        except JudgeFailed as e:
            fail(_plain(e))
        finally:
            db.close()
        if opts["as_json"]:
            echo_json(estimate.to_dict())
        else:
            click.echo("\n".join(estimate.lines()))
        return
    cancel = threading.Event()
    try:
        with (
            terminate_stops_sending(cancel, note) as stopped_by,
            progress_bar("judging", quiet=opts["as_json"] or opts["batch"]) as (start, step),
        ):
            result = judge_trials(
                db,
                request,
                cfg=settings_of(click.get_current_context()),
                on_note=note,
                on_start=start,
                on_progress=settle_sdk(step),
                cancel=cancel,
            )
    except JudgeFailed as e:
        fail(_plain(e))
    except (KeyboardInterrupt, Terminated) as e:
        how = "interrupted"
        if isinstance(e, Terminated):
            how = f"stopped by {signal.Signals(e.signum).name}"
        click.echo(
            f"reviewer: {how}; every verdict received is stored — run again to resume", err=True
        )
        sys.exit(128 + e.signum if isinstance(e, Terminated) else 130)
    finally:
        db.close()
        spare_last_collection()
    for line in result.lines():
        note(line)
    if opts["as_json"]:
        echo_json(result.to_dict())
    if stopped_by:
        name = signal.Signals(stopped_by[0]).name
        click.echo(
            f"reviewer: stopped by {name}; every verdict received is stored — run again to resume",
            err=True,
        )
        sys.exit(128 + stopped_by[0])
    if result.incomplete:
        sys.exit(EXIT_INCOMPLETE)


def settle_sdk(step: Progress) -> Progress:
    """``step``, and once the SDK is imported (at the first reply), ``gc.freeze()``: its million
    objects live as long as the run, and each full collection during the run would walk them all
    (about 0.1-0.2 s, every request in flight waiting). ``spare_last_collection`` undoes it when the
    command ends; the app keeps its collector as it is."""
    settled = False

    def settle_then_step(stats: RunStats, outcome: Outcome | None) -> None:
        nonlocal settled
        if not settled and "anthropic" in sys.modules:
            settled = True
            gc.freeze()
        step(stats, outcome)

    return settle_then_step


def _any_labeled(db: Any, runs: Sequence[str]) -> bool:
    from reviewer.workflows.judge import select_trials

    return bool(select_trials(db, tuple(runs), labeled=True, limit=1))


def note(line: str) -> None:
    """A diagnostic line on stderr, control characters made visible (indentation kept)."""
    body = line.lstrip(" ")
    click.echo(" " * (len(line) - len(body)) + _plain(body), err=True)


@contextmanager
def progress_bar(label: str, *, quiet: bool) -> Iterator[tuple[Start, Progress]]:
    """A rich progress bar on stderr (only on a terminal and unless ``quiet``): the workflow's
    ``on_start`` and ``on_progress`` callbacks drive it."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    from reviewer.commands.common import progress_console

    console = progress_console()
    with Bar(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("${task.fields[cost]:.4f}  errors {task.fields[errors]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet or not console.is_terminal,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ) as bar:
        task = bar.add_task(label, total=None, cost=0.0, errors=0)

        def start(judge: str, rubric: str, total: int) -> None:
            bar.update(task, total=total)

        def step(stats: RunStats, outcome: Outcome | None) -> None:
            bar.update(task, completed=stats.done, cost=stats.cost_usd, errors=stats.errors)

        yield start, step


_FREEZE_AT_EXIT: list[bool] = []


def spare_last_collection() -> None:
    """End of the command: the objects frozen during the run go back to the collector (the process
    may go on, e.g. under a test runner), and at interpreter exit everything is frozen once more,
    which spares the exit's full collection over the SDK's objects (0.2-0.4 s)."""
    gc.unfreeze()
    if not _FREEZE_AT_EXIT:
        _FREEZE_AT_EXIT.append(True)
        atexit.register(gc.freeze)
