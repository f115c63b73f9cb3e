"""User search text -> an FTS5 MATCH string that cannot be misread as FTS5 syntax by accident.

Every word is quoted as a phrase (so ``order#W5521``, ``error:timeout`` or ``AND(`` are searched for,
never parsed), ``"quoted text"`` stays a phrase, ``word*`` is a prefix search and ``^word`` an initial
one. Only when the text holds an explicit operator (a bare ``AND``, ``OR``, ``NOT`` or ``NEAR(``) are
those operators and parentheses kept as structure; the words around them are still quoted.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from typing import Any, NamedTuple

from reviewer.store.search_text import MAX_WORD_BYTES, index_words

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
    if len(text) > MAX_TEXT:  # PostgreSQL's limit, kept on both: the same search, the same answer
        raise SearchError(f"a search of {len(text)} characters: at most {MAX_TEXT}")
    query = _fts5(text)
    # FTS5's grammar checked first, as on PostgreSQL: the same message on both, naming the search
    # as typed (FTS5's own error names the parenthesis the column filter adds: 'near ")"')
    _Parser(text, _fts5_tokens(query)).parse()
    return query if system else f"text : ({query})"


def _fts5(text: str) -> str:
    """The FTS5 query of ``text`` (not blank), without a column filter; SearchError when empty. A
    character no text can hold (NUL, a lone surrogate: bytes of the search that were not UTF-8)
    separates words inside its piece, as on PostgreSQL (``ts_query``)."""
    chunks = _chunks(_UNSENDABLE.sub("\x01", text))
    explicit = any(
        not is_phrase and (s in _OPERATORS or s.startswith("NEAR(")) for is_phrase, s in chunks
    )
    parts = _structured(chunks) if explicit else _plain(chunks)
    if not parts:
        raise SearchError(f"nothing to search for in {text!r}: type a word")
    return " ".join(parts)


# ---- PostgreSQL: the same search as a tsquery ---------------------------------------------------------

#: The most parentheses nested in a search (FTS5's parser overflows a little beyond this too).
MAX_DEPTH = 64
#: The longest search PostgreSQL is given: its words become a tree of about as many operators,
#: which PostgreSQL walks recursively (about 15,000 overflow its stack at the default 2 MB).
MAX_TEXT = 4000
#: The largest NEAR distance spelt out as phrase distances; beyond it NEAR is a plain AND.
MAX_NEAR = 16
#: A query no row matches: what an FTS5 query of empty phrases alone finds.
NOTHING = "'a' & !'a'"

_FTS5_TOKEN = re.compile(
    r'(?P<space>\s+)|(?P<str>"(?:[^"]|"")*")|(?P<op>[(),*^:+])|(?P<word>\w+)|(?P<bad>.)', re.DOTALL
)
# What separates words in any text: never part of a lexeme, and unsendable (NUL, lone surrogates)
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")


class TsQuery(NamedTuple):
    """A search on PostgreSQL: ``query``, a tsquery (``CAST(query AS tsquery)``), matched against the
    conversation's tsvector alone, or with ``system`` against the conversation's and the system
    prompt's together (``text || system``)."""

    query: str
    system: bool


# The parsed search: ("phrase", [(piece, prefix), ...]) (no pieces: an empty phrase, matching
# nothing), ("and" | "or", [node, ...]), ("not", [base, excluded, ...]), ("near", [phrase, ...], n).
_Node = tuple[Any, ...]


def _fts5_tokens(query: str) -> list[tuple[str, str]]:
    """(kind, text) of an FTS5 query: "str" (a phrase, unquoted), "word" (a bareword), "op"."""
    out: list[tuple[str, str]] = []
    for m in _FTS5_TOKEN.finditer(query):
        kind, tok = m.lastgroup or "bad", m.group()
        if kind == "bad":
            raise SearchError(f"invalid search: {tok!r} in {query!r}")
        if kind == "str":
            out.append((kind, tok[1:-1].replace('""', '"')))
        elif kind != "space":
            out.append((kind, tok))
    return out


