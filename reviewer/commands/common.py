"""What every command shares: one-line failures, opening the database, JSON on stdout, and the one
sanitizer every printed line goes through."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

import click

from reviewer.text import json_terminal_safe, terminal_safe, unknown_run

if TYPE_CHECKING:
    from reviewer.workflows.store_access import Store


class SafeStream(io.TextIOBase):
    """stdout or stderr for the length of a command: whatever is written, by click.echo, print or a
    traceback, has every control character, escape sequence, bidi control and invisible code point
    shown as a visible stand-in (``reviewer.text``), so data never drives the terminal. Newline and
    tab stay. Our own styled output (a rich progress bar, the coloured comparison) writes to ``raw``,
    and gets data only through ``reviewer.text.visible``."""

    def __init__(self, raw: TextIO) -> None:
        super().__init__()
        self.raw = raw

    @property
    def rich_proxied_file(self) -> TextIO:
        """rich's consoles (our progress bars) write through here, with their own escapes."""
        return self.raw

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.raw, "errors", None)

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self.raw.write(terminal_safe(s))
        return len(s)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()


@contextmanager
def safe_output() -> Iterator[None]:
    """stdout and stderr sanitized (SafeStream) until the block ends; nested uses are no-ops."""
    out, err = sys.stdout, sys.stderr
    if isinstance(out, SafeStream) or out is None or err is None:
        yield
        return
    sys.stdout, sys.stderr = SafeStream(out), SafeStream(err)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):
                stream.flush()
        sys.stdout, sys.stderr = out, err


def echo_raw(text: str, err: bool = False, nl: bool = True) -> None:
    """Our own styled text (ANSI colours we made; its data already made visible), past the sanitizer."""
    stream = sys.stderr if err else sys.stdout
    raw = stream.raw if isinstance(stream, SafeStream) else stream
    raw.write(text + "\n" if nl else text)
    raw.flush()


class JsonSafeStream(SafeStream):
    """stdout for JSON text (JSONL exports): an unsafe character inside a string is written as its
    ``\\uXXXX`` escape, so the data round-trips exactly and still nothing raw reaches a terminal."""

    def write(self, s: str) -> int:
        self.raw.write(json_terminal_safe(s))
        return len(s)


def json_stdout() -> TextIO:
    """Where a command writes JSON or JSONL meant for stdout (``FILE`` given as ``-``)."""
    out = sys.stdout
    return cast(TextIO, JsonSafeStream(out.raw if isinstance(out, SafeStream) else out))


_json_printed = [False]


def new_command() -> None:
    """A command starts: it has printed no JSON yet."""
    _json_printed[0] = False


def _wants_json() -> bool:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.params.get("as_json"):
            return True
        ctx = ctx.parent
    return False


def settings_of(ctx: click.Context) -> Any:
    """The process's Settings (made by the CLI's group): what every job is given."""
    from reviewer.config import Settings

    obj = ctx.find_root().obj
    if not isinstance(obj, dict):
        return Settings()
    return obj.setdefault("settings", Settings())


def config_of(ctx: click.Context, code: int = 1) -> Any:
    """The process's Config, or a one-line error (exit CODE) when reviewer.toml does not load."""
    from reviewer.config import ConfigError

    try:
        return settings_of(ctx).get()
    except ConfigError as e:
        fail(str(e), code)


class _Utf8Text(click.ParamType):
    """Text an option stores or reads data by (a run name, a queue, a note): bytes of it that are
    not UTF-8 (Python keeps them as lone surrogates) are a usage error naming it, instead of a
    failure deep in the import or the store."""

    name = "text"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from reviewer.text import visible

        if isinstance(value, str) and not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                shown = visible(value, single_line=True)
                self.fail(f"{shown!r} is not UTF-8 text: give it as UTF-8", param, ctx)
        return value


#: See ``_Utf8Text``.
TEXT = _Utf8Text()

