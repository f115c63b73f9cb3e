"""The trials as stored, for the faces to list, search and show (the trials list, the transcript,
the palette): plain reads of the store, named here so the faces import workflows only."""

from __future__ import annotations

from reviewer.metrics.rules import Violation as Violation
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
from reviewer.store.trial_list import FilterSequence as FilterSequence
from reviewer.store.trial_list import Page as Page
from reviewer.store.trial_list import SearchError as SearchError
from reviewer.store.trial_list import TrialFilter as TrialFilter
from reviewer.store.trial_list import TrialRow as TrialRow
from reviewer.store.trial_list import page as page
from reviewer.store.trials import load_trial as load_trial
from reviewer.store.trials import native_record as native_record
from reviewer.store.violations import trial_violations as trial_violations
