"""The trials as stored, for the faces to list, search and show (the trials list, the transcript,
the palette): plain reads of the store, named here so the faces import workflows only; and the
trials list as one job (``list_trials``: filtered, ordered, one page), for the app's trials screen
and `reviewer trials`."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from reviewer.clustering.outcomes import expectation_lines as expectation_lines
from reviewer.metrics.rules import Violation as Violation
from reviewer.store.db import Store
from reviewer.store.queries import TrialHeader as TrialHeader
from reviewer.store.queries import list_runs as list_runs
from reviewer.store.queries import task_table as task_table
from reviewer.store.queries import trial_header as trial_header
from reviewer.store.queries import trials_by_id_prefix as trials_by_id_prefix
from reviewer.store.queries import verdicts_for as verdicts_for
from reviewer.store.search_query import search_words as search_words
from reviewer.store.search_query import snippet as snippet
from reviewer.store.search_text import search_text as search_text
from reviewer.store.search_text import system_text as system_text
from reviewer.store.trial_filter import SORT_COLUMNS as SORT_COLUMNS
from reviewer.store.trial_list import FilterSequence as FilterSequence
from reviewer.store.trial_list import Page as Page
from reviewer.store.trial_list import SearchError as SearchError
from reviewer.store.trial_list import TrialFilter as TrialFilter
from reviewer.store.trial_list import TrialRow as TrialRow
from reviewer.store.trial_list import page as page
from reviewer.store.trials import load_trial as load_trial
from reviewer.store.trials import native_record as native_record
from reviewer.store.violations import trial_violations as trial_violations


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
