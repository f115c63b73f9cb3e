"""The import job, one function for the CLI and the app: import paths, make a folder's rules.toml the
active rules, register a folder's rubric.toml, and check the new trials against the active rules."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reviewer.config import Config, path_is

# re-exported for the faces (they import workflows only)
from reviewer.ingest import FORMATS as FORMATS
from reviewer.ingest.files import discover, path_text
from reviewer.ingest.limits import LimitError, limits
from reviewer.ingest.outcome import ImportOptions as ImportOptions
from reviewer.ingest.outcome import not_applied_lines
from reviewer.metrics.rules import Rule
from reviewer.models import Rubric, Skip, threshold_problem, threshold_text
from reviewer.store.db import Store, StoreError, describe_error
from reviewer.store.writer import checkpoint
from reviewer.text import name_list, one_line
from reviewer.workflows.import_files import FileResult, Session, import_file
from reviewer.workflows.import_progress import ImportProgress as ImportProgress
from reviewer.workflows.import_progress import Meter, OnProgress

__all__ = [
    "FileResult",
    "ImportOptions",
    "ImportProgress",
    "import_options",
    "ImportSummary",
    "discover",
    "import_paths",
    "outcome_line",
    "pairs_summary",
]


@dataclass
class ImportSummary:
    files: list[FileResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # problems not tied to one file's content
    cancelled: bool = False  # the caller stopped it; the files before the one being read stay
    rules_file: str | None = None  # a folder's rules.toml made the active rules by this import
    rules_count: int = 0  # how many rules that file holds
    violations: int = 0  # rule violations found in the new trials (rules already active)
    rule_problems: list[str] = field(default_factory=list)
    #: a rule naming a tool no stored trial calls (``ActiveRules.unused_tools``): no problem
    rule_warnings: list[str] = field(default_factory=list)
    rubric: Rubric | None = None  # a folder's rubric.toml, registered by this import
    rubric_file: str | None = None
    rubric_problem: str | None = None
    notes: list[str] = field(default_factory=list)  # warnings about the whole import (--outcomes)
    audit_line: str | None = None  # the independence audit of the runs that gained trials

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def already(self) -> int:
        return sum(f.already for f in self.files)

    @property
    def updated(self) -> int:
        """Stored sessions replaced by a newer version of themselves."""
        return sum(f.updated for f in self.files)

    @property
    def new_ids(self) -> list[str]:
        return [i for f in self.files for i in f.new_ids]

    @property
    def skipped(self) -> list[Skip]:
        return [s for f in self.files for s in f.skipped]

    @property
    def runs(self) -> set[str]:
        return {r for f in self.files for r in f.runs}

    @property
    def task_ids(self) -> set[str]:
        """The tasks the files hold, whatever their runs: two runs of the same 50 tasks hold 50."""
        return {task for f in self.files for _run, task in f.tasks}

    @property
    def failed_files(self) -> list[FileResult]:
        return [f for f in self.files if f.error]

    @property
    def ok(self) -> bool:
        """True when something was imported or was already there, and nothing failed outright."""
        stored = self.added + self.already + self.updated + self.pairs
        return (stored > 0 or self.checked > 0) and not self.errors

    @property
    def pairs(self) -> int:
        """Pair judgements written, already stored or (with --check) valid."""
        return sum(f.pairs.total + f.pairs.checked for f in self.files if f.pairs is not None)

    @property
    def warnings(self) -> list[str]:
        return [w for f in self.files for w in f.warnings] + self.notes

    @property
    def outcomes(self) -> dict[str, int]:
        """New trials by outcome (pass, fail, infra, unscored)."""
        out: dict[str, int] = {}
        for f in self.files:
            for k, v in f.outcomes.items():
                out[k] = out.get(k, 0) + v
        return out

    @property
    def joined(self) -> int:
        return sum(f.joined for f in self.files)

    @property
    def checked(self) -> int:
        return sum(f.trials for f in self.files)

    @property
    def listed(self) -> int:
        """How many tasks the task lists among the files hold (they are reported, not imported)."""
        return sum(len(f.listed or ()) for f in self.files)

    @property
    def problems(self) -> list[str]:
        """Every problem as one line: missing paths, files that failed, rules and rubric not applied."""
        out = list(self.errors)
        out += [f.error for f in self.files if f.error and not f.ignored]
        out += self.rule_problems
        if self.rubric_problem:
            out.append(self.rubric_problem)
        return out

    def rule_lines(self) -> list[str]:
        """What the import did with the rules, one line each (problems first, as they happened)."""
        lines = [f"reviewer: {p}" for p in self.rule_problems]
        if self.rules_file:
            lines.append(
                f"rules: {self.rules_count} from {self.rules_file}, checked on every trial"
            )
            lines += [f"warning: {w}" for w in self.rule_warnings]
        elif self.violations:
            lines.append(
                f"rules: {self.violations} violation{'' if self.violations == 1 else 's'} in the new trials"
            )
        return lines


def import_paths(
    db: Store | None,
    paths: Sequence[str | Path],
    *,
    run: str | None = None,
    check: bool = False,
    progress: OnProgress | None = None,
    on_file: Callable[[FileResult], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    options: ImportOptions | None = None,
) -> ImportSummary:
    """Import (or with ``check`` / without a store, only validate) every file under ``paths``, then
    apply a folder's rules.toml and rubric.toml and check the new trials against the active rules.

    ``progress`` gets an ``ImportProgress`` (bytes of the files read, moving within a file as it is
    read) at the start, within a file at most every ``PROGRESS_EVERY`` seconds (and after each
    write batch), and after each file; ``on_file`` gets each file's result; when ``cancelled()``
    turns true the file being read is rolled back and the job stops (the files before it stay, and are
    checked against the rules). ``options`` decide outcomes beyond what the files say (a pass
    threshold, a success field, a task id, outcomes joined from a SWE-bench report)."""
    summary = ImportSummary()
    try:
        limits()  # a limit set to nonsense refuses the whole job, before any file is read
    except LimitError as e:
        summary.errors.append(str(e))
        return summary
    files, summary.errors = discover(paths)
    session = Session(options=options or ImportOptions())
    if db is not None and not check:
        # the rules first, so each file's new trials are checked in that file's own transaction
        session.rules = _apply_rules(db, paths, summary, session)
    stopped = False  # the store refused a file (a full disk): nothing more is written
    meter = Meter([path for path, _ in files], progress)
    for index, (path, direct) in enumerate(files):
        if cancelled is not None and cancelled():
            summary.cancelled = True
            break
        try:
            with meter.file(index, path_text(path)) as tick:
                result = import_file(
                    db,
                    path,
                    run=run,
                    check=check,
                    progress=tick,
                    direct=direct,
                    cancelled=cancelled,
                    session=session,
                )
        except (sqlite3.OperationalError, StoreError) as e:
            if db is None or not any(f.added or f.updated for f in summary.files):
                raise  # nothing stored yet: the one line of the failure says it all
            # the files before this one are committed: the summary says what they added, and
            # the failure is this file's (rolled back whole) and the rest's (not read)
            left = len(files) - len(summary.files) - 1
            rest = f"; {left} more file{_s(left)} not read" if left else ""
            summary.errors.append(
                f"{describe_error(db.path, e)} — {path} was rolled back{rest}; the files before it "
                "are stored"
            )
            stopped = True
            break
        summary.files.append(result)
        summary.violations += result.violations
        summary.cancelled = result.cancelled
        if on_file:
            on_file(result)
        if result.cancelled:
            break
    if db is not None and not check:
        # the files' pages, logged with fewer checkpoints while they were written
        if (why := checkpoint(db)) is not None:
            summary.notes.append(
                f"the database's log could not be copied into its file ({why}): what was "
                "imported is stored in the log; free some space before writing more"
            )
        if not stopped:
            _register_rubric(db, paths, summary)
        if summary.rules_file and session.tools_wanted:
            from reviewer.metrics.active_rules import unused_tools

            summary.rule_warnings += [
                f"{summary.rules_file}: {line}"
                for line in unused_tools(session.rules, session.tools_called)
            ]
        from reviewer.workflows.audit import audit_after_import

        summary.audit_line = audit_after_import(
            db, {r for f in summary.files if f.added or f.updated for r in f.runs}
        )
    summary.notes += _outcomes_notes(summary, session.options)
    return summary


def _outcomes_notes(summary: ImportSummary, options: ImportOptions) -> list[str]:
    """What ``--outcomes FILE`` did overall: ids it lists twice, and how many trials it matched
    when not all (``0 of 12 trials matched report.json``, with ids of both sides to compare)."""
    out = not_applied_lines([(f.file, f.format or "", f.not_applied) for f in summary.files])
    if options.outcomes is None:
        return out
    name = options.outcomes_file or "the outcomes file"
    if options.outcome_conflicts:
        n = len(options.outcome_conflicts)
        eg = ", ".join(options.outcome_conflicts[:3])
        out.append(
            f"{name}: {n} instance id{_s(n)} listed with two outcomes (e.g. {eg}): left as the "
            "trajectories say"
        )
    considered = sum(f.considered for f in summary.files)
    joined = summary.joined
    if considered and joined < considered:
        line = f"{joined} of {considered} trials matched {name}"
        if joined == 0:
            theirs = ", ".join(sorted(options.outcomes)[:2]) or "none"
            ours = ", ".join([i for f in summary.files for i in f.unmatched][:2]) or "none"
            line += f" (its ids: {theirs}; the trials' instance ids: {ours})"
        else:
            line += "; the others keep the outcome their files give (else unscored)"
        out.append(line)
    return out


def _folders(paths: Sequence[str | Path], name: str) -> list[Path]:
    """``name`` in every folder among ``paths`` that holds one, in the order given (a folder we
    cannot look into holds none: ``discover`` reports it)."""
    return [
        Path(p) / name
        for p in paths
        if str(p).strip() and path_is(Path(p), "is_dir") and path_is(Path(p) / name, "is_file")
    ]


def _apply_rules(
    db: Store, paths: Sequence[str | Path], summary: ImportSummary, session: Session
) -> Sequence[Rule]:
    """A folder's rules.toml (else the rules file reviewer.toml names) becomes the active rules (the
    stored trials are checked against it at once); returns the active rules, which the new trials are checked against as they are written.
    ``session`` keeps the tools the rules name that no stored trial calls, for their warning."""
    from reviewer.metrics.active_rules import active_rules, named_tools, set_rules
    from reviewer.metrics.rules import RuleError

    files = _folders(paths, "rules.toml")
    named = session.options.settings_rules
    if not files and named is not None:  # reviewer.toml's rules, when no folder brings its own
        if path_is(named, "is_file"):
            files = [named]
        else:
            what = "not a file" if path_is(named, "exists") else "no such file"
            summary.rule_problems.append(
                f"rules not applied: {path_text(named)} (rules in reviewer.toml): {what}"
            )
    for rules_file in files:
        try:
            active, changed = set_rules(db, str(rules_file), rules_file.read_text(encoding="utf-8"))
        except (RuleError, OSError, UnicodeDecodeError) as e:
            summary.rule_problems.append(f"rules not applied: {e}")
            continue
        if changed:
            summary.rules_file, summary.rules_count = str(rules_file), len(active.rules)
            # said when the files are in: a tool only the folder's trials call is called
            session.tools_called = set(active.called)
            session.tools_wanted = named_tools(active.rules) - active.called
            return active.rules
    try:
        current = active_rules(db)
    except RuleError as e:
        summary.rule_problems.append(f"stored rules no longer load: {e}")
        return ()
    return () if current is None else current.rules


def _register_rubric(db: Store, paths: Sequence[str | Path], summary: ImportSummary) -> None:
    """The first folder's rubric.toml is recorded under its name@version (labels need it)."""
    from reviewer.labeling.rubric import RubricError, load_rubric
    from reviewer.store.labels import RubricVersionError, ensure_rubric_version

    for rubric_file in _folders(paths, "rubric.toml")[:1]:
        summary.rubric_file = str(rubric_file)
        try:
            rubric = load_rubric(rubric_file)
            ensure_rubric_version(db, rubric)
        except (RubricError, RubricVersionError) as e:
            summary.rubric_problem = str(e)
        else:
            summary.rubric = rubric


