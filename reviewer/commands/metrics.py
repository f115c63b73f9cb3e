"""`reviewer report`, `reviewer compare` and `reviewer rules`: reliability, distributions, regressions."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from typing import Any

import click

from reviewer.commands.common import (
    SEED,
    cli_store,
    config_of,
    echo_json,
    echo_raw,
    fail,
    outcome_option,
    parse_ks,
    require_runs,
)
from reviewer.text import one_line, visible

#: The largest k `report` and `compare` take: pass^k of more trials than any task has is n/a.
MAX_K = 1000


def _parse_k(value: str | None) -> list[int] | None:
    """``--k 1,4`` of `report`: integers from 1 to MAX_K, else a usage error naming the range."""
    try:
        ks = parse_ks(value)
    except click.BadParameter as e:
        if "1 or more" in e.message:
            raise click.BadParameter(f"k must be from 1 to {MAX_K}", param_hint="--k") from None
        raise
    return _check_k(ks)


def _check_k(ks: list[int] | None) -> list[int] | None:
    """``ks`` when every k is from 1 to MAX_K; a usage error (exit 2) naming the range otherwise."""
    for k in ks or ():
        if not 1 <= k <= MAX_K:
            shown = str(k) if len(str(k)) <= 20 else str(k)[:20] + "…"
            raise click.BadParameter(f"k must be from 1 to {MAX_K}, got {shown}", param_hint="--k")
    return ks


def register(group: click.Group) -> None:
    group.add_command(report)
    group.add_command(compare)
    group.add_command(rules)


def _pause_gc(ctx: click.Context) -> None:
    """No cyclic garbage collection until the command ends: a report on a big database holds a
    million small objects, and each full collection walks them all again (a fifth of the time
    at 1,000,000 trials); they are freed by reference counting either way."""
    import gc

    if gc.isenabled():
        gc.disable()
        ctx.call_on_close(gc.enable)


@click.command()
@click.option(
    "--run", "runs", multiple=True, help="Run to report (repeatable; default: every run)."
)
@click.option(
    "--k",
    "k",
    default=None,
    help="Comma-separated k values from 1 to 1000, e.g. 1,4 (default: 1, the largest n every "
    "task has, and the k the app shows for these runs: metrics.passk.shared_k).",
)
@click.option("--plot", is_flag=True, help="Also draw the pass^k-vs-k curve of each run.")
@outcome_option(extra=" (unscored trials count once labeled or judged)")
@click.option(
    "--include-infra",
    is_flag=True,
    help="Count trials ended by infrastructure errors as failures (default: left out).",
)
@click.option(
    "--all",
    "every_task",
    is_flag=True,
    help="List every task (default: a run of more than 50 tasks lists its 50 worst).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the tables.")
@click.pass_context
def report(
    ctx: click.Context,
    runs: Sequence[str],
    k: str | None,
    plot: bool,
    source: str,
    include_infra: bool,
    every_task: bool,
    as_json: bool,
) -> None:
    """Per-task pass@k / pass^k with an AVERAGE row, then steps, cost, latency and rule violations.

    Only scored trials count: a trial ended by an infrastructure error (the harness crashed) and an
    unscored trial are left out of n, and the report says how many. A run of more than 50 tasks
    lists its 50 worst (lowest pass^k) and says how many more it has; the averages, the ALL row and
    the flakiness shares are over every task; --all lists them all, --json gives them all."""
    from reviewer.models import PassRule
    from reviewer.text import json_ready
    from reviewer.workflows.report import (
        TASK_ROWS,
        ReportError,
        passk_json,
        plot_passk,
        report_stream,
    )

    ks = _parse_k(k)
    _pause_gc(ctx)
    db = cli_store(ctx, needs_runs=True)
    selected = require_runs(db, ctx, list(runs))
    try:
        _, each = report_stream(
            db,
            selected,
            ks,
            source=source,
            include_infra=include_infra,
            task_rows=None if every_task or as_json else TASK_ROWS,
        )
    except ReportError as e:
        fail(str(e))
    out: list[dict[str, Any]] = []
    curves: dict[str, list[tuple[int, float]]] = {}
    for i, one in enumerate(each):
        if as_json:
            data = passk_json(one.passk)
            data["outcome_source"] = source
            data["pass_rule"] = PassRule.from_json(one.pass_rule).describe()
            data["outcomes"] = one.chosen_outcomes
            if source != "harness":
                data["harness_outcomes"] = one.outcomes
            data["audit_warnings"] = one.audit_warnings
            data["left_out"] = {"infra": one.left_out.get("infra", 0), "unscored": one.unscored}
            data["distributions"] = {
                "run": one.run_distribution.to_dict(),
                "tasks": {t: d.to_dict() for t, d in one.task_distributions.items()},
            }
            data["flakiness"] = [t.to_dict() for t in one.flakiness if t.flaky]
            if plot:
                data["pass_hat_k_curve"] = {str(kk): v for kk, v in one.curve}
            out.append(data)
            continue
        for line in one.audit_warnings:  # stderr: the table below keeps its layout
            click.echo(line, err=True)
        # each run printed as soon as it is made: the first table of a million trials at once
        block = _run_block(one, source, include_infra, several=len(selected) > 1)
        click.echo(block if i == 0 else "\n" + block)
        curves[one.run] = one.curve
    if as_json:
        echo_json(json_ready({"runs": out}))  # never NaN / Infinity, even from an old database
        return
    if plot:
        click.echo("\n" + plot_passk(curves))


def _run_block(one: Any, source: str, include_infra: bool, *, several: bool) -> str:
    """One run's part of `reviewer report`'s tables (a ``workflows.report.RunReport``)."""
    from reviewer.workflows.report import (
        TASK_ROWS,
        header_lines,
        left_out_lines,
        render_distributions,
        render_flakiness,
        render_passk,
    )

    outcomes, rep = one.outcomes, one.passk
    notes = left_out_lines(one.left_out, unscored=one.unscored)
    if include_infra and outcomes.get("infra"):
        n = outcomes["infra"]
        notes.append(f"note: {n} infrastructure error{'' if n == 1 else 's'} counted as fail")
    table = "\n".join([render_passk(rep, scored_note=bool(notes), shown=one.shown), *notes])
    hidden = 0 if one.shown is None else len(rep.tasks) - len(one.shown)
    text = (
        table + "\n\n" + render_distributions(one.run_distribution, one.task_distributions, hidden)
    )
    text += "\n\n" + render_flakiness(one.flakiness, None if one.shown is None else TASK_ROWS)
    head = header_lines(one.pass_rule, source)
    if head:
        text = "\n".join(head) + "\n" + text
    if several:
        total = sum(outcomes.values())
        scored_part = f" ({rep.n_trials} scored)" if rep.n_trials != total else ""
        nt = len(rep.tasks)
        text = (
            f"run {visible(one.run, single_line=True)}: {nt} task{'' if nt == 1 else 's'}, "
            f"{total} trial{'' if total == 1 else 's'}"
            f"{scored_part}\n{text}"
        )
    return text


@click.command()
@click.argument("old")
@click.argument("new")
@click.option(
    "--k",
    "k",
    type=int,
    default=None,
    help="k for pass^k, 1 to 1000 (default: the largest k both runs support).",
)
@click.option(
    "--seed", type=SEED, default=0, show_default=True, help="Seed of the paired bootstrap."
)
@click.option("--plot", is_flag=True, help="Also draw both runs' pass^k-vs-k curves.")
@outcome_option()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the tables.")
@click.pass_context
def compare(
    ctx: click.Context,
    old: str,
    new: str,
    k: int | None,
    seed: int,
    plot: bool,
    source: str,
    as_json: bool,
) -> None:
    """Compare run NEW against run OLD: pass^k, pass@1, steps, cost, p95 latency, rule rates.

    Tasks are matched by task_id. A row is better or worse only when its 95% interval (seeded paired
    bootstrap over shared tasks) excludes zero, "within noise" otherwise, "too few tasks" below 10;
    a forbidden rule the baseline never broke, or whose rise is beyond noise, is a RED FLAG. The
    per-task deltas follow, largest pass^k drop first.
    """
    from reviewer.workflows.compare import CompareError, plot_passk, view_comparison

    _check_k(None if k is None else [k])
    _pause_gc(ctx)
    db = cli_store(ctx, needs_runs=True)
    require_runs(db, ctx, [old, new])
    try:
        view = view_comparison(db, old, new, k=k, seed=seed, outcome=source)
    except CompareError as e:
        fail(str(e))
    cmp, curves, warnings = view.comparison, view.curves, view.audit_warnings
    if as_json:
        data = cmp.to_dict()
        data["audit_warnings"] = warnings
        if plot:
            data["pass_hat_k_curve"] = {
                r: {str(kk): v for kk, v in pts} for r, pts in curves.items()
            }
        echo_json(data)
        return
    color = sys.stdout.isatty() and "NO_COLOR" not in _env()
    text = view.render(color=color)
    for line in warnings:  # stderr, before the table: stdout keeps its layout
        click.echo(line, err=True)
    if color:  # our own colours, past the sanitizer; render_comparison made every name visible
        echo_raw(text, nl=not plot)
    else:
        click.echo(text, nl=not plot)
    if plot:
        click.echo("\n" + plot_passk(curves))


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


@click.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Validate FILE only; store nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def rules(ctx: click.Context, file: str | None, check: bool, as_json: bool) -> None:
    """Trajectory rules: with FILE, validate it and make it the active rules (violations recomputed);
    without, list the active rules and how many trials of each run break them."""
    from reviewer.workflows.rules import (
        RuleError,
        active_rules,
        parse_rules,
        rules_json,
        set_rules,
        violation_counts,
    )

    if file is not None:
        from reviewer.config import read_small_text

        try:
            text = read_small_text(file)
        except (OSError, UnicodeDecodeError, ValueError) as e:
            fail(f"{file}: cannot read: {getattr(e, 'strerror', None) or e}")
        try:
            parsed = parse_rules(text, file=file)
        except RuleError as e:
            fail(str(e))
        if check:
            click.echo(one_line(f"{file}: {len(parsed)} rules OK"), err=True)
            return
        db = cli_store(ctx)
        now, changed = set_rules(db, file, text)
        click.echo(
            one_line(f"rules: {len(parsed)} from {file}" + ("" if changed else " (unchanged)")),
            err=True,
        )
        for line in now.unused_tools:
            click.echo(one_line(f"warning: {line}"), err=True)
    db = cli_store(ctx, needs_runs=True)
    try:
        active = active_rules(db)
    except RuleError as e:
        fail(f"stored rules no longer load: {e}")
    counts = violation_counts(db)
    if as_json:
        echo_json(
            {
                "source": active.source if active else None,
                "rules": rules_json(active),
                "violations": counts,
            }
        )
        return
    if active is None:
        from reviewer.config import path_is

        named = config_of(ctx).rules
        if named is None:
            click.echo("no rules set; add some with `reviewer rules rules.toml`", err=True)
        elif not path_is(named, "is_file"):
            fail(f"no rules set; reviewer.toml's rules names {visible(str(named))}: no such file")
        else:  # applied by the next import, or now:
            hint = f"reviewer rules {shlex.quote(str(named))}"
            click.echo(one_line(f"no rules set yet; reviewer.toml names {named}: {hint}"), err=True)
        return
    click.echo(one_line(f"rules from {active.source}"))
    for r in active.rules:
        per_run = (
            ", ".join(f"{run}: {n}" for run, n in sorted(counts.get(r.id, {}).items()))
            or "none broken"
        )
        click.echo(one_line(f"{r.id:28} {r.type:15} {r.severity:10} {per_run}"))
