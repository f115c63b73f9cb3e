"""The transcript as a light index of blocks, and the word wrap the viewer lays them out with, lazily.

``build_blocks`` does the work that grows with the transcript (cleaning, splitting into lines, pretty JSON)
and is meant for a worker thread; it renders nothing. The wrap functions give the rows of one logical line
at a width, so a block's height can be known without rendering it, and a huge line costs O(1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from rich.cells import cell_len, get_character_cell_size

from reviewer.models import Trial
from reviewer.tui.safe import clean

#: a body longer than this many lines or characters is folded by default
FOLD_LINES = 20
FOLD_CHARS = 2_000
#: rows a folded block keeps
FOLD_KEEP = 10
#: a line longer than this is cut at the width (no word search), so its wrap costs O(1)
HARD_WRAP_CHARS = 4_096
#: tool results up to this size that parse as JSON are shown pretty-printed
JSON_RESULT_CHARS = 256_000
#: names, ids and rule details are cut to this many characters
LABEL_CHARS = 200

ROLE_STYLES = {
    "system": "bold magenta",
    "user": "bold green",
    "assistant": "bold cyan",
    "tool": "bold yellow",
}
BODY_STYLES = {"system": "dim"}
ERROR_STYLE = "bold red"
ERROR_TAG_STYLE = "bold white on red"
ERROR_BODY_STYLE = "red"
MARK_STYLE = "bold dark_orange"
CALL_STYLE = "yellow"
FOLD_STYLE = "italic dim"
VERDICT_STYLES = {"pass": "bold green", "fail": "bold red"}


class VerdictLike(Protocol):
    """What the judge block needs of a verdict (``VerdictRow`` from the store, or ``models.Verdict``)."""

    @property
    def verdict(self) -> str: ...
    @property
    def rationale(self) -> str | None: ...
    @property
    def judge(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def rubric(self) -> str | None: ...


class ViolationLike(Protocol):
    @property
    def rule_id(self) -> str: ...
    @property
    def message_index(self) -> int | None: ...
    @property
    def detail(self) -> str: ...


@dataclass(slots=True, eq=False)
class Block:
    """One piece of the transcript: a one-row header (``pieces``) or wrapped ``lines`` of cleaned text."""

    id: int
    kind: str  # spacer | mark | role | body | call | args | judge_role | judge
    lines: list[str]
    style: str = ""
    pieces: tuple[tuple[str, str], ...] = ()
    prefix: str = ""
    prefix_style: str = ""
    message: int | None = None
    json: bool = False
    foldable: bool = False
    judge: bool = False
    chars: int = 0


def _label(s: object) -> str:
    text = clean(s, single_line=True)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def pretty_json(value: Any) -> tuple[str, bool]:
    """(cleaned text, is_json): parsed JSON indented by 2, a string that parses likewise, else the text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return clean(value), False
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return clean(repr(value)), False
    return clean(text), True


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []

    def add(self, kind: str, lines: list[str] | None = None, **kw: Any) -> Block:
        block = Block(len(self.blocks), kind, lines if lines is not None else [], **kw)
        self.blocks.append(block)
        return block

    def text(
        self,
        kind: str,
        text: str,
        *,
        json_text: bool = False,
        fold_over: int = FOLD_LINES,
        **kw: Any,
    ) -> Block:
        lines = text.split("\n")
        long = len(lines) > fold_over or len(text) > FOLD_CHARS
        return self.add(kind, lines, json=json_text, foldable=long, chars=len(text), **kw)

    def mark(self, rule_id: str, detail: str, message: int | None) -> None:
        self.add(
            "mark",
            [f"⚑ rule {_label(rule_id)}: {_label(detail)}"],
            style=MARK_STYLE,
            message=message,
        )


