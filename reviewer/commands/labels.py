"""`reviewer sample`, `reviewer queues`, `reviewer labels export|import` and `reviewer rubric`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from reviewer.commands.common import (
    SEED,
    TEXT,
    cli_store,
    echo_json,
    fail,
    labeler_option,
    require_runs,
    settings_of,
)
from reviewer.text import crashed, unknown_queue
from reviewer.workflows.store_access import command_db

_MAX_SKIPS_SHOWN = 20


def register(group: click.Group) -> None:
    group.add_command(sample)
    group.add_command(queues)
    group.add_command(labels)
    group.add_command(rubric)


def _plain(s: object) -> str:
    from reviewer.text import visible

    return visible(s, single_line=True)


def _config() -> Any:
    from reviewer.commands.common import config_of

    return config_of(click.get_current_context())


@click.command()
@click.option(
    "--size",
    "--n",
    "n",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="Trials to sample (--n is the old spelling).",
)
@click.option(
    "--seed",
    type=SEED,
    default=0,
    show_default=True,
    help="Seed: the same data and seed give the same queue.",
)
@click.option(
    "--run",
    "runs",
    multiple=True,
    help="Sample this run; repeat for several (default: every run).",
)
@click.option(
    "--labeler",
    default=None,
    callback=labeler_option,
    help="Who will label (default: reviewer --labeler, the config, then the login name).",
)
@click.option(
    "--name",
    "name",
    type=TEXT,
    default=None,
    help="Queue name (default: LABELER-sSEED, or LABELER-RUN-sSEED).",
)
@click.option("--judge", default=None, help="Stratify by this judge's verdicts (default: latest).")
@click.option("--split", is_flag=True, help="Give every item a dev or test half.")
@click.option(
    "--active",
    is_flag=True,
    help="Active queue: each next trial is the judge verdict whose label tightens kappa most.",
)
@click.option(
    "--shared",
    is_flag=True,
    help="Shared queue: several labelers split it, each holding a lease on the trial they label.",
)
@click.option(
    "--labels-per-trial",
    "per_trial",
    type=click.IntRange(min=1, max=50),
    default=None,
    help="With --shared: how many different labelers label each trial (default 1); 2 or more "
    "measures their agreement per trial.",
)
@click.option("--replace", is_flag=True, help="Replace a queue of the same name.")
@click.option("--json", "as_json", is_flag=True, help="Print the queue summary as JSON.")
@click.pass_context
def sample(
    ctx: click.Context,
    n: int,
    seed: int,
    runs: tuple[str, ...],
    labeler: str | None,
    name: str | None,
    judge: str | None,
    split: bool,
    active: bool,
    shared: bool,
    per_trial: int | None,
    replace: bool,
    as_json: bool,
) -> None:
    """Make a calibration queue: a stratified sample to label in the app.

    Balanced between judge pass and fail as far as the data allows, spread over tasks and failure
    clusters, reproducible under --seed, leaving out trials LABELER has already labeled. With
    --active the queue decides each next trial as labels arrive: from the judge verdict (pass or
    fail) whose next label tightens the kappa estimate most, at random within it; it needs judge
    verdicts on the trials.

    With --shared several labelers label the queue at once, from separate processes or browser
    sessions: each opens it and gets a trial no one else holds (a lease of 20 minutes, renewed as
    they label), so no trial is labeled twice; --labels-per-trial N has N different labelers label
    each trial and reports how they agree (`reviewer queues NAME`).
    """
    from reviewer.workflows.queues import QueueScopeError, make_queue, queue_summary

    if name is not None and not name.strip():
        fail("--name must not be empty (leave it out for LABELER-sSEED)", 2)
    if active and split:
        fail("--split does not go with --active: an active queue decides its trials as it goes", 2)
    if shared and active:
        fail("--shared does not go with --active: a shared queue is a stratified sample", 2)
    if per_trial is not None and not shared:
        fail("--labels-per-trial needs --shared (a queue of one labeler labels each trial once)", 2)
    who = _config().labeler_name(labeler or (ctx.obj or {}).get("labeler"))
    db = cli_store(ctx, needs_runs=True, missing_code=2)
    require_runs(db, ctx, list(runs), 2)
    try:
        made = make_queue(
            db,
            who,
            n=n,
            seed=seed,
            runs=runs,
            name=name,
            judge=judge,
            split=split,
            replace=replace,
            active=active,
            per_trial=(per_trial or 1) if shared else 0,
        )
    except QueueScopeError as e:  # an unknown run or judge: a usage error, like --run's
        fail(_plain(e), 2)
    except ValueError as e:  # NothingToSample among them
        fail(_plain(e))
    queue = made.queue
    if not made.created:
        fail(
            f"queue {_plain(queue.name)!r} exists ({made.done} / {made.total} labeled); resume it in "
            "the app, choose another --name, or start over with --replace"
        )
    summary = queue_summary(queue)
    if made.shortfall:
        click.echo(f"reviewer: {made.shortfall}", err=True)
    status = None
    if active:
        from reviewer.workflows.agreement import configured_threshold
        from reviewer.workflows.queues import queue_status

        status = queue_status(
            db,
            queue.name,
            threshold=configured_threshold(settings_of(click.get_current_context()))[0],
        )
        summary["active"] = _active_json(status, queue.params.get("judge"))
    if as_json:
        echo_json(summary)
        return
    lines = _summary_lines(summary) if status is None else _active_lines(summary, status)
    for line in lines:
        click.echo(line)
    # a shared queue's labelers each open it under their own name (the line above says so)
    who = ["--labeler", "NAME"] if queue.params.get("shared") else []
    app = shlex.join(["reviewer", "--db", command_db(ctx.obj["db"]), *who])
    click.echo(f"label it in the app: {app}", err=True)


def _active_json(status: Any, judge: str | None) -> dict[str, Any]:
    """What `sample --active --json` adds: the judge, the rule, and the first decision (with the
    judge's verdict of the next trial, which the labeling screen never shows)."""
    choice = status.choice
    return {
        "judge": judge,
        "rule": "next label from the judge verdict whose label tightens kappa's standard error most",
        "next_position": status.next_position,
        "next_stratum": None if choice is None else choice.stratum,
        "se_now": None if choice is None else choice.se_now,
        "se_next": None if choice is None else choice.se_next,
        "why": status.why,
        "labels_to_verdict": None if status.outlook is None else status.outlook.labels,
    }


def _active_lines(s: dict[str, Any], status: Any) -> list[str]:
    """The summary of an active queue: what it picks from, how it picks, and where it stands."""
    avail = s["available"]
    reserve = ", ".join(
        f"judge {v} {k} (of {avail.get(v, k)})" for v, k in s["verdicts"].items() if v != "none"
    )
    lines = [
        f"queue {_plain(s['name'])!r} for {_plain(s['labeler'])}: active, {s['n']} trials to label"
        f" (seed {s['seed']}{_runs_text(s.get('runs') or [])})",
        f"  judge    {_plain(s['active']['judge'])}",
        f"  picks from {reserve}",
        "  how      each next trial comes from the judge verdict (pass or fail) whose label",
        "           tightens kappa over the judge's verdict mix most (its standard error, Neyman's",
        "           allocation), at random within it; decided afresh as labels arrive",
        f"  next     {status.why or 'nothing left to label'}",
    ]
    if status.outlook is not None:
        lines.append(f"  verdict  {status.outlook.phrase()} (80% assurance)")
    if s.get("no_verdict_left_out"):
        lines.append(
            f"  left out: {s['no_verdict_left_out']} trials without a verdict of that judge"
            " (they cannot inform kappa)"
        )
    if s["already_labeled"]:
        lines.append(f"  left out: {s['already_labeled']} trials already labeled")
    if s.get("infra_left_out"):
        lines.append(f"  left out: {crashed(s['infra_left_out'])} (not sampled)")
    return lines


def _runs_text(runs: list[str]) -> str:
    if not runs:
        return ""
    return f", run{'s' if len(runs) > 1 else ''} {', '.join(_plain(r) for r in runs)}"


def _summary_lines(s: dict[str, Any]) -> list[str]:
    avail = s["available"]
    parts = []
    for verdict, k in s["verdicts"].items():
        have = avail.get(verdict, k)
        parts.append(f"{verdict} {k} ({'all' if k == have else f'of {have}'})")
    lines = [
        f"queue {_plain(s['name'])!r} for {_plain(s['labeler'])}: {s['n']} trials "
        f"(seed {s['seed']}{_runs_text(s.get('runs') or [])})",
        f"  judge verdict: {', '.join(parts)}",
        f"  tasks covered: {s['tasks_covered']} of {s['tasks_total']}",
        f"  clusters covered: {s['clusters_covered']} of {s['clusters_total']}"
        if s["clusters_total"]
        else "  clusters covered: none yet (no failure clusters: `reviewer cluster` makes them)",
    ]
    if s["already_labeled"]:
        lines.append(f"  left out: {s['already_labeled']} trials already labeled")
    if s.get("infra_left_out"):
        lines.append(f"  left out: {crashed(s['infra_left_out'])} (not sampled)")
    if s["split"]:
        lines.append(f"  split: dev {s['split']['dev']}, test {s['split']['test']}")
    if s.get("shared"):
        k = s["labels_per_trial"]
        lines.append(
            f"  shared: each trial to {k} labeler{'s' if k > 1 else ''} (a lease each, so no "
            "more); every labeler opens it with `reviewer --labeler NAME` (or `reviewer serve`)"
        )
    return lines


@click.command()
@click.argument("name", required=False)
@click.option(
    "--labeler",
    default=None,
    callback=labeler_option,
    help="Show progress of this labeler (default: the queue's; a shared queue's: yours).",
)
@click.option(
    "--next",
    "take",
    is_flag=True,
    help="Take the next trial of the shared queue NAME for --labeler (a lease) and print it, as "
    "the label screen does.",
)
@click.option(
    "--release",
    is_flag=True,
    help="Give back the trial --labeler holds in the shared queue NAME.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def queues(
    ctx: click.Context,
    name: str | None,
    labeler: str | None,
    take: bool,
    release: bool,
    as_json: bool,
) -> None:
    """Calibration queues with their progress, e.g. 23 / 50, each labeler's count, and the labels
    the judge's trust verdict needs (80% assurance) for each queue's labeler and judge.

    With NAME, that queue alone in full: who labeled how many, who holds which trial now (a
    shared queue), and with --labels-per-trial 2 or more how the labelers agree on each trial
    (Krippendorff's alpha, the trials they split on)."""
    from reviewer.workflows.agreement import configured_threshold
    from reviewer.workflows.queues import (
        LEASE_S,
        NoSuchQueue,
        list_queues,
        progress_of,
        queue_status,
        release_leases,
    )

    lease_minutes = round(LEASE_S / 60)

    if (take or release) and name is None:
        fail("--next and --release need a queue NAME", 2)
    if take and release:
        fail("--next and --release do not go together", 2)
    db = cli_store(ctx, needs_runs=True)
    threshold = configured_threshold(settings_of(click.get_current_context()))[0]
    stored = list_queues(db)
    if name is not None and name not in {q.name for q in stored}:
        fail(_plain(unknown_queue(name, [q.name for q in stored])), 2)
    chosen = [q for q in stored if name is None or q.name == name]
    if take or release:
        q = chosen[0]
        if not q.params.get("shared"):
            fail(
                f"queue {_plain(q.name)!r} is not shared: its labeler labels it in order; make a "
                "shared one with `reviewer sample --shared`",
                2,
            )
        who = _labeler_known(labeler or (ctx.obj or {}).get("labeler"))
        if release:
            n = release_leases(db, q.name, who)
            if as_json:
                echo_json({"queue": q.name, "labeler": who, "released": n})
            else:
                click.echo(f"{_plain(who)} gave back {n} trial{'s' if n != 1 else ''}", err=True)
            return
        try:
            status = queue_status(db, q.name, who, threshold=threshold, claim=True)
        except NoSuchQueue:  # deleted between the two reads
            fail(f"no queue named {_plain(q.name)!r}", 2)
        if as_json:
            echo_json(status.to_dict())
            return
        if status.next_item is None:
            rest = (
                "; the rest wait for other labelers (or are held by them)"
                if status.done < status.total
                else ""
            )
            click.echo(
                f"nothing left in {_plain(q.name)} for {_plain(who)}: the team has {status.done} "
                f"/ {status.total} trials fully labeled; {_plain(who)} labeled "
                f"{len(status.labeled)}{rest}",
                err=True,
            )
            return
        it = status.next_item
        give = shlex.join(
            [
                "reviewer",
                "--db",
                command_db(ctx.obj["db"]),
                "--labeler",
                who,
                "labels",
                "give",
                it.trial_id,
                "VERDICT",
                "--queue",
                q.name,
            ]
        )
        click.echo(
            f"{it.trial_id}  (position {it.position}, task {_plain(it.task_id)}, "
            f"trial {it.trial}) held by {_plain(who)} for {lease_minutes} minutes; label it with "
            f"{_plain(give)} (VERDICT: pass, fail or skip)"
        )
        return
    rows: list[dict[str, Any]] = []
    statuses = []
    you = _config().labeler_name((ctx.obj or {}).get("labeler"))
    for q in chosen:
        who = progress_of(q, you, labeler)
        status = queue_status(db, q.name, who, threshold=threshold)
        statuses.append(status)
        outlook = status.outlook
        rows.append(
            {
                "name": q.name,
                "labeler": who,
                "done": status.done,
                "total": status.total,
                "next_position": status.next_position,
                "seed": q.seed,
                "run": q.params.get("run"),
                "runs": q.params.get("runs") or ([q.params["run"]] if q.params.get("run") else []),
                "split": q.split,
                "created_at": q.created_at,
                "active": status.active,
                "shared": status.shared,
                "why": status.why,
                "judge": status.judge,
                "labels_to_verdict": None if outlook is None else outlook.labels,
                "outlook": None if outlook is None else outlook.to_dict(),
                "team": None if status.team is None else status.team.to_dict(),
            }
        )
    if as_json:
        echo_json({"queues": rows})
        return
    if not rows:
        click.echo("no queues yet; make one with `reviewer sample --size 50`", err=True)
        return
    head = ["queue", "labeler", "progress", "next", "run", "seed", "split", "kind", "to verdict"]
    table = [[*head, "created"]]
    for r in rows:
        more = r["labels_to_verdict"]
        seen = r["outlook"] or {}
        table.append(
            [
                _plain(r["name"]),
                f"{_plain(r['labeler'])} (team)" if r["shared"] else _plain(r["labeler"]),
                f"{r['done']} / {r['total']}",
                _next_cell(r),
                _plain(", ".join(r["runs"]) or "(all)"),
                str(r["seed"]),
                str(r["split"] or "-"),
                "active" if r["active"] else "shared" if r["shared"] else "stratified",
                "settled"
                if more == 0
                else f">{seen.get('max_more')}"
                if more is None
                else f"{more}+"
                if seen.get("at_least")
                else f"{seen['floor']}+"
                if seen.get("floor")
                else f"~{more}",
                str(r["created_at"])[:19].replace("T", " "),
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    for status in statuses:
        for line in _team_lines(status, detail=name is not None):
            click.echo(line)


def _labeler_known(given: str | None) -> str:
    """Who gives a label or takes a lease: --labeler, the config or the login name; one line
    (exit 2) when none names anyone."""
    from reviewer.config import NO_LABELER

    who = _config().known_labeler(given)
    if who is None:
        fail(NO_LABELER, 2)
    return who


def _next_cell(row: dict[str, Any]) -> str:
    """The queue table's "next": the position, "done" when the queue is, and "others" when a
    shared queue holds nothing more for this labeler while others' labels are still to come."""
    if row["next_position"] is not None:
        return str(row["next_position"])
    return "others" if row["shared"] and row["done"] < row["total"] else "done"


def _team_lines(status: Any, *, detail: bool) -> list[str]:
    """Each labeler's count under the queue's table; with ``detail`` (one queue asked for) a
    shared queue's leases and its per-trial agreement too."""
    team = status.team
    if team is None or not team.by_labeler and not (detail and team.shared):
        return []
    if not detail and not team.shared and set(team.by_labeler) <= {status.labeler}:
        return []  # the table's progress says it all
    counts = ", ".join(f"{_plain(w)} {n}" for w, n in team.by_labeler.items())
    lines = [f"{_plain(status.name)}: " + (f"labeled by {counts}" if counts else "no labels yet")]
    if not detail or not team.shared:
        return lines
    if team.per_trial == 1:
        lines.append(f"  {team.complete} / {team.total} trials labeled pass or fail")
    else:
        lines.append(
            f"  {team.complete} / {team.total} trials have all {team.per_trial} pass or fail labels"
        )
    for k in team.leases:
        seconds = k.left
        left = "under a minute" if seconds < 60 else f"{round(seconds / 60)} min"
        lines.append(
            f"  {_plain(k.labeler)} holds position {k.position} ({k.trial_id}), {left} left"
        )
    if team.per_trial >= 2:
        alpha = "n/a" if team.alpha is None else f"{team.alpha:.2f}"
        split = team.disagreements
        lines.append(
            f"  agreement: {len(team.items) - len(split)} of {len(team.items)} trials with two or "
            f"more labels unanimous; Krippendorff's alpha {alpha}"
            + ("" if team.alpha_note is None else f" ({team.alpha_note})")
        )
        for it in split:
            who = ", ".join(f"{_plain(w)} {v}" for w, v in it.labels.items())
            lines.append(f"  split at position {it.position} ({it.trial_id}): {who}")
    return lines


@click.group()
def labels() -> None:
    """Share labels between labelers and machines as JSONL (export, then import elsewhere)."""


@labels.command("export")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--labeler",
    default=None,
    callback=labeler_option,  # a name as everywhere: "ann " is ann, control characters refused
    help="Only this labeler's labels (default: everyone's).",
)
@click.option("--force", is_flag=True, help="Replace FILE if it exists.")
@click.pass_context
def labels_export(ctx: click.Context, file: str, labeler: str | None, force: bool) -> None:
    """Write every label and undo, oldest first, to FILE (- for stdout).

    FILE is written to a temporary file beside it and renamed, so a failure leaves the old one whole."""
    from reviewer.commands.common import json_stdout
    from reviewer.workflows.labels import LabelFileError, export_label_file

    db = cli_store(ctx, needs_runs=True)
    try:
        count = export_label_file(db, json_stdout() if file == "-" else file, labeler, force=force)
    except LabelFileError as e:
        fail(_plain(e))
    where = "stdout" if file == "-" else file
    click.echo(f"exported {count} label{'' if count == 1 else 's'} to {where}", err=True)


@labels.command("import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def labels_import(ctx: click.Context, file: str, as_json: bool) -> None:
    """Merge labels from FILE (- for stdin); labels already stored are not added again."""
    from reviewer.workflows.labels import LabelFileError, import_label_file

    db = cli_store(ctx)
    try:
        result = import_label_file(db, file)
    except LabelFileError as e:
        fail(str(e))
    for s in result.skipped[:_MAX_SKIPS_SHOWN]:
        click.echo(_plain(s), err=True)
    if len(result.skipped) > _MAX_SKIPS_SHOWN:
        click.echo(f"... and {len(result.skipped) - _MAX_SKIPS_SHOWN} more skipped lines", err=True)
    if as_json:
        echo_json(
            {
                "file": result.file,
                "added": result.added,
                "duplicates": result.duplicates,
                "skipped": result.skipped,
            }
        )
    click.echo(
        f"imported {result.added} label{'' if result.added == 1 else 's'} from {_plain(result.file)}; "
        f"{result.duplicates} already stored; {len(result.skipped)} skipped",
        err=True,
    )
    if result.skipped and result.added + result.duplicates == 0:
        sys.exit(1)


@click.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--check", is_flag=True, help="Only validate: exit 0 when usable, else 1 with the problem."
)
@click.option("--json", "as_json", is_flag=True, help="Print the rubric as JSON.")
@click.pass_context
def rubric(ctx: click.Context, file: str | None, check: bool, as_json: bool) -> None:
    """Validate and show the labeling rubric (FILE, else the config's rubric, else ./rubric.toml,
    else the one the app labels with: the rubric stored last, as an imported folder's rubric.toml)."""
    from dataclasses import asdict

    from reviewer.workflows.rubric import PASS_RULES, RubricError, active_rubric, load_rubric
    from reviewer.workflows.store_access import name_problem

    path = Path(file) if file else (_config().rubric or Path("rubric.toml"))
    # a configured name the system refuses (too long) is read below, which says so: exists() raises
    if not file and name_problem(path) is None and not path.exists():
        import os

        from reviewer.workflows.store_access import TEST_SERVER_VAR, is_url

        db = ctx.obj["db"]  # a database file that does not exist holds no rubric: none is made
        local = not is_url(db) and not os.environ.get(TEST_SERVER_VAR)
        stored = active_rubric(cli_store(ctx), None) if not local or Path(db).exists() else None
        if stored is None:
            fail('no rubric: give FILE, or set rubric = "rubric.toml" in reviewer.toml')
        r = stored
        source = f"{_plain(r.ref)} (stored: the rubric the app labels with)"
    else:
        try:
            r = load_rubric(file or path)
        except RubricError as e:
            fail(str(e))
        _check_version(ctx, r)
        source = str(file or path)
    if check:
        click.echo(f"{source}: ok ({_plain(r.ref)}, {len(r.criteria)} criteria)", err=True)
        return
    if as_json:
        echo_json({**asdict(r), "ref": r.ref, "digest": r.digest})
        return
    click.echo(f"{_plain(r.ref)}  pass rule: {r.pass_rule} ({PASS_RULES[r.pass_rule]})")
    width = max(len(c.id) for c in r.criteria)
    for c in r.criteria:
        click.echo(f"  [{_plain(c.key)}] {_plain(c.id).ljust(width)}  {_plain(c.question)}")
        if c.help:
            click.echo(f"      {' ' * width}  {_plain(c.help)}")
    if r.categories:
        from reviewer.workflows.labels import category_keys

        shown = " · ".join(f"[{k}] {_plain(cat)}" for k, cat in category_keys(r.categories))
        click.echo(f"  failure tags: {shown}")


def _check_version(ctx: click.Context, r: Any) -> None:
    """A rubric edited without a version bump is an error when the database knows the old one."""
    from reviewer.workflows.rubric import stored_rubric_digest
    from reviewer.workflows.store_access import database_exists

    if not database_exists(ctx.obj["db"]):
        return
    stored = stored_rubric_digest(cli_store(ctx), r.ref)
    if stored is not None and stored != r.digest:
        fail(
            f"rubric {_plain(r.ref)} differs from the one labels were given under "
            "(criteria or pass rule changed); bump its version"
        )


@labels.command("give")
@click.argument("trial", type=TEXT)
@click.argument("verdict", type=click.Choice(["pass", "fail", "skip"]))
@click.option(
    "--criterion",
    "answers",
    multiple=True,
    metavar="ID=yes|no",
    help="Answer a rubric criterion; repeat for each.",
)
@click.option("--note", type=TEXT, default="", help="A note kept with the label.")
@click.option(
    "--tag",
    default=None,
    help="A fail's failure category: one of the rubric's categories, or your own words.",
)
@click.option("--queue", type=TEXT, default=None, help="The queue it belongs to (default: none).")
@click.option(
    "--rubric",
    "rubric_file",
    default=None,
    type=click.Path(dir_okay=False),
    help="Rubric file (default: the config's rubric, else the one stored last, as in the app).",
)
@click.option(
    "--override", is_flag=True, help="Keep a verdict that goes against the rubric's pass rule."
)
@click.option("--json", "as_json", is_flag=True, help="Print the stored label as JSON.")
@click.pass_context
def labels_give(
    ctx: click.Context,
    trial: str,
    verdict: str,
    answers: tuple[str, ...],
    note: str,
    tag: str | None,
    queue: str | None,
    rubric_file: str | None,
    override: bool,
    as_json: bool,
) -> None:
    """Label one TRIAL (its id, or the first 6+ characters of it) pass, fail or skip, in or out of
    a queue: the same job as the app's label screen (L on a transcript)."""
    from dataclasses import asdict

    from reviewer.workflows.labels import (
        RubricContradiction,
        give_label,
        parse_answers,
        resolve_trial,
    )
    from reviewer.workflows.queues import list_queues
    from reviewer.workflows.rubric import RubricProblem, active_rubric

    who = _labeler_known((ctx.obj or {}).get("labeler"))
    path = rubric_file or _config().rubric
    db = cli_store(ctx)
    if queue is not None:  # a label in a queue that does not exist would be in none
        names = [q.name for q in list_queues(db)]
        if not queue.strip():
            fail("--queue must not be empty", 2)
        if queue not in names:
            fail(_plain(unknown_queue(queue, names)), 2)
    try:  # the app's rule: the file given or configured, else the rubric stored last
        r = active_rubric(db, path)
    except RubricProblem as e:
        fail(str(e))
    if answers and r is None:
        fail("--criterion needs a rubric: give --rubric FILE or set one in reviewer.toml", 2)
    try:
        trial_id = resolve_trial(db, trial)
        criteria = parse_answers(r, answers)
        label = give_label(
            db,
            trial_id,
            who,
            verdict,
            criteria=criteria,
            note=note,
            queue=queue,
            rubric=r,
            override=override,
            tag=tag,
        )
    except RubricContradiction as e:
        fail(f"{e.why}; add --override to keep {verdict}")
    except ValueError as e:  # an unknown trial, a bad answer
        fail(_plain(e))
    if as_json:
        echo_json(asdict(label))
        return
    extra = " (override: against the rubric's pass rule)" if label.override else ""
    where = f" in queue {_plain(queue)}" if queue else ""
    tagged = f" ({_plain(label.tag)})" if label.tag else ""
    click.echo(f"{_plain(who)} labeled {trial_id} {verdict}{tagged}{where}{extra}", err=True)


labels_import.ignores_shared_options = {"labeler"}  # type: ignore[attr-defined]  # the file says
