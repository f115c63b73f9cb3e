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
from textual.widgets import DataTable, Header, Input, Static
from textual.worker import get_current_worker

from reviewer.text import seconds_text
from reviewer.tui.export_action import ExportMixin, ExportScope
from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.cells import cut_end, money, share_room
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.workflows.trials import (
    FilterSequence,
    Page,
    SearchError,
    Snippet,
    TrialFilter,
    TrialRow,
    said_column,
)

if TYPE_CHECKING:
    pass

PAGE_SIZE = 200
SNIPPET_CHARS = 160
#: the widest the run and task columns get before the reason takes the rest
RUN_CHARS = 20
TASK_CHARS = 28
_CYCLES: dict[str, list[Any]] = {
    "outcome": [None, "pass", "fail", "infra", "unscored"],
    "verdict": [None, "pass", "fail", "error", "none"],
    "label": [None, "pass", "fail", "skip", "none"],
}
_VERDICT_STYLES = {"pass": "green", "fail": "red", "error": "yellow", "skip": "dim"}
#: what ``s`` steps through: the order imported, then each measure with the worst first
SORTS: list[Any] = [None, "cost", "latency", "steps", "tool_errors"]
SORT_NAMES = {
    "cost": "cost, highest first",
    "latency": "latency, slowest first",
    "steps": "steps, most first",
    "tool_errors": "tool errors, most first",
}
Cursor = Literal["first", "last", "keep"]


@dataclass(frozen=True)
class PageRequest:
    """One page to load: where it starts, how many rows lie before it when known, where the cursor goes."""

    filter: TrialFilter
    generation: int
    after_seq: int | None = None
    before_seq: int | None = None
    from_seq: int | None = None  # the page shown, read again from its first row
    known_before: int | None = None
    cursor: Cursor = "first"
    keep_id: str | None = None
    turning: bool = False  # a next / previous page: an empty answer keeps the page shown


class PageLoaded(Message):
    def __init__(
        self, request: PageRequest, page: Page, snippets: dict[str, Snippet] | None = None
    ) -> None:
        super().__init__()
        self.request = request
        self.page = page
        self.snippets = snippets or {}


def snippet_text(snip: Snippet) -> Text:
    """The snippet as plain text with the words found highlighted (cleaned piece by piece)."""
    text, spans = snip
    out = Text(style="dim")
    at = 0
    for a, b in spans:
        if a < at:
            continue
        out.append_text(safe_text(text[at:a], "dim", single_line=True))
        out.append_text(safe_text(text[a:b], "bold black on yellow", single_line=True))
        at = b
    out.append_text(safe_text(text[at:], "dim", single_line=True))
    return out


class PageFailed(Message):
    def __init__(self, request: PageRequest, error: str) -> None:
        super().__init__()
        self.request = request
        self.error = error


class TrialTable(Table[Text]):
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
        parts.append(f"search={f.search!r}" + (" (system prompt too)" if f.search_system else ""))
    return " · ".join(parts)


def describe_sort(f: TrialFilter) -> str:
    """The list's order, in words ("" for the order the trials were imported in)."""
    if f.sort is None:
        return ""
    name = SORT_NAMES[f.sort]
    if f.ascending:
        name = name.split(",")[0] + ", lowest first"
    return f"sorted by {name}"


_OUTCOME_CELLS = {
    "pass": ("● pass", "green"),
    "fail": ("○ fail", "red"),
    "infra": ("⚠ infra", "yellow"),  # the harness crashed: not the agent's failure
    "unscored": ("· unscored", "dim"),
}


def _outcome(r: TrialRow) -> Text:
    from reviewer.models import stored_outcome

    text, style = _OUTCOME_CELLS[stored_outcome(r.outcome, r.success)]
    return Text(text, style=style)


def _verdict(v: str | None) -> Text:
    return (
        Text("-", style="dim") if v is None else safe_text(v, _VERDICT_STYLES.get(v, ""), limit=6)
    )


