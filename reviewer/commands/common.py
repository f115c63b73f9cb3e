"""What every command shares: one-line failures, opening the database, JSON on stdout."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from reviewer.store.db import Store


def fail(message: str, code: int = 1) -> NoReturn:
    click.echo(f"reviewer: {message}", err=True)
    sys.exit(code)


def cli_store(ctx: click.Context) -> Store:
    """The database named by ``--db``, opened and migrated; a one-line failure when it is not ours."""
    from reviewer.store.db import StoreError, open_store

    path = ctx.obj["db"]
    try:
        return open_store(path)
    except StoreError as e:
        fail(str(e))


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def parse_ks(value: str | None) -> list[int] | None:
    if not value:
        return None
    try:
        ks = sorted({int(v) for v in value.split(",") if v.strip()})
    except ValueError:
        raise click.BadParameter(
            f"expected a comma-separated list of integers, got {value!r}"
        ) from None
    if not ks or ks[0] < 1:
        raise click.BadParameter("k must be 1 or more")
    return ks


def require_runs(db: Any, ctx: click.Context, runs: list[str]) -> list[str]:
    """The named runs, or every run when none is named; a one-line error for unknown names."""
    from reviewer.store.queries import run_names

    known = run_names(db)
    if not known:
        fail(f"no runs in {ctx.obj['db']}; import some first: reviewer import PATH")
    for r in runs:
        if r not in known:
            fail(f"no run named {r!r}; runs: {', '.join(known)}")
    return runs or known
