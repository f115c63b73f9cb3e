"""Flakiness attribution of a stored run: the one function `reviewer report` and the tasks screen call."""

from __future__ import annotations

from reviewer.metrics.flakiness import TaskFlakiness, attribute
from reviewer.store.db import Store
from reviewer.store.flakiness import trial_sources


def run_flakiness(db: Store, run: str) -> list[TaskFlakiness]:
    """Every task of ``run`` with its failures split by source (see ``metrics.flakiness``)."""
    return attribute(trial_sources(db, run))
