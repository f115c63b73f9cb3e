"""`reviewer audit`: are the trials of a run independent? Leaked state, copies, hollow passes and
order effects, with pass^k beside what each finding does to it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from reviewer.commands.common import cli_store, echo_json, require_runs


def register(group: click.Group) -> None:
    group.add_command(audit)


@click.command()
@click.option("--run", "runs", multiple=True, help="Run to audit (repeatable; default: every run).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
def audit(ctx: click.Context, runs: Sequence[str], as_json: bool) -> None:
    """Check that each run's trials are independent: an id one trial created showing up in another
    (leaked state), repeats that are copies (pass^k recomputed with each copy counted once), passes
    with no answer or no work (hollow), and a pass rate that drifts with trial order.

    The findings are stored; `report` and `compare` warn about the runs that have any. Every import
    audits the runs it added to."""
    from reviewer.text import json_ready, visible
    from reviewer.workflows.audit import audit_runs, copies_once, not_kept_line

    # a finding is exit 0; a failure (unknown run, locked store, no database) is 2
    db = cli_store(ctx, 2, needs_runs=True)
    selected = require_runs(db, ctx, list(runs))
    progress = not as_json and sys.stderr.isatty()  # "auditing RUN…" only on a terminal
    results = audit_runs(
        db,
        selected,
        on_run=(lambda r: click.echo(f"auditing {visible(r, single_line=True)}…", err=True))
        if progress
        else None,
    )
    if as_json:
        echo_json(json_ready({"runs": [r.to_dict() for r in results]}))
        return
    blocks = []
    for r in results:
        lines = [r.summary()]
        k = r.k
        if not r.findings:
            blocks.append(lines[0])
            continue
        # No scored trial (production traffic): no pass^k to show or adjust, the findings stand.
        scored = r.reported is not None
        if not scored:
            lines.append("  no scored trial: no pass^k to adjust")
        else:
            lines.append(
                f"  pass^{k} {_fmt(r.reported)} as reported; {copies_once(k, r.distinct)}"
                + (
                    f" ({r.distinct_left_out} task{'' if r.distinct_left_out == 1 else 's'} left "
                    f"with fewer than {k} distinct trials)"
                    if r.distinct_left_out
                    else ""
                )
            )
        for f in r.findings:
            # a finding names tasks and values from the data: each stays on its line
            lines.append(f"  [{f.kind}] {visible(f.title, single_line=True)}")
            lines += [f"      {visible(e, single_line=True)}" for e in f.evidence]
            if f.trials:
                lines.append("      trials: " + ", ".join(t.id for t in f.trials))
            if f.kind != "order" and scored:
                lines.append(
                    f"      pass^{k} {_fmt(r.reported)} → {_fmt(f.adjusted)} {_EFFECT[f.kind]}"
                )
        lines += [f"  {not_kept_line(kind, n)}" for kind, n in r.not_kept.items() if n]
        blocks.append("\n".join(lines))
    click.echo("\n\n".join(blocks))


_EFFECT = {
    "leak": "without the trial that saw leaked state",
    "copy": "with the copies counted once",
    "hollow": "with this pass counted as a fail",
}


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"
