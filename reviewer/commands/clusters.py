"""`reviewer cluster` and `reviewer signatures`: failures grouped into named, ranked clusters."""

from __future__ import annotations

import sys
from typing import Any

import click

from reviewer.commands.common import cli_store, echo_json, fail, require_runs


def register(group: click.Group) -> None:
    group.add_command(cluster)
    group.add_command(signatures)


@click.command()
@click.option(
    "--run", "run", default=None, help="Cluster the failures of one run (default: every run)."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed: the same data and seed give the same clusters.",
)
@click.option(
    "--stored", is_flag=True, help="Print the stored clustering instead of clustering again."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def cluster(ctx: click.Context, run: str | None, seed: int, stored: bool, as_json: bool) -> None:
    """Group failed trials by error signature and text, name each group, biggest first."""
    from reviewer.clustering.run import recluster
    from reviewer.store.clusters import clustering_info, latest_clustering_id, latest_clusters

    db = cli_store(ctx)
    require_runs(db, ctx, [run] if run else [])
    if not stored:
        progress = None
        if sys.stderr.isatty():
            progress = _progress()
        try:
            recluster(db, run, seed=seed, progress=progress)
        finally:
            if progress is not None:
                progress.close()
    cid = latest_clustering_id(db)
    if cid is None:
        fail("no clustering stored yet; run `reviewer cluster`")
    rows = latest_clusters(db, cid)
    info = clustering_info(db, cid)
    if as_json:
        echo_json({**info, "clusters": [_row_json(r) for r in rows]})
        return
    total = info.get("n_failures", 0)
    if not rows:
        click.echo(f"no failures to cluster ({total} failed trials)")
        return
    click.echo(
        f"{total} failed trials in {len(rows)} clusters (scope {info.get('scope')}, seed {info['params'].get('seed')})"
    )
    for r in rows:
        click.echo("")
        click.echo(f"{r.rank:>2}. {r.share}: {_plain(r.name)}")
        if r.signature:
            click.echo(f"    signature: {_plain(r.signature)}")
        if r.terms:
            click.echo(f"    terms: {', '.join(_plain(t) for t in r.terms)}")
        click.echo(
            f"    runs: {', '.join(_plain(x) for x in r.runs)}; tasks: {', '.join(_plain(x) for x in r.tasks)}"
        )
        if r.representative:
            click.echo(f"    representative trial: {r.representative}  [id {r.id}]")


def _row_json(r: Any) -> dict[str, Any]:
    return {
        "id": r.id,
        "rank": r.rank,
        "name": r.name,
        "generated_name": r.generated_name,
        "size": r.size,
        "share": r.share,
        "signature": r.signature,
        "terms": r.terms,
        "runs": r.runs,
        "tasks": r.tasks,
        "representative": r.representative,
    }


def _plain(s: str) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)


class _progress:
    """A rich progress bar on stderr for clustering stages."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.p = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.p.add_task("clustering", total=None)
        self.p.start()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.p.update(self.task, description=stage, completed=done, total=total)

    def close(self) -> None:
        self.p.stop()


@click.command()
@click.argument("file", default="-", type=click.File("r", encoding="utf-8", errors="replace"))
def signatures(file: Any) -> None:
    """One error message per input line (FILE or - for stdin) -> its signature per output line, in order."""
    from reviewer.clustering.signature import signatures_of_lines

    for sig in signatures_of_lines(line.rstrip("\n") for line in file):
        click.echo(sig)