def _pieces(text: str, prefix: bool) -> list[tuple[str, bool]]:
    """The words of a phrase, split as the indexed text was (``search_text.index_words``, SQLite's
    unicode61 rule); a prefix search applies to the last."""
    words = index_words(_UNSENDABLE.sub(" ", text))
    if any(len(w.encode()) > MAX_WORD_BYTES for w in words):
        return []  # longer than any word the index keeps (search_text.tsvector_literal)
    return [(w, prefix and i == len(words) - 1) for i, w in enumerate(words)]


class _Parser:
    """FTS5's query grammar: OR below AND below NOT (all binary, left to right); phrases and NEAR
    groups side by side are an implicit AND, parentheses group; anything else is a SearchError, as
    FTS5 rejects it."""

    def __init__(self, text: str, tokens: list[tuple[str, str]]) -> None:
        self.text = text
        self.toks = tokens
        self.at = 0
        self.depth = 0

    def fail(self, why: str) -> SearchError:
        hint = "put words in double quotes to search for them as written"
        return SearchError(f"invalid search {self.text!r} ({why}): {hint}")

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        i = self.at + ahead
        return self.toks[i] if i < len(self.toks) else ("end", "")

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        self.at += 1
        return tok

    def operator(self, name: str) -> bool:
        if self.peek() == ("word", name):
            self.at += 1
            return True
        return False

    def parse(self) -> _Node:
        node = self.any()
        if self.peek()[0] != "end":
            raise self.fail(f"syntax error near {self.peek()[1]!r}")
        return node

    def any(self) -> _Node:
        items = [self.all()]
        while self.operator("OR"):
            items.append(self.all())
        return items[0] if len(items) == 1 else ("or", items)

    def all(self) -> _Node:
        items = [self.but()]
        while self.operator("AND"):
            items.append(self.but())
        return items[0] if len(items) == 1 else ("and", items)

    def but(self) -> _Node:
        items = [self.term()]
        while self.operator("NOT"):
            items.append(self.term())
        return items[0] if len(items) == 1 else ("not", items)

    def term(self) -> _Node:
        if self.peek() == ("op", "("):
            self.take()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(f"more than {MAX_DEPTH} parentheses inside each other")
            node = self.any()
            if self.take() != ("op", ")"):
                raise self.fail("a parenthesis is not closed")
            self.depth -= 1
            return node
        found: list[_Node] = []
        while True:
            kind, tok = self.peek()
            if kind == "word" and tok == "NEAR" and self.peek(1) == ("op", "("):
                found.append(self.near())
            elif kind == "str" or (kind == "word" and tok not in _OPERATORS):
                found.append(self.phrase())
            elif (kind, tok) == ("op", "^"):
                self.take()  # an initial token: PostgreSQL keeps no column starts, so any place
                if self.peek()[0] != "str":
                    raise self.fail("^ without a word")
                found.append(self.phrase())
            else:
                break
        if not found:
            kind, tok = self.peek()
            before = self.toks[self.at - 1] if self.at else None
            if before is not None and before[0] == "word" and before[1] in _OPERATORS:
                raise self.fail(f"{before[1]} needs a word after it")
            if kind == "word" and tok in _OPERATORS:
                raise self.fail(f"{tok} needs a word before it (a {tok} b)")
            raise self.fail(f"syntax error near {tok or 'the end'!r}")
        # side by side, FTS5 leaves out a phrase without words
        kept = [n for n in found if n != ("phrase", [])]
        if not kept:
            return ("phrase", [])
        return kept[0] if len(kept) == 1 else ("and", kept)

    def phrase(self) -> _Node:
        pieces: list[tuple[str, bool]] = []
        while True:
            _kind, text = self.take()
            prefix = self.peek() == ("op", "*")
            if prefix:
                self.take()
            pieces.extend(_pieces(text, prefix))
            if self.peek() != ("op", "+"):
                return ("phrase", pieces)
            self.take()
            if self.peek()[0] not in ("str", "word"):
                raise self.fail("+ without a word after it")

    def near(self) -> _Node:
        self.take()
        self.take()
        phrases: list[_Node] = []
        while self.peek()[0] == "str":
            phrases.append(self.phrase())
        if not phrases:
            raise self.fail("NEAR( without a word")
        distance = 10
        if self.peek() == ("op", ","):
            self.take()
            kind, tok = self.take()
            if kind != "word" or not tok.isdigit():
                raise self.fail("NEAR's distance is not a number")
            distance = int(tok)
        if self.take() != ("op", ")"):
            raise self.fail("NEAR( is not closed")
        return ("near", phrases, distance)