def build_blocks(
    trial: Trial,
    violations: Sequence[ViolationLike] = (),
    verdicts: Sequence[VerdictLike] | None = None,
) -> list[Block]:
    """The block index of ``trial``: marks, then per message a header, its body and tool calls; judges last."""
    b = _Builder()
    n = len(trial.messages)
    at: dict[int, list[ViolationLike]] = {}
    for v in violations:
        i = v.message_index
        at.setdefault(i if i is not None and 0 <= i < n else -1, []).append(v)
    for v in at.get(-1, []):
        b.mark(v.rule_id, v.detail, None)
    for i, m in enumerate(trial.messages):
        if b.blocks:
            b.add("spacer", [""], message=i)
        for v in at.get(i, []):
            b.mark(v.rule_id, v.detail, i)
        error = m.role == "tool" and m.is_error
        role_style = ERROR_STYLE if error else ROLE_STYLES.get(m.role, "bold")
        pieces: list[tuple[str, str]] = [("▌ ", role_style), (_label(m.role).upper(), role_style)]
        if m.name:
            pieces.append((f"  {_label(m.name)}", role_style))
        if m.tool_call_id:
            pieces.append((f"  ← {_label(m.tool_call_id)}", "dim"))
        pieces.append((f"  #{i}", "dim"))
        if error:
            pieces += [("  ", ""), (" error ", ERROR_TAG_STYLE)]
        b.add("role", pieces=tuple(pieces), message=i)
        bar = ("│ ", ERROR_STYLE if error else role_style)
        content = m.content or ""
        if content:
            body_style = ERROR_BODY_STYLE if error else BODY_STYLES.get(m.role, "")
            is_json = False
            if m.role == "tool" and not error and len(content) <= JSON_RESULT_CHARS:
                stripped = content.lstrip()[:1]
                if stripped in ("{", "["):
                    pretty, is_json = pretty_json(content)
            if is_json:
                b.text(
                    "body", pretty, json_text=True, message=i, prefix=bar[0], prefix_style=bar[1]
                )
            else:
                b.text(
                    "body",
                    clean(content),
                    style=body_style,
                    message=i,
                    prefix=bar[0],
                    prefix_style=bar[1],
                    # the system prompt is the same in every trial: keep the conversation in view
                    fold_over=FOLD_KEEP if m.role == "system" else FOLD_LINES,
                )
        elif not m.tool_calls:
            b.add(
                "body",
                ["(empty)"],
                style="dim italic",
                message=i,
                prefix=bar[0],
                prefix_style=bar[1],
            )
        for call in m.tool_calls:
            call_pieces: list[tuple[str, str]] = [
                bar,
                ("→ ", CALL_STYLE),
                (_label(call.name), f"bold {CALL_STYLE}"),
            ]
            if call.id:
                call_pieces.append((f"  id {_label(call.id)}", "dim"))
            b.add("call", pieces=tuple(call_pieces), message=i)
            args, is_json = pretty_json(call.arguments)
            b.text("args", args, json_text=is_json, message=i, prefix="│   ", prefix_style=bar[1])
    if not trial.messages:  # a plain empty state, never a blank body
        if b.blocks:
            b.add("spacer", [""])
        why = "the harness crashed before the agent ran" if trial.infra_error else "none recorded"
        b.add("body", [f"no messages: {why}"], style="dim italic")
    # an empty list means no verdict (a blind label screen); only None falls back to the record's own
    fallback = [trial.judge] if trial.judge is not None else []
    for verdict in verdicts if verdicts is not None else fallback:
        b.add("spacer", [""], judge=True)
        style = VERDICT_STYLES.get(verdict.verdict, "bold yellow")
        judge_pieces: list[tuple[str, str]] = [
            ("▌ JUDGE  ", "bold"),
            (_label(verdict.verdict).upper(), style),
        ]
        who = " · ".join(_label(x) for x in (verdict.judge, verdict.model, verdict.rubric) if x)
        if who:
            judge_pieces.append((f"  {who}", "dim"))
        b.add("judge_role", pieces=tuple(judge_pieces), judge=True)
        b.text("judge", clean(verdict.rationale or "(no rationale)"), judge=True, prefix="│ ")
    return b.blocks


# --- wrapping ------------------------------------------------------------------------------------------


