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
        return open_store(
            path, on_wait=lambda message: click.echo(f"reviewer: {message}", err=True)
        )
    except StoreError as e:
        fail(str(e))


def _set_obj(key: str) -> Any:
    """A callback that stores an option given after the subcommand where `reviewer OPTION` puts it."""

    def callback(ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value is not None:
            ctx.ensure_object(dict)[key] = value
        return value

    return callback


def _shared_options() -> list[click.Option]:
    """Fresh copies of the group's `--db` and `--labeler`, for use after a subcommand's name."""
    return [
        click.Option(
            ["--db", "shared_db"],
            default=None,
            expose_value=False,
            type=click.Path(dir_okay=False),
            callback=_set_obj("db"),
            help="SQLite file (same as `reviewer --db FILE` before the command).",
        ),
        click.Option(
            ["--labeler", "shared_labeler"],
            default=None,
            expose_value=False,
            callback=_set_obj("labeler"),
            help="Who is labeling (same as `reviewer --labeler NAME` before the command).",
        ),
    ]


_OWN_LABELER = (
    "Here --labeler is this command's own option; who is labeling is given before the command "
    "(reviewer --labeler NAME COMMAND) or by REVIEWER_LABELER."
)


def share_group_options(command: click.Command) -> None:
    """Let `--db` and `--labeler` follow COMMAND and every command under it, as they follow `reviewer`.

    A command's own option of the same name keeps its meaning; the group's is then given before the
    command (`reviewer --labeler NAME agreement`) or by REVIEWER_LABELER. Safe to call again.
    """
    shared = _shared_options()
    names = {option.name for option in shared}
    present = {param.name for param in command.params}
    own = {opt for param in command.params if param.name not in names for opt in param.opts}
    for option in shared:
        if option.name not in present and not own.intersection(option.opts):
            command.params.append(option)
    if "--labeler" in own and _OWN_LABELER not in (command.epilog or ""):
        command.epilog = f"{command.epilog}\n\n{_OWN_LABELER}" if command.epilog else _OWN_LABELER
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            share_group_options(sub)


def no_such_command(word: str, commands: list[str]) -> str:
    """The one line for a first word that is neither a command nor an existing path."""
    import difflib

    close = difflib.get_close_matches(word, commands, n=3, cutoff=0.6)
    hint = f"did you mean: {', '.join(close)}" if close else "see reviewer --help"
    return f"reviewer: no command or path named {word!r}; {hint}"


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
