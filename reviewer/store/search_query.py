"""User search text -> an FTS5 MATCH string that cannot be misread as FTS5 syntax by accident.

Every word is quoted as a phrase (so ``order#W5521``, ``error:timeout`` or ``AND(`` are searched for,
never parsed), ``"quoted text"`` stays a phrase, ``word*`` is a prefix search and ``^word`` an initial
one. Only when the text holds an explicit operator (a bare ``AND``, ``OR``, ``NOT`` or ``NEAR(``) are
those operators and parentheses kept as structure; the words around them are still quoted.
"""

from __future__ import annotations

import re

_OPERATORS = {"AND", "OR", "NOT"}
_NUMBER = re.compile(r"\d+")


class SearchError(ValueError):
    """The search text is not a query FTS5 accepts; the message says why, for the status line."""


def _chunks(text: str) -> list[tuple[bool, str]]:
    """(is_phrase, text) pieces: double-quoted phrases (an unclosed one runs to the end) and bare words."""
    out: list[tuple[bool, str]] = []
    word: list[str] = []
    i, n = 0, len(text)

    def flush() -> None:
        if word:
            out.append((False, "".join(word)))
            word.clear()

    while i < n:
        ch = text[i]
        if ch == '"':
            flush()
            j = text.find('"', i + 1)
            j = n if j < 0 else j
            out.append((True, text[i + 1 : j]))
            i = j + 1
        elif ch.isspace():
            flush()
            i += 1
        else:
            word.append(ch)
            i += 1
    flush()
    return out


def _has_words(s: str) -> bool:
    # unicode61 makes tokens of letters and digits; anything else only separates them
    return any(ch.isalnum() for ch in s)


def _phrase(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _term(word: str) -> tuple[str, str, str]:
    """(prefix, core, suffix) of a bare word: ``^`` before, ``*`` after."""
    head = "^" if word.startswith("^") else ""
    core = word[len(head) :]
    tail = "*" if core.endswith("*") and len(core) > 1 else ""
    return head, core[: len(core) - len(tail)], tail


def _plain(chunks: list[tuple[bool, str]]) -> list[str]:
    """Implicit AND of phrases; pieces without any word are dropped (an empty phrase matches nothing)."""
    parts: list[str] = []
    for is_phrase, s in chunks:
        if is_phrase:
            if _has_words(s):
                parts.append(_phrase(s))
            continue
        if s == "*" and parts:
            parts[-1] += "*"
            continue
        head, core, tail = _term(s)
        if _has_words(core):
            parts.append(head + _phrase(core) + tail)
    return parts


def _structured(chunks: list[tuple[bool, str]]) -> list[str]:
    """Operators, parentheses and NEAR groups kept; every other word quoted."""
    parts: list[str] = []
    for is_phrase, s in chunks:
        if is_phrase:
            parts.append(_phrase(s))
            continue
        if s in _OPERATORS:
            parts.append(s)
            continue
        if s == "*" and parts:
            parts[-1] += "*"
            continue
        if s.startswith("NEAR("):
            parts.append("NEAR(")
            s = s[5:]
        opens = len(s) - len(s.lstrip("("))
        parts.extend("(" * opens)
        s = s[opens:]
        closes: list[str] = []
        while s and s[-1] in "),":
            closes.insert(0, s[-1])
            s = s[:-1]
        if s:
            after_comma = bool(parts) and parts[-1] == ","
            if after_comma and _NUMBER.fullmatch(s):
                parts.append(s)  # the distance of NEAR(a b, 5)
            else:
                head, core, tail = _term(s)
                parts.append(head + _phrase(core) + tail)
        parts.extend(closes)
    return parts


def match_query(text: str, *, system: bool = False) -> str | None:
    """The MATCH string for ``text``; None for blank text, SearchError when there is nothing to find.

    The index has two columns (migration m011): ``text``, the conversation (every message but the
    system prompt, tool calls, reason, error), and ``system``, the system prompt. Without ``system``
    the query is limited to the conversation: a word of a prompt every trial shares finds nothing."""
    if not text.strip():
        return None
    chunks = _chunks(text)
    explicit = any(
        not is_phrase and (s in _OPERATORS or s.startswith("NEAR(")) for is_phrase, s in chunks
    )
    parts = _structured(chunks) if explicit else _plain(chunks)
    if not parts:
        raise SearchError(f"nothing to search for in {text!r}: type a word")
    query = " ".join(parts)
    return query if system else f"text : ({query})"


def search_words(text: str) -> list[str]:
    """The words and phrases of a search, lower-cased, without operators: what a snippet looks for."""
    out = []
    for is_phrase, s in _chunks(text):
        if not is_phrase and (s in _OPERATORS or s.startswith("NEAR(")):
            continue
        s = s.strip("()^*,").strip()
        if s and _has_words(s):
            out.append(s.lower())
    return out


def snippet(text: str, words: list[str], width: int = 80) -> tuple[str, list[tuple[int, int]]]:
    """About ``width`` characters of ``text`` around the first of ``words`` found (case-insensitive),
    on one line, with the (start, end) of each word found in it; ("", []) when none is found."""
    low = text.lower()
    if len(low) != len(text):
        return "", []
    hits = [(i, w) for w in words if (i := low.find(w)) >= 0]
    if not hits:
        return "", []
    at, word = min(hits)
    start = max(0, at - min(16, width // 3))  # a little context before: the match stays in view
    end = min(len(text), start + width)
    piece = " ".join(text[start:end].split("\n"))
    lead = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    shown = lead + piece + tail
    spans: list[tuple[int, int]] = []
    low_shown = shown.lower()
    for w in words:
        i = low_shown.find(w)
        while i >= 0:
            spans.append((i, i + len(w)))
            i = low_shown.find(w, i + len(w))
    return shown, sorted(spans)