#: A --seed: what every generator the commands seed takes (NumPy's and scikit-learn's take 32
#: bits), so that -1 or 2**32 is a usage error, not a generator's exception.
SEED = click.IntRange(0, 2**32 - 1)


def fail(message: str, code: int = 1) -> NoReturn:
    """A refusal: one line on stderr; with --json, also ``{"error": ...}`` on stdout (unless this
    command already printed its JSON)."""
    from reviewer.text import one_line

    if _wants_json() and not _json_printed[0]:
        echo_json({"error": message})
    click.echo(f"reviewer: {one_line(message)}", err=True)
    sys.exit(code)


def fail_late(obj: dict[str, Any], message: str, code: int) -> NoReturn:
    """A failure that surfaced after the command's context closed (a store error the command did
    not catch): as ``fail`` says it, the JSON line included when the command was asked for JSON."""
    from reviewer.text import one_line

    if obj.get("as_json") and not _json_printed[0]:
        echo_json({"error": message})
    click.echo(f"reviewer: {one_line(message)}", err=True)
    sys.exit(code)


def progress_console() -> Any:
    """The rich Console for our own progress bars on stderr. It writes to the real stream under the
    command's SafeStream (which would show the bar's own escapes as stand-ins); data reaches a bar
    only through ``reviewer.text.visible``. Bars made with it must pass ``redirect_stdout=False,
    redirect_stderr=False``: rich's redirect would route other output around the SafeStream."""
    from rich.console import Console

    err = sys.stderr
    return Console(file=err.raw if isinstance(err, SafeStream) else err)


def cli_store(
    ctx: click.Context, code: int = 1, *, needs_runs: bool = False, missing_code: int | None = None
) -> Store:
    """The database named by ``--db``, opened and migrated; a one-line failure (exit ``code``) when it
    is not ours, or with ``needs_runs`` (a command that reads runs) when it does not exist (exit
    ``missing_code``, the code its "no runs" has, else ``code``)."""
    from reviewer.workflows.store_access import (
        TEST_SERVER_VAR,
        StoreError,
        name_problem,
        open_store,
        shown_db,
        url_like,
    )

    path = ctx.obj["db"]
    ctx.obj["error_code"] = code  # a store failure later in the command exits with it too
    ctx.obj["as_json"] = _wants_json()  # … and says so in JSON too
    # a command that reads runs, on a database file that does not exist (a mistyped --db): said
    # before anything is made, so that nothing is left behind (under the tests' PostgreSQL mode a
    # file name stands for a database); a URL that is not PostgreSQL's is said by open_store
    local = not url_like(path) and not os.environ.get(TEST_SERVER_VAR)
    # (a name the system refuses, too long, or a blank one is said by open_store: Path.exists()
    # raises on the first, and the second is no file to be missing)
    blank = not str(path).strip()
    if (
        needs_runs
        and local
        and not blank
        and name_problem(path) is None
        and not Path(path).exists()
    ):
        message = f"no database {shown_db(path)}; import some first: reviewer import PATH"
        fail(message, code if missing_code is None else missing_code)
    try:
        db = open_store(path, on_wait=lambda message: click.echo(f"reviewer: {message}", err=True))
    except StoreError as e:
        fail(str(e), code)
    ctx.find_root().call_on_close(db.close)  # closed when the command ends, the log checkpointed
    return db


