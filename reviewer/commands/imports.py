"""`reviewer import` and `reviewer PATHS` (open): parse arguments, run the import workflow, present it.

stdout carries data (the --json summary, a task list's tasks); the summary lines go to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from reviewer.commands.common import TEXT, cli_store, echo_json, fail

if TYPE_CHECKING:
    from reviewer.models import Rubric
    from reviewer.workflows.imports import ImportOptions, ImportProgress, ImportSummary
    from reviewer.workflows.store_access import Store

_MAX_SKIPS_SHOWN = 20


def register(group: click.Group) -> None:
    group.add_command(import_cmd)
    group.add_command(open_cmd)


@click.command("open", hidden=True)
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--ask-labeler", is_flag=True, hidden=True, help="Ask who labels first (`reviewer serve`)."
)
@click.pass_context
def open_cmd(ctx: click.Context, paths: Sequence[str], ask_labeler: bool = False) -> None:
    """Import PATHS (if any) and open the TUI."""
    from reviewer.commands.common import settings_of

    cfg = app_config(ctx)
    db = cli_store(ctx)
    summary = None
    if paths:
        summary = run_import(db, paths, run=None, check=False)
        if not summary.ok and summary.added + summary.already + summary.updated == 0:
            sys.exit(1)
    rubric = _active_rubric(db, cfg.rubric, summary)
    db.close()
    from reviewer.tui.app import ReviewerApp

    report = import_report_lines(summary) if summary is not None else []
    ignored = [f.file for f in summary.files if f.ignored] if summary is not None else []
    note = (
        f"ignored {len(ignored)} file{'' if len(ignored) == 1 else 's'} reviewer does not read: "
        + ", ".join(ignored[:5])
        + (" …" if len(ignored) > 5 else "")
        if ignored and not report
        else ""
    )
    labeler = cfg.known_labeler(ctx.obj.get("labeler"))
    ReviewerApp(
        db_path=ctx.obj["db"],
        settings=settings_of(ctx),
        keymap=cfg.keys,
        labeler=labeler,
        rubric=rubric,
        import_report=report,
        import_note=note,
        # no name to label under (a container's user with no login name): asked, as a browser is
        ask_labeler=ask_labeler or labeler is None,
        ask_reason=None if ask_labeler else NO_LOGIN_NAME,
    ).run()


#: Why the app asks who is labeling in a terminal.
NO_LOGIN_NAME = (
    "There is no login name to store your labels under (--labeler NAME, REVIEWER_LABELER or "
    "labeler = in reviewer.toml give one)."
)


def import_report_lines(summary: ImportSummary) -> list[str]:
    """What the app shows when it opens after `reviewer PATHS`: the problems and skipped records
    (``file:line: reason``) and the summary line; nothing when the import had no problem."""
    from reviewer.workflows.imports import summary_lines

    problems = (
        summary.errors
        or summary.skipped
        or summary.warnings
        or any(f.error and not f.ignored for f in summary.files)
    )
    return summary_lines(summary, False, max_skips=500) if problems else []


def app_config(ctx: click.Context) -> Any:
    """The config the app opens with, checked as the app needs it (a key remap that would lie is
    one line, exit 2), before anything is imported or served."""
    from reviewer.commands.common import config_of
    from reviewer.tui.keys import keymap_problems

    cfg = config_of(ctx)
    problems = keymap_problems(cfg.keys)
    if problems:
        where = f"{cfg.sources[-1]}: " if getattr(cfg, "sources", None) else ""
        fail(
            where + problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""),
            2,
        )
    return cfg


def app_rubric(db: Store, cfg: Any) -> None:
    """The rubric the app would open with loads (else one line): `reviewer serve` checks it once."""
    _active_rubric(db, cfg.rubric, None)


def _active_rubric(db: Store, configured: Any, summary: ImportSummary | None) -> Rubric | None:
    """The app's rubric: the config's, else the rubric.toml of an imported folder, else the one
    stored last (``workflows.rubric.active_rubric``)."""
    from reviewer.workflows.rubric import RubricProblem, active_rubric

    if summary is not None and summary.rubric_problem and not configured:
        sys.exit(1)  # already said by the import's summary
    try:
        return active_rubric(db, configured, imported=None if summary is None else summary.rubric)
    except RubricProblem as e:
        fail(str(e))


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--run",
    "run",
    type=TEXT,
    default=None,
    help="Run name for every imported trial (default: from the file).",
)
@click.option(
    "--pass-threshold",
    type=float,
    metavar="X",
    default=None,
    help="A reward at or above X passes (default 1 - 1e-6; [import] pass_threshold).",
)
@click.option(
    "--success-field",
    type=TEXT,
    metavar="PATH",
    default=None,
    help="Dotted path into each source record that says success, e.g. "
    "reward_info.components.base_success ([import] success_field).",
)
@click.option(
    "--scorer",
    type=TEXT,
    metavar="NAME",
    default=None,
    help="Inspect logs: the scorer whose score decides (default: each sample's first; "
    "[import] scorer).",
)
@click.option(
    "--task",
    "task",
    type=TEXT,
    default=None,
    help="Task id of every imported trial (Claude Code sessions).",
)
@click.option(
    "--outcomes",
    "outcomes_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="SWE-bench report (instance id -> resolved) giving SWE-agent / OpenHands trials outcomes.",
)
@click.option("--check", is_flag=True, help="Validate only; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.pass_context
def import_cmd(
    ctx: click.Context,
    paths: Sequence[str],
    run: str | None,
    pass_threshold: float | None,
    success_field: str | None,
    scorer: str | None,
    task: str | None,
    outcomes_file: str | None,
    check: bool,
    as_json: bool,
) -> None:
    """Import transcripts: native JSONL, tau-bench, tau2-bench, Inspect AI logs, OpenAI chat JSONL,
    Claude Code sessions, Harbor ATIF, SWE-agent .traj, OpenHands, OpenTelemetry GenAI spans.

    Folders are walked; a folder's rules.toml (else the file `rules =` in reviewer.toml names)
    becomes the active rules and its rubric.toml is registered. Importing the same file twice adds nothing. Pair judgements JSONL (judge verdicts on
    pairs in both orders, for `reviewer bias`) is read too. A crashed trial (the harness's error)
    is an infrastructure error, left out of pass rates; a trial with no outcome is unscored.
    """
    if run is not None and not run.strip():  # an unset variable in `--run "$RUN"`
        fail("--run must not be empty (leave it out for the run names the files give)", 2)
    options = import_options(pass_threshold, success_field, task, outcomes_file, scorer)
    db = None if check else cli_store(ctx)
    summary = run_import(db, paths, run=run, check=check, quiet_json=as_json, options=options)
    if as_json:
        echo_json(summary_json(summary, check))
    if check:
        ok = summary.checked or summary.listed or summary.pairs
        failed = [f for f in summary.failed_files if not f.ignored]  # as the count line says
        sys.exit(0 if ok and not summary.skipped and not failed else 1)
    stored = summary.added + summary.already + summary.updated
    if stored == 0 and not summary.listed and not summary.pairs:
        sys.exit(1)
    if summary.errors or any(not f.ignored for f in summary.failed_files):
        sys.exit(1)  # the rest was imported; a path or file that could not be is said above


def import_options(
    pass_threshold: float | None,
    success_field: str | None,
    task: str | None,
    outcomes_file: str | None,
    scorer: str | None = None,
) -> ImportOptions:
    """The import's outcome options: the CLI's, else reviewer.toml's [import]; bad ones fail."""
    from reviewer.commands.common import settings_of
    from reviewer.config import ConfigError
    from reviewer.workflows.imports import import_options as make_options

    try:
        return make_options(
            settings_of(click.get_current_context()).get(),
            pass_threshold=pass_threshold,
            success_field=success_field,
            task=task,
            outcomes_file=outcomes_file,
            scorer=scorer,
        )
    except (ConfigError, ValueError) as e:  # a bad option or [import] setting: a usage error
        fail(str(e), 2)


def run_import(
    db: Store | None,
    paths: Sequence[str],
    *,
    run: str | None,
    check: bool,
    quiet_json: bool = False,
    options: ImportOptions | None = None,
) -> ImportSummary:
    """Run the import workflow with a progress bar on a terminal, then print what it did to stderr."""
    from reviewer.workflows.imports import import_paths

    progress_cb: Callable[[ImportProgress], None] | None = None
    progress = None
    if sys.stderr.isatty():
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

        from reviewer.commands.common import progress_console

        bar = progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),  # of the files' bytes, so one big file moves it as it is read
            TextColumn("{task.fields[files]}"),
            TextColumn("{task.fields[records]} records"),
            console=progress_console(),
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        task = bar.add_task(
            "importing" if not check else "checking", total=None, files="", records=0
        )

        def progress_cb(at: ImportProgress) -> None:
            if at.files and at.files_done == at.files:  # the log and the audit are left
                bar.update(task, description="finishing (the log, the audit)")
            elif at.file:
                bar.update(task, description=_short(at.file))
            bar.update(
                task,
                total=max(at.total, 1),
                completed=at.done,
                files=f"{at.files_done}/{at.files} files",
                records=f"{at.records:,}",
            )

        bar.start()
    try:
        summary = import_paths(
            db,
            paths,
            run=run,
            check=check,
            progress=progress_cb,
            options=options,
        )
    finally:
        if progress is not None:
            progress.stop()
    print_summary(summary, check, options)
    report_task_lists(summary, as_json=quiet_json)
    for line in summary.rule_lines():
        _err(line + "\n")
    if summary.rubric_problem:
        _err(f"reviewer: {summary.rubric_problem}\n")
    return summary


