"""Export failures as regression tasks: the one call behind `reviewer export` and the app's export of
the trial, cluster or trials list on screen. It narrows the selection to what a trials-list filter
shows, writes through ``export_tasks`` and turns every failure into one ``ExportFailed`` line."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from reviewer.export.run import ExportSummary

# re-exported for the faces (they import workflows only)
from reviewer.export.select import Selection as Selection
from reviewer.store.db import Store
from reviewer.store.trial_list import TrialFilter


class ExportFailed(Exception):
    """Nothing was written; the message is one line. ``nothing``: the selection chose no trial."""

    def __init__(self, message: str, *, nothing: bool = False) -> None:
        super().__init__(message)
        self.nothing = nothing


def default_task_file() -> Path:
    """Where an export with no ``out`` writes (regression/tasks.jsonl under the current folder)."""
    from reviewer.export.files import DEFAULT_DIR, FILE_NAMES

    return (Path(DEFAULT_DIR) / FILE_NAMES["native"]).absolute()


@dataclass(frozen=True)
class ExportRequest:
    """What to export and where. ``trials`` keeps only the trials a trials-list filter shows (the
    app's "this list"); ``out`` None is the default task file (regression/tasks.jsonl)."""

    selection: Selection = Selection()
    trials: TrialFilter | None = None
    out: str | Path | None = None
    fmt: str = "native"
    force: bool = False
    append: bool = False
    redact: bool = False


def export_regression_tasks(db: Store, request: ExportRequest) -> ExportSummary:
    """Select, build and write the tasks; the summary says what was added. Raises ExportFailed."""
    from reviewer.export.files import ExportError
    from reviewer.export.run import NothingToExport, export_tasks
    from reviewer.export.select import SelectionError
    from reviewer.store.trial_list import SearchError
    from reviewer.workflows.labels import resolve_trial

    sel = request.selection
    try:
        if sel.trial_ids:  # a trial that is not there is named, as `labels give` names it
            sel = replace(sel, trial_ids=tuple(resolve_trial(db, t) for t in sel.trial_ids))
    except ValueError as e:
        raise ExportFailed(str(e)) from e
    try:
        if request.trials is not None:
            sel = replace(sel, trial_ids=_narrow(db, sel.trial_ids, request.trials))
        return export_tasks(
            db,
            sel,
            request.out,
            request.fmt,
            force=request.force,
            append=request.append,
            redact=request.redact,
        )
    except NothingToExport as e:
        raise ExportFailed(str(e), nothing=True) from e
    except (ExportError, SelectionError, SearchError) as e:
        raise ExportFailed(str(e)) from e
    except OSError as e:
        where = e.filename or request.out or "regression"
        raise ExportFailed(f"{where}: {e.strerror or e}") from e


def _narrow(db: Store, ids: tuple[str, ...] | None, trials: TrialFilter) -> tuple[str, ...]:
    """The trial ids the filter shows, within ``ids`` when given (list order kept)."""
    from reviewer.store.export_select import filter_ids

    shown = filter_ids(db, trials)
    if ids is None:
        return tuple(shown)
    wanted = set(ids)
    return tuple(t for t in shown if t in wanted)


def harness_failures(db: Store, request: ExportRequest) -> tuple[int, str | None]:
    """How many trials ``request`` would export with the harness's failures added (what the app
    offers when nothing a human or judge named is there), and a warning line when some of them got
    partial credit and fail only by the default rule (graded "failures")."""
    from reviewer.export.run import partial_credit_warning
    from reviewer.export.select import SelectionError, select
    from reviewer.store.rescore import partial_credit
    from reviewer.store.trial_list import SearchError

    sel = replace(request.selection, include_harness=True)
    try:
        if request.trials is not None:
            sel = replace(sel, trial_ids=_narrow(db, sel.trial_ids, request.trials))
        chosen = select(db, sel)
    except (SelectionError, SearchError):
        return 0, None
    partial = partial_credit(db, [c.key.trial_id for c in chosen if c.source == "harness"])
    warning = partial_credit_warning(partial, "of them") if partial.n else None
    return len(chosen), warning
