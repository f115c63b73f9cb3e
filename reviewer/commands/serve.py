"""`reviewer serve`: the app in a browser (textual-serve). Every browser session runs the app in a
process of its own on the same database, and asks who is labeling first, so that each session is
its own labeler. It has no authentication of its own."""

from __future__ import annotations

import ipaddress
import os
import shlex
import sys
from pathlib import Path
from typing import Any

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
    who labels. A PostgreSQL URL goes to the session in REVIEWER_DB (``serve`` sets it), not on the
    command line, where its password would show (in the banner, in `ps`)."""
    from reviewer.workflows.store_access import is_url

    where = [] if is_url(db) else ["--db", str(Path(db).absolute())]
    return shlex.join([sys.executable, "-m", "reviewer", *where, "open", "--ask-labeler"])


def public_url_of(host: str, port: int, given: str | None) -> str:
    """The address the page builds its asset and websocket URLs on: ``--public-url`` without a
    trailing slash, else http://HOST:PORT (an IPv6 address in brackets); a wildcard host has no
    such address, so it needs ``--public-url`` (click.UsageError)."""
    if given:
        return given.rstrip("/")
    ip = _address(host)
    if ip is None:
        return f"http://{host}:{port}"
    if ip.is_unspecified:
        raise click.UsageError(
            f"--host {host or repr(host)} listens on every address, but browsers need one to "
            "reach it by: give it with --public-url http://NAME:PORT"
        )
    return f"http://[{ip}]:{port}" if ip.version == 6 else f"http://{ip}:{port}"


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address HOST listens on when it is one, in every spelling the system takes: '' is
    every address (as 0.0.0.0), '0', '127.1' and '0x7f000001' are 0.0.0.0 and 127.0.0.1 (an
    unset --host "$HOST" listened on every address, its page at http://:8000); None for a name."""
    import socket

    if host == "":
        return ipaddress.IPv4Address(0)
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def allowed_origins(public_url: str, host: str, port: int) -> set[str]:
    """The page origins whose websockets are taken: the public URL's, and on a loopback host the
    other names of this machine. Any other web page the user visits is refused (a browser lets
    every page open a websocket anywhere, so without this any site could drive the app)."""
    from urllib.parse import urlsplit

    parts = urlsplit(public_url)
    out = {f"{parts.scheme}://{parts.netloc}".lower()}
    if is_loopback(host):
        out |= {f"http://{name}:{port}" for name in ("127.0.0.1", "localhost", "[::1]")}
    return out


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    ip = _address(host)
    return ip is not None and ip.is_loopback


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
        from aiohttp import web
        from textual_serve.server import Server
    except ImportError:
        fail("reviewer serve needs textual-serve: pip install 'reviewer[serve]'", 2)
    from reviewer.commands.imports import app_config, app_rubric

    cfg = app_config(ctx)  # a key remap that lies, a bad config: said here, not in every browser
    url = public_url_of(host, port, public_url)
    db = cli_store(ctx, 2)  # a database that does not open: the same
    app_rubric(db, cfg)
    db.close()
    import socket

    try:  # the port free: before the banner says it is served
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.create_server((host, port), family=family):
            pass
    except OSError as e:
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}", 1)
    origins = allowed_origins(url, host, port)

    class _Server(Server):
        async def handle_websocket(self, request: web.Request) -> Any:
            origin = request.headers.get("Origin")
            if origin is not None and origin.lower() not in origins:
                raise web.HTTPForbidden(text="reviewer serve: not from this page")
            return await super().handle_websocket(request)

    from reviewer.workflows.store_access import is_url, shown_db

    command = app_command(ctx.obj["db"])
    if is_url(ctx.obj["db"]):  # each session's process reads it there (app_command)
        os.environ["REVIEWER_DB"] = str(ctx.obj["db"])
    click.echo(f"reviewer: {NO_AUTH}", err=True)
    # which database each browser session labels (it may come from REVIEWER_DB, unseen)
    click.echo(f"reviewer: serving {shown_db(ctx.obj['db'])} at {url}", err=True)
    if not is_loopback(host):
        click.echo(
            f"reviewer: warning: listening on {host}, reachable from other machines", err=True
        )
    server = _Server(command, host=host, port=port, title="reviewer", public_url=url)
    try:
        server.serve()
    except OSError as e:  # taken between the check and the start
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}", 1)
