"""Find in the conversation (``/``, ``n`` / ``N``) and jump between rule violations (``}`` / ``{``), as a
mixin of the transcript viewer: the matches are found over the block index (cleaned text, what is shown),
the match under the cursor and the others are highlighted as rows render, and the viewer posts
``SearchChanged`` ("3 of 17"), which every screen with a viewer shows in its ``FindLine``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from reviewer.text import elide_middle
from reviewer.tui.safe import clean, safe_text
from reviewer.tui.widgets.transcript_render import Block, line_span, row_starts

if TYPE_CHECKING:
    from reviewer.tui.widgets.transcript_render import ViolationLike

MATCH_STYLE = Style(bgcolor="yellow", color="black")
CURRENT_STYLE = Style(bgcolor="dark_orange", color="black", bold=True)
#: matches beyond this many are not counted (a one-letter search in a 20 MB transcript)
MAX_MATCHES = 10_000
#: the most characters of the query the find line shows (cut in the middle beyond)
QUERY_SHOWN = 40


@dataclass(frozen=True, slots=True)
class Match:
    block: int
    line: int
    start: int
    end: int


class SearchChanged(Message):
    """The search or its current match changed: ``index`` is 1-based (0: no match)."""

    def __init__(self, query: str, index: int, total: int, capped: bool = False) -> None:
        super().__init__()
        self.query = query
        self.index = index
        self.total = total
        self.capped = capped

    def describe(self) -> str:
        if not self.query:
            return ""
        # a long query is cut in the middle, so the count after it shows on a narrow screen
        query = repr(elide_middle(self.query, QUERY_SHOWN))
        if not self.total:
            return f"{query}: no match"
        more = "+" if self.capped else ""
        return f"{query}: {self.index} of {self.total:,}{more} · n next · N previous"


class FindLine(Static):
    """The find's line under a transcript: ``find 'refund': 3 of 17 · n next · N previous`` or
    ``find 'zebra': no match``; hidden until something is searched. The query is shown as plain text,
    never read as markup. A screen with a ``TranscriptView`` yields one and passes it each
    ``SearchChanged``."""

    DEFAULT_CSS = """
    FindLine {
        display: none;
        height: 1;
        padding: 0 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        color: $text-muted;
    }
    """

    def show(self, message: SearchChanged) -> None:
        self.update(safe_text("find " + message.describe(), single_line=True))
        self.display = bool(message.query)


class SearchPrompt(ModalScreen[str | None]):
    """One line at the bottom: type, Enter finds, Esc cancels."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="search.cancel")]
    DEFAULT_CSS = """
    SearchPrompt { align: center bottom; background: $background 0%; }
    SearchPrompt > Vertical { height: auto; width: 100%; background: $surface; padding: 0 1; }
    SearchPrompt Static { height: 1; color: $text-muted; }
    """

    def __init__(self, value: str = "") -> None:
        super().__init__()
        self.value = value

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("find in the conversation (case-insensitive) — Enter finds, Esc cancels")
            yield Input(self.value, placeholder="/ find…", id="search-input", compact=True)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


def find_matches(blocks: Sequence[Block], query: str, *, judge: bool) -> tuple[list[Match], bool]:
    """Every case-insensitive occurrence of ``query`` in the blocks' lines (judge blocks when shown)."""
    needle = query.casefold()
    out: list[Match] = []
    if not needle:
        return out, False
    for block in blocks:
        if block.pieces or block.kind == "spacer" or (block.judge and not judge):
            continue
        for i, line in enumerate(block.lines):
            hay = line.casefold()
            if len(hay) != len(line):  # casefold changed the length (ß → ss): use lower()
                hay = line.lower()
                if len(hay) != len(line):
                    continue
            at = hay.find(needle)
            while at >= 0:
                out.append(Match(block.id, i, at, at + len(needle)))
                if len(out) >= MAX_MATCHES:
                    return out, True
                at = hay.find(needle, at + max(1, len(needle)))
    return out, False


