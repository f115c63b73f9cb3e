"""`reviewer monitor`: online evaluation of production conversations, per day or hour window.

Exit codes: 0 no alert, 1 an alert (for cron), 2 a usage or data error."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import click

from reviewer.commands.common import SEED, TEXT, cli_store, echo_json, fail
from reviewer.text import one_line, queue_name_problem

#: The longest --interval: a day (time.sleep refuses much longer waits, and nan or inf).
MAX_INTERVAL_S = 86400


def register(group: click.Group) -> None:
    group.add_command(monitor)


@click.command()
@click.option(
    "--run",
    "runs",
    multiple=True,
    help="Watch this run (repeatable; default: [monitor] run, else every run whose conversations carry a time).",
)
@click.option(
    "--since",
    default=None,
    help="Report the windows from this time on (2025-06-10, 2025-06-10T14:00Z).",
)
@click.option(
    "--window",
    type=click.Choice(["day", "hour"]),
    default=None,
    help="Window size (default: [monitor] window, else day).",
)
@click.option(
    "--sample",
    type=float,
    default=None,
    help="Share of conversations the judge grades (default 0.02).",
)
@click.option("--seed", type=SEED, default=None, help="Seed of the judged sample (default 0).")
@click.option(
    "--max-cost",
    "max_cost",
    type=float,
    default=None,
    help="The judge's cost cap in USD for this pass.",
)
@click.option("--no-judge", is_flag=True, help="Run the cheap checks only.")
@click.option(
    "--baseline-windows",
    type=int,
    default=None,
    help="How many earlier windows an alert compares with (default 7, at most 10,000; the wobble "
    "is estimated from up to 28).",
)
@click.option(
    "--baseline",
    type=click.Choice(["recent", "same-weekday", "same-hour"]),
    default=None,
    help="Compare a window with the windows right before (recent, the default: [monitor] "
    "baseline), the same weekday of earlier weeks, or (hour windows) the same hour of earlier days.",
)
@click.option(
    "--import",
    "imports",
    multiple=True,
    type=click.Path(),
    metavar="PATH",
    help="Import PATH first (repeatable).",
)
@click.option(
    "--follow",
    "follow_path",
    type=click.Path(),
    default=None,
    metavar="PATH",
    help="Keep importing the growing JSONL file or folder PATH and updating the windows (Ctrl-C stops).",
)
@click.option(
    "--interval",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds between looks at --follow PATH.",
)
@click.option(
    "--passes",
    type=int,
    default=None,
    hidden=True,
    help="Stop --follow after this many looks (tests).",
)
@click.option(
    "--queue",
    type=TEXT,
    default=None,
    help="Route the flagged conversations to this review queue (labeled in the app).",
)
@click.option(
    "--queue-size",
    type=int,
    default=50,
    show_default=True,
    help="At most this many conversations in the queue.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON (with --follow: one line per pass)."
)
@click.pass_context
def monitor(
    ctx: click.Context,
    runs: Sequence[str],
    since: str | None,
    window: str | None,
    sample: float | None,
    seed: int | None,
    max_cost: float | None,
    no_judge: bool,
    baseline_windows: int | None,
    baseline: str | None,
    imports: Sequence[str],
    follow_path: str | None,
    interval: float,
    passes: int | None,
    queue: str | None,
    queue_size: int,
    as_json: bool,
) -> None:
    """Evaluate production conversations per window: cheap checks on every one (trajectory rules,
    tool errors, the user repeating themselves, no resolution), the judge on a seeded sample,
    [monitor] signals; one ALERT line per window worse than the windows before beyond noise.

    Exit 0: no alert; 1: an alert; 2: a usage or data error."""
    from reviewer.commands.gate import _config
    from reviewer.workflows.monitor import MonitorError, MonitorRequest, follow, run_monitor

    if sample is not None and not 0 <= sample <= 1:
        fail(f"--sample must be a share between 0 and 1, got {sample:g}", 2)
    if max_cost is not None and not max_cost > 0:
        fail("--max-cost must be above 0", 2)
    if queue_size < 1:
        fail("--queue-size must be 1 or more", 2)
    if queue is not None and not queue.strip():
        fail("--queue must not be empty", 2)
    if queue is not None and (problem := queue_name_problem(queue)) is not None:
        fail(f"--queue: {problem}", 2)
    if not (math.isfinite(interval) and 0 < interval <= MAX_INTERVAL_S):
        fail(f"--interval must be seconds above 0 and at most {MAX_INTERVAL_S} (a day)", 2)
    db = cli_store(ctx, 2)
    cfg = _config(2)
    req = MonitorRequest(
        runs=runs,
        window=window,
        since=since,
        sample=sample,
        seed=seed,
        max_cost=max_cost,
        judge=not no_judge,
        baseline_windows=baseline_windows,
        baseline=baseline,
        queue=queue,
        queue_size=queue_size,
        labeler=cfg.labeler_name(ctx.obj.get("labeler")),
        imports=imports,
    )

    def note(line: str) -> None:
        click.echo(f"reviewer: {one_line(line)}", err=True)  # a file name may hold a break

    try:
        if follow_path is None:
            report = run_monitor(db, req, cfg=cfg, on_note=note)
            _show(report, as_json)
            sys.exit(report.exit_code)
        raised = [False]

        def on_pass(report: Any, new: list[Any]) -> None:
            raised[0] |= bool(new)
            if as_json:
                import json

                from reviewer.text import json_ready, json_terminal_safe

                data = report.to_dict()
                data["new_alerts"] = [a.to_dict() for a in new]
                # one JSON document a line (JSONL), one per pass
                click.echo(json_terminal_safe(json.dumps(json_ready(data), ensure_ascii=False)))
                sys.stdout.flush()
                return
            click.echo(report.header())
            for a in new:
                click.echo(a.line(report.size))
            sys.stdout.flush()

        def reopen() -> Any:
            from reviewer.workflows.store_access import open_store

            return open_store(ctx.obj["db"])

        follow(
            db,
            follow_path,
            req,
            on_pass,
            interval=interval,
            passes=passes,
            on_note=note,
            cfg=cfg,
            reopen=reopen,
        )
        sys.exit(1 if raised[0] else 0)
    except MonitorError as e:
        fail(str(e), 2)


def _show(report: Any, as_json: bool) -> None:
    if as_json:
        from reviewer.text import json_ready

        echo_json(json_ready(report.to_dict()))
    else:
        click.echo(report.header())
        if report.windows:
            click.echo("")
            import shutil

            click.echo("\n".join(report.table_lines(shutil.get_terminal_size().columns)))
            click.echo("")
            click.echo("\n".join(report.detect_lines(shutil.get_terminal_size().columns)))
        else:
            click.echo("no conversation with a time to put in a window (started_at or timestamp)")
        lines = report.alert_lines()
        click.echo("")
        click.echo("\n".join(lines) if lines else "no alert")
    for line in (
        *report.notes,
        report.imported,
        report.judge_line,
        report.judge_problem,
        report.queue_note,
    ):
        if line:
            click.echo(f"reviewer: {line}", err=True)
    if report.no_time:
        click.echo(
            f"reviewer: {report.no_time} conversations without a time (started_at, timestamp) left out",
            err=True,
        )
