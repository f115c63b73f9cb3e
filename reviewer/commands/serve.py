"""`reviewer serve`: the app in a browser (textual-serve). Every browser session runs the app in a
process of its own on the same database, and asks who is labeling first, so that each session is
its own labeler. It has no authentication of its own."""

from __future__ import annotations

import ipaddress
import shlex
import sys
from pathlib import Path

import click

from reviewer.commands.common import cli_store, fail

#: Said when serving starts, and in the help: the server checks no one.
NO_AUTH = (
    "reviewer serve has no authentication of its own: anyone who can reach this address can read "
    "every transcript and label as anyone; keep it on 127.0.0.1, or put it behind a proxy that "
    "authenticates"
)


def register(group: click.Group) -> None:
    group.add_command(serve)


def app_command(db: str | Path) -> str:
    """The shell command textual-serve runs once per browser session: this reviewer, on DB, asking
    who labels."""
    return shlex.join(
        [
            sys.executable,
            "-m",
            "reviewer",
            "--db",
            str(Path(db).absolute()),
            "open",
            "--ask-labeler",
        ]
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", default=8000, show_default=True, type=click.IntRange(1, 65535), help="Port."
)
@click.option(
    "--public-url",
    default=None,
    metavar="URL",
    help="The address browsers reach it by, behind a proxy (default: http://HOST:PORT).",
)
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, public_url: str | None) -> None:
    """Serve the app to browsers (needs `pip install 'reviewer[serve]'`). Each browser session is
    the app in a process of its own on this database and asks who is labeling first: several
    people label the same queues at once, each as themselves.

    No authentication of its own: keep it on 127.0.0.1 or behind a proxy that authenticates.

    \b
    reviewer serve                      # http://127.0.0.1:8000
    reviewer serve --port 8080
    """
    try:
        from textual_serve.server import Server
    except ImportError:
        fail("reviewer serve needs textual-serve: pip install 'reviewer[serve]'", 2)
    db = cli_store(ctx, 2)  # a database that does not open says so here, not in every browser
    db.close()
    command = app_command(ctx.obj["db"])
    click.echo(f"reviewer: {NO_AUTH}", err=True)
    if not is_loopback(host):
        click.echo(
            f"reviewer: warning: listening on {host}, reachable from other machines", err=True
        )
    server = Server(command, host=host, port=port, title="reviewer", public_url=public_url)
    try:
        server.serve()
    except OSError as e:  # the port taken, an address not on this machine
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}", 1)
