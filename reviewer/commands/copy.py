"""`reviewer copy SRC DST`: a whole database copied between SQLite and PostgreSQL, verified."""

from __future__ import annotations

import click

from reviewer.commands.common import echo_json, fail


def register(group: click.Group) -> None:
    group.add_command(copy)


@click.command()
@click.argument("src")
@click.argument("dst")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON on stdout.")
def copy(src: str, dst: str, as_json: bool) -> None:
    """Copy the whole database SRC into DST, a new SQLite file or an empty PostgreSQL database
    (either may be a file or a postgresql:// URL), then count and hash every table on both sides.
    Exit 1 when a count or a hash differs, or when nothing was copied (SRC missing or empty, DST
    not empty or unreachable: one line says which). --db and --labeler are not used.

    \b
    reviewer copy reviewer.db postgresql://me@db.internal/reviewer
    reviewer copy postgresql://me@db.internal/reviewer backup.db
    """
    from reviewer.workflows.copy import copy_databases, result_lines
    from reviewer.workflows.store_access import StoreError

    try:
        result = copy_databases(
            src, dst, on_wait=lambda message: click.echo(f"reviewer: {message}", err=True)
        )
    except StoreError as e:
        fail(str(e))
    if as_json:
        echo_json(result.to_dict())
    else:
        for line in result_lines(result):
            click.echo(line)
    if not result.verified:
        raise SystemExit(1)


copy.ignores_shared_options = True  # type: ignore[attr-defined]  # SRC and DST say which
