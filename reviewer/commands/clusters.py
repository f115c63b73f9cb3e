"""`reviewer cluster` (and its merge, split, rename) and `reviewer signatures`: failures grouped into
named, ranked clusters, edited the same way as in the app."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from reviewer.commands.cluster_judge import judge_options
from reviewer.commands.common import SEED, cli_store, echo_json, fail, require_runs
from reviewer.text import crashed

if TYPE_CHECKING:
    from reviewer.workflows.store_access import Store


def register(group: click.Group) -> None:
    group.add_command(cluster)
    group.add_command(signatures)


@click.group(invoke_without_command=True)
@click.option(
    "--run", "run", default=None, help="Cluster the failures of one run (default: every run)."
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed: the same data and seed give the same clusters.",
)
@click.option(
    "--stored", is_flag=True, help="Print the stored clustering instead of clustering again."
)
@click.option(
    "--include-infra",
    is_flag=True,
    help="Cluster trials ended by infrastructure errors too (default: left out).",
)
@click.option(
    "--embedder",
    type=click.Choice(["tfidf", "semantic"]),
    default="tfidf",
    show_default=True,
    help="Text embedding: tfidf, or semantic (groups paraphrases; needs "
    "pip install 'reviewer[semantic]', nothing is downloaded).",
)
@click.option(
    "--score",
    is_flag=True,
    help="Score the stored clustering against the failure tags given while labeling (ARI, "
    "purity, completeness, each tag's best cluster); clusters nothing.",
)
@judge_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def cluster(
    ctx: click.Context,
    run: str | None,
    seed: int,
    stored: bool,
    include_infra: bool,
    embedder: str,
    score: bool,
    as_json: bool,
    **judge: Any,
) -> None:
    """Group failed trials by error signature and text, name each group, biggest first.

    Failures are the harness's fails and the unscored trials labeled or judged fail; trials ended
    by infrastructure errors (the harness crashed) are left out unless --include-infra.
    `reviewer cluster merge|split|rename|undo` edit the stored clusters, as the app's failures
    screen does. --with-judge then lets the judge model name the clusters and propose merges.
    """
    from reviewer.commands import cluster_judge
    from reviewer.workflows import clusters as jobs
    from reviewer.workflows.clusters import tasks_summary

    if ctx.invoked_subcommand is not None:
        return
    with_judge, judged = cluster_judge.wanted(judge), None
    if score:
        if with_judge:
            fail("--score clusters nothing and asks no judge: give it without --with-judge")
        _score(ctx, run, as_json)
        return
    with cli_store(ctx, needs_runs=True, missing_code=2) as db:
        require_runs(db, ctx, [run] if run else [], 2)
        if not stored:
            progress = None
            if sys.stderr.isatty():
                progress = _progress()
            try:
                jobs.cluster(
                    db,
                    run,
                    seed=seed,
                    progress=progress,
                    include_infra=include_infra,
                    embedder=embedder,
                )
            except jobs.ClusterJobError as e:
                fail(str(e))
            finally:
                if progress is not None:
                    progress.close()
        if with_judge and judge["estimate"]:
            cluster_judge.estimate(db, judge, as_json)
            return
        if with_judge:
            judged = cluster_judge.judge_pass(db, judge)
        current = jobs.current(db)
    if current is None:
        fail("no clustering stored yet; run `reviewer cluster`")
    rows, info = current.rows, current.info
    params = info.get("params") or {}
    infra = 0
    if not params.get("include_infra"):
        from reviewer.workflows.clusters import count_outcomes

        scope = info.get("scope")
        with cli_store(ctx) as db:
            infra = count_outcomes(db, None if scope in (None, "*") else str(scope)).get("infra", 0)
    if as_json:
        extra = {} if judged is None else {"judge": {**judged[0].to_dict(), "applied": judged[1]}}
        echo_json(
            {**info, "infra_left_out": infra, "clusters": [_row_json(r) for r in rows], **extra}
        )
        if judged is not None:
            cluster_judge.exit_status(judged[0])
        return
    total = info.get("n_failures", 0)
    left_out = f"note: {crashed(infra)}, left out (--include-infra keeps them)" if infra else ""
    if not rows:
        click.echo(f"no failures to cluster ({total} failed trials)")
        if left_out:
            click.echo(left_out)
        return
    if left_out:
        click.echo(left_out)
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
            f"    runs: {', '.join(_plain(x) for x in r.runs)}; tasks: {_plain(tasks_summary(r.tasks))}"
        )
        if r.representative:
            click.echo(f"    representative trial: {r.representative}  [id {r.id}]")
    if judged is not None:
        cluster_judge.print_proposals(*judged)
        cluster_judge.exit_status(judged[0])


def _score(ctx: click.Context, run: str | None, as_json: bool) -> None:
    """`reviewer cluster --score`: the stored clustering against the human failure tags."""
    from reviewer.workflows.cluster_score import score_clusters
    from reviewer.workflows.clusters import ClusterJobError, summary_line, tag_line

    with cli_store(ctx, needs_runs=True, missing_code=2) as db:
        require_runs(db, ctx, [run] if run else [], 2)
        try:
            result = score_clusters(db)
        except ClusterJobError as e:
            fail(str(e))
    if run is not None and result.scope != run:
        where = "every run" if result.scope == "*" else f"run {_plain(result.scope)}"
        fail(
            f"the stored clustering is of {where}, not run {_plain(run)}: "
            f"run `reviewer cluster --run {_plain(run)}` first, then --score"
        )
    if as_json:
        echo_json(result.to_dict())
        return
    card = result.card
    where = "every run" if result.scope == "*" else f"run {_plain(result.scope)}"
    click.echo(f"clusters of {where} against the failure tags given while labeling")
    click.echo(summary_line(card))
    if card.per_tag:
        click.echo("")
        click.echo("each tag's best cluster (the one holding most of its trials):")
        for b in card.per_tag:
            click.echo(f"  {_plain(tag_line(b))}")


def _json_wanted(ctx: click.Context, as_json: bool) -> bool:
    """`--json` after the subcommand, or before it (`reviewer cluster --json merge ...`)."""
    parent = ctx.parent.params if ctx.parent is not None else {}
    return as_json or bool(parent.get("as_json"))


@contextmanager
def _job(ctx: click.Context) -> Iterator[Store]:
    """The `--db` store for one cluster edit; a refused edit is one line on stderr and exit 1."""
    from reviewer.workflows.clusters import ClusterJobError

    with cli_store(ctx, needs_runs=True) as db:
        try:
            yield db
        except ClusterJobError as e:
            fail(str(e))


@cluster.command("merge")
@click.argument("cluster_ids", nargs=-1, required=True, metavar="ID ID...")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def merge_command(ctx: click.Context, cluster_ids: tuple[str, ...], as_json: bool) -> None:
    """Merge two or more clusters of the newest clustering; the biggest keeps its id and name."""
    from reviewer.workflows.clusters import merge

    with _job(ctx) as db:
        row = merge(db, cluster_ids)
    if _json_wanted(ctx, as_json):
        echo_json({"merged": list(dict.fromkeys(cluster_ids)), "cluster": _row_json(row)})
        return
    click.echo(f"merged {len(set(cluster_ids))} clusters into {row.id}")
    click.echo(_row_line(row))


@cluster.command("split")
@click.argument("cluster_id", metavar="ID")
@click.option(
    "--into",
    type=click.IntRange(min=2),
    default=None,
    help="Into this many pieces (default: one piece per signature when its members' signatures "
    "differ, else the number their text separates best, by silhouette; never all singletons).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def split_command(ctx: click.Context, cluster_id: str, into: int | None, as_json: bool) -> None:
    """Split a cluster into pieces, each described afresh (runs, tasks, signature, name); the
    biggest piece keeps the id. `reviewer cluster undo` takes it back."""
    from reviewer.workflows.clusters import split

    with _job(ctx) as db:
        rows = split(db, cluster_id, into=into)
    if _json_wanted(ctx, as_json):
        echo_json({"split": cluster_id, "clusters": [_row_json(r) for r in rows]})
        return
    click.echo(f"split {cluster_id} into {len(rows)} clusters")
    for r in rows:
        click.echo(_row_line(r))


@cluster.command("rename")
@click.argument("cluster_id", metavar="ID")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def rename_command(ctx: click.Context, cluster_id: str, name: str, as_json: bool) -> None:
    """Give a cluster a name of your own; it stays with the cluster when you cluster again."""
    from reviewer.workflows.clusters import rename

    with _job(ctx) as db:
        row = rename(db, cluster_id, name)
    if _json_wanted(ctx, as_json):
        echo_json({"cluster": _row_json(row)})
        return
    click.echo(f"renamed {row.id}")
    click.echo(_row_line(row))


@cluster.command("undo")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def undo_command(ctx: click.Context, as_json: bool) -> None:
    """Undo the last merge, split or rename of the newest clustering (again for the one before)."""
    from reviewer.workflows.clusters import undo, undoable

    with _job(ctx) as db:
        kind, rows = undo(db)
        left = undoable(db)
    if _json_wanted(ctx, as_json):
        echo_json({"undone": kind, "clusters": [_row_json(r) for r in rows], "undoable": left})
        return
    click.echo(f"undid the last {kind}; {left} more edit{'' if left == 1 else 's'} can be undone")
    for r in rows:
        click.echo(_row_line(r))


def _row_line(r: Any) -> str:
    return f"  {r.id}  {r.share}: {_plain(r.name)}"


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
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from reviewer.commands.common import progress_console

        self.p = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=progress_console(),
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.p.add_task("clustering", total=None)
        self.p.start()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.p.update(self.task, description=stage, completed=done, total=total)

    def close(self) -> None:
        self.p.stop()


@click.command()
@click.argument("file", default="-", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option(
    "--stream",
    is_flag=True,
    help="Print each line's signature as it is read, without templates across lines.",
)
def signatures(file: Any, stream: bool) -> None:
    """One error message per input line (FILE or - for stdin) -> its signature per output line, in order.

    Words that vary across lines otherwise equal (a user, host or table name) become <*>: the
    input is read whole first, unless --stream."""
    import os
    import stat

    from reviewer.workflows.clusters import signatures_of_lines

    try:
        mode = os.fstat(file.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        mode = 0
    if stat.S_ISCHR(mode) and not file.isatty():  # /dev/zero: no line end, ever
        fail(f"{file.name}: a device, not a file of error messages")
    for sig in signatures_of_lines(_bounded_lines(file), templates=not stream):
        click.echo(sig)


#: An error message longer than this is cut to it: a line of any length was held whole.
LINE_MAX = 1 << 20


def _bounded_lines(file: Any) -> Any:
    """The lines of ``file`` without their line ends, each at most LINE_MAX characters (the rest
    of a longer one is read past in pieces, never held)."""
    while line := file.readline(LINE_MAX + 1):
        if len(line) > LINE_MAX and not line.endswith("\n"):
            while (more := file.readline(LINE_MAX)) and not more.endswith("\n"):
                pass
            line = line[:LINE_MAX]
        yield line.rstrip("\n")


signatures.ignores_shared_options = True  # type: ignore[attr-defined]  # it reads lines, no store
