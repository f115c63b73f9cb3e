"""The `reviewer` command: thin click commands over library functions.

stdout carries data (tables, JSON); progress and diagnostics go to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from reviewer.commands.common import (
    cli_store,
    echo_json,
    fail,
    no_such_command,
    share_group_options,
)

# The default database, relative to where reviewer runs (keep in step with store.db.DEFAULT_DB).
DEFAULT_DB = "reviewer.db"

_MAX_SKIPS_SHOWN = 20


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
        return super().parse_args(ctx, args)


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
    help="SQLite file holding imported runs, labels and verdicts.",
)
@click.option(
    "--labeler",
    default=None,
    envvar="REVIEWER_LABELER",
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
    ctx.ensure_object(dict)
    ctx.obj["db"] = db_path
    ctx.obj["labeler"] = labeler
    if ctx.invoked_subcommand is None:
        ctx.invoke(open_cmd, paths=())


@cli.command("open", hidden=True)
@click.argument("paths", nargs=-1, type=click.Path())
@click.pass_context
def open_cmd(ctx: click.Context, paths: Sequence[str]) -> None:
    """Import PATHS (if any) and open the TUI."""
    db = cli_store(ctx)
    if paths:
        summary = _run_import(db, paths, run=None, check=False)
        if not summary.ok and summary.added + summary.already == 0:
            sys.exit(1)
    from reviewer.config import ConfigError, load_config

    try:
        cfg = load_config()
    except ConfigError as e:
        fail(str(e))
    rubric = _active_rubric(db, cfg.rubric, paths)
    db.close()
    from reviewer.tui.app import ReviewerApp

    ReviewerApp(
        db_path=ctx.obj["db"],
        keymap=cfg.keys,
        labeler=cfg.labeler_name(ctx.obj.get("labeler")),
        rubric=rubric,
    ).run()


def _active_rubric(db: Any, configured: Any, paths: Sequence[str]) -> Any:
    """The config's rubric, else a rubric.toml in an imported folder, else the one stored last."""
    from pathlib import Path

    from reviewer.labeling.rubric import RubricError, load_rubric
    from reviewer.store.labels import RubricVersionError, ensure_rubric_version
    from reviewer.store.queries import latest_rubric

    candidates = [Path(configured)] if configured else []
    candidates += [Path(p) / "rubric.toml" for p in paths if Path(p).is_dir()]
    for path in candidates:
        if path.is_file():
            try:
                rubric = load_rubric(path)
                ensure_rubric_version(db, rubric)
                return rubric
            except (RubricError, RubricVersionError) as e:
                fail(str(e))
    return latest_rubric(db)


@cli.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--run", "run", default=None, help="Run name for every imported trial (default: from the file)."
)
@click.option("--check", is_flag=True, help="Validate only; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.pass_context
def import_cmd(
    ctx: click.Context, paths: Sequence[str], run: str | None, check: bool, as_json: bool
) -> None:
    """Import transcripts: native JSONL, tau-bench, tau2-bench, Inspect AI logs, OpenAI chat JSONL.

    Folders are walked. Importing the same file twice adds nothing. Pair judgements JSONL (judge
    verdicts on pairs in both orders, for `reviewer bias`) is read too.
    """
    db = None if check else cli_store(ctx)
    summary = _run_import(db, paths, run=run, check=check, quiet_json=as_json)
    if as_json:
        echo_json(_summary_json(summary, check))
    if check:
        ok = summary.checked or _listed(summary) or summary.pairs
        sys.exit(0 if ok and not summary.skipped and not summary.failed_files else 1)
    if summary.added + summary.already == 0 and not _listed(summary) and not summary.pairs:
        sys.exit(1)


def _run_import(
    db: Any, paths: Sequence[str], *, run: str | None, check: bool, quiet_json: bool = False
) -> Any:
    from reviewer.importer import import_paths

    progress_cb = None
    progress = None
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[records]} records"),
            console=Console(stderr=True),
            transient=True,
        )
        from reviewer.importer import discover

        files, _ = discover(paths)
        task = progress.add_task(
            "importing" if not check else "checking", total=len(files), records=0
        )

        def progress_cb(name: str, count: int) -> None:
            progress.update(task, description=_short(name), records=count)

        def on_file(_result: Any) -> None:
            progress.advance(task)

        progress.start()
    try:
        summary = import_paths(
            db,
            paths,
            run=run,
            check=check,
            progress=progress_cb,
            on_file=on_file if progress else None,
        )
    finally:
        if progress is not None:
            progress.stop()
    _print_summary(summary, check)
    from reviewer.commands.export import report_task_lists

    report_task_lists(summary, as_json=quiet_json)
    if db is not None and not check:
        _apply_rules(db, paths, summary.new_ids)
    return summary


