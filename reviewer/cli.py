"""The `reviewer` command: thin click commands over library functions.

stdout carries data (tables, JSON); progress and diagnostics go to stderr.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Sequence
from contextlib import suppress

import click

from reviewer.commands.common import (
    labeler_option,
    new_command,
    no_such_command,
    safe_output,
    share_group_options,
)

# The default database, relative to where reviewer runs (keep in step with store.db.DEFAULT_DB).
DEFAULT_DB = "reviewer.db"


class ReviewerGroup(click.Group):
    """`reviewer PATHS...` (no subcommand) means: import PATHS and open the TUI.

    Every command, nested ones included, also takes the group's `--db` and `--labeler` after its name.
    """

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        share_group_options(cmd)
        super().add_command(cmd, name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        import os

        for cmd in self.commands.values():
            share_group_options(cmd)  # commands added to a subgroup after registration
        args = list(args)
        takes_value = {
            opt
            for p in self.get_params(ctx)
            if isinstance(p, click.Option) and not p.is_flag and not p.count
            for opt in p.opts
        }
        i = 0
        while i < len(args):
            a = args[i]
            if a in takes_value:
                i += 2
                continue
            if a.startswith("-"):
                i += 1
                continue
            if self.get_command(ctx, a) is None:
                if not os.path.exists(a):
                    visible = [n for n, c in self.commands.items() if not c.hidden]
                    click.echo(no_such_command(a, visible), err=True)
                    ctx.exit(2)
                args.insert(i, "open")
            break
        ctx.meta["reviewer.args"] = args
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:  # a group option's (`reviewer --labeler '' report --json`)
            _json_usage_error(args, e)
            raise

    def invoke(self, ctx: click.Context) -> object:
        """A usage error of a command given ``--json`` (a bad option value, a missing argument) also
        prints ``{"error": ...}`` on stdout, as every other refusal does; click's usage text still
        goes to stderr."""
        try:
            return super().invoke(ctx)
        except click.UsageError as e:
            _json_usage_error(ctx.meta.get("reviewer.args") or [], e)
            raise


def _json_usage_error(args: list[str], e: click.UsageError) -> None:
    """``{"error": ...}`` on stdout for a usage error of a command given ``--json``."""
    if "--json" in args[: args.index("--") if "--" in args else len(args)]:
        from reviewer.commands.common import echo_json

        echo_json({"error": e.format_message()})


@click.group(
    cls=ReviewerGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--db",
    "db_path",
    default=DEFAULT_DB,
    show_default=True,
    envvar="REVIEWER_DB",
    type=click.Path(dir_okay=False),
    metavar="DB",
    help="The database: a SQLite file, or a PostgreSQL server's postgresql://user@host/db.",
)
@click.option(
    "--labeler",
    default=None,
    envvar="REVIEWER_LABELER",
    callback=labeler_option,
    help="Who is labeling (default: the config's labeler, else the login name). Before or after "
    "the command, unless the command has its own --labeler.",
)
@click.version_option(package_name="reviewer")
@click.pass_context
def cli(ctx: click.Context, db_path: str, labeler: str | None) -> None:
    """Evaluate AI agents from the terminal: pass^k, failure clusters, judge calibration.

    With PATHS and no command, import PATHS and open the app. --db and --labeler may also follow the
    command (reviewer report --db runs.db); REVIEWER_DB and REVIEWER_LABELER set them too.
    """
    ctx.with_resource(safe_output())  # already on under main(); this covers click's test runner
    # click would silently drop CSI sequences when not on a terminal; keep them so SafeStream shows
    # them as they are (a file name is printed as it is named). Nothing raw gets out either way.
    ctx.color = True
    new_command()  # no JSON printed yet by this command (a test runs many in one process)
    ctx.ensure_object(dict)
    ctx.obj["db"] = db_path
    ctx.obj["labeler"] = labeler
    if "settings" not in ctx.obj:  # a caller (a test) may have given its own
        from reviewer.config import Settings

        ctx.obj["settings"] = Settings()  # reviewer.toml, read once, on first use
    if ctx.invoked_subcommand is None:
        ctx.invoke(cli.commands["open"], paths=())


def _register() -> None:
    from reviewer.commands import (
        agreement,
        bias,
        clusters,
        copy,
        export,
        gate,
        imports,
        judge,
        labels,
        metrics,
        monitor,
        plan,
        rescore,
        serve,
        trials,
    )
    from reviewer.commands import audit as audit_cmd

    imports.register(cli)
    metrics.register(cli)
    clusters.register(cli)
    labels.register(cli)
    export.register(cli)
    agreement.register(cli)
    bias.register(cli)
    judge.register(cli)
    audit_cmd.register(cli)
    plan.register(cli)
    gate.register(cli)
    monitor.register(cli)
    trials.register(cli)
    rescore.register(cli)
    serve.register(cli)
    copy.register(cli)


_register()


def main(argv: Sequence[str] | None = None, prog_name: str = "reviewer") -> None:
    """Entry point: no traceback ever reaches the user unless REVIEWER_DEBUG is set, and every line
    printed goes through one sanitizer (``SafeStream``): data never sends escapes to the terminal."""
    from reviewer.commands.common import terminate_like_interrupt

    terminate_like_interrupt()
    with safe_output():
        _main(argv, prog_name)


def _main(argv: Sequence[str] | None, prog_name: str) -> None:
    import os

    from reviewer.commands.common import Terminated, fail_late

    obj: dict[str, object] = {}  # the commands' ctx.obj: "error_code" is the exit of a failure
    try:
        cli.main(
            args=list(argv) if argv is not None else None,
            prog_name=prog_name,
            standalone_mode=True,
            obj=obj,
        )
    except KeyboardInterrupt:
        click.echo("reviewer: interrupted", err=True)
        sys.exit(130)
    except Terminated as e:
        import signal

        click.echo(f"reviewer: stopped by {signal.Signals(e.signum).name}", err=True)
        sys.exit(128 + e.signum)
    except Exception as e:  # the last line of defence; every known failure has its own message
        import sqlite3

        from reviewer.workflows.store_access import StoreError, describe_error, last_opened

        code = obj.get("error_code", 1)  # gate, monitor and audit keep 1 for "regressed"
        code = code if isinstance(code, int) else 1
        if isinstance(e, StoreError):
            fail_late(obj, str(e), code)
        if isinstance(e, sqlite3.Error) and not os.environ.get("REVIEWER_DEBUG"):
            # a write refused by the file: read-only, disk full, lock held too long
            fail_late(obj, describe_error(last_opened() or "the database", e), code)
        if isinstance(e, UnicodeEncodeError) and not os.environ.get("REVIEWER_DEBUG"):
            bad = _undecodable_argument(argv if argv is not None else sys.argv[1:])
            if bad is not None:  # bytes of an argument that are not UTF-8, reaching the store
                fail_late(obj, f"the argument {bad} is not UTF-8 text: give it as UTF-8", 2)
        if isinstance(e, OSError) and e.errno in _FULL and not os.environ.get("REVIEWER_DEBUG"):
            _quiet_stdout()  # what is left of the output cannot be written either
            fail_late(obj, f"cannot write the output: {os.strerror(e.errno or 0)}", 1)
        if os.environ.get("REVIEWER_DEBUG"):
            raise
        click.echo(
            f"reviewer: internal error: {type(e).__name__}: {e} (REVIEWER_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(70)


#: The errors of a write to a full disk or quota (``reviewer report > /dev/full``).
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _quiet_stdout() -> None:
    """Standard output pointed at the null device, so that the interpreter's last flush of the
    output that could not be written raises nothing more."""
    import os

    with suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _undecodable_argument(args: Sequence[str]) -> str | None:
    """The first command-line argument holding bytes that are not UTF-8 (Python keeps them as lone
    surrogates), made visible and quoted; None when every argument is UTF-8."""
    from reviewer.text import visible

    for arg in args:
        if any("\ud800" <= c <= "\udfff" for c in arg):
            return repr(visible(arg, single_line=True))
    return None
