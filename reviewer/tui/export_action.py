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

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.notifications import SeverityLevel
from textual.screen import ModalScreen
from textual.widgets import Static

from reviewer.tui.safe import clean
from reviewer.workflows.trials import TrialFilter

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
    harness: bool = False  # the harness's failures too (offered when nothing else is there)


class ExportFinished(Message):
    """An export's summary (plain text), or why nothing was exported; ``offer``: how many harness
    failures the scope holds when nothing else was there to export."""

    def __init__(
        self, text: str, severity: SeverityLevel, offer: int = 0, scope: ExportScope | None = None
    ) -> None:
        super().__init__()
        self.text = text
        self.severity = severity
        self.offer = offer
        self.scope = scope


def run_export(db: Any, scope: ExportScope) -> tuple[str, SeverityLevel, int]:
    """Export ``scope`` (worker thread): the summary text, how to show it, and (when nothing a human
    or judge named was there) how many harness failures could be exported instead."""
    from reviewer.workflows.export import (
        ExportFailed,
        ExportRequest,
        Selection,
        default_task_file,
        export_regression_tasks,
        harness_failures,
    )

    request = ExportRequest(
        selection=Selection(
            cluster=scope.cluster,
            include_judge=True,
            include_harness=scope.harness,
            trial_ids=scope.trial_ids,
        ),
        trials=scope.filter,
        append=True,
    )
    try:
        summary = export_regression_tasks(db, request)
    except ExportFailed as e:
        if e.nothing:
            offer, graded = (0, None) if scope.harness else harness_failures(db, request)
            why = str(e).removeprefix("nothing to export: ")  # said once, not twice
            text = f"Nothing to export from {scope.label}: {why}"
            if offer and graded:  # said before they are exported: they may be passes by a threshold
                text += f"\n\n{graded} (P on the Runs screen)"
            if offer:
                text += f"\n\nThey would be appended to {default_task_file()}"
            return text, "warning", offer
        return f"Export failed: {e}", "error", 0
    return "\n".join(summary.lines()), "information", 0


def _started(scope: ExportScope) -> str:
    """The toast shown while SCOPE is exported."""
    return f"Exporting {clean(scope.label, single_line=True)}…"


TOAST_ROWS = 4  # an export summary that wraps to more rows opens a report instead of a toast


class ExportMixin(_Base):
    """``start_export`` and the handler of its result, for the screens that export what they show."""

    def start_export(self, scope: ExportScope | None) -> None:
        """Export ``scope`` in a worker; None (nothing under the cursor) only says so."""
        if scope is None:
            self.notify("Nothing here to export.", severity="warning", markup=False)
            return
        self.notify(_started(scope), markup=False)
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
            text, severity, offer = run_export(db, scope)
        self.post_message(ExportFinished(text, severity, offer, scope))

    def on_export_finished(self, message: ExportFinished) -> None:
        scope = message.scope
        if scope is not None:  # its result is shown now: at 80 columns the toast would cover it
            withdraw = getattr(self.app, "withdraw", None)
            if withdraw is not None:
                withdraw(_started(scope))
        if message.offer and scope is not None:
            from dataclasses import replace

            def answer(yes: bool | None) -> None:
                if yes:
                    self.start_export(replace(scope, harness=True))

            self.app.push_screen(OfferHarness(message.text, message.offer), answer)
            return
        lines = message.text.splitlines()
        room = max(10, min(60, self.app.size.width // 2) - 4)  # a toast's text width
        if sum(-(-max(1, len(line)) // room) for line in lines) > TOAST_ROWS:
            # a toast at 80 columns is 40 wide and its end falls off the screen: the skipped trials
            # and why are the point, so they go in a report that wraps and scrolls
            from reviewer.tui.screens.import_report import ExportReport

            self.app.push_screen(ExportReport(lines))  # no toast: it would cover the report
            return
        self.notify(
            clean(message.text),
            title="Regression tasks",
            severity=message.severity,
            markup=False,
        )


class OfferHarness(ModalScreen[bool]):
    """Nothing labeled fail here: export the harness's failures instead? (Enter yes, Esc no)."""

    BINDINGS = [
        Binding("enter", "answer(True)", "Export them", id="offer.yes"),
        Binding("escape", "answer(False)", "Cancel", id="offer.no"),
    ]
    DEFAULT_CSS = """
    OfferHarness { align: center middle; }
    OfferHarness > Static { width: 80%; max-width: 100; height: auto; border: thick $warning;
        background: $surface; padding: 1 2; }
    """

    def __init__(self, why: str, count: int) -> None:
        super().__init__()
        self.why = why
        self.count = count

    def compose(self) -> ComposeResult:
        s = "" if self.count == 1 else "s"
        yield Static(
            Text(
                f"{clean(self.why)}\n\nThe harness failed {self.count} trial{s} here that no human"
                f" labeled pass. Export {'it' if self.count == 1 else 'them'} as regression task{s}?"
                "\n\nEnter exports · Esc cancels  (the CLI: reviewer export --harness-fails)"
            )
        )

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
