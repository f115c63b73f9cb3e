"""Rule regexes on a linear-time engine (RE2), so that no ``rules.toml`` can hang an import.

Python's ``re`` backtracks: ``(a+)+$`` takes a minute on 30 characters and four times as long per
two more, and it cannot be stopped from the worker threads the app checks rules in. RE2 matches in
time linear in the text. It has no backreferences, lookaround, atomic groups or possessive
quantifiers (they are what makes a match exponential); a rule using one is refused when it is loaded,
with the construct named, rather than run with a time limit whose verdict would depend on the
machine's load. ``\\d``, ``\\w``, ``\\s`` and ``\\b`` match ASCII only, as in RE2.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

#: What RE2's own message starts with -> the construct, as a rule's author would name it.
_CONSTRUCTS = (
    ("invalid perl operator: (?=", "a lookahead (?=...)"),
    ("invalid perl operator: (?!", "a negative lookahead (?!...)"),
    ("invalid perl operator: (?<=", "a lookbehind (?<=...)"),
    ("invalid perl operator: (?<!", "a negative lookbehind (?<!...)"),
    ("invalid perl operator: (?P", "a backreference (?P=name)"),
    ("invalid perl operator: (?>", "an atomic group (?>...)"),
    ("invalid perl operator: (?(", "a conditional group (?(...)"),
    ("invalid perl operator: (?#", "a comment group (?#...)"),
    ("bad repetition operator: *+", "a possessive quantifier *+"),
    ("bad repetition operator: ++", "a possessive quantifier ++"),
    ("bad repetition operator: ?+", "a possessive quantifier ?+"),
    ("invalid escape sequence: \\Z", "\\Z (write \\z for the end of the text)"),
    ("invalid repetition size", "a repetition count over 1000 (nested counts multiply)"),
)
_BACKREFERENCE = re.compile(r"invalid escape sequence: \\[1-9]")


class RegexRefused(ValueError):
    """A rule regex that cannot be used; the message says why in a few words."""


class RulePattern:
    """A compiled rule regex: :meth:`search` says whether it matches anywhere in a text, in time
    linear in the text. ``pattern`` is the regex as written."""

    __slots__ = ("_match", "_span", "pattern")

    def __init__(self, pattern: str, compiled: Any, anchor: Any, no_match: Any) -> None:
        self.pattern = pattern
        self._match = compiled.Match
        self._span = (anchor, no_match)

    def search(self, text: str) -> bool:
        data = text.encode("utf-8", "surrogatepass")
        anchor, no_match = self._span
        return bool(self._match(anchor, data, 0, len(data))[0] != no_match)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RulePattern) and other.pattern == self.pattern

    def __hash__(self) -> int:
        return hash(self.pattern)

    def __repr__(self) -> str:
        return f"RulePattern({self.pattern!r})"


def compile_rule_regex(pattern: str) -> RulePattern:
    """``pattern`` compiled for RE2; RegexRefused when it is not a regex or uses a construct RE2
    lacks."""
    import re2
    from re2 import _re2

    # Python's parser first, so that a pattern that is no regex at all is told as before (its
    # FutureWarnings, such as 'Possible nested set' for RE2's [[:alpha:]], are not for this user)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
            _refuse_empty_lower_bound(pattern)
    except re.error as e:
        raise RegexRefused(str(e)) from e
    except (RecursionError, MemoryError) as e:
        raise RegexRefused("nested too deeply") from e
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own copy of the error on stderr
    options.never_capture = True  # only whether it matches is asked
    try:
        compiled = _re2.RE2(pattern.encode("utf-8", "surrogatepass"), options)
    except Exception as e:  # the binding's own errors (a pattern it cannot take at all)
        raise RegexRefused(f"not supported by the linear-time engine: {e}") from e
    if not compiled.ok():
        raise RegexRefused(_why(compiled.error()))
    return RulePattern(pattern, compiled, re2._Anchor.UNANCHORED, re2._NULL_SPAN)


_EMPTY_LOWER = re.compile(r"\{,\d*\}")


def _refuse_empty_lower_bound(pattern: str) -> None:
    """RegexRefused for a repetition written ``{,n}``: Python reads it as ``{0,n}``, RE2 as the
    five characters, so a rule written for Python (as rules were) would silently never match."""
    from re import _parser  # type: ignore[attr-defined]

    parsed = None
    for found in _EMPTY_LOWER.finditer(pattern):
        i = found.start()
        slashes = len(pattern[:i]) - len(pattern[:i].rstrip("\\"))
        if slashes % 2:
            continue  # \{,3} is the text
        if parsed is None:
            parsed = repr(_parser.parse(pattern))
        literal = pattern[:i] + "\\" + pattern[i:]
        if repr(_parser.parse(literal)) != parsed:  # Python repeats here, RE2 would not
            text = found.group()
            raise RegexRefused(
                f"a repetition {text} means {{0,{text[2:]} in Python but the text {text} on RE2 "
                f"(the linear-time engine rules run on): write {{0,{text[2:]} (or \\{text} "
                "for the text)"
            )


def _why(error: str | bytes) -> str:
    message = error.decode("utf-8", "replace") if isinstance(error, bytes) else str(error)
    if _BACKREFERENCE.match(message):
        construct = "a backreference (\\1)"
    else:
        construct = next((name for head, name in _CONSTRUCTS if message.startswith(head)), "")
    if not construct:
        if "too large" in message or "too deep" in message:
            return f"too large for the linear-time engine ({message})"
        return f"not supported by the linear-time engine (RE2: {message})"
    return (
        f"{construct} is not supported (rules run on RE2, a linear-time engine, so that no "
        "pattern can hang an import)"
    )
