"""The transcript viewer: a Line-API widget that renders only the rows on screen, cached by block.

The transcript is an index of blocks (see ``transcript_render``); heights come from the wrap functions,
so opening a 2,000-message or 20 MB transcript wraps only what is visible (and a folded block's first
rows). Rendered rows are kept in an ``LRUCache`` keyed by (block, width, folded, chunk).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from rich.highlighter import JSONHighlighter
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.events import Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from reviewer.models import Trial
from reviewer.tui.widgets.transcript_render import (
    FOLD_STYLE,
    Block,
    VerdictLike,
    ViolationLike,
    build_blocks,
    fold_notice,
    fold_rows,
    line_span,
    row_starts,
)
from reviewer.tui.widgets.transcript_search import TranscriptSearch

#: rows rendered (and cached) together within one block
CHUNK = 64
#: a JSON line longer than this is shown without highlighting
HIGHLIGHT_CHARS = 2_000
CURSOR_STYLE = Style(reverse=True)

_JSON = JSONHighlighter()
Row = tuple[int, int, int]  # line index, start, end


class TranscriptView(TranscriptSearch, ScrollView, can_focus=True, inherit_bindings=False):
    """A trial's messages, tool calls, results, rule marks and judge blocks."""

    BINDINGS = [
        Binding("up", "scroll_lines(-1)", "Up", show=False, id="transcript.up"),
        Binding("down", "scroll_lines(1)", "Down", show=False, id="transcript.down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
        Binding("home", "top", "Top", show=False, id="transcript.home"),
        Binding("end", "bottom", "End", show=False, id="transcript.end"),
        Binding("e", "toggle_fold", "Fold", id="transcript.fold"),
        Binding("E", "toggle_fold_all", "Fold all", show=False, id="transcript.fold_all"),
        Binding("greater_than_sign", "tool_error(1)", "Next error", id="transcript.next_error"),
        Binding(
            "less_than_sign", "tool_error(-1)", "Prev error", show=False, id="transcript.prev_error"
        ),
        Binding("slash", "search", "Find", id="transcript.search"),
        Binding("n", "next_match(1)", "Next match", show=False, id="transcript.next_match"),
        Binding("N", "next_match(-1)", "Prev match", show=False, id="transcript.prev_match"),
        Binding(
            "right_curly_bracket",
            "violation(1)",
            "Next violation",
            show=False,
            id="transcript.next_violation",
        ),
        Binding(
            "left_curly_bracket",
            "violation(-1)",
            "Prev violation",
            show=False,
            id="transcript.prev_violation",
        ),
        Binding("J", "toggle_judge", "Judge", id="transcript.judge"),
    ]

    DEFAULT_CSS = """
    TranscriptView {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-gutter: stable;
    }
    """

    class JudgeToggled(Message):
        """The judge blocks were shown or hidden."""

        def __init__(self, shown: bool) -> None:
            super().__init__()
            self.shown = shown

    def __init__(
        self,
        trial: Trial | None = None,
        violations: Sequence[ViolationLike] = (),
        verdicts: Sequence[VerdictLike] | None = None,
        *,
        show_judge: bool = True,
        blocks: list[Block] | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.show_judge = show_judge
        #: labeling before the judge is seen: judge blocks are never drawn and `J` is off
        self.blind = False
        self.cursor: int | None = None  # message index last jumped to
        self._blocks: list[Block] = []
        self._errors: list[int] = []
        self._expanded: set[int] = set()
        self._starts: list[int] = [0]
        self._heights: list[int] = []
        self._width = 0
        self._rows_cache: dict[int, list[int]] = {}
        self._fold_cache: dict[int, tuple[list[Row], int]] = {}
        self._cache: LRUCache[tuple[int, int, bool, int], list[Strip]] = LRUCache(256)
        if blocks is not None or trial is not None:
            self.load(trial, violations, verdicts, blocks=blocks)

    # --- content -------------------------------------------------------------------------------------

    def load(
        self,
        trial: Trial | None,
        violations: Sequence[ViolationLike] = (),
        verdicts: Sequence[VerdictLike] | None = None,
        *,
        blocks: list[Block] | None = None,
    ) -> None:
        """Show a trial; pass ``blocks`` built by ``build_blocks`` in a worker to skip that work here."""
        if blocks is None:
            blocks = [] if trial is None else build_blocks(trial, violations, verdicts)
        if self.blind:  # judge blocks come last: without them no search or fold can reach them
            blocks = [b for b in blocks if not b.judge]
        self._blocks = blocks
        errors = set()
        if trial is not None:
            errors = {i for i, m in enumerate(trial.messages) if m.role == "tool" and m.is_error}
        self._errors = sorted(errors)
        self._expanded = set()
        self.cursor = None
        self._invalidate()
        self._layout()
        self.scroll_to(y=0, animate=False, force=True)
        self.search_reset(violations)

    @property
    def blocks(self) -> list[Block]:
        return self._blocks

    @property
    def tool_errors(self) -> list[int]:
        """Message indexes of the tool results that are errors."""
        return list(self._errors)

    @property
    def line_count(self) -> int:
        return self._starts[-1] if self._blocks else 0

    @property
    def rendered_blocks(self) -> set[int]:
        """Ids of the blocks that have rendered rows in the cache."""
        keys = self._cache.keys()  # an LRUCache is not iterable itself
        return {key[0] for key in keys}

    @property
    def cache_size(self) -> int:
        return len(self._cache)

    def is_folded(self, block: Block) -> bool:
        return block.foldable and block.id not in self._expanded

    def block_start(self, block_id: int) -> int:
        return self._starts[block_id]

    def visible_lines(self) -> list[str]:
        """The plain text of the rows on screen (what ``render_line`` gives)."""
        return [self.render_line(y).text for y in range(self.scrollable_content_region.height)]

    # --- layout --------------------------------------------------------------------------------------

    def _invalidate(self) -> None:
        self._cache.clear()
        self._rows_cache.clear()
        self._fold_cache.clear()

    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _avail(self, block: Block) -> int:
        return max(1, self._width - len(block.prefix))

    def _folded_rows(self, block: Block) -> tuple[list[Row], int]:
        got = self._fold_cache.get(block.id)
        if got is None:
            got = self._fold_cache[block.id] = fold_rows(block, self._avail(block))
        return got

    def _row_starts(self, block: Block) -> list[int]:
        got = self._rows_cache.get(block.id)
        if got is None:
            got = self._rows_cache[block.id] = row_starts(block, self._avail(block))
        return got

    def _height(self, block: Block) -> int:
        if block.judge and (self.blind or not self.show_judge):
            return 0
        if block.pieces:
            return 1
        if self.is_folded(block):
            rows, remaining = self._folded_rows(block)
            return len(rows) + (1 if remaining else 0)
        return self._row_starts(block)[-1]

    def _layout(self) -> None:
        """Heights and start rows of every block at the current width (no rendering)."""
        width = self._content_width()
        if width <= 0:
            return
        if width != self._width:
            self._width = width
            self._invalidate()
        heights = [self._height(b) for b in self._blocks]
        starts = [0] * (len(heights) + 1)
        total = 0
        for i, h in enumerate(heights):
            starts[i] = total
            total += h
        starts[-1] = total
        self._heights, self._starts = heights, starts
        self.virtual_size = Size(width, total)
        self.refresh()

    def _block_at(self, y: int) -> int | None:
        if not self._blocks or not 0 <= y < self.line_count:
            return None
        return bisect_right(self._starts, y, 0, len(self._blocks)) - 1

    def _anchor(self) -> tuple[int, int] | None:
        bi = self._block_at(self.scroll_offset.y)
        return None if bi is None else (bi, self.scroll_offset.y - self._starts[bi])

    def _relayout(self, anchor: tuple[int, int] | None, *, ratio: bool = False) -> None:
        old = self._heights[anchor[0]] if anchor is not None and self._heights else 0
        self._layout()
        if anchor is None or not self._heights:
            return
        bi, offset = anchor
        new = self._heights[bi]
        if ratio and old:
            offset = offset * new // old
        self.scroll_to(y=self._starts[bi] + min(offset, max(new - 1, 0)), animate=False, force=True)

    def on_resize(self, event: Resize) -> None:
        if self._content_width() != self._width:
            self._relayout(self._anchor(), ratio=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    # --- rendering -----------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        return self.render_row(self.scroll_offset.y + y)

    def render_row(self, index: int) -> Strip:
        """Row ``index`` of the whole transcript (0 is the first row, wherever the view is scrolled)."""
        bi = self._block_at(index)
        if bi is None or self._width <= 0:
            return Strip.blank(max(self._width, self.size.width), self.rich_style)
        block = self._blocks[bi]
        row = index - self._starts[bi]
        folded = self.is_folded(block)
        chunk = row // CHUNK
        key = (block.id, self._width, folded, chunk)
        strips = self._cache.get(key)
        if strips is None:
            strips = self._render_chunk(block, folded, chunk)
            self._cache.set(key, strips)
        strip = strips[min(row - chunk * CHUNK, len(strips) - 1)]
        if block.kind == "role" and block.message is not None and block.message == self.cursor:
            strip = strip.apply_style(CURSOR_STYLE)
        return strip

    def _render_chunk(self, block: Block, folded: bool, chunk: int) -> list[Strip]:
        if block.pieces:
            return [self._strip(Text.assemble(*block.pieces))]
        if folded:
            rows, remaining = self._folded_rows(block)
            strips = [self._row_strip(block, *row) for row in rows]
            if remaining:
                notice = Text(block.prefix, block.prefix_style)
                notice.append(fold_notice(block, remaining, self._avail(block)), FOLD_STYLE)
                strips.append(self._strip(notice))
            return strips
        starts = self._row_starts(block)
        first = chunk * CHUNK
        last = min(starts[-1], first + CHUNK)
        strips = []
        avail = self._avail(block)
        for r in range(first, last):
            i = bisect_right(starts, r, 0, len(block.lines)) - 1
            s, e = line_span(block.lines[i], avail, r - starts[i])
            strips.append(self._row_strip(block, i, s, e))
        return strips or [self._strip(Text(""))]

    def _row_strip(self, block: Block, i: int, start: int, end: int) -> Strip:
        line = block.lines[i]
        if block.json and len(line) <= HIGHLIGHT_CHARS:
            text = Text(line, style=block.style)
            _JSON.highlight(text)
            if (start, end) != (0, len(line)):
                text = text[start:end]
        else:
            text = Text(line[start:end], style=block.style)
        self.search_highlight(block, i, start, end, text)
        if block.prefix:
            text = Text.assemble((block.prefix, block.prefix_style), text)
        return self._strip(text)

    def _strip(self, text: Text) -> Strip:
        text.no_wrap = True
        text.stylize_before(self.rich_style)
        strip = Strip(list(text.render(self.app.console)), text.cell_len)
        return strip.crop_extend(0, self._width, self.rich_style)

    # --- navigation ----------------------------------------------------------------------------------

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_scroll_lines(self, n: int) -> None:
        self.scroll_to(y=self.scroll_offset.y + n, animate=False, force=True)

    def action_page(self, n: int) -> None:
        self.scroll_to(y=self.scroll_offset.y + n * self._page(), animate=False, force=True)

    def action_top(self) -> None:
        self.scroll_to(y=0, animate=False, force=True)

    def action_bottom(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False, force=True)

    def message_start(self, message: int) -> int | None:
        """The first row of a message's marks or header (after its spacer)."""
        for block in self._blocks:
            if block.message == message and block.kind != "spacer":
                return self._starts[block.id]
        return None

    def scroll_to_message(self, message: int) -> None:
        y = self.message_start(message)
        if y is not None:
            self.cursor = message
            self.scroll_to(y=y, animate=False, force=True)
            self.refresh()

    def _visible_blocks(self) -> list[Block]:
        top = self.scroll_offset.y
        first = self._block_at(top)
        if first is None:
            return []
        bottom = top + self.scrollable_content_region.height
        out = []
        for block in self._blocks[first:]:
            if self._starts[block.id] >= bottom:
                break
            out.append(block)
        return out

    def _current_message(self) -> int:
        """The message last jumped to if on screen, else the one at the top row (-1 above the first)."""
        visible = self._visible_blocks()
        if self.cursor is not None and any(b.message == self.cursor for b in visible):
            return self.cursor
        for block in visible:
            if block.message is not None:
                return block.message
        return -1

    def action_tool_error(self, step: int) -> None:
        here = self._current_message()
        if step > 0:
            found = next((m for m in self._errors if m > here), None)
        else:
            found = next((m for m in reversed(self._errors) if m < here), None)
        if found is None:
            self.notify("no more tool errors", severity="warning")
            return
        self.scroll_to_message(found)

    def _fold_target(self) -> int | None:
        current = self._current_message()
        visible = self._visible_blocks()
        foldable = [b.message for b in visible if b.foldable and b.message is not None]
        if current in foldable:
            return current
        return foldable[0] if foldable else None

    def action_toggle_fold(self) -> None:
        target = self._fold_target()
        blocks = [b for b in self._blocks if b.foldable and b.message == target]
        if target is None:
            blocks = [b for b in self._visible_blocks() if b.foldable]
        if not blocks:
            self.notify("nothing to fold here")
            return
        anchor = self._anchor()
        if any(self.is_folded(b) for b in blocks):
            self._expanded.update(b.id for b in blocks)
        else:
            self._expanded.difference_update(b.id for b in blocks)
        self._relayout(anchor)

    def action_toggle_fold_all(self) -> None:
        foldable = [b.id for b in self._blocks if b.foldable]
        anchor = self._anchor()
        if any(i not in self._expanded for i in foldable):
            self._expanded.update(foldable)
        else:
            self._expanded.clear()
        self._relayout(anchor)

    def set_blind(self, blind: bool) -> None:
        """Blind mode (a label screen before its trial is labeled): judge blocks hidden, `J` off;
        leaving it keeps the judge hidden until `J`."""
        self.blind = blind
        self.show_judge = False
        if blind:
            self._blocks = [b for b in self._blocks if not b.judge]
        self._relayout(self._anchor())
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return not (self.blind and action == "toggle_judge")

    def action_toggle_judge(self) -> None:
        if self.blind:
            return
        if not any(b.judge for b in self._blocks):
            self.notify("no judge verdict for this trial")
        anchor = self._anchor()
        self.show_judge = not self.show_judge
        self._relayout(anchor)
        self.post_message(self.JudgeToggled(self.show_judge))