def labeler_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A --labeler value trimmed ("ann " is ann), or a usage error (exit 2) for one that cannot be
    a name: empty, longer than the app takes, control characters or lone surrogates."""
    from reviewer.models import MAX_LABELER, clean_labeler

    if value is None:
        return None
    name = clean_labeler(value)
    if name is None:
        raise click.BadParameter(
            f"a labeler is a name of 1 to {MAX_LABELER} printable characters", ctx, param
        )
    return name


def _set_obj(key: str) -> Any:
    """A callback that stores an option given after the subcommand where `reviewer OPTION` puts it."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if key == "labeler":
            value = labeler_option(ctx, param, value)
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
            metavar="DB",
            callback=_set_obj("db"),
            help="A SQLite file or a postgresql:// URL (same as `reviewer --db DB` before the "
            "command).",
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
    command (`reviewer --labeler NAME agreement`) or by REVIEWER_LABELER. A command that uses
    one of them (``ignores_shared_options``: True for both, or the names) takes it unlisted in its help. Safe to call again.
    """
    shared = _shared_options()
    # what a command does not use stays unlisted in its help: `copy` names both its databases,
    # `signatures` reads lines, `labels import` takes each label's labeler from the file
    ignored = getattr(command, "ignores_shared_options", ())
    for option in shared:
        if ignored is True or option.opts[0].removeprefix("--") in ignored:
            option.hidden = True
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
    """JSON on stdout; control, bidi and tag characters inside strings as ``\\uXXXX`` escapes (valid
    JSON that loads back to the original strings, and nothing raw reaches the terminal)."""
    _json_printed[0] = True
    click.echo(json_terminal_safe(json.dumps(data, indent=2, ensure_ascii=False)))


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


def require_runs(
    db: Any, ctx: click.Context, runs: list[str], code: int | None = None
) -> list[str]:
    """The named runs, or every run when none is named; a one-line error (exit ``code``, default
    the command's cli_store code) for unknown names."""
    from reviewer.workflows.store_access import run_names, shown_db

    known = run_names(db)
    if code is None:
        code = ctx.obj.get("error_code", 1)
    if not known:
        fail(f"no runs in {shown_db(ctx.obj['db'])}; import some first: reviewer import PATH", code)
    for r in runs:
        if r not in known:
            fail(unknown_run(r, known), code)
    return runs or known


class Terminated(BaseException):
    """SIGTERM or SIGHUP (a CI timeout, ``docker stop``, a closed terminal) stopped the command: it
    unwinds as ^C does (transactions roll back, nothing half-written) and exits 128 + the signal.
    Not a KeyboardInterrupt, which click would turn into "Aborted!" and exit 1."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, frame: Any) -> None:
    import signal

    # being stopped, there is nothing to resume: timeout(1) sends SIGCONT right after SIGTERM, and
    # the app's handler of it needs the event loop the unwinding is closing
    with suppress(ValueError, OSError):
        signal.signal(signal.SIGCONT, signal.SIG_DFL)
    raise Terminated(signum)


def terminate_like_interrupt() -> None:
    """At the start of a command: SIGTERM and SIGHUP raise :class:`Terminated` instead of killing
    the process at once (a signal whose disposition is not the default, as nohup's SIGHUP, is left
    alone)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _raise_terminated)


@contextmanager
def terminate_stops_sending(cancel: Any, say: Any) -> Iterator[list[int]]:
    """During a paid run (the judge): SIGTERM or SIGHUP stops it as ^C does: nothing more is sent,
    the replies on their way are stored (``cancel`` is the runner's stop event); a second signal
    stops at once. Yields the list the signal's number is put in, for the exit code."""
    import signal

    got: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        if got:
            raise Terminated(signum)
        got.append(signum)
        cancel.set()
        say(
            f"{signal.Signals(signum).name}: sending nothing more; storing the replies on their "
            "way (again to stop at once)"
        )

    import threading

    old = {}
    main = threading.current_thread() is threading.main_thread()  # signals are the main thread's
    for sig in (signal.SIGTERM, signal.SIGHUP) if main else ():
        if signal.getsignal(sig) in (signal.SIG_DFL, _raise_terminated):
            old[sig] = signal.signal(sig, stop)
    try:
        yield got
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def outcome_option(default: str | None = "harness", extra: str = "") -> Any:
    """``--outcome harness|human|judge``: where each trial's outcome comes from (report, compare,
    gate)."""
    return click.option(
        "--outcome",
        "source",
        type=click.Choice(["harness", "human", "judge"]),
        default=default,
        show_default=default is not None,
        help="Outcome of each trial: the harness's, or the standing human label / latest judge "
        f"verdict where there is one{extra}.",
    )
