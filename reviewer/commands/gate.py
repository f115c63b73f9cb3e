"""`reviewer baseline` and `reviewer gate`: the CI gate against the last good run.

Exit codes of `gate`: 0 nothing regressed, 1 something did, 2 a usage or data error."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from reviewer.commands.common import SEED, TEXT, cli_store, echo_json, fail, outcome_option
from reviewer.text import one_line


def register(group: click.Group) -> None:
    group.add_command(baseline)
    group.add_command(gate)


def _config(code: int) -> Any:
    from reviewer.commands.common import config_of

    return config_of(click.get_current_context(), code)


@click.group()
def baseline() -> None:
    """The CI gate's baseline: the last good run (`baseline set RUN`, `show`, `history`)."""


@baseline.command("set")
@click.argument("run")
@click.option(
    "--note", type=TEXT, default=None, help="Why this run is the baseline (kept in the history)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def baseline_set(ctx: click.Context, run: str, note: str | None, as_json: bool) -> None:
    """Mark RUN as the last good run: `reviewer gate` compares new runs with it."""
    from reviewer.workflows.gate import GateError, set_baseline_run

    db = cli_store(ctx, 1, needs_runs=True)
    cfg = _config(1)
    who = cfg.labeler_name(ctx.obj.get("labeler"))
    try:
        entry = set_baseline_run(
            db,
            run,
            who,
            note,
            cfg=cfg,
            grade_anchors=True,
            on_note=lambda line: click.echo(f"reviewer: {line}", err=True),
        )
    except GateError as e:
        fail(str(e))
    if as_json:
        echo_json(entry.to_dict())
        return
    click.echo(
        f"baseline: {one_line(entry.run)} (set {entry.set_at} by {one_line(entry.set_by or '')})"
    )


@baseline.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def baseline_show(ctx: click.Context, as_json: bool) -> None:
    """The current baseline run."""
    from reviewer.workflows.gate import current_baseline

    entry = current_baseline(cli_store(ctx, 1, needs_runs=True))
    if as_json:
        echo_json({"baseline": None if entry is None else entry.to_dict()})
        return
    if entry is None:
        fail("no baseline set; mark the last good run: reviewer baseline set RUN")
    note = f": {one_line(entry.note)}" if entry.note else ""
    click.echo(
        f"baseline: {one_line(entry.run)} (set {entry.set_at} by {one_line(entry.set_by or '')}{note})"
    )


@baseline.command("history")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def baseline_history_cmd(ctx: click.Context, as_json: bool) -> None:
    """Every baseline set, newest first (the first line is the baseline)."""
    from reviewer.workflows.gate import baseline_history

    entries = baseline_history(cli_store(ctx, 1, needs_runs=True))
    if as_json:
        echo_json({"history": [e.to_dict() for e in entries]})
        return
    if not entries:
        click.echo("no baseline set yet", err=True)
    for e in entries:
        note = f"  {one_line(e.note)}" if e.note else ""
        click.echo(f"{e.set_at}  {one_line(e.run)}  by {one_line(e.set_by or '')}{note}")


@click.command()
@click.argument("new", required=False)
@click.option(
    "--baseline", "base", default=None, help="Compare with this run instead of the baseline."
)
@click.option(
    "--k",
    "k",
    type=int,
    default=None,
    help="k for pass^k (default: [gate] k, else the largest both runs support).",
)
@click.option(
    "--seed", type=SEED, default=0, show_default=True, help="Seed of the paired bootstrap."
)
@click.option(
    "--import",
    "imports",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Import PATH first (repeatable); NEW defaults to the run it holds.",
)
@click.option(
    "--markdown",
    "markdown",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write a Markdown summary (a CI job summary) to FILE.",
)
@click.option(
    "--junit",
    "junit",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write JUnit XML (one test case per task) to FILE.",
)
@outcome_option(None, " (default: [gate] outcome, else harness)")
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite a --markdown / --junit file that the gate did not write.",
)
@click.option(
    "--no-anchors",
    is_flag=True,
    help="Do not grade the [gate] anchors now: measure the judge's drift on stored verdicts only.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the text.")
@click.pass_context
def gate(
    ctx: click.Context,
    new: str | None,
    base: str | None,
    k: int | None,
    seed: int,
    imports: Sequence[str],
    markdown: str | None,
    junit: str | None,
    source: str | None,
    force: bool,
    no_anchors: bool,
    as_json: bool,
) -> None:
    """Did run NEW regress against the baseline? Exit 0: no; 1: yes; 2: usage or data error.

    A regression is pass^k or pass@1 worse by `reviewer compare`'s rule, a RED FLAG (a forbidden
    rule the baseline never broke, or a rise beyond noise), a task whose pass rate fell beyond noise
    (Fisher, Holm-adjusted over the tasks), or a [gate] budget in reviewer.toml exceeded. The first
    line says why."""
    from reviewer.workflows.gate import (
        GateError,
        check_report_path,
        import_new_run,
        run_gate,
        write_report,
    )

    if k is not None and not 1 <= k <= 1000:
        fail(f"--k must be from 1 to 1000, got {k}", 2)
    db = cli_store(ctx, 2, needs_runs=not imports)  # --import may make it
    cfg = _config(2)
    try:
        if (
            markdown is not None
            and junit is not None
            and (Path(markdown).resolve() == Path(junit).resolve())
        ):
            raise GateError(f"{markdown}: given for both --markdown and --junit; give two files")
        for path, kind in ((markdown, "markdown"), (junit, "junit")):
            if path is not None:  # before anything is imported or gated
                check_report_path(path, kind, db_path=db.path, force=force)
        if imports:
            runs = import_new_run(
                db, imports, lambda line: click.echo(f"reviewer: {line}", err=True)
            )
            if new is None:
                if len(runs) != 1:
                    fail(
                        f"the import holds {len(runs)} runs ({', '.join(runs)}); name the one to gate",
                        2,
                    )
                new = runs[0]
        if new is None:
            fail("name the run to gate: reviewer gate NEW (or --import PATH)", 2)
        result = run_gate(
            db,
            new,
            baseline=base,
            k=k,
            seed=seed,
            cfg=cfg,
            outcome=source,
            anchors="stored" if no_anchors else "grade",
            on_note=lambda line: click.echo(f"reviewer: {line}", err=True),
        )
    except GateError as e:
        fail(str(e), 2)
    from reviewer.workflows.gate import junit as junit_xml
    from reviewer.workflows.gate import markdown as markdown_text

    for path, render, kind in ((markdown, markdown_text, "markdown"), (junit, junit_xml, "junit")):
        if path is not None:
            try:
                write_report(path, render(result), kind, db_path=db.path, force=force)
            except GateError as e:
                fail(str(e), 2)
    if as_json:
        from reviewer.text import json_ready

        echo_json(json_ready(result.to_dict()))
    else:
        click.echo(result.render_text(), nl=False)
    sys.exit(result.exit_code)