def _cells(r: TrialRow, snip: Snippet | None = None, said: str = "reason") -> dict[str, Text]:
    """Every column's cell of a row (the table shows the columns that fit); SAID: what the last
    column shows (``workflows.trials.said_column``)."""
    return {
        "run": safe_text(r.run, single_line=True, limit=200),
        "task": safe_text(r.task_id, single_line=True, limit=200),
        "trial": Text(str(r.trial), justify="right"),
        "outcome": _outcome(r),
        "judge": _verdict(r.verdict),
        "label": _verdict(r.label),
        "steps": Text(str(r.steps), justify="right"),
        "cost": money(r.cost_usd),
        "latency": Text("-" if r.latency_s is None else seconds_text(r.latency_s), justify="right"),
        "rules": Text(str(r.violations) if r.violations else "-", justify="right", style="yellow"),
        "errors": Text(str(r.tool_errors) if r.tool_errors else "-", justify="right", style="red"),
        "reason": snippet_text(snip)
        if snip is not None
        else safe_text(
            (r.prompt if said == "prompt" else r.reason) or "", "dim", single_line=True, limit=400
        ),
        "model": safe_text(r.model or "", single_line=True, limit=28),
    }


def _distinct_names(rows: list[TrialRow], widths: dict[str, int]) -> dict[str, dict[str, str]]:
    """The run and task names of a page that are wider than their columns, cut in the middle and
    never two shown alike (as the runs screen does): cut at their ends, ``support-v1`` and
    ``support-v2`` both read ``support-``, and tasks ``_01`` and ``_02`` one task."""
    from reviewer.text import distinct_elisions

    out: dict[str, dict[str, str]] = {}
    for key, names in (("run", {r.run for r in rows}), ("task", {r.task_id for r in rows})):
        width = widths.get(key)
        if not width:
            continue
        plain = {n: _cells_name(n) for n in names}
        if all(len(v) <= width for v in plain.values()):
            continue
        cut = distinct_elisions(sorted(set(plain.values())), width)
        out[key] = {n: cut[v] for n, v in plain.items()}
    return out


def _cells_name(name: str) -> str:
    return safe_text(name, single_line=True, limit=200).plain


#: (key, label, right-aligned): the columns before the reason, in order
_COLUMNS: list[tuple[str, str, bool]] = [
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
    ("errors", "errors", True),
]
#: the least the reason (or search match) keeps before the run and task columns give way
REASON_MIN = 24
#: below this width the numbers go to the line under the table (the transcript shows them too)
NARROW = 110
_NUMBERS = ("steps", "cost", "latency", "rules", "errors")


def column_widths(
    rows: list[TrialRow], total: int, f: TrialFilter, model: bool = False
) -> dict[str, int]:
    """The columns shown and their widths, so the reason (or search match) column takes every free
    cell of ``total``: a column the filter fixes (the run, the task: the title names them) is left
    out, the numbers move under the table on a narrow terminal, and run and task give way before
    the reason does."""
    from rich.cells import cell_len

    from reviewer.text import visible

    cells = [_cells(r) for r in rows]

    def want(key: str, header: str, cap: int = 1000) -> int:
        widest = max([cell_len(c[key].plain) for c in cells] + [len(header)])
        return min(cap, widest)

    widths: dict[str, int] = {}
    for key, header, _ in _COLUMNS:
        if key == "run" and f.run is not None:
            continue
        if key == "task" and f.task_id is not None:
            continue
        if key in _NUMBERS and total < NARROW:
            continue
        if key == "rules" and not any(r.violations for r in rows):
            continue  # no violation on the page: the column would be all "-"
        if key == "errors" and f.sort != "tool_errors":
            continue  # a column when the list is sorted by it; the line under the table says it
        widths[key] = want(key, header)
    if model:
        widths["model"] = want("model", "model", 20)
    pad = 2  # DataTable's cell padding, one each side
    fixed = sum(w for k, w in widths.items() if k not in ("run", "task"))
    free = total - fixed - pad * (len(widths) + 1) - 2  # the reason column, the scrollbar
    # run and task keep their whole names while the reason keeps REASON_MIN; then they give way
    wants: dict[str, int] = {k: widths[k] for k in ("run", "task") if k in widths}
    # a page without a reason (Claude Code sessions, unscored logs) gives its names the room; its
    # first prompts, if shown, take what the names leave
    least_reason = REASON_MIN if f.search or any(r.reason for r in rows) else len("reason")
    shared = share_room(free, wants, least_reason, least=4)
    widths.update({k: shared[k] for k in wants})
    widths["reason"] = shared["free"]
    del visible
    return widths