def _lexeme(piece: str, prefix: bool) -> str:
    quoted = "'" + piece.replace("\\", "\\\\").replace("'", "''") + "'"
    return quoted + (":*" if prefix else "")


def _group(items: list[str], op: str) -> str:
    return items[0] if len(items) == 1 else "( " + f" {op} ".join(items) + " )"


def _tsquery(node: _Node) -> str | None:
    """The tsquery of a parsed search; None when it matches nothing (an empty phrase)."""
    kind = node[0]
    if kind == "phrase":
        lexemes = [_lexeme(p, prefix) for p, prefix in node[1]]
        return _group(lexemes, "<->") if lexemes else None
    if kind == "and":
        items = [_tsquery(n) for n in node[1]]
        return None if any(x is None for x in items) else _group(items, "&")  # type: ignore[arg-type]
    if kind == "or":
        found = [x for n in node[1] if (x := _tsquery(n)) is not None]
        return _group(found, "|") if found else None
    if kind == "not":
        base, *excluded = (_tsquery(n) for n in node[1])
        if base is None:
            return None
        out = [base, *(f"!{x}" for x in excluded if x is not None)]
        return _group(out, "&")
    # NEAR: each two phrases within n words of each other, either way round
    found = [x for n in node[1] if (x := _tsquery(n)) is not None]
    if len(found) == 2 and found[0] == found[1]:
        return found[0]  # one place is near itself in FTS5
    if len(found) == 2 and node[2] <= MAX_NEAR:
        a, b = found
        ways = [f"{x} <{d}> {y}" for d in range(1, node[2] + 2) for x, y in ((a, b), (b, a))]
        return _group(ways, "|")
    return _group(found, "&") if found else None


def ts_query(text: str, *, system: bool = False) -> TsQuery | None:
    """The search ``text`` for PostgreSQL: the same search ``match_query`` makes for FTS5 as a
    tsquery string; None for blank text, SearchError when there is nothing to
    find or the text is not a query (where FTS5 rejects it too).

    The text is read exactly as for FTS5 (``match_query``), then written as a tsquery:

    - each word is split and lower-cased as the indexed text was (``search_text.index_words``:
      runs of letters and digits, diacritics off, SQLite's unicode61 rule), each piece a quoted
      lexeme, so ``status:pending``, ``example.com`` or ``foo-bar`` are phrases of their pieces,
      as in FTS5. NUL and lone surrogates separate words (they cannot be sent); a word longer than
      the index keeps (2047 bytes) matches nothing;
    - a phrase is its words joined by ``<->``; ``word*`` is ``'word':*`` (the last piece of a
      word split in pieces, such as ``status:pend*``, is the prefix, as in FTS5);
    - AND is ``&``, OR ``|``, ``a NOT b`` ``a & !b``; parentheses are kept (every group is written in
      parentheses of its own, so PostgreSQL's precedence never regroups it);
    - ``NEAR(a b, n)`` of two phrases, n up to ``MAX_NEAR``: one within n words of the other, either
      way round (``a <1> b | ... | a <n+1> b | b <1> a | ...``, FTS5's rule); of more phrases, or a
      larger n, all of them anywhere (``a & b & c``): more trials than FTS5 finds (after NOT,
      fewer);
    - ``^word`` (FTS5: the column's first word) is the word anywhere: PostgreSQL keeps no column start;
    - a phrase without words matches nothing, as in FTS5 (beside other phrases it is left out); a
      query of those alone is ``NOTHING``.

    ``system`` searches the system prompt too (``text || system``: their words as one text).
    A text longer than ``MAX_TEXT`` characters is a SearchError."""
    if not text.strip():
        return None
    if len(text) > MAX_TEXT:
        raise SearchError(f"a search of {len(text)} characters: at most {MAX_TEXT}")
    fts5 = _fts5(text)
    node = _Parser(text, _fts5_tokens(fts5)).parse()
    query = _tsquery(node)
    return TsQuery(NOTHING if query is None else query, system)


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


