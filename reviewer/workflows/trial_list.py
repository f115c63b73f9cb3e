"""The trials list as one job: filter, order and page the trials of the database (the app's trials
screen and `reviewer trials` read it the same way)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from reviewer.store.db import Store
from reviewer.store.trial_filter import SORT_COLUMNS, TrialFilter
from reviewer.store.trial_list import Page, TrialRow, page

__all__ = ["SORT_COLUMNS", "TrialFilter", "TrialListing", "TrialRow", "list_trials"]


@dataclass(frozen=True)
class TrialListing:
    """One page of the list: its rows, how many trials match, and the filter and order it used."""

    filter: TrialFilter
    page: Page

    def as_json(self) -> dict[str, Any]:
        f = self.filter
        return {
            "total": self.page.total,
            "first_index": self.page.first_index,
            "shown": len(self.page.rows),
            "sort": f.sort,
            "ascending": f.ascending if f.sort is not None else None,
            "filter": {k: v for k, v in asdict(f).items() if k not in ("sort", "ascending") and v},
            "trials": [{k: v for k, v in asdict(r).items() if k != "seq"} for r in self.page.rows],
        }


def list_trials(db: Store, f: TrialFilter, *, limit: int) -> TrialListing:
    """The first ``limit`` trials matching ``f`` in its order; SearchError for a bad search."""
    return TrialListing(f, page(db, f, limit=limit))
