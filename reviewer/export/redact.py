"""Mask secrets and personal data in exported records, counted by kind (what: ``detectors``).

Masks read ``<redacted:KIND>``; for ``password: x`` and URL credentials only the value is masked, so
the text still says what was there. JSON keys are masked like values. Order ids, prices, dates,
times, uuids, git shas and version numbers survive, because a regression task without them is
useless; the detectors check what they match (Luhn, mod-97, ...) to keep them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from reviewer.export.detectors import DETECTORS, KINDS, Detector, is_secret_name, is_secret_value

__all__ = ["KINDS", "Redactor", "mask"]


def mask(kind: str) -> str:
    return f"<redacted:{kind.replace(' ', '-')}>"


class Redactor:
    """Masks secrets in strings and counts what it masked (``counts`` by kind, ``total``)."""

    #: Long strings redacted last, remembered with what they masked: an export repeats the same
    #: system prompt in every task, and it is redacted once.
    REMEMBER = 256
    LONG = 256

    def __init__(self, remember: int = REMEMBER) -> None:
        self.counts: Counter[str] = Counter()
        self._seen: set[tuple[str, str]] | None = None  # within one record: count each secret once
        self._remember = remember
        self._done: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        self._found: list[tuple[str, str]] = []  # (kind, secret) masked in the string at hand

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def text(self, s: str) -> str:
        """``s`` with every secret masked."""
        long = self._remember and len(s) >= self.LONG
        if long and (done := self._done.get(s)) is not None:
            for kind, found in done[1]:
                self._tally(kind, found)
            return done[0]
        self._found = []
        out = s
        for d in DETECTORS:
            if d.hint is None or d.hint.search(out):
                out = self._sub(d, out)
        if long:
            if len(self._done) >= self._remember:
                self._done.clear()
            self._done[s] = (out, self._found)
        return out

    @contextmanager
    def one_record(self) -> Iterator[None]:
        """Within it, a secret repeated in one record (a note is also part of the expected text) is
        counted once."""
        self._seen = set()
        try:
            yield
        finally:
            self._seen = None

    def record(self, obj: Any, keep: frozenset[tuple[str, ...]] = frozenset()) -> Any:
        """``value`` for one exported record, counting a repeated secret once."""
        with self.one_record():
            return self.value(obj, keep)

    def value(self, obj: Any, keep: frozenset[tuple[str, ...]] = frozenset()) -> Any:
        """A JSON value with every string and every key masked, except the values at the key paths
        in ``keep`` (``("provenance", "trial_id")``)."""
        return self._value(obj, keep, (), False)

    def _value(
        self, obj: Any, keep: frozenset[tuple[str, ...]], path: tuple[str, ...], secret: bool
    ) -> Any:
        """``secret``: ``obj`` sits under a key that names a secret (``"api_key": ...``), where
        the value is the secret whatever its shape."""
        if isinstance(obj, str):
            if path in keep:
                return obj
            if secret and is_secret_value(obj):
                self._tally("credential", obj)
                return mask("credential")
            return self.text(obj)
        if secret and isinstance(obj, int | float) and not isinstance(obj, bool):
            digits = sum(ch.isdigit() for ch in repr(obj))
            if digits >= 6:  # a numeric PIN, key or token; a count or a flag stays
                self._tally("credential", repr(obj))
                return mask("credential")
            return obj
        if isinstance(obj, list):
            return [self._value(v, keep, path, secret) for v in obj]
        if isinstance(obj, dict):
            out: dict[str, Any] = {}
            for k, v in obj.items():
                key = self.text(k) if isinstance(k, str) else k
                if key in out:  # two keys masked alike: keep both values
                    n = 2
                    while f"{key} ({n})" in out:
                        n += 1
                    key = f"{key} ({n})"
                named = secret or (isinstance(k, str) and is_secret_name(k))
                out[key] = self._value(v, keep, (*path, k), named)
            return out
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

    def _sub(self, d: Detector, s: str) -> str:
        def repl(m: re.Match[str]) -> str:
            group = next((g for g in d.groups if m.group(g) is not None), None)
            if group is None:
                return m.group(0)
            found = m.group(group)
            if d.check is not None and not d.check(found):
                return m.group(0)
            if d.kept_after is not None and d.kept_after.search(
                s, max(0, m.start() - 40), m.start()
            ):
                return m.group(0)
            self._found.append((d.kind, found))
            self._tally(d.kind, found)
            start, end = m.start(group) - m.start(), m.end(group) - m.start()
            whole = m.group(0)
            return whole[:start] + mask(d.kind) + whole[end:]

        return d.pattern.sub(repl, s)

    def _tally(self, kind: str, found: str) -> None:
        if self._seen is None:
            self.counts[kind] += 1
        elif (kind, found) not in self._seen:
            self._seen.add((kind, found))
            self.counts[kind] += 1
