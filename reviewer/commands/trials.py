"""`reviewer trials`: the trials list of the app, filtered and sorted, as text or JSON."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click

from reviewer.commands.common import TEXT, cli_store, echo_json, fail, require_runs
from reviewer.text import distinct_elisions, seconds_text, visible

SORTS = ("cost", "latency", "steps", "tool_errors")


def register(group: click.Group) -> None:
    group.add_command(trials)
    group.add_command(show)


@click.command()
@click.argument("trial", type=TEXT)
@click.option(
    "--system", is_flag=True, help="Show the system prompt whole (folded to its first line)."
)
@click.option(
    "--blind", is_flag=True, help="Leave the judge's verdicts out, as the labeling screen does."
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the trial as JSON: its columns, the record as stored, violations, verdicts, labels.",
)
@click.pass_context
def show(ctx: click.Context, trial: str, system: bool, blind: bool, as_json: bool) -> None:
    """One trial as the app's transcript shows it (Enter on a trial): outcome, reward, steps, cost,
    latency, what the task expected, every message under its role with tool calls and their
    arguments, each rule violation where it happened, the judge's verdicts and the labels. TRIAL is
    its id or the first 6+ characters of it (`reviewer trials` lists them).

    \b
    reviewer show 3f9a1c
    reviewer show 3f9a1c --blind          # as a labeler sees it, before the judge
    reviewer show 3f9a1c --json | jq .record.messages
    """
    from reviewer.workflows.trials import show_trial

    with cli_store(ctx) as db:
        require_runs(db, ctx, [])
        try:
            view = show_trial(db, trial, blind=blind)
        except ValueError as e:
            fail(str(e))
    if as_json:
        echo_json(view.as_json())
        return
    for line in view.lines(system=system):
        click.echo(line)


@click.command()
@click.option("--run", default=None, help="Only trials of this run.")
@click.option("--task", default=None, help="Only trials of this task.")
@click.option(
    "--cluster",
    default=None,
    metavar="ID",
    help="Only trials of this failure cluster (newest clustering): id, id prefix or rank.",
)
@click.option(
    "--outcome",
    type=click.Choice(["pass", "fail", "infra", "unscored"]),
    default=None,
    help="Only this outcome.",
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
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default=None,
    help="Order by this measure, the highest first (default: the order imported).",
)
@click.option("--ascending", is_flag=True, help="With --sort: the lowest first.")
@click.option(
    "--limit",
    type=click.IntRange(1, 100_000),
    default=50,
    show_default=True,
    help="How many trials to list.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON on stdout.")
@click.pass_context
def trials(
    ctx: click.Context,
    run: str | None,
    task: str | None,
    cluster: str | None,
    outcome: Any,
    verdict: Any,
    label: Any,
    rule: str | None,
    search: str | None,
    search_system: bool,
    sort: Any,
    ascending: bool,
    limit: int,
    as_json: bool,
) -> None:
    """The trials list (the app's trials screen, `s` to sort): filtered like it, sorted by cost,
    latency, steps or tool errors, the worst first unless --ascending.

    \b
    reviewer trials --outcome fail --sort cost            # the most expensive failures
    reviewer trials --run support-v2 --sort latency --json
    reviewer trials --cluster 1                           # the biggest failure cluster's trials

    The id column is each trial's id cut to 8 characters (more where another trial's id starts
    the same): `reviewer show ID` prints that trial.
    """
    from reviewer.workflows.trials import (
        SearchError,
        TrialFilter,
        list_trials,
        resolve_cluster,
        said_column,
        short_ids,
    )

    if ascending and sort is None:
        fail("--ascending goes with --sort")
    f = TrialFilter(
        run=run,
        task_id=task,
        outcome=outcome,
        verdict=verdict,
        label=label,
        rule_id=rule,
        search=search,
        search_system=search_system,
        sort=sort,
        ascending=ascending,
    )
    with cli_store(ctx, needs_runs=True) as db:
        require_runs(db, ctx, [run] if run else [])
        if cluster is not None:
            try:
                f = replace(f, cluster_id=resolve_cluster(db, cluster))
            except ValueError as e:
                fail(str(e), 2)
        try:
            listing = list_trials(db, f, limit=limit)
        except SearchError as e:
            fail(str(e))
        # what `reviewer show` takes as each trial alone: 8 characters, more where ids meet
        shorts = short_ids(db, [r.id for r in listing.page.rows]) if not as_json else {}
    if as_json:
        echo_json(listing.as_json())
        return
    rows = listing.page.rows
    if not rows:
        click.echo("no trials match these filters")
        return
    # searching, the last column is what the search found (the app's trials screen does the same)
    # (the first prompt when no trial shown has a reason: Claude Code sessions)
    last = said_column(rows, search)
    head = ("id", "run", "task", "#", "outcome", "steps", "cost", "latency", "tool errors", last)
    table = [head]
    for r in rows:
        found = listing.matches.get(r.id)
        said = (
            (found[0] if found else "")
            if search
            else (r.prompt or "")
            if last == "prompt"
            else (r.reason or "")
        )
        table.append(
            (
                shorts.get(r.id, r.id),
                visible(r.run, single_line=True),  # data, one line each
                visible(r.task_id, single_line=True),
                str(r.trial),
                r.outcome,
                str(r.steps),
                "-" if r.cost_usd is None else f"${r.cost_usd:.4f}",
                "-" if r.latency_s is None else seconds_text(r.latency_s),
                str(r.tool_errors),
                _cut(" ".join(visible(said, single_line=True).split()), 60),
            )
        )
    widths = [min(32, max(len(row[i]) for row in table)) for i in range(len(head) - 1)]
    # a run or task name keeps both ends (its number is often last), no two shown alike; other
    # cells keep their start
    names = {i: distinct_elisions(sorted({row[i] for row in table[1:]}), widths[i]) for i in (1, 2)}

    def cut(i: int, c: str, w: int) -> str:
        if len(c) <= w:
            return c
        return names[i].get(c, c[:w]) if i in names else c[: w - 1] + "…"

    for row in table:
        cells = [
            cut(i, c, w).rjust(w) if 5 <= i <= 8 else cut(i, c, w).ljust(w)
            for i, (c, w) in enumerate(zip(row[:-1], widths, strict=True))
        ]
        click.echo("  ".join([*cells, row[-1]]).rstrip())
    order = (
        f"sorted by {sort}, {'lowest' if ascending else 'highest'} first" if sort else "as imported"
    )
    total = listing.page.total
    click.echo(f"{len(rows):,} of {total:,} trials, {order}", err=True)


def _cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters, "…" saying where it was cut."""
    return text if len(text) <= room else text[: room - 1] + "…"
