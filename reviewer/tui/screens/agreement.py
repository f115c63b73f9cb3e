"""Judge vs human agreement: the report of `reviewer agreement` and its disagreements, one Enter from
their transcripts. ``r`` reloads (verdicts keep arriving while the judge runs); ``j`` / ``l`` / ``v``
step through the judges, labelers and rubric versions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import clean, safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cursor_key, cut_end, share_room, table_room
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table

if TYPE_CHECKING:
    from reviewer.workflows.agreement import AgreementReport, Disagreement


#: The most a name column (task, run, trial id) takes; the judge's rationale keeps at least
#: ``RATIONALE_MIN`` before the names give way.
NAME_ROOM = 28
RATIONALE_MIN = 20


class AgreementLoaded(Message):
    """A freshly computed report, or the one-line reason there is none."""

    def __init__(self, report: AgreementReport | None, problem: str | None = None) -> None:
        super().__init__()
        self.report = report
        self.problem = problem


class AgreementScreen(ReviewerScreen):
    """The agreement report over a table of the trials where the judge and the human differ."""

    BINDINGS = [
        Binding("enter", "open", "Transcript", id="agreement.open"),
        Binding("R", "reload", "Reload", id="agreement.reload"),
        Binding("j", "next_judge", "Judge", id="agreement.judge"),
        Binding("l", "next_labeler", "Labeler", id="agreement.labeler"),
        Binding("g", "next_rubric", "Next rubric version", id="agreement.rubric"),
        Binding("escape", "app.pop_screen", "Back", id="agreement.back"),
    ]

    DEFAULT_CSS = """
    AgreementScreen #agreement-verdict { height: auto; max-height: 8; padding: 0 1; }
    AgreementScreen #agreement-body { height: 2fr; padding: 0 1; }
    AgreementScreen #disagreements { height: 1fr; }
    """

    def __init__(
        self, judge: str | None = None, labeler: str | None = None, rubric: str | None = None
    ) -> None:
        super().__init__()
        self.judge, self.labeler, self.rubric = judge, labeler, rubric
        self.report: AgreementReport | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Judge agreement", classes="title")
        # the verdict stays in view however small the terminal: it never scrolls with the report
        yield Static("", id="agreement-verdict")
        with VerticalScroll(id="agreement-body"):
            yield Static("loading…", id="agreement-report")
        yield Table(id="disagreements", cursor_type="row", zebra_stripes=True)
        yield Static("", id="agreement-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        self._columns(self.query_one("#disagreements", DataTable), [])
        self.action_reload()

    def _columns(self, table: DataTable[Any], rows: list[Disagreement]) -> dict[str, int]:
        """The columns at this width: the two verdicts, the trial number and the id's first 8
        characters never cut, the run and the task as wide as their widest (cut in the middle when
        the screen is narrow), the judge's rationale takes the rest (cut with "…"): at 80 columns
        the verdicts stay in view whatever the names' lengths."""
        widths = {
            "n": max([1] + [len(str(d.trial)) for d in rows]),
            "human": 5,
            "judge": 5,
            "trial": 8,  # the id's start, as `reviewer trials` shows it (what `reviewer show` takes)
        }
        wants = {
            "task": min(NAME_ROOM, max([4] + [len(d.task_id) for d in rows])),
            "run": min(NAME_ROOM, max([3] + [len(d.run) for d in rows])),
        }
        room = table_room(self.size.width or 120, widths, shared=len(wants) + 1)
        shared = share_room(room, wants, RATIONALE_MIN, least=5)
        widths.update({k: shared[k] for k in wants}, why=shared["free"])
        table.clear(columns=True)
        for key, label in (
            ("task", "task"),
            ("n", Text("#", justify="right")),
            ("human", "human"),
            ("judge", "judge"),
            ("why", "judge rationale"),
            ("run", "run"),
            ("trial", "trial"),
        ):
            table.add_column(label, key=key, width=widths[key])
        return widths

    def action_reload(self) -> None:
        self.query_one("#agreement-status", Static).update("computing…")
        self.load(self.judge, self.labeler, self.rubric)

    @work(thread=True, exclusive=True, exit_on_error=False, group="agreement-load")
    def load(self, judge: str | None, labeler: str | None, rubric: str | None) -> None:
        from reviewer.workflows.agreement import (
            DEFAULT_THRESHOLD,
            UnknownScope,
            agreement_report,
            configured_threshold,
        )

        threshold, problem = configured_threshold(self.app.settings)
        if problem is not None:
            problem = f"threshold {DEFAULT_THRESHOLD} used: {problem}"
        with self.store() as db:
            try:
                report = agreement_report(
                    db, judge=judge, labeler=labeler, rubric=rubric, threshold=threshold
                )
            except UnknownScope as e:
                self.post_message(AgreementLoaded(None, str(e)))
                return
        self.post_message(AgreementLoaded(report, problem))

    def on_agreement_loaded(self, message: AgreementLoaded) -> None:
        status = self.query_one("#agreement-status", Static)
        if message.report is None:
            status.update(safe_text(message.problem or "", single_line=True))
            return
        self.report = message.report
        self.query_one("#agreement-report", Static).update(
            Text(clean(message.report.render(disagreements=False, keys=True)))
        )
        agreement = message.report.agreement
        style = {"trusted": "bold green", "not trusted": "bold red"}.get(agreement.status, "bold")
        verdict = Text(clean(agreement.verdict_line), style=style)
        verdict.append("\n" + clean(agreement.plain), style="")
        self.query_one("#agreement-verdict", Static).update(verdict)
        self._fill_table(message.report)
        table = self.query_one("#disagreements", DataTable)
        if table.row_count:
            table.focus()
        n = len(message.report.disagreements)
        line = f"{n} disagreement{'' if n == 1 else 's'} · Enter: transcript · R reload"
        line += " · j judge · l labeler · g rubric version"
        if message.problem:
            line = f"{message.problem} · {line}"
        status.update(safe_text(line, single_line=True))

    def _fill_table(self, report: AgreementReport) -> None:
        from reviewer.text import distinct_elisions

        table = self.query_one("#disagreements", DataTable)
        rows = report.disagreements
        widths = self._columns(table, rows)
        names = {
            key: distinct_elisions(
                sorted({clean(getattr(d, field), single_line=True) for d in rows}), widths[key]
            )
            for key, field in (("task", "task_id"), ("run", "run"))
        }
        for d in rows:
            table.add_row(
                Text(names["task"][clean(d.task_id, single_line=True)], no_wrap=True),
                Text(str(d.trial), justify="right"),
                Text(d.human, style="green" if d.human == "pass" else "red"),
                Text(d.judge, style="green" if d.judge == "pass" else "red"),
                cut_end(safe_text(d.rationale, single_line=True, limit=400), widths["why"]),
                Text(names["run"][clean(d.run, single_line=True)], no_wrap=True),
                safe_text(d.trial_id[:8], single_line=True),
                key=d.trial_id,
            )

    def on_resize(self) -> None:
        if self.report is not None and self.report.disagreements:
            table = self.query_one("#disagreements", DataTable)
            keep = table.cursor_row
            self._fill_table(self.report)
            table.move_cursor(row=min(max(keep, 0), table.row_count - 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open(self) -> None:
        trial_id = cursor_key(self.query_one("#disagreements", DataTable))
        if trial_id is not None:
            self._open(trial_id)

    def _open(self, trial_id: str) -> None:
        from reviewer.tui.nav import ListSequence
        from reviewer.tui.screens.transcript import TranscriptScreen

        ids = [d.trial_id for d in self.report.disagreements] if self.report else [trial_id]
        self.app.push_screen(TranscriptScreen(trial_id, ListSequence(ids)))

    def action_next_judge(self) -> None:
        if self.report is not None:
            self.judge = self._step(list(self.report.data.judges), self.report.data.judge, "judge")
            self.action_reload()

    def action_next_labeler(self) -> None:
        if self.report is not None:
            data = self.report.data
            self.labeler = self._step(list(data.labelers), data.labeler, "labeler")
            self.action_reload()

    def action_next_rubric(self) -> None:
        if self.report is not None:
            data = self.report.data
            refs = sorted({*data.other_rubrics, *([data.rubric] if data.rubric else [])})
            self.rubric = self._step(refs, data.rubric, "rubric version")
            self.action_reload()

    def _step(self, options: list[str], current: str | None, what: str) -> str | None:
        """The option after ``current`` (wrapping); ``current`` itself when there is no other."""
        if len(options) < 2:
            self.notify(f"there is no other {what} to compare", severity="warning")
            return current
        i = options.index(current) if current in options else -1
        return options[(i + 1) % len(options)]