def pairs_summary(summary: ImportSummary, check: bool) -> str | None:
    """One line about the pair-judgement files of an import, or None when there were none."""
    files = [f.pairs for f in summary.files if f.pairs is not None]
    if not files:
        return None
    judges = len({j for c in files for j in c.judges})
    of = f"{judges} judge{'' if judges == 1 else 's'}"
    if check:
        return f"pairs: {sum(c.checked for c in files)} valid pair judgements ({of})"
    added, updated = sum(c.added for c in files), sum(c.updated for c in files)
    already, refs = sum(c.already for c in files), sum(c.unresolved_refs for c in files)
    line = (
        f"pairs: {added} pair judgements added, {updated} updated, {already} already stored ({of})"
    )
    if refs:
        line += f"; {refs} trial refs not in the store, kept as given (they open once imported)"
    return line


def outcome_line(summary: ImportSummary, options: ImportOptions | None = None) -> str | None:
    """What the new trials' outcomes were, when any was not a plain pass or fail (or a pass rule
    other than the default decided them); None otherwise."""
    counts = summary.outcomes
    # the rules that decided (a success field that gave no value is not one), in file order
    applied = [f.rule for f in summary.files if f.rule is not None and f.outcomes]
    rules = list(dict.fromkeys(r for r in applied if not r.is_default))
    special = counts.get("infra", 0) + counts.get("unscored", 0)
    if not counts or (not special and not rules and not summary.joined):
        return None
    parts = [f"{counts.get('pass', 0)} pass", f"{counts.get('fail', 0)} fail"]
    if counts.get("infra"):
        n = counts["infra"]
        parts.append(f"{n} infrastructure error{'' if n == 1 else 's'} (left out of pass rates)")
    if counts.get("unscored"):
        parts.append(f"{counts['unscored']} unscored")
    line = "outcomes: " + ", ".join(parts)
    if rules:
        line += "; " + "; ".join(r.describe() for r in rules)
    if summary.joined:
        line += f"; {summary.joined} joined from {(options or ImportOptions()).outcomes_file}"
    return line