def _hard_step(line: str, width: int) -> int:
    # a non-ASCII huge line is cut every width//2 characters: at most 2 cells each, so a row never overflows
    # (str.isascii is O(1) in CPython)
    return max(1, width) if line.isascii() else max(1, width // 2)


def line_spans(line: str, width: int) -> list[tuple[int, int]]:
    """Character spans of the rows of one (not huge) line word-wrapped at ``width`` cells."""
    n = len(line)
    width = max(1, width)
    if n <= width and (line.isascii() or cell_len(line) <= width):
        return [(0, n)]
    spans: list[tuple[int, int]] = []
    start = 0
    if line.isascii():
        while n - start > width:
            end = start + width
            if line[end] == " ":
                cut, nxt = end, end + 1
            else:
                cut = line.rfind(" ", start + 1, end)
                cut, nxt = (end, end) if cut <= start else (cut, cut + 1)
            spans.append((start, cut))
            start = nxt
        spans.append((start, n))
        return spans
    sizes = [get_character_cell_size(ch) for ch in line]
    while True:
        cells, end = 0, start
        while end < n and cells + sizes[end] <= width:
            cells += sizes[end]
            end += 1
        if end >= n:
            spans.append((start, n))
            return spans
        if end == start:
            end = start + 1
        if line[end] == " ":
            cut, nxt = end, end + 1
        else:
            cut = line.rfind(" ", start + 1, end)
            cut, nxt = (end, end) if cut <= start else (cut, cut + 1)
        spans.append((start, cut))
        start = nxt


def line_rows(line: str, width: int) -> int:
    """How many rows ``line`` takes at ``width``: O(1) for a huge line."""
    n = len(line)
    if n > HARD_WRAP_CHARS:
        step = _hard_step(line, width)
        return -(-n // step)
    if n <= width and line.isascii():
        return 1
    return len(line_spans(line, width))


def line_span(line: str, width: int, k: int) -> tuple[int, int]:
    """The character span of row ``k`` of ``line`` at ``width``."""
    n = len(line)
    if n > HARD_WRAP_CHARS:
        step = _hard_step(line, width)
        return k * step, min(n, (k + 1) * step)
    spans = line_spans(line, width)
    return spans[min(k, len(spans) - 1)]


def iter_rows(block: Block, width: int) -> Iterator[tuple[int, int, int]]:
    """(line index, start, end) of every row of ``block``, lazily (a folded block takes only the first)."""
    for i, line in enumerate(block.lines):
        if len(line) > HARD_WRAP_CHARS:
            step = _hard_step(line, width)
            for s in range(0, len(line), step):
                yield i, s, min(len(line), s + step)
        else:
            for s, e in line_spans(line, width):
                yield i, s, e


def fold_rows(block: Block, width: int) -> tuple[list[tuple[int, int, int]], int]:
    """The first ``FOLD_KEEP`` rows of a block and how many lines are left unshown (0: all fit)."""
    rows: list[tuple[int, int, int]] = []
    for row in iter_rows(block, width):
        if len(rows) == FOLD_KEEP:
            return rows, len(block.lines) - row[0]
        rows.append(row)
    return rows, 0


def fold_notice(block: Block, remaining: int, width: int | None = None) -> str:
    """What a folded message hides and the key that shows it; shorter when ``width`` (the cells
    the row has) would cut the key off, as the labeling screen's narrow transcript did."""
    shown = len(block.lines) - remaining
    chars = block.chars - sum(len(line) + 1 for line in block.lines[:shown])
    s = "" if remaining == 1 else "s"
    whole = f"… {remaining:,} more line{s}, {max(chars, 0):,} chars (press e to expand)"
    if width is None or len(whole) <= width:
        return whole
    short = f"… {remaining:,} more line{s} (e expands)"
    return short if len(short) <= width else f"… +{remaining:,} (e)"


def row_starts(block: Block, width: int) -> list[int]:
    """Cumulative rows before each line of an unfolded block, with the total appended."""
    starts = [0] * (len(block.lines) + 1)
    total = 0
    for i, line in enumerate(block.lines):
        starts[i] = total
        total += line_rows(line, width)
    starts[-1] = total
    return starts