def _apply_rules(db: Any, paths: Sequence[str], new_ids: list[str]) -> None:
    """A folder's rules.toml becomes the active rules; new trials are checked against the active rules."""
    from pathlib import Path

    from reviewer.metrics.rules import RuleError
    from reviewer.store.violations import check_new_trials, set_rules

    err = _STDERR
    for p in paths:
        rules_file = Path(p) / "rules.toml"
        if Path(p).is_dir() and rules_file.is_file():
            try:
                active, changed = set_rules(
                    db, str(rules_file), rules_file.read_text(encoding="utf-8")
                )
            except (RuleError, OSError, UnicodeDecodeError) as e:
                err.write(f"reviewer: rules not applied: {e}\n")
                continue
            if changed:
                err.write(f"rules: {len(active.rules)} from {rules_file}, checked on every trial\n")
                return
    try:
        found = check_new_trials(db, new_ids)
    except RuleError as e:
        err.write(f"reviewer: stored rules no longer load: {e}\n")
        return
    if found:
        err.write(f"rules: {found} violation{'' if found == 1 else 's'} in the new trials\n")


def _short(name: str, width: int = 40) -> str:
    return name if len(name) <= width else "…" + name[-(width - 1) :]


def _print_summary(summary: Any, check: bool) -> None:
    err = _STDERR
    for e in summary.errors:
        err.write(f"reviewer: {e}\n")
    for f in summary.files:
        if f.error and not f.ignored:
            err.write(f"reviewer: {f.error}\n")
        elif f.ignored:
            err.write(f"reviewer: ignored {f.file} (not a format reviewer reads)\n")
    skips = summary.skipped
    for s in skips[:_MAX_SKIPS_SHOWN]:
        err.write(f"{s}\n")
    if len(skips) > _MAX_SKIPS_SHOWN:
        err.write(f"... and {len(skips) - _MAX_SKIPS_SHOWN} more skipped records\n")
    from reviewer.importer import pairs_summary

    pair_line = pairs_summary(summary, check)
    if pair_line:
        err.write(pair_line + "\n")
    read = [f for f in summary.files if f.format and not f.error and f.listed is None]
    read = [f for f in read if f.pairs is None]
    if not read and (_listed(summary) or pair_line):
        return  # only task lists or pair judgements: told about above or by report_task_lists
    runs, tasks = len(summary.runs), len(summary.tasks)
    if check:
        err.write(
            f"checked {len(read)} file{_s(len(read))}: {summary.checked} valid trial{_s(summary.checked)} "
            f"({runs} run{_s(runs)}, {tasks} task{_s(tasks)}), {len(skips)} problem{_s(len(skips))}\n"
        )
        return
    parts = [
        f"imported {summary.added} trial{_s(summary.added)} ({runs} run{_s(runs)}, {tasks} task{_s(tasks)}) "
        f"from {len(read)} file{_s(len(read))}"
    ]
    if summary.already:
        parts.append(f"{summary.already} already stored")
    parts.append(f"{len(skips)} skipped")
    if summary.failed_files:
        n = len([f for f in summary.failed_files if not f.ignored])
        if n:
            parts.append(f"{n} file{_s(n)} failed")
    line = "; ".join(parts)
    if summary.added == 0 and summary.already:
        line = f"nothing new: all {summary.already} trials were already stored; " + "; ".join(
            parts[2:]
        )
    err.write(line + "\n")


def _summary_json(summary: Any, check: bool) -> dict[str, Any]:
    return {
        "check": check,
        "added": summary.added,
        "already": summary.already,
        "valid": summary.checked if check else None,
        "runs": sorted(summary.runs),
        "tasks": len(summary.tasks),
        "files": [
            {
                "file": f.file,
                "format": f.format,
                "added": f.added,
                "already": f.already,
                "skipped": len(f.skipped),
                "error": f.error,
            }
            for f in summary.files
        ],
        "skipped": [{"file": s.file, "line": s.line, "reason": s.reason} for s in summary.skipped],
        "errors": summary.errors,
        "task_lists": _task_lists_json(summary),
        "pairs": summary.pairs,
    }


def _listed(summary: Any) -> int:
    """How many tasks the task lists among the files hold (they are reported, not imported)."""
    return sum(len(f.listed or ()) for f in summary.files)


def _task_lists_json(summary: Any) -> list[dict[str, Any]]:
    from reviewer.commands.export import task_lists_json

    return task_lists_json(summary)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


class _Stderr:
    """Diagnostics go to stderr through click, so tests capture them."""

    def write(self, text: str) -> None:
        click.echo(text, err=True, nl=False)


_STDERR = _Stderr()


def _register() -> None:
    from reviewer.commands import agreement, bias, clusters, export, judge, labels, metrics

    metrics.register(cli)
    clusters.register(cli)
    labels.register(cli)
    export.register(cli)
    agreement.register(cli)
    bias.register(cli)
    judge.register(cli)


_register()


def main(argv: Sequence[str] | None = None, prog_name: str = "reviewer") -> None:
    """Entry point: no traceback ever reaches the user unless REVIEWER_DEBUG is set."""
    import os

    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name=prog_name, standalone_mode=True
        )
    except KeyboardInterrupt:
        click.echo("reviewer: interrupted", err=True)
        sys.exit(130)
    except Exception as e:  # the last line of defence; every known failure has its own message
        if os.environ.get("REVIEWER_DEBUG"):
            raise
        click.echo(
            f"reviewer: internal error: {type(e).__name__}: {e} (REVIEWER_DEBUG=1 shows the traceback)",
            err=True,
        )
        sys.exit(70)