def _short(name: str, width: int = 40) -> str:
    from rich.markup import escape  # the progress bar's description is rich markup

    from reviewer.text import visible

    name = visible(name, single_line=True)
    return escape(name if len(name) <= width else "…" + name[-(width - 1) :])


def _err(text: str) -> None:
    """Diagnostics go to stderr through click, so tests capture them."""
    click.echo(text, err=True, nl=False)


def print_summary(
    summary: ImportSummary, check: bool, options: ImportOptions | None = None
) -> None:
    """The import's problems, skipped records, one summary line and what the outcomes were, on
    stderr."""
    from reviewer.workflows.imports import summary_lines

    for line in summary_lines(summary, check, max_skips=_MAX_SKIPS_SHOWN, options=options):
        _err(line + "\n")


def summary_json(summary: ImportSummary, check: bool) -> dict[str, Any]:
    return {
        "check": check,
        "added": summary.added,
        "already": summary.already,
        "updated": summary.updated,
        "valid": summary.checked if check else None,
        "runs": sorted(summary.runs),
        "tasks": len(summary.task_ids),
        "files": [
            {
                "file": f.file,
                "format": f.format,
                "added": f.added,
                "already": f.already,
                "updated": f.updated,
                "skipped": len(f.skipped),
                "error": f.error,
            }
            for f in summary.files
            if not f.quiet
        ],
        "skipped": [{"file": s.file, "line": s.line, "reason": s.reason} for s in summary.skipped],
        "errors": summary.errors,
        "warnings": summary.warnings,
        "outcomes": summary.outcomes,
        "task_lists": task_lists_json(summary),
        "pairs": summary.pairs,
    }


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)