class TrialsScreen(ExportMixin, ReviewerScreen):
    BINDINGS = [
        Binding("slash", "focus_search", "Search", id="trials.search"),
        Binding("o", "cycle('outcome')", "Outcome", id="trials.outcome"),
        Binding("j", "cycle('verdict')", "Judge", id="trials.verdict"),
        Binding("l", "cycle('label')", "Label", id="trials.label"),
        Binding("exclamation_mark", "violations", "Violations", id="trials.violations"),
        Binding("s", "sort", "Sort", id="trials.sort"),
        Binding("I", "system_prompt", "System prompt", show=False, id="trials.system"),
        Binding("backspace", "clear", "Clear", id="trials.clear"),
        Binding("pagedown", "turn(1)", "Next page", show=False, id="trials.next_page"),
        Binding("pageup", "turn(-1)", "Prev page", show=False, id="trials.prev_page"),
        Binding("R", "reload", "Reload", id="trials.reload", show=False),
        Binding("T", "export_tasks", "Export tasks", show=False, id="trials.export"),
        Binding("escape", "back", "Back", id="trials.back"),
    ]

    DEFAULT_CSS = """
    TrialsScreen #trials-detail { height: auto; max-height: 3; padding: 0 1; }
    TrialsScreen #trials-detail.-empty { display: none; }
    """

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
            placeholder='/ search conversations: words, "a phrase", refund*, a OR b — Enter applies · '
            "I: the system prompt too",
            id="trials-search",
            compact=True,
        )
        yield Static("", id="trials-filters", classes="status")
        yield TrialTable(id="trials", cursor_type="row", zebra_stripes=True)
        yield Static("", id="trials-detail", classes="detail")
        yield Static("loading…", id="trials-status", classes="status")
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one(TrialTable)
        self.snippets: dict[str, Snippet] = {}
        self._widths: dict[str, int] = {}
        self._columns_key: tuple[Any, ...] = ()
        self._said = "reason"  # what the last column shows (workflows.trials.said_column)
        self._set_columns(table, [])
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
        from reviewer.workflows.trials import match_snippets, page

        worker = get_current_worker()
        with self.store() as db:
            try:
                result = page(
                    db,
                    request.filter,
                    after_seq=request.after_seq,
                    before_seq=request.before_seq,
                    from_seq=request.from_seq,
                    limit=PAGE_SIZE,
                    known_before=request.known_before,
                )
            except SearchError as e:
                self.post_message(PageFailed(request, str(e)))
                return
            snippets: dict[str, Snippet] = {}
            if request.filter.search and not worker.is_cancelled:
                snippets = match_snippets(
                    db,
                    result.rows,
                    request.filter.search,
                    system=request.filter.search_system,
                    width=SNIPPET_CHARS,
                )
        if not worker.is_cancelled:
            self.post_message(PageLoaded(request, result, snippets))

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
        self.snippets = message.snippets
        self._show_filters(self.filter)
        row = 0
        if page.rows:
            row = 0 if request.cursor == "first" else len(page.rows) - 1
            if request.cursor == "keep" and request.keep_id is not None:
                row = next((i for i, r in enumerate(page.rows) if r.id == request.keep_id), 0)
        self._fill(row)
        self._show_status()

    def _set_columns(self, table: DataTable[Text], rows: list[TrialRow]) -> None:
        """The columns at this width: the reason (the search match when searching) takes the rest."""
        # Inspect logs name the model of each sample: a column when it tells trials apart
        model = len({r.model for r in rows if r.model}) > 1
        widths = column_widths(rows, self.size.width or 120, self.filter, model)
        self._said = said_column(rows, self.filter.search)
        shape = (tuple(widths.items()), self._said)
        if shape == self._columns_key and table.columns:
            return
        self._widths, self._columns_key = widths, shape
        table.clear(columns=True)
        for key, label, right in _COLUMNS:
            if key in widths:
                table.add_column(
                    Text(label, justify="right" if right else "left"), key=key, width=widths[key]
                )
        table.add_column(self._said, key="reason", width=widths["reason"])
        if model:
            table.add_column("model", key="model", width=widths["model"])

    def _fill(self, cursor_row: int | None = None) -> None:
        page = self.page
        table = self.query_one(TrialTable)
        if cursor_row is None:
            cursor_row = table.cursor_row if table.row_count else 0
        table.clear()
        rows = page.rows if page is not None else []
        self._set_columns(table, rows)
        keys = [str(k.value) for k in table.columns]
        shown = _distinct_names(rows, self._widths)
        for r in rows:
            cells = _cells(r, self.snippets.get(r.id), self._said)
            for key, name in (("run", r.run), ("task", r.task_id)):
                cut = shown.get(key, {}).get(name)
                if cut is not None:
                    cells[key] = Text(cut, no_wrap=True)
            cells["reason"] = cut_end(cells["reason"], self._widths["reason"])
            if "model" in self._widths:  # cut with "…", never silently at the column's edge
                cells["model"] = cut_end(cells["model"], self._widths["model"])
            table.add_row(*(cells[k] for k in keys), key=r.id)
        if rows:
            table.move_cursor(row=min(cursor_row, len(rows) - 1))
        self._show_detail()

    def on_resize(self) -> None:
        if self.page is not None:
            self._fill()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def _show_detail(self) -> None:
        """The highlighted trial's whole reason, or its search match, under the table."""
        detail = self.query_one("#trials-detail", Static)
        table = self.query_one(TrialTable)
        page = self.page
        if page is None or not table.row_count or not page.rows:
            detail.update("")
            detail.add_class("-empty")
            return
        r = page.rows[min(table.cursor_row, len(page.rows) - 1)]
        snip = self.snippets.get(r.id)
        out = Text("")
        if "run" not in table.columns or "task" not in table.columns:
            pass  # the title names them
        else:
            out.append_text(safe_text(f"{r.run} › {r.task_id} › {r.trial}  ", single_line=True))
        cells = _cells(r)
        missing = [k for k in _NUMBERS if k not in table.columns]  # narrow: what the table left out
        if missing:
            # a count of none is 0 here: the table's "-" for it would read as unknown, beside the
            # "-" of a cost or latency nobody recorded
            counts = {"rules": r.violations, "errors": r.tool_errors}
            out.append(" · ".join(f"{k} {counts.get(k, cells[k].plain)}" for k in missing) + "  ")
        if snip is not None:
            out.append("match: ", "bold")
            out.append_text(snippet_text(snip))
        elif r.reason:
            out.append("reason: ", "bold")
            out.append_text(safe_text(r.reason, single_line=True, limit=400))
        elif r.prompt:  # a session with no outcome: its first prompt tells it apart
            out.append("prompt: ", "bold")
            out.append_text(safe_text(r.prompt, single_line=True, limit=400))
        detail.update(out)
        detail.set_class(not out.plain, "-empty")

    def _show_status(self, note: str = "") -> None:
        page = self.page
        if page is None:
            return
        if not page.rows:
            if page.total:
                text = "no rows here"
            elif self.filter.is_empty:
                text = "no trials yet: import a run first (i on the runs screen, or reviewer import PATH)"
            else:
                text = "no trials match these filters — Backspace clears them"
        else:
            text = f"rows {page.first_index + 1:,}–{page.end_index:,} of {page.total:,}"
            if page.has_next or page.has_previous:
                text += " · PgDn past the last row: next page · PgUp previous"
            text += " · Enter opens"
        self.query_one("#trials-status", Static).update(f"{text} · {note}" if note else text)

    def _show_filters(self, f: TrialFilter) -> None:
        text = describe(f)
        shown = (
            f"filters: {text}"
            if text
            else "no filters — o outcome · j judge · l label · ! violations · / search"
        )
        order = describe_sort(f)
        shown += f" · {order} (s: next order)" if order else " · s sorts"
        self.query_one("#trials-filters", Static).update(safe_text(shown, single_line=True))

    # ---- filters ---------------------------------------------------------------------------------

    def _apply(self, f: TrialFilter) -> None:
        self._show_filters(f)
        self._request(f)

    def action_cycle(self, field: str) -> None:
        values = _CYCLES[field]
        current = getattr(self.pending, field)
        nxt = values[(values.index(current) + 1) % len(values)] if current in values else None
        self._apply(replace(self.pending, **{field: nxt}))  # type: ignore[arg-type]

    def action_system_prompt(self) -> None:
        """Search the system prompt too (or again only the conversation)."""
        on = not self.pending.search_system
        self.notify(
            "search: the system prompt too"
            if on
            else "search: the conversation only (not the system prompt)"
        )
        self._apply(replace(self.pending, search_system=on))

    def action_sort(self) -> None:
        """The next order: cost, latency, steps, tool errors (the worst first), then as imported."""
        current = self.pending.sort
        nxt = SORTS[(SORTS.index(current) + 1) % len(SORTS)] if current in SORTS else None
        self._apply(replace(self.pending, sort=nxt, ascending=False))

    def action_violations(self) -> None:
        self._apply(replace(self.pending, rule_id=None if self.pending.rule_id else "any"))

    def action_clear(self) -> None:
        """Back to the filter the screen opened with; pressed again (or there), every trial (in the
        same order: the sort is not a filter)."""
        target = self.initial if self.pending != self.initial else TrialFilter()
        target = replace(target, sort=self.pending.sort, ascending=self.pending.ascending)
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
            from_seq=page.rows[0].seq,
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