class TranscriptSearch:
    """Search and violation navigation over the viewer's blocks (mixed into ``TranscriptView``)."""

    _blocks: list[Block]
    _expanded: set[int]
    _starts: list[int]
    _cache: Any
    show_judge: bool
    cursor: int | None

    def search_reset(self, violations: Sequence[ViolationLike] = ()) -> None:
        """A new trial: the query stays (n finds it in the next trial), the matches are found again."""
        self._violation_at = sorted(
            {v.message_index for v in violations if v.message_index is not None}
        )
        # a budget rule (latency over max, ...) breaks the whole trial: marked at the top, no message
        self._violation_whole = [v for v in violations if v.message_index is None]
        query = getattr(self, "search_query", "")
        self.search_query = ""
        self._matches: list[Match] = []
        self._by_line: dict[tuple[int, int], list[int]] = {}
        self._current = -1
        if query:
            self.search(query, announce=False)

    # --- search ------------------------------------------------------------------------------------

    @property
    def matches(self) -> list[Match]:
        return list(getattr(self, "_matches", []))

    @property
    def current_match(self) -> int:
        """0-based index of the match under the cursor (-1: none)."""
        return getattr(self, "_current", -1)

    def search(self, query: str, *, announce: bool = True) -> None:
        self.search_query = query
        self._matches, capped = find_matches(self._blocks, query, judge=self.show_judge)
        self._capped = capped
        self._by_line = {}
        for n, m in enumerate(self._matches):
            self._by_line.setdefault((m.block, m.line), []).append(n)
        self._current = -1
        self._cache.clear()
        if self._matches:
            top = self._top_row()
            first = next((n for n, m in enumerate(self._matches) if self._match_row(m) >= top), 0)
            self._go(first)
        else:
            self._announce()
            cast_self: Any = self
            cast_self.refresh()

    def _top_row(self) -> int:
        cast_self: Any = self
        return int(cast_self.scroll_offset.y)

    def action_search(self) -> None:
        cast_self: Any = self

        def done(query: str | None) -> None:
            if query is not None:
                self.search(query.strip())

        cast_self.app.push_screen(SearchPrompt(getattr(self, "search_query", "")), done)

    def action_next_match(self, step: int) -> None:
        cast_self: Any = self
        if not getattr(self, "search_query", ""):
            cast_self.notify("press / to search the conversation first")
            return
        if not self._matches:
            self._announce()
            return
        self._go((self._current + step) % len(self._matches))

    def _go(self, n: int) -> None:
        cast_self: Any = self
        self._current = n
        m = self._matches[n]
        if len(self._starts) != len(self._blocks) + 1:  # not laid out yet (no width)
            self._announce()
            return
        block = self._blocks[m.block]
        if block.foldable and block.id not in self._expanded:
            anchor = cast_self._anchor()
            self._expanded.add(block.id)
            cast_self._relayout(anchor)
        row = self._match_row(m)
        height = cast_self.scrollable_content_region.height
        top = self._top_row()
        if not top <= row < top + height:
            cast_self.scroll_to(y=max(0, row - height // 3), animate=False, force=True)
        self._cache.clear()
        cast_self.refresh()
        self._announce()

    def _match_row(self, m: Match) -> int:
        """The transcript row (from the top) that shows the start of ``m`` at the current width."""
        cast_self: Any = self
        block = self._blocks[m.block]
        avail = cast_self._avail(block)
        starts = row_starts(block, avail)
        r = starts[m.line]
        line = block.lines[m.line]
        for k in range(starts[m.line + 1] - starts[m.line]):
            s, e = line_span(line, avail, k)
            if s <= m.start < max(e, s + 1):
                r = starts[m.line] + k
                break
        return self._starts[m.block] + r

    def _announce(self) -> None:
        cast_self: Any = self
        total = len(self._matches)
        index = self._current + 1 if total else 0
        cast_self.post_message(
            SearchChanged(self.search_query, index, total, getattr(self, "_capped", False))
        )

    def search_highlight(self, block: Block, line: int, start: int, end: int, text: Text) -> None:
        """Style the matches that fall in row ``[start, end)`` of ``line`` (``text`` is that row)."""
        hits = getattr(self, "_by_line", {}).get((block.id, line))
        if not hits:
            return
        for n in hits:
            m = self._matches[n]
            s, e = max(m.start, start), min(m.end, end)
            if s < e:
                style = CURRENT_STYLE if n == self._current else MATCH_STYLE
                text.stylize(style, s - start, e - start)

    # --- rule violations ---------------------------------------------------------------------------

    def action_violation(self, step: int) -> None:
        cast_self: Any = self
        marks = getattr(self, "_violation_at", [])
        whole = getattr(self, "_violation_whole", [])
        if not marks:
            if whole:  # to the ⚑ marks at the top, and say what they are
                cast_self.action_top()
                cast_self.notify(whole_trial_text(whole), markup=False)
            else:
                cast_self.notify("no rule violation in this trial")
            return
        here = cast_self._current_message()
        if step > 0:
            found = next((m for m in marks if m > here), None)
        else:
            found = next((m for m in reversed(marks) if m < here), None)
        if found is None and whole and step < 0:  # above the first message: the trial's own marks
            cast_self.action_top()
            cast_self.notify(whole_trial_text(whole), markup=False)
            return
        if found is None:
            more = f"; {whole_trial_text(whole)} ({{ goes there)" if whole else ""
            cast_self.notify(
                f"no more rule violations that way{more}", severity="warning", markup=False
            )
            return
        cast_self.scroll_to_message(found)


def whole_trial_text(whole: Sequence[ViolationLike]) -> str:
    """``1 violation of the whole trial (budget: latency 12.5s over 1s)`` for the rule marks that
    belong to no message."""
    n = len(whole)
    what = "; ".join(f"{v.rule_id}: {v.detail}" if v.detail else v.rule_id for v in whole)
    return clean(f"{n} violation{'s' * (n != 1)} of the whole trial ({what})", single_line=True)
