"""Untrusted strings made safe to print: control characters, escape sequences and bidi overrides visible."""

from __future__ import annotations

import math
import re
from typing import Any

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff" + _BIDI
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


def json_ready(x: Any) -> Any:
    """A report's dict made JSON-ready: tuples as lists, any non-finite float as ``None``."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_ready(v) for v in x]
    return x
