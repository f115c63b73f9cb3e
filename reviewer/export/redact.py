"""Mask secrets in exported text: API keys, bearer tokens, emails and phone numbers, counted by kind.

Masks read ``<redacted:KIND>``. The patterns are narrow on purpose: order ids (``W5521``), prices,
dates, times and version numbers must survive, because a regression task without them is useless.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

#: Kinds in the order they are applied: specific key shapes before the generic "key = value" rule.
KINDS = ("api key", "bearer token", "secret", "email", "phone number")

_API_KEY = re.compile(
    r"(?<![\w-])(?:"
    r"sk-ant-[A-Za-z0-9_-]{16,}"  # Anthropic
    r"|sk-(?:proj-|live-|test-)?[A-Za-z0-9_-]{20,}"  # OpenAI and look-alikes
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{30,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{40,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"  # Slack
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r")(?![\w-])"
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)([A-Za-z0-9\-._~+/]{8,}=*)")
# a long token after a word naming a secret: api_key=..., "token": "...", password: ...
_SECRET = re.compile(
    r"(?i)\b((?:api[_-]?key|apikey|access[_-]?key|secret(?:[_-]?key)?|(?:access|auth|refresh|session)?"
    r"[_-]?token|password|passwd|client[_-]?secret)\b[\"']?\s*[:=]\s*[\"']?)"
    r"([A-Za-z0-9+/_\-.=]{16,})"
)
_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"
)
# +1 415 555 0100, +44 20 7946 0958, (415) 555-0100, 415-555-0100, 415.555.0100; bare numbers
# separated by spaces ("sizes 100 200 300") are not phone numbers, nor are dates or ids
_PHONE = re.compile(
    r"(?<![\w.+/-])(?:"
    r"\+\d{1,3}[\s.-]?\d{1,4}(?:[\s.-]?\d{2,4}){2,3}"
    r"|\(\d{2,4}\)\s?\d{3,4}[\s.-]\d{3,4}"
    r"|\d{3}([.-])\d{3,4}\1\d{4}"
    r")(?![\w-]|[.:/]\d)"
)
_PHONE_DIGITS = (9, 15)


def _mask(kind: str) -> str:
    return f"<redacted:{kind.replace(' ', '-')}>"


class Redactor:
    """Masks secrets in strings and counts what it masked (``counts`` by kind, ``total``)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self._seen: set[tuple[str, str]] | None = None  # within one record: count each secret once

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, s: str) -> str:
        """``s`` with every secret masked."""
        s = self._sub(_API_KEY, s, "api key", lambda m: _mask("api key"))
        s = self._sub(_BEARER, s, "bearer token", lambda m: m.group(1) + _mask("bearer token"))
        s = self._sub(_SECRET, s, "secret", self._secret)
        s = self._sub(_EMAIL, s, "email", lambda m: _mask("email"))
        return self._sub(_PHONE, s, "phone number", self._phone)

    def record(self, obj: Any, keep: frozenset[str] = frozenset()) -> Any:
        """``value`` for one exported record: a secret repeated in it (a note is also part of the
        expected text) is masked everywhere and counted once."""
        self._seen = set()
        try:
            return self.value(obj, keep)
        finally:
            self._seen = None

    def value(self, obj: Any, keep: frozenset[str] = frozenset()) -> Any:
        """A JSON value with every string masked, except the values of keys named in ``keep``."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, list):
            return [self.value(v, keep) for v in obj]
        if isinstance(obj, dict):
            return {k: v if k in keep else self.value(v, keep) for k, v in obj.items()}
        return obj

    def summary(self) -> str:
        """ "3 secrets (2 api keys, 1 email)", or "no secrets"."""
        if not self.total:
            return "no secrets"
        parts = [
            f"{self.counts[k]} {k}{'' if self.counts[k] == 1 else 's'}"
            for k in KINDS
            if self.counts[k]
        ]
        return f"{self.total} secret{'' if self.total == 1 else 's'} ({', '.join(parts)})"

    def _sub(
        self, pattern: re.Pattern[str], s: str, kind: str, repl: Callable[[re.Match[str]], str]
    ) -> str:
        def counted(m: re.Match[str]) -> str:
            out = repl(m)
            if out != m.group(0):
                if self._seen is None:
                    self.counts[kind] += 1
                elif (kind, m.group(0)) not in self._seen:
                    self._seen.add((kind, m.group(0)))
                    self.counts[kind] += 1
            return out

        return pattern.sub(counted, s)

    @staticmethod
    def _secret(m: re.Match[str]) -> str:
        value = m.group(2)
        # a real token mixes letters and digits; "password: correcthorsebatterystaple" is prose
        if not (re.search(r"\d", value) and re.search(r"[A-Za-z]", value)):
            return m.group(0)
        return m.group(1) + _mask("secret")

    @staticmethod
    def _phone(m: re.Match[str]) -> str:
        digits = sum(ch.isdigit() for ch in m.group(0))
        low, high = _PHONE_DIGITS
        return _mask("phone number") if low <= digits <= high else m.group(0)