def import_options(
    config: Config | None = None,
    *,
    pass_threshold: float | None = None,
    success_field: str | None = None,
    task: str | None = None,
    outcomes_file: str | Path | None = None,
    scorer: str | None = None,
) -> ImportOptions:
    """The outcome options of an import: the given values (CLI options), else ``[import]`` of the
    config (reviewer.toml); ValueError with one line for a bad value or outcomes file. The CLI and
    the app both build their options here."""
    from reviewer.ingest.base import IngestError
    from reviewer.ingest.outcome import check_field, load_outcomes

    threshold_from = "--pass-threshold"
    if config is not None:
        if pass_threshold is None and config.pass_threshold is not None:
            threshold_from = "[import] pass_threshold"
        pass_threshold = config.pass_threshold if pass_threshold is None else pass_threshold
        success_field = config.success_field if success_field is None else success_field
        scorer = config.scorer if scorer is None else scorer
    if pass_threshold is not None and (problem := threshold_problem(pass_threshold)):
        raise ValueError(f"{threshold_from} {threshold_text(pass_threshold)}: {problem}")
    if success_field is not None and (problem := check_field(success_field)):
        raise ValueError(problem)
    if task is not None and not task.strip():
        raise ValueError("--task must not be empty")
    if scorer is not None and not scorer.strip():
        raise ValueError("--scorer must not be empty")
    outcomes: dict[str, str] | None = None
    conflicts: list[str] = []
    if outcomes_file is not None:
        try:
            outcomes, conflicts = load_outcomes(Path(outcomes_file))
        except IngestError as e:
            raise ValueError(str(e)) from None
    return ImportOptions(
        pass_threshold,
        success_field,
        task,
        outcomes,
        None if outcomes_file is None else str(outcomes_file),
        scorer,
        conflicts,
        config.rules if config is not None else None,
    )


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def summary_lines(
    summary: ImportSummary,
    check: bool,
    *,
    max_skips: int = 20,
    options: ImportOptions | None = None,
) -> list[str]:
    """What an import did, one line each, for both faces: problems, skipped records (``file:line:
    reason``, the first ``max_skips``), pair judgements, the count line, then the warnings about
    outcomes (graded rewards, a changed pass rule) and what the new trials' outcomes were when any
    was an infrastructure error or unscored (or a pass rule decided them)."""
    out = _summary_lines(summary, check, max_skips)
    out += [f"reviewer: warning: {w}" for w in summary.warnings]
    if not check and (line := outcome_line(summary, options)):
        out.append(line)
    if not check and summary.audit_line:
        out.append(summary.audit_line)
    return [one_line(line) for line in out]  # a file name may hold a line break


