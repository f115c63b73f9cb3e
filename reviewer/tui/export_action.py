"""Export as regression tasks from the app: the trial, cluster or list on screen, appended to the
default task file (``regression/tasks.jsonl``) in a worker; the summary comes back as a notification.

The app exports what a reviewer points at, so it takes human fail labels and judge fail verdicts no
human contradicted; appending keeps earlier exports and never duplicates. The CLI's equivalents:
``reviewer export --judge-fails --append`` with ``--trial ID``, ``--cluster ID`` or the trials-list
filters (``--run``, ``--task``, ``--outcome``, ``--verdict``, ``--label``, ``--rule``, ``--search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.message import Message
from textual.notifications import SeverityLevel

from reviewer.store.trial_list import TrialFilter
from reviewer.tui.safe import clean

if TYPE_CHECKING:
    from reviewer.tui.screens.base import ReviewerScreen

    _Base = ReviewerScreen
else:
    _Base = object

#: The worker group of every export (one export at a time per screen).
GROUP = "export-tasks"


@dataclass(frozen=True)
class ExportScope:
    """What to export: one trial, a cluster, or every trial of a trials-list filter."""

    label: str
    trial_ids: tuple[str, ...] | None = None
    cluster: str | None = None
    filter: TrialFilter | None = None


class ExportFinished(Message):
    """An export's summary (plain text), or why nothing was exported."""

    def __init__(self, text: str, severity: SeverityLevel) -> None:
        super().__init__()
        self.text = text
        self.severity = severity


def run_export(db: Any, scope: ExportScope) -> tuple[str, SeverityLevel]:
    """Export ``scope`` (worker thread): the summary text and how to show it."""
    from reviewer.export.select import Selection
    from reviewer.workflows.export import ExportFailed, ExportRequest, export_regression_tasks

    request = ExportRequest(
        selection=Selection(cluster=scope.cluster, include_judge=True, trial_ids=scope.trial_ids),
        trials=scope.filter,
        append=True,
    )
    try:
        summary = export_regression_tasks(db, request)
    except ExportFailed as e:
        if e.nothing:
            return f"Nothing to export from {scope.label}: {e}", "warning"
        return f"Export failed: {e}", "error"
    return "\n".join(summary.lines()), "information"


class ExportMixin(_Base):
    """``start_export`` and the handler of its result, for the screens that export what they show."""

    def start_export(self, scope: ExportScope | None) -> None:
        """Export ``scope`` in a worker; None (nothing under the cursor) only says so."""
        if scope is None:
            self.notify("Nothing here to export.", severity="warning", markup=False)
            return
        self.notify(f"Exporting {clean(scope.label, single_line=True)}…", markup=False)
        self.run_worker(
            partial(self._export_worker, scope),
            name="export as regression tasks",
            group=GROUP,
            exclusive=True,
            exit_on_error=False,
            thread=True,
        )

    def _export_worker(self, scope: ExportScope) -> None:
        with self.store() as db:
            text, severity = run_export(db, scope)
        self.post_message(ExportFinished(text, severity))

    def on_export_finished(self, message: ExportFinished) -> None:
        self.notify(
            clean(message.text),
            title="Regression tasks",
            severity=message.severity,
            timeout=8,
            markup=False,
        )
