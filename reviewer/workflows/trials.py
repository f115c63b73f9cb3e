"""The trials as stored, for the faces to list, search and show (the trials list, the transcript,
the palette): plain reads of the store, named here so the faces import workflows only; and the
trials list as one job (``list_trials``: filtered, ordered, one page), for the app's trials screen
and `reviewer trials`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
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
from reviewer.store.search_query import search_words, snippet
from reviewer.store.search_text import search_text, system_text
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

#: What a search found in a trial: a piece of its text around the first word found, on one line,
#: and the (start, end) of each word of the search in it.
Snippet = tuple[str, list[tuple[int, int]]]


def match_snippets(
    db: Store, rows: Sequence[TrialRow], search: str, *, system: bool, width: int
) -> dict[str, Snippet]:
    """For each trial of a searched page, by id: about ``width`` characters of its conversation
    (or, with ``system``, of its system prompt, marked ``system: ``) around the first word of the
    search found in it, as search finds words (case and diacritics aside). A trial whose match is
    none the snippet can show (a prefix query, a word only the index splits) has none."""
    words = search_words(search)
    out: dict[str, Snippet] = {}
    if not words:
        return out
    for r in rows:
        trial = load_trial(db, r.id)
        if trial is None:
            continue
        got = snippet(search_text(trial), words, width)
        if not got[0] and system:
            text, spans = snippet(system_text(trial), words, width - 9)
            got = ("system: " + text, [(a + 8, b + 8) for a, b in spans]) if text else got
        if got[0]:
            out[r.id] = got
    return out


def resolve_cluster(db: Store, ref: str) -> str:
    """The id of a cluster of the newest clustering from its id, a unique id prefix or its rank as
    `reviewer cluster` prints it: what ``TrialFilter.cluster_id`` takes, resolved as
    `export --cluster` resolves it. ValueError (one line naming the clusters there are) otherwise."""
    from reviewer.export.select import resolve_cluster as resolve

    return resolve(db, ref)


@dataclass(frozen=True)
class TrialListing:
    """One page of the list: its rows, how many trials match, and the filter and order it used;
    when searching, what the search found in each (``matches``, by trial id)."""

    filter: TrialFilter
    page: Page
    matches: dict[str, Snippet] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        f = self.filter
        return {
            "total": self.page.total,
            "first_index": self.page.first_index,
            "shown": len(self.page.rows),
            "sort": f.sort,
            "ascending": f.ascending if f.sort is not None else None,
            "filter": {k: v for k, v in asdict(f).items() if k not in ("sort", "ascending") and v},
            "trials": [self._row_json(r) for r in self.page.rows],
        }

    def _row_json(self, r: TrialRow) -> dict[str, Any]:
        row = {k: v for k, v in asdict(r).items() if k != "seq"}
        if self.filter.search:
            found = self.matches.get(r.id)
            row["match"] = found[0] if found else None
        return row


def list_trials(db: Store, f: TrialFilter, *, limit: int, match_width: int = 58) -> TrialListing:
    """The first ``limit`` trials matching ``f`` in its order, with what a search found in each
    (``match_width`` characters); SearchError for a bad search."""
    listing = page(db, f, limit=limit)
    if not f.search:
        return TrialListing(f, listing)
    found = match_snippets(db, listing.rows, f.search, system=f.search_system, width=match_width)
    return TrialListing(f, listing, found)