def _summary_lines(summary: ImportSummary, check: bool, max_skips: int) -> list[str]:
    out = [f"reviewer: {e}" for e in summary.errors]
    for f in summary.files:
        if f.error and not f.ignored:
            out.append(f"reviewer: {f.error}")
        elif f.ignored and not f.quiet:
            seen = (f.error or "").split("; reviewer reads")[0].removeprefix(f"{f.file}: ")
            out.append(f"reviewer: ignored {f.file} (not a format reviewer reads: {seen})")
    skips = summary.skipped
    out += [str(s) for s in skips[:max_skips]]
    if len(skips) > max_skips:
        out.append(f"... and {len(skips) - max_skips} more skipped records")
    pair_line = pairs_summary(summary, check)
    if pair_line:
        out.append(pair_line)
    read = [f for f in summary.files if f.format and not f.error and f.listed is None]
    read = [f for f in read if f.pairs is None]
    if not read and (summary.listed or pair_line):
        return out  # only task lists or pair judgements: told about above or by their own lines
    if summary.errors and not summary.files:
        return out  # nothing was read: the refusal above says why
    runs, tasks = len(summary.runs), len(summary.task_ids)
    failed = len([f for f in summary.failed_files if not f.ignored])
    if check:
        line = (
            f"checked {len(read)} file{_s(len(read))}: {summary.checked} valid trial"
            f"{_s(summary.checked)} ({runs} run{_s(runs)}, {tasks} task{_s(tasks)}), "
            f"{len(skips)} problem{_s(len(skips))}"
        )
        if failed:  # a file that could not be read at all is not among the files checked
            line += f"; {failed} file{_s(failed)} failed"
        out.append(line)
        return out + _runs_line(summary.runs)
    parts = [
        f"imported {summary.added} trial{_s(summary.added)} ({runs} run{_s(runs)}, "
        f"{tasks} task{_s(tasks)}) from {len(read)} file{_s(len(read))}"
    ]
    if summary.updated:
        n = summary.updated
        parts.append(f"{n} stored session{_s(n)} updated to a newer version")
    if summary.already:
        parts.append(f"{summary.already} already stored")
    parts.append(f"{len(skips)} skipped")
    if failed:
        parts.append(f"{failed} file{_s(failed)} failed")
    line = "; ".join(parts)
    if summary.added == 0 and summary.already and not summary.updated:
        stored = "the 1 trial was" if summary.already == 1 else f"all {summary.already} trials were"
        line = f"nothing new: {stored} already stored; " + "; ".join(parts[2:])
    out.append(line)
    return out + _runs_line(summary.runs)


def _runs_line(runs: set[str]) -> list[str]:
    """The runs the files hold, by name (what `report --run` and `compare` take), in order."""
    if not runs:
        return []
    return [f"run{_s(len(runs))}: {name_list(sorted(runs))}"]
