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
    text = s if isinstance(s, str) else str(s)
    text = text.replace("\r\n", "\n").replace("\t", "    ")
    text = _UNSAFE.sub(_visible, text)
    if single_line:
        text = text.replace("\n", " ⏎ ")
    return text


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
