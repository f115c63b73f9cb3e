"""`reviewer cluster --with-judge`: the opt-in LLM pass over the stored clustering (names, merge
proposals), its estimate, and accepting proposals; the `cluster` command calls ``judge_pass``."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from reviewer.commands.common import (
    Terminated,
    echo_json,
    fail,
    settings_of,
    terminate_stops_sending,
)

if TYPE_CHECKING:
    from reviewer.workflows.cluster_judge import ClusterJudgeResult
    from reviewer.workflows.store_access import Store

#: Exit status when requests were left (cost cap, failed requests), as `reviewer judge`.
EXIT_INCOMPLETE = 3
DEFAULT_CAP = 10.0  # reviewer.judge.settings.DEFAULT_MAX_COST (not imported: --help stays light)


def judge_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The `cluster` command's options of the LLM pass."""
    options = [
        click.option(
            "--with-judge",
            is_flag=True,
            help="Then let the judge model ([judge] settings) name the biggest clusters and "
            "propose merges (cached, cost-capped; needs ANTHROPIC_API_KEY unless cached).",
        ),
        click.option(
            "--estimate",
            is_flag=True,
            help="With --with-judge: say what the pass would send and cost; send nothing.",
        ),
        click.option(
            "--apply-merges",
            is_flag=True,
            help="With --with-judge: apply every merge the judge proposes (each undoable).",
        ),
        click.option(
            "--apply-merge",
            "apply_merge",
            multiple=True,
            metavar="ID",
            help="With --with-judge: apply this proposal (its id as printed; repeatable).",
        ),
        click.option(
            "--model", default=None, help="With --with-judge: the judge model ([judge] model)."
        ),
        click.option(
            "--max-cost",
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            help=f"With --with-judge: hard stop at this many USD (default: [judge] max_cost, "
            f"else ${DEFAULT_CAP:g}).",
        ),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def wanted(opts: dict[str, Any]) -> bool:
    """Whether the LLM pass was asked for; its other options without --with-judge are refused."""
    extra = [
        name
        for name, on in (
            ("--estimate", opts["estimate"]),
            ("--apply-merges", opts["apply_merges"]),
            ("--apply-merge", bool(opts["apply_merge"])),
            ("--model", opts["model"] is not None),
            ("--max-cost", opts["max_cost"] is not None),
        )
        if on
    ]
    if extra and not opts["with_judge"]:
        fail(f"{extra[0]} goes with --with-judge")
    return bool(opts["with_judge"])


def estimate(db: Store, opts: dict[str, Any], as_json: bool) -> None:
    """Print what the pass would send and cost."""
    from reviewer.workflows.cluster_judge import estimate_cluster_judging
    from reviewer.workflows.clusters import current
    from reviewer.workflows.judge import JudgeFailed

    stored = current(db)
    if stored is not None and not stored.rows:
        if as_json:
            echo_json({"estimate": None})
        else:
            click.echo("no clusters for the judge to name")
        return
    try:
        est = estimate_cluster_judging(
            db, _request(opts), cfg=settings_of(click.get_current_context())
        )
    except JudgeFailed as e:
        fail(_plain(e))
    if as_json:
        echo_json({"estimate": est.to_dict()})
    else:
        click.echo("\n".join(est.lines()))


def judge_pass(db: Store, opts: dict[str, Any]) -> tuple[ClusterJudgeResult, list[str]] | None:
    """Run the pass (names shown, proposals returned), then apply the proposals asked for. Returns
    the result and the ids applied (None when there is no cluster to name); ^C or SIGTERM stop it
    with the names that arrived shown."""
    from reviewer.commands.judge import note, progress_bar
    from reviewer.workflows.cluster_judge import accept_merges, judge_clusters
    from reviewer.workflows.clusters import current
    from reviewer.workflows.judge import JudgeFailed

    stored = current(db)
    if stored is not None and not stored.rows:
        note("no clusters for the judge to name")
        return None

    cancel = threading.Event()
    try:
        with (
            terminate_stops_sending(cancel, note) as stopped_by,
            progress_bar("asking the judge", quiet=False) as (start, step),
        ):
            result = judge_clusters(
                db,
                _request(opts),
                cfg=settings_of(click.get_current_context()),
                on_note=note,
                on_start=lambda judge, total: start(judge, "", total),
                on_progress=step,
                cancel=cancel,
            )
    except JudgeFailed as e:
        fail(_plain(e))
    except (KeyboardInterrupt, Terminated) as e:
        how = "interrupted"
        if isinstance(e, Terminated):
            how = f"stopped by {signal.Signals(e.signum).name}"
        click.echo(
            f"reviewer: {how}; every reply received is cached and the names that arrived are "
            "shown — run again to resume",
            err=True,
        )
        sys.exit(128 + e.signum if isinstance(e, Terminated) else 130)
    for line in result.lines():
        note(line)
    if stopped_by:
        name = signal.Signals(stopped_by[0]).name
        click.echo(
            f"reviewer: stopped by {name}; every reply received is cached and the names that "
            "arrived are shown — run again to resume",
            err=True,
        )
        sys.exit(128 + stopped_by[0])
    applied: list[str] = []
    if opts["apply_merges"] or opts["apply_merge"]:
        only = None if opts["apply_merges"] else list(opts["apply_merge"])
        applied, problems = accept_merges(db, result.proposals, only)
        for line in problems:
            note(f"warning: {line}")
        if applied:
            note(
                f"applied {len(applied)} merge{'' if len(applied) == 1 else 's'} "
                f"({', '.join(applied)}); `reviewer cluster undo` takes back one at a time"
            )
    return result, applied


def print_proposals(result: ClusterJudgeResult, applied: list[str]) -> None:
    """The proposals after the clusters, each with its id, saying which were applied."""
    if not result.proposals:
        click.echo("\nthe judge proposes no merges")
        return
    click.echo(
        "\nmerges the judge proposes (apply with --apply-merges, or --apply-merge ID; "
        "`reviewer cluster undo` takes one back):"
    )
    for p in result.proposals:
        done = "  [applied]" if p.id in applied else ""
        click.echo(f"  {_plain(p.line())}{done}")


def exit_status(result: ClusterJudgeResult) -> None:
    if result.incomplete:
        sys.exit(EXIT_INCOMPLETE)


def _request(opts: dict[str, Any]) -> Any:
    from reviewer.workflows.cluster_judge import ClusterJudgeRequest

    overrides = {k: opts[k] for k in ("model", "max_cost") if opts.get(k) is not None}
    return ClusterJudgeRequest(overrides=overrides)


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)