#: a word of a search term as the index splits it: letters and digits
_TERM_WORD = re.compile(r"[^\W_]+")


def _fold(c: str) -> str:
    """One character as search matches it: lower-cased, without its diacritics, composed again
    (a Hangul syllable stays one character), a final sigma as any sigma."""
    bare = "".join(
        ch for ch in unicodedata.normalize("NFD", c.lower()) if not unicodedata.combining(ch)
    )
    return unicodedata.normalize("NFC", bare).replace("ς", "σ")


class _Where(Sequence[int]):
    """For each character of a folded text, the index of the character of the text it came from,
    worked out from the few characters that fold to other than one (a combining mark to none):
    ``odd`` holds, in order, (their place in the folded text, in the text, their folded length)."""

    def __init__(self, odd: list[tuple[int, int, int]], size: int) -> None:
        self.odd, self.size = odd, size
        self.starts = [f for f, _, _ in odd]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, j: int) -> int:  # type: ignore[override]  # (no slices)
        k = bisect.bisect_right(self.starts, j) - 1
        if k < 0:
            return j
        at, origin, length = self.odd[k]
        return origin if j < at + length else origin + 1 + (j - at - length)


def _folded(text: str) -> tuple[str, Sequence[int]]:
    """TEXT as search matches it (lower-cased, without diacritics: the index's rule,
    ``search_text.index_words``), and for each of its characters the index in TEXT of the
    character it came from: a match found in the one is shown in the other. Each distinct
    character is folded once and the text translated in C; the few characters that fold to other
    than one are found by one expression and mapped by :class:`_Where` (a loop over every
    character made a page of Korean conversations take seconds)."""
    if text.isascii():
        return text.lower(), range(len(text))
    table = {ord(c): _fold(c) for c in set(text)}
    folded = text.translate(table)
    odd_chars = [chr(k) for k, f in table.items() if len(f) != 1]
    if not odd_chars:
        return folded, range(len(text))
    pattern = re.compile("[" + "".join(re.escape(c) for c in odd_chars) + "]")
    odd: list[tuple[int, int, int]] = []
    shift = 0
    for m in pattern.finditer(text):
        i = m.start()
        length = len(table[ord(text[i])])
        odd.append((i + shift, i, length))
        shift += length - 1
    return folded, _Where(odd, len(folded))


def snippet(text: str, words: list[str], width: int = 80) -> tuple[str, list[tuple[int, int]]]:
    """About ``width`` characters of ``text`` around the first of ``words`` found (as search
    finds them: case and diacritics aside, so ``zurich`` shows ``Zürich``), on one line, with the
    (start, end) of each word found in it; ("", []) when none is found."""
    # a term's words apart as the index splits them, anything but letters and digits between:
    # `cancel_order` and "cancel order" both find "cancel order" as search does
    wanted = [
        re.compile(r"[\W_]+".join(map(re.escape, parts)))
        for w in words
        if (parts := _TERM_WORD.findall(_folded(w)[0]))
    ]
    low, where = _folded(text)
    hits = [m.start() for w in wanted if (m := w.search(low))]
    if not hits:
        return "", []
    at = where[min(hits)]
    start = max(0, at - min(16, width // 3))  # a little context before: the match stays in view
    end = min(len(text), start + width)
    piece = " ".join(text[start:end].split("\n"))
    lead = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    shown = lead + piece + tail
    spans: list[tuple[int, int]] = []
    low_shown, where_shown = _folded(shown)
    for w in wanted:
        for m in w.finditer(low_shown):
            i, after = m.span()  # a combining mark after the word is the word's own
            spans.append(
                (where_shown[i], where_shown[after] if after < len(low_shown) else len(shown))
            )
    return shown, sorted(spans)
