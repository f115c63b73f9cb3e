"""The one door for untrusted text: transcript, judge, file-name and exception strings become Text.

Nothing that passes through here is parsed as markup, and control characters, terminal escape sequences,
bidirectional overrides and other invisible code points are shown as visible stand-ins.
"""

from __future__ import annotations

from rich.text import Text

from reviewer.text import visible


def clean(s: object, *, single_line: bool = False) -> str:
    """Plain string with every unsafe code point made visible."""
    return visible(s, single_line=single_line)


def safe_text(
    s: object, style: str = "", *, single_line: bool = False, limit: int | None = None
) -> Text:
    """A ``Text`` built from the plain string (never markup)."""
    text = clean(s, single_line=single_line)
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)] + "…"
    return Text(text, style=style, no_wrap=single_line)
