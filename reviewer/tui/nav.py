"""Stepping through the trials of the list a transcript was opened from (n / p in the viewer)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from reviewer.workflows.store_access import Store


class TrialSequence(Protocol):
    """An ordered list of trials, possibly huge; asked from a worker thread with that thread's connection."""

    def neighbour(self, db: Store, trial_id: str, step: int) -> str | None:
        """The trial ``step`` places after (negative: before) ``trial_id``, or None past either end."""
        ...

    def position(self, db: Store, trial_id: str) -> tuple[int, int] | None:
        """(1-based position of ``trial_id``, total), or None when unknown."""
        ...


class ListSequence:
    """A sequence over ids already in memory (a queue, a cluster's members, a test)."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)
        self._index = {tid: i for i, tid in enumerate(self.ids)}

    def neighbour(self, db: Store, trial_id: str, step: int) -> str | None:
        i = self._index.get(trial_id)
        if i is None:
            return None
        j = i + step
        return self.ids[j] if 0 <= j < len(self.ids) else None

    def position(self, db: Store, trial_id: str) -> tuple[int, int] | None:
        i = self._index.get(trial_id)
        return None if i is None else (i + 1, len(self.ids))
