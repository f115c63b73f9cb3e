"""Position bias: the MT-Bench table per judge and the pairs whose winner changed with the order;
Enter opens a pair side by side (A | B) with the judge's rationale for each order."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Header, Static

from reviewer.tui.safe import safe_text
from reviewer.tui.screens.base import ReviewerScreen
from reviewer.tui.widgets.footer import KeyFooter
from reviewer.tui.widgets.table import Table
from reviewer.tui.widgets.transcript import TranscriptView

if TYPE_CHECKING:
    from reviewer.tui.screens.transcript import TrialPayload
    from reviewer.workflows.bias import PairRow

#: Inconsistent pair judgements listed at most (the report counts them all).
MAX_ROWS = 1000


@dataclass(frozen=True)
class PairLine:
    """One row of the inconsistent-pairs list."""

    judge: str
    pair_id: str
    task_id: str | None
    category: str
    order_ab: str | None
    order_ba: str | None
    human: str | None


class BiasLoaded(Message):
    def __init__(self, report: str, lines: list[PairLine], total: int) -> None:
        super().__init__()
        self.report = report
        self.lines = lines
        self.total = total


def _winner(value: str | None) -> Text:
    return safe_text("-" if value is None else value, "" if value else "red", single_line=True)


class BiasScreen(ReviewerScreen):
    """Every judge's consistency table, then the inconsistent pairs (Enter: side by side)."""

    BINDINGS = [
        Binding("enter", "open", "Side by side", id="bias.open"),
        Binding("escape", "app.pop_screen", "Back", id="bias.back"),
    ]

    DEFAULT_CSS = """
    BiasScreen #bias-report-scroll { height: auto; max-height: 60%; }
    BiasScreen #bias-report { height: auto; padding: 0 1; }
    """

    def __init__(self, judge: str | None = None) -> None:
        super().__init__()
        self.judge = judge
        self.lines: list[PairLine] = []

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("Position bias", classes="title")
        with VerticalScroll(id="bias-report-scroll"):
            yield Static("loading…", id="bias-report")
        yield Static("", id="bias-status", classes="status")
        yield Table(id="bias-pairs", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        table = self.query_one("#bias-pairs", DataTable)
        for label in ("judge", "pair", "task", "kind", "AB", "BA", "human"):
            table.add_column(label, key=label)
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="bias-load")
    def load(self) -> None:
        from reviewer.workflows.bias import CATEGORY_NAMES, position_bias

        with self.store() as db:
            view = position_bias(db, self.judge)
        lines = [
            PairLine(
                r.judge, r.pair_id, r.task_id, CATEGORY_NAMES[cat], r.order_ab, r.order_ba, r.human
            )
            for r, cat in view.inconsistent
        ]
        self.post_message(BiasLoaded(view.text, lines[:MAX_ROWS], len(lines)))

    def on_bias_loaded(self, message: BiasLoaded) -> None:
        self.lines = message.lines
        self.query_one("#bias-report", Static).update(safe_text(message.report))
        table = self.query_one("#bias-pairs", DataTable)
        table.clear()
        for i, p in enumerate(message.lines):
            table.add_row(
                safe_text(p.judge, single_line=True, limit=40),
                safe_text(p.pair_id, single_line=True, limit=30),
                safe_text(p.task_id or "-", single_line=True, limit=30),
                Text(p.category),
                _winner(p.order_ab),
                _winner(p.order_ba),
                _winner(p.human),
                key=str(i),
            )
        status = self.query_one("#bias-status", Static)
        if not message.total:
            status.update("No inconsistent pair judgements.")
        else:
            shown = (
                f" (the first {len(message.lines)} listed)"
                if message.total > len(message.lines)
                else ""
            )
            status.update(
                f"{message.total} pair judgements not consistent{shown} · Enter: side by side"
            )
        table.focus()

    def _current(self) -> PairLine | None:
        table = self.query_one("#bias-pairs", DataTable)
        if not table.row_count:
            return None
        return self.lines[table.cursor_coordinate.row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_open()

    def action_open(self) -> None:
        p = self._current()
        if p is not None:
            self.app.push_screen(PairScreen(p.pair_id, p.judge))


# --- one pair side by side -----------------------------------------------------------------------


class PairLoaded(Message):
    def __init__(self, row: PairRow | None, a: TrialPayload | None, b: TrialPayload | None) -> None:
        super().__init__()
        self.row = row
        self.a = a
        self.b = b


def rationale_text(row: PairRow) -> Text:
    """Both orders' winners and rationales, the kind of pair and the human preference."""
    from reviewer.workflows.bias import CATEGORY_NAMES, classify, is_rating_judge

    out = Text()
    out.append(
        CATEGORY_NAMES[classify(row.order_ab, row.order_ba, is_rating_judge(row.judge))], "bold"
    )
    out.append("   human: ")
    out.append_text(_winner(row.human))
    for order, first, winner, why in (
        ("AB", "a", row.order_ab, row.rationale_ab),
        ("BA", "b", row.order_ba, row.rationale_ba),
    ):
        out.append(f"\norder {order} ({first} shown first): winner ", "bold")
        out.append_text(_winner(winner))
        out.append(" — ")
        out.append_text(safe_text(why or "(no rationale)", single_line=True, limit=600))
    return out


def side_text(side: str, ref: str | None, payload: TrialPayload | None) -> Text:
    """The head of one side: its trial (run › task › trial, outcome) or the ref it could not find."""
    out = Text(f"{side.upper()}  ", "bold")
    if payload is None:
        out.append("not in the store: ", "dim")
        out.append_text(safe_text(ref or "(no trial ref)", single_line=True, limit=120))
        return out
    h = payload.header
    out.append_text(
        safe_text(f"{h.run} › {h.task_id} › trial {h.trial}", single_line=True, limit=100)
    )
    word, style = {
        "infra": ("  INFRA ERROR", "bold yellow"),
        "unscored": ("  UNSCORED", "dim"),
    }.get(h.outcome, ("  PASS", "bold green") if h.success else ("  FAIL", "bold red"))
    out.append(word, style)
    return out


class PairScreen(ReviewerScreen):
    """Two trials of a pair side by side (tab moves between them), both rationales above."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="pair.back")]

    DEFAULT_CSS = """
    PairScreen #pair-rationales { height: auto; max-height: 8; padding: 0 1; background: $boost; }
    PairScreen #pair-body { height: 1fr; }
    PairScreen .pair-side { width: 1fr; }
    PairScreen #pair-side-b { border-left: solid $primary-background; }
    PairScreen .pair-head { height: 1; padding: 0 1; }
    """

    def __init__(self, pair_id: str, judge: str) -> None:
        super().__init__()
        self.pair_id = pair_id
        self.judge = judge

    def compose(self) -> ComposeResult:
        yield Static(
            safe_text(f"pair {self.pair_id} · {self.judge}", single_line=True, limit=160),
            classes="title",
            id="pair-title",
        )
        yield Static("loading…", id="pair-rationales")
        with Horizontal(id="pair-body"):
            for side in ("a", "b"):
                with Vertical(classes="pair-side", id=f"pair-side-{side}"):
                    yield Static(side.upper(), classes="pair-head", id=f"pair-head-{side}")
                    yield TranscriptView(id=f"pair-{side}")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.load()

    @work(thread=True, exclusive=True, exit_on_error=False, group="pair-load")
    def load(self) -> None:
        from reviewer.tui.screens.transcript import load_payload
        from reviewer.workflows.bias import get_pair, resolve_ref

        with self.store() as db:
            row = get_pair(db, self.pair_id, self.judge)
            payloads: list[TrialPayload | None] = []
            for ref in (row.a_trial, row.b_trial) if row is not None else ():
                tid = resolve_ref(db, ref)
                payloads.append(load_payload(db, tid, None) if tid is not None else None)
        a, b = payloads if row is not None else (None, None)
        self.post_message(PairLoaded(row, a, b))

    def on_pair_loaded(self, message: PairLoaded) -> None:
        row = message.row
        rationales = self.query_one("#pair-rationales", Static)
        if row is None:
            rationales.update(Text("this pair judgement is no longer stored", "red"))
            return
        rationales.update(rationale_text(row))
        for side, ref, payload in (("a", row.a_trial, message.a), ("b", row.b_trial, message.b)):
            self.query_one(f"#pair-head-{side}", Static).update(side_text(side, ref, payload))
            view = self.query_one(f"#pair-{side}", TranscriptView)
            view.display = payload is not None
            if payload is not None:
                view.load(
                    payload.trial, payload.violations, payload.verdicts, blocks=payload.blocks
                )
        if message.a is not None:
            self.query_one("#pair-a", TranscriptView).focus()