def task_lists_json(summary: ImportSummary) -> list[dict[str, Any]]:
    """The task lists `reviewer import` read, for its --json summary."""
    return [
        {
            "file": f.file,
            "tasks": [
                {
                    "id": t.id,
                    "run": t.run,
                    "task_id": t.task_id,
                    "trial": t.trial,
                    "cluster": t.cluster,
                }
                for t in f.listed
            ],
            "runs": sorted({t.run for t in f.listed}),
            "problems": len(f.skipped),
        }
        for f in summary.files
        if f.listed is not None
    ]


def report_task_lists(summary: ImportSummary, *, as_json: bool = False) -> None:
    """For each task list among the imported files: a count on stderr, the tasks on stdout."""
    for f in summary.files:
        if f.listed is None:
            continue
        runs = sorted({t.run for t in f.listed})
        clusters = sorted({t.cluster for t in f.listed if t.cluster is not None})
        click.echo(
            _plain(
                f"{f.file}: a regression task list with {len(f.listed)} task{'' if len(f.listed) == 1 else 's'} "
                f"from run{'' if len(runs) == 1 else 's'} {', '.join(runs) or '-'} and "
                f"{len(clusters)} cluster{'' if len(clusters) == 1 else 's'}, {len(f.skipped)} bad "
                f"line{'' if len(f.skipped) == 1 else 's'}; tasks are listed, not imported"
            ),
            err=True,
        )
        if as_json:
            continue
        for t in f.listed:
            where = _plain(f"{t.run}/{t.task_id}/{t.trial}")
            click.echo(f"{_plain(t.id)}  {where}  {_plain(t.cluster or '-')}")


def _s(n: int) -> str:
    return "" if n == 1 else "s"
