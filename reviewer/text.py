"""Untrusted strings made safe to print: control characters, escape sequences and bidi overrides visible.

One set of rules for the app (``tui/safe.py``) and every line the CLI prints (``commands/common.py``):
C0 and C1 controls (so ESC, CSI U+009B, OSC U+009D, NUL), DEL, bidirectional controls, zero-width and
other invisible format characters, the line and paragraph separators U+2028/U+2029, Unicode tag
characters and lone surrogates are shown as visible stand-ins (``␛``, ``␀``, ``<U+202E>``); the text
around them is kept, so an escape sequence is shown, never interpreted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_INVISIBLE = (
    "\u00ad\u180e\u200b-\u200d\u2028\u2029\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb"
    "\U000e0000-\U000e007f\ud800-\udfff" + _BIDI
)
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def _visible(m: re.Match[str]) -> str:
    ch = m.group()
    o = ord(ch)
    if o == 0x1B:
        return "␛"
    if o < 0x20:
        return chr(0x2400 + o)  # control pictures: ␀ ␁ ... ␟
    if o == 0x7F:
        return "␡"
    return f"<U+{o:04X}>"


def visible(s: object, *, single_line: bool = False) -> str:
    """Plain string with every unsafe code point made visible (tabs become spaces)."""
    text = _UNSAFE.sub(_visible, _laid_out(s if isinstance(s, str) else str(s)))
    return _one_line(text) if single_line else text


def _laid_out(text: str) -> str:
    """``text`` with Windows line ends as newlines and tabs as four spaces."""
    return text.replace("\r\n", "\n").replace("\t", "    ")


def _one_line(text: str) -> str:
    return text.replace("\n", " ⏎ ")


def one_line(text: str) -> str:
    """``text`` (a message meant as one line, which may quote a file name or a value holding line
    breaks) on one line: each break shown as ``⏎``, so no line of it passes for a line of ours."""
    return _one_line(_laid_out(text).replace("\r", "\n"))


#: The most characters a name takes in a text table's first column (a task id of a few hundred
#: characters would push every number off the screen); --json has the whole name.
NAME_ROOM = 60


def table_names(names: list[str], room: int = NAME_ROOM) -> list[str]:
    """Names (task ids) for a table's first column: each made visible on one line, a long one cut
    in the middle to ``room`` characters, no two shown alike (:func:`distinct_elisions`)."""
    shown = [visible(n, single_line=True) for n in names]
    cut = distinct_elisions(sorted(set(shown)), room)
    return [cut[n] for n in shown]


#: How many names a list in a message shows before "and N more".
NAMES_LISTED = 8


def crashed(n: int) -> str:
    """``n`` trials the harness crashed, in words: "1 trial ended by an infrastructure error",
    "3 trials ended by infrastructure errors" (every face says it alike)."""
    if n == 1:
        return "1 trial ended by an infrastructure error"
    return f"{n:,} trials ended by infrastructure errors"


def counted(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word`` agreeing: "1 queue", "2 queues" (``plural`` when not ``word`` + "s")."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def name_list(names: Iterable[str], none: str = "none") -> str:
    """Names (runs) for a message: each quoted on one line (a blank name, or one holding the
    list's commas, stays readable), a long one cut in the middle, the first ``NAMES_LISTED`` then
    how many more; ``none`` when there are none."""
    names = list(names)
    if not names:
        return none
    shown = ", ".join(_quoted(n) for n in names[:NAMES_LISTED])
    more = len(names) - NAMES_LISTED
    return shown + (f" and {more} more" if more > 0 else "")


def nearest_first(name: str, names: Iterable[str]) -> list[str]:
    """``names`` with the likeliest meant by ``name`` first: those holding it (or held by it),
    case and ``-``/``_``/space aside, then the close spellings, then the rest in their order. Of 37
    runs a message lists 8: ``tau_bench`` or ``gpt4o-airline`` should find theirs among them."""
    import difflib

    names = list(names)

    def bare(text: str) -> str:
        return re.sub(r"[\s_\-·]+", "", text.casefold())

    def near(a: str, b: str) -> bool:  # one holds the other, neither so short it is anywhere
        return min(len(a), len(b)) >= 3 and (a in b or b in a)

    want = bare(name)
    holding = [n for n in names if near(want, bare(n))]
    close = difflib.get_close_matches(name, names, n=NAMES_LISTED, cutoff=0.6)
    first = list(dict.fromkeys([*holding, *close]))
    return first + [n for n in names if n not in first]


def unknown_run(name: str, known: Iterable[str], none: str = "none") -> str:
    """The one line for a run name no run has: the name and the runs there are, the nearest to it
    first."""
    return f"no run named {_quoted(name)}; runs: {name_list(nearest_first(name, known), none)}"


def unknown_cluster(ref: str, why: str, known: Iterable[str], none: str = "none") -> str:
    """The one line for a --cluster value that names no cluster of the newest clustering: the value,
    ``why`` ("is not a cluster id, prefix or rank", "matches several clusters") and the ids there are."""
    return f"--cluster {_quoted(ref)} {why}; clusters: {name_list(known, none)}"


def unknown_queue(name: str, known: Iterable[str], none: str = "none") -> str:
    """The one line for a queue name no queue has: the name and the queues there are."""
    return f"no queue named {_quoted(name)}; queues: {name_list(known, none)}"


#: The longest queue name a user may give (a default name, made of the labeler and run names, may
#: be longer): a name is shown whole in lists and messages.
QUEUE_NAME_ROOM = 200


def queue_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a new queue (None: it can): empty, or over ``QUEUE_NAME_ROOM``
    characters."""
    if not name.strip():
        return "a queue name must not be empty"
    if len(name) > QUEUE_NAME_ROOM:
        return f"a queue name is at most {QUEUE_NAME_ROOM} characters, got {len(name):,}"
    return None


#: The most characters of a name a message holds (a name of thousands is cut in the middle).
MESSAGE_NAME_ROOM = 200


def _quoted(name: str) -> str:
    """A name in a message: on one line (a line break shown as ⏎, a tab as spaces, as
    :func:`visible` shows them; the rest is made visible where the message is printed, and kept
    in ``--json``), cut in the middle past ``MESSAGE_NAME_ROOM``, in single quotes."""
    return f"'{elide_middle(_one_line(_laid_out(name)), MESSAGE_NAME_ROOM)}'"


def terminal_safe(text: str) -> str:
    """What may reach a terminal: every unsafe code point made visible; newline and tab kept."""
    return _UNSAFE.sub(_visible, text)


def is_terminal_safe(text: str) -> bool:
    return _UNSAFE.search(text) is None


def _json_escape(m: re.Match[str]) -> str:
    o = ord(m.group())
    if o > 0xFFFF:  # a tag character: its UTF-16 surrogate pair, as JSON spells it
        o -= 0x10000
        return f"\\u{0xD800 + (o >> 10):04x}\\u{0xDC00 + (o & 0x3FF):04x}"
    return f"\\u{o:04x}"


def json_terminal_safe(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) with every unsafe code point written as
    its ``\\uXXXX`` escape: still valid JSON, ``json.loads`` gives back the original strings, and no
    control, bidi or tag character reaches the terminal raw. Outside strings JSON has only ASCII."""
    return _UNSAFE.sub(_json_escape, dumped)


def json_ready(x: Any) -> Any:
    """A report's dict made JSON-ready: tuples as lists, any non-finite float as ``None``."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_ready(v) for v in x]
    return x


def elide_middle(s: str, width: int) -> str:
    """``s`` in at most ``width`` characters, cut in the middle with "…": names of runs and tasks
    usually differ at their ends (a date, a model, a config), so both ends stay."""
    if len(s) <= width:
        return s
    if width <= 1:
        return "…"[:width]
    head = (width - 1) // 2
    tail = width - 1 - head
    return s[:head] + "…" + (s[len(s) - tail :] if tail else "")


def distinct_elisions(names: list[str], width: int) -> dict[str, str]:
    """Each name in at most ``width`` characters, cut in the middle, and no two names shown alike:
    names that would collide keep more of their ends, then their differing middle, until they part
    (a name that fits is shown whole)."""
    shown = {n: elide_middle(n, width) for n in names}
    by_shown: dict[str, list[str]] = {}
    for n, s in shown.items():
        by_shown.setdefault(s, []).append(n)
    for group in by_shown.values():
        if len(group) < 2:
            continue
        # the first place the names of the group differ: show a window around it
        first = min(
            next(
                (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)),
            )
            for a in group
            for b in group
            if a != b
        )
        for n in group:
            if len(n) <= width:
                continue
            shown[n] = _window(n, width, first)
    # whatever still collides (names alike far apart): numbered, each number once
    number = 0
    while True:
        counts: dict[str, int] = {}
        for v in shown.values():
            counts[v] = counts.get(v, 0) + 1
        alike = sorted(n for n, v in shown.items() if counts[v] > 1)
        if not alike:
            break
        for n in alike:
            number += 1
            suffix = f"#{number}"
            shown[n] = elide_middle(n, max(1, width - len(suffix))) + suffix
    return shown


