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

from reviewer.export.detectors import DETECTORS, KINDS, Detector

__all__ = ["KINDS", "Redactor", "mask"]


def mask(kind: str) -> str:
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
        for d in DETECTORS:
            if d.hint is None or d.hint.search(s):
                s = self._sub(d, s)
        return s

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
        return self._value(obj, keep, ())

    def _value(self, obj: Any, keep: frozenset[tuple[str, ...]], path: tuple[str, ...]) -> Any:
        if isinstance(obj, str):
            return obj if path in keep else self.text(obj)
        if isinstance(obj, list):
            return [self._value(v, keep, path) for v in obj]
        if isinstance(obj, dict):
            out: dict[str, Any] = {}
            for k, v in obj.items():
                key = self.text(k) if isinstance(k, str) else k
                if key in out:  # two keys masked alike: keep both values
                    n = 2
                    while f"{key} ({n})" in out:
                        n += 1
                    key = f"{key} ({n})"
                out[key] = self._value(v, keep, (*path, k))
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
            self._count(d.kind, found)
            start, end = m.start(group) - m.start(), m.end(group) - m.start()
            whole = m.group(0)
            return whole[:start] + mask(d.kind) + whole[end:]

        return d.pattern.sub(repl, s)

    def _count(self, kind: str, found: str) -> None:
        if self._seen is None:
            self.counts[kind] += 1
        elif (kind, found) not in self._seen:
            self._seen.add((kind, found))
            self.counts[kind] += 1
