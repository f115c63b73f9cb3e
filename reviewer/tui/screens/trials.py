"""The trials list: filter by outcome, judge, label, violations and full-text search; one keyset page of
200 rows at a time ("rows 1–200 of 98,213"); Enter opens the transcript, which steps through this list."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, Static
from textual.worker import get_current_worker

from reviewer.store.trial_list import FilterSequence, Page, SearchError, TrialFilter, TrialRow
from reviewer.tui.export_action import ExportMixin, ExportScope
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import money, num

if TYPE_CHECKING:
    pass

PAGE_SIZE = 200
_CYCLES: dict[str, list[Any]] = {
    "outcome": [None, "pass", "fail", "infra", "unscored"],
    "verdict": [None, "pass", "fail", "error", "none"],
    "label": [None, "pass", "fail", "skip", "none"],
}
_VERDICT_STYLES = {"pass": "green", "fail": "red", "error": "yellow", "skip": "dim"}
Cursor = Literal["first", "last", "keep"]


@dataclass(frozen=True)
class PageRequest:
    """One page to load: where it starts, how many rows lie before it when known, where the cursor goes."""

    filter: TrialFilter
    generation: int
    after_seq: int | None = None
    before_seq: int | None = None
    known_before: int | None = None
    cursor: Cursor = "first"
    keep_id: str | None = None
    turning: bool = False  # a next / previous page: an empty answer keeps the page shown


class PageLoaded(Message):
    def __init__(self, request: PageRequest, page: Page) -> None:
        super().__init__()
        self.request = request
        self.page = page


class PageFailed(Message):
    def __init__(self, request: PageRequest, error: str) -> None:
        super().__init__()
        self.request = request
        self.error = error


class TrialTable(DataTable[Text]):
    """A DataTable whose page keys at its last (first) row ask the screen for the next (previous) page."""

    class Edge(Message):
        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def action_page_down(self) -> None:
        if self.row_count and self.cursor_row >= self.row_count - 1:
            self.post_message(self.Edge(1))
        else:
            super().action_page_down()

    def action_page_up(self) -> None:
        if self.row_count and self.cursor_row <= 0:
            self.post_message(self.Edge(-1))
        else:
            super().action_page_up()


def describe(f: TrialFilter) -> str:
    """The active filters as plain text (shown through safe_text: run names and search are untrusted)."""
    parts = []
    for name, label in (("run", "run"), ("task_id", "task"), ("outcome", "outcome")):
        if getattr(f, name) is not None:
            parts.append(f"{label}={getattr(f, name)}")
    if f.verdict is not None:
        parts.append(f"judge{'[' + f.judge + ']' if f.judge else ''}={f.verdict}")
    if f.label is not None:
        parts.append(f"label{'[' + f.labeler + ']' if f.labeler else ''}={f.label}")
    if f.cluster_id is not None:
        parts.append(f"cluster={f.cluster_id}")
    if f.rule_id is not None:
        parts.append("violations=any" if f.rule_id == "any" else f"rule={f.rule_id}")
    if f.search:
        parts.append(f"search={f.search!r}")
    return " · ".join(parts)


_OUTCOME_CELLS = {
    "pass": ("● pass", "green"),
    "fail": ("○ fail", "red"),
    "infra": ("⚠ infra", "yellow"),  # the harness crashed: not the agent's failure
    "unscored": ("· unscored", "dim"),
}


def _outcome(r: TrialRow) -> Text:
    text, style = _OUTCOME_CELLS.get(r.outcome, _OUTCOME_CELLS["pass" if r.success else "fail"])
    return Text(text, style=style)


def _verdict(v: str | None) -> Text:
    return (
        Text("-", style="dim") if v is None else safe_text(v, _VERDICT_STYLES.get(v, ""), limit=6)
    )


def _cells(r: TrialRow) -> list[Text]:
    return [
        safe_text(r.run, single_line=True, limit=20),
        safe_text(r.task_id, single_line=True, limit=28),
        Text(str(r.trial), justify="right"),
        _outcome(r),
        _verdict(r.verdict),
        _verdict(r.label),
        Text(str(r.steps), justify="right"),
        money(r.cost_usd),
        num(r.latency_s, "{:.1f}s"),
        Text(str(r.violations) if r.violations else "-", justify="right", style="yellow"),
        safe_text(r.reason or "", "dim", single_line=True, limit=40),
    ]


class TrialsScreen(ExportMixin, ReviewerScreen):
    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="trials.search"),
        Binding("o", "cycle('outcome')", "Outcome", id="trials.outcome"),
        Binding("v", "cycle('verdict')", "Judge", id="trials.verdict"),
        Binding("l", "cycle('label')", "Label", id="trials.label"),
        Binding("x", "violations", "Violations", id="trials.violations"),
        Binding("c", "clear", "Clear", id="trials.clear"),
        Binding("right_square_bracket", "turn(1)", "Next page", id="trials.next_page"),
        Binding("left_square_bracket", "turn(-1)", "Prev page", id="trials.prev_page"),
        Binding("r", "reload", "Reload", id="trials.reload", show=False),
        Binding("T", "export_tasks", "Export tasks", show=False, id="trials.export"),
        Binding("escape", "back", "Back", id="trials.back"),
    ]

    def __init__(self, filter: TrialFilter | None = None, title: str = "Trials") -> None:
        super().__init__()
        self.initial = filter or TrialFilter()
        self.filter = self.initial  # what the table shows
        self.pending = self.initial  # what was asked for last (keys pressed while a page loads)
        self.title_text = title
        self.page: Page | None = None
        self.generation = 0
        self._opened = False

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(safe_text(self.title_text, single_line=True), classes="title")
        yield Input(
            value=self.initial.search or "",
            placeholder='/ search transcripts: words, "a phrase", refund*, a OR b — Enter applies',
            id="trials-search",
            compact=True,
        )
        yield Static("", id="trials-filters", classes="status")
        yield TrialTable(id="trials", cursor_type="row", zebra_stripes=True)
        yield Static("loading…", id="trials-status", classes="status")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(TrialTable)
        for key, label, right in (
            ("run", "run", False),
            ("task", "task", False),
            ("trial", "#", True),
            ("outcome", "outcome", False),
            ("judge", "judge", False),
            ("label", "label", False),
            ("steps", "steps", True),
            ("cost", "cost", True),
            ("latency", "latency", True),
            ("rules", "rules", True),
            ("reason", "reason", False),
        ):
            table.add_column(Text(label, justify="right" if right else "left"), key=key)
        table.focus()
        self._show_filters(self.initial)
        self._request(self.initial)

    # ---- loading ---------------------------------------------------------------------------------

    def _request(self, f: TrialFilter, **where: Any) -> None:
        self.generation += 1
        self.pending = f
        self.query_one("#trials-status", Static).update("loading…")
        self.load_page(PageRequest(f, self.generation, **where))

    @work(thread=True, exclusive=True, exit_on_error=False, group="trials-page")
    def load_page(self, request: PageRequest) -> None:
        from reviewer.store.trial_list import page

        worker = get_current_worker()
        with self.store() as db:
            try:
                result = page(
                    db,
                    request.filter,
                    after_seq=request.after_seq,
                    before_seq=request.before_seq,
                    limit=PAGE_SIZE,
                    known_before=request.known_before,
                )
            except SearchError as e:
                self.post_message(PageFailed(request, str(e)))
                return
        if not worker.is_cancelled:
            self.post_message(PageLoaded(request, result))

    def on_page_failed(self, message: PageFailed) -> None:
        if message.request.generation != self.generation:
            return
        self.pending = self.filter
        self._show_filters(self.filter)
        self.query_one("#trials-status", Static).update(
            safe_text(message.error, "red", single_line=True)
        )

    def on_page_loaded(self, message: PageLoaded) -> None:
        request, page = message.request, message.page
        if request.generation != self.generation:
            return
        if request.turning and not page.rows and self.page is not None:
            self.page = replace(self.page, total=page.total)
            self._show_status("no more rows that way")
            return
        self.filter, self.page = request.filter, page
        self._show_filters(self.filter)
        table = self.query_one(TrialTable)
        table.clear()
        models = any(r.model for r in page.rows)
        if models and "model" not in table.columns:
            table.add_column("model", key="model")  # Inspect logs name the model of each sample
        with_model = "model" in table.columns
        for r in page.rows:
            cells = _cells(r)
            if with_model:
                cells.append(safe_text(r.model or "", single_line=True, limit=28))
            table.add_row(*cells, key=r.id)
        if page.rows:
            row = 0 if request.cursor == "first" else len(page.rows) - 1
            if request.cursor == "keep" and request.keep_id is not None:
                row = next((i for i, r in enumerate(page.rows) if r.id == request.keep_id), 0)
            table.move_cursor(row=row)
        self._show_status()

    def _show_status(self, note: str = "") -> None:
        page = self.page
        if page is None:
            return
        if not page.rows:
            text = (
                "no trials match these filters — c clears them"
                if page.total == 0
                else "no rows here"
            )
        else:
            text = f"rows {page.first_index + 1:,}–{page.end_index:,} of {page.total:,}"
            if page.has_next or page.has_previous:
                text += " · ] next page · [ previous"
            text += " · Enter opens"
        self.query_one("#trials-status", Static).update(f"{text} · {note}" if note else text)

    def _show_filters(self, f: TrialFilter) -> None:
        text = describe(f)
        shown = (
            f"filters: {text}"
            if text
            else "no filters — o outcome · v judge · l label · x violations"
        )
        self.query_one("#trials-filters", Static).update(safe_text(shown, single_line=True))

    # ---- filters ---------------------------------------------------------------------------------

    def _apply(self, f: TrialFilter) -> None:
        self._show_filters(f)
        self._request(f)

    def action_cycle(self, field: str) -> None:
        values = _CYCLES[field]
        current = getattr(self.pending, field)
        nxt = values[(values.index(current) + 1) % len(values)] if current in values else None
        self._apply(replace(self.pending, **{field: nxt}))

    def action_violations(self) -> None:
        self._apply(replace(self.pending, rule_id=None if self.pending.rule_id else "any"))

    def action_clear(self) -> None:
        """Back to the filter the screen opened with; pressed again (or there), every trial."""
        target = self.initial if self.pending != self.initial else TrialFilter()
        self.query_one("#trials-search", Input).value = target.search or ""
        self._apply(target)

    def action_focus_search(self) -> None:
        self.query_one("#trials-search", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply(replace(self.pending, search=event.value.strip() or None))
        self.query_one(TrialTable).focus()

    def action_back(self) -> None:
        search = self.query_one("#trials-search", Input)
        if search.has_focus:
            search.value = self.pending.search or ""
            self.query_one(TrialTable).focus()
        else:
            self.app.pop_screen()

    def action_export_tasks(self) -> None:
        """Every trial of the list with its current filters, as regression tasks."""
        self.start_export(ExportScope("this list", filter=self.filter))

    def action_reload(self) -> None:
        self._reload()

    def _reload(self) -> None:
        """The page shown, read again (labels or verdicts may have changed), cursor on the same trial."""
        page, table = self.page, self.query_one(TrialTable)
        if page is None or not page.rows:
            self._request(self.filter)
            return
        keep = None
        if table.row_count:
            keep = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        self._request(
            self.filter,
            after_seq=page.rows[0].seq - 1,
            known_before=page.first_index,
            cursor="keep",
            keep_id=keep,
        )

    # ---- paging ----------------------------------------------------------------------------------

    def action_turn(self, step: int) -> None:
        page = self.page
        if page is None or not page.rows:
            return
        if step > 0 and page.has_next:
            self._request(
                self.filter, after_seq=page.rows[-1].seq, known_before=page.end_index, turning=True
            )
        elif step < 0 and page.has_previous:
            self._request(
                self.filter,
                before_seq=page.rows[0].seq,
                known_before=page.first_index,
                cursor="last",
                turning=True,
            )
        else:
            self._show_status("this is the last page" if step > 0 else "this is the first page")

    def on_trial_table_edge(self, event: TrialTable.Edge) -> None:
        self.action_turn(event.step)

    # ---- opening ---------------------------------------------------------------------------------

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.open_trial(str(event.row_key.value))

    def open_trial(self, trial_id: str) -> None:
        """Show the transcript; its next / previous follow this list with its current filters."""
        from reviewer.tui.screens.transcript import TranscriptScreen

        self._opened = True
        self.app.push_screen(TranscriptScreen(trial_id, FilterSequence(self.filter)))

    def on_screen_resume(self) -> None:
        if self._opened:  # back from the transcript: labels may have been given there
            self._opened = False
            self._reload()