def _window(s: str, width: int, at: int) -> str:
    """``s`` in ``width`` characters showing its start, the part around ``at`` and its end:
    ``tau-b…config-a-temp…seed-1``."""
    end = max(2, width // 5)
    head = max(2, width // 5)
    room = width - head - end - 2
    if room < 3:
        return elide_middle(s[at:], width)
    start = max(head, min(at - room // 3, len(s) - end - room))
    if start <= head:  # the difference is near the start: one cut, before the end
        return s[: width - end - 1] + "…" + s[len(s) - end :]
    if start + room >= len(s) - end:  # near the end: one cut, after the start
        return s[:head] + "…" + s[len(s) - (width - head - 1) :]
    return s[:head] + "…" + s[start : start + room] + "…" + s[len(s) - end :]


def json_error(exc: Any, *, line: bool = False, place: bool = True) -> str:
    """A JSON parse failure (``json.JSONDecodeError``) as one phrase: ``invalid JSON: Expecting ','
    delimiter at column 12`` (``line``: ``at line 3 column 12``; not ``place``: no place, for a
    parser that read a piece of the file). Some of Python's messages end in "at" themselves
    ("Unterminated string starting at"): the place follows them directly."""
    msg = str(exc.msg)
    if not place:
        return f"invalid JSON: {msg.removesuffix(' at').removesuffix(' starting')}"
    where = f"line {exc.lineno} column {exc.colno}" if line else f"column {exc.colno}"
    return (
        f"invalid JSON: {msg} {where}" if msg.endswith(" at") else f"invalid JSON: {msg} at {where}"
    )


def seconds_text(v: float, *, signed: bool = False) -> str:
    """A duration for a table: tenths of a second from one second up (``12.3s``), milliseconds
    below it (``0.066s``, where tenths showed a 66 ms and a 102 ms latency both as ``0.1s``),
    three significant digits past a billion (``1.5e+12s``); ``signed``: with its sign (a change)."""
    sign = "+" if signed else ""
    if v and abs(v) < 0.9995:
        return f"{v:{sign}.3f}s"
    return f"{v:{sign}.1f}s" if abs(v) < 1e9 else f"{v:{sign}.3g}s"


_DIGITS = re.compile(r"([0-9]+)")


def natural_key(s: str) -> tuple[tuple[int, int, str, str], ...]:
    """A sort key that reads the numbers in S as numbers: ``task_7`` before ``task_67``, ``7``
    before ``67`` (ids written by harnesses number their tasks without leading zeros). A number
    is compared by its digits' count and then its digits, never made an int: a task id of 5,000
    digits stopped the report ('Exceeds the limit (4300 digits) for integer string conversion')."""
    return tuple(
        (0, len(n := part.lstrip("0")), n, part) if i % 2 else (1, 0, part, "")
        for i, part in enumerate(_DIGITS.split(s))
        if part
    )


def money_text(v: float | None) -> str:
    """A trial's cost as the transcript and `reviewer show` write it: cents from a dollar up,
    else four decimals; "-" when none was recorded."""
    if v is None:
        return "-"
    return f"${v:.2f}" if v >= 1 else f"${v:.4f}"
