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
from reviewer.store.queries import short_ids as short_ids
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


def said_column(rows: Sequence[TrialRow], search: str | None) -> str:
    """What the list's last column shows for ROWS (the CLI and the app alike): "match" what a
    search found, "reason" each trial's reason; "prompt" the start of each trial's first prompt
    when no trial among them has a reason but some have a prompt (sessions with no outcome)."""
    if search:
        return "match"
    if any(r.reason for r in rows) or not any(r.prompt for r in rows):
        return "reason"
    return "prompt"


def list_trials(db: Store, f: TrialFilter, *, limit: int, match_width: int = 58) -> TrialListing:
    """The first ``limit`` trials matching ``f`` in its order, with what a search found in each
    (``match_width`` characters); SearchError for a bad search."""
    listing = page(db, f, limit=limit)
    if not f.search:
        return TrialListing(f, listing)
    found = match_snippets(db, listing.rows, f.search, system=f.search_system, width=match_width)
    return TrialListing(f, listing, found)


@dataclass(frozen=True)
class TrialView:
    """One trial as the app's transcript shows it: its header, every message, its rule
    violations, the judge's verdicts (newest first) and the standing human labels; for
    `reviewer show` (``lines``, ``as_json``)."""

    header: TrialHeader
    trial: Any  # models.Trial
    record: str  # as stored: native JSON (what the app's P opens)
    violations: list[Violation]
    verdicts: list[Any]  # VerdictRow
    labels: list[Any]  # models.Label, by labeler
    blind: bool = False

    def as_json(self) -> dict[str, Any]:
        """The header's columns, the record as stored (native JSON: a blind view leaves out the
        judge's verdict it may carry), the violations, verdicts (none when blind) and labels."""
        import json

        from reviewer.models import stored_outcome

        h = asdict(self.header)
        h.pop("seq", None)
        h["outcome"] = stored_outcome(self.header.outcome, self.header.success)
        return {
            "trial": h,
            "record": _without_judge(json.loads(self.record))
            if self.blind
            else json.loads(self.record),
            "violations": [v.to_dict() for v in self.violations],
            "verdicts": None if self.blind else [asdict(v) for v in self.verdicts],
            "labels": [
                {
                    "labeler": x.labeler,
                    "verdict": x.verdict,
                    "note": x.note,
                    "tag": x.tag,
                    "criteria": dict(x.criteria),
                    "rubric": x.rubric,
                    "at": x.at,
                    "queue": x.queue,
                }
                for x in self.labels
            ],
        }

    def lines(self, *, system: bool = False) -> list[str]:
        """The trial as plain text, every untrusted piece made visible (no escape reaches the
        terminal): a header, then each message under its role (the system prompt folded to its
        first line unless ``system``), tool calls with their arguments, each violation after the
        message it happened at, then the verdicts and labels."""
        import json

        from reviewer.models import stored_outcome
        from reviewer.text import money_text, seconds_text, visible

        h, t = self.header, self.trial
        out = [
            f"trial {h.id} · run {visible(h.run, single_line=True)} · task "
            f"{visible(h.task_id, single_line=True)} · trial {h.trial}"
            + (f" ({visible(h.source_file, single_line=True)})" if h.source_file else "")
        ]
        facts = [stored_outcome(h.outcome, h.success)]
        if h.reward is not None:
            facts.append(f"reward {h.reward:.2f}")
        facts.append(f"steps {h.steps}")
        facts.append(f"cost {money_text(h.cost_usd)}")
        facts.append("latency " + ("-" if h.latency_s is None else seconds_text(h.latency_s)))
        facts.append(f"tool errors {h.tool_errors}")
        out.append(" · ".join(facts))
        if h.termination:
            out.append(f"ended: {visible(h.termination, single_line=True)}")
        for label, text in expectation_lines(t):
            out.append(f"{label}: {visible(text, single_line=True)}")
        if h.reason:
            out.append(f"reason: {visible(h.reason, single_line=True)}")
        if h.error_type or h.error_message:
            err = ": ".join(x for x in (h.error_type, h.error_message) if x)
            out.append(f"error: {visible(err, single_line=True)}")
        at: dict[int | None, list[Violation]] = {}
        n = len(t.messages)
        # one at no message of the trial is the whole trial's, as in the app
        for v in self.violations:
            i = v.message_index
            at.setdefault(i if i is not None and 0 <= i < n else None, []).append(v)

        def flagged(index: int | None) -> None:
            # messages numbered from 0 as the app's transcript (#0) and a rule's detail number them
            for v in at.get(index, []):
                where = "the whole trial" if index is None else f"message #{index}"
                out.append(
                    f"⚑ {v.severity} rule {visible(v.rule_id, single_line=True)} ({where}): "
                    f"{visible(v.detail, single_line=True)}"
                )

        flagged(None)
        for i, m in enumerate(t.messages):
            role = m.role + (f" {m.name}" if m.role == "tool" and m.name else "")
            out.append("")
            error = " (error)" if m.is_error else ""
            out.append(f"── {visible(role, single_line=True)} #{i}{error} ──")
            text = visible(m.content) if m.content else ""
            if m.role == "system" and not system and text.count("\n"):
                first, rest = text.split("\n", 1)
                more = rest.count("\n") + 1
                text = f"{first}\n… {more} more line{'s' if more > 1 else ''} (--system shows them)"
            if text:
                out.append(text)
            for c in m.tool_calls:
                args = c.arguments
                shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
                out.append(
                    f"→ {visible(c.name, single_line=True)} {visible(shown, single_line=True)}"
                )
            flagged(i)
        out.append("")
        if self.blind:
            out.append("judge: hidden (--blind)")
        for v in self.verdicts if not self.blind else []:
            why = f" — {visible(v.rationale, single_line=True)}" if v.rationale else ""
            out.append(f"judge {visible(v.judge, single_line=True)}: {v.verdict}{why}")
        if not self.verdicts and not self.blind:
            out.append("judge: no verdict")
        for x in self.labels:
            tag = f" [{visible(x.tag, single_line=True)}]" if x.tag else ""
            note = f" — {visible(x.note, single_line=True)}" if x.note else ""
            out.append(f"label {visible(x.labeler, single_line=True)}: {x.verdict}{tag}{note}")
        if not self.labels:
            out.append("label: none")
        return out


def show_trial(db: Store, ref: str, *, blind: bool = False) -> TrialView:
    """TRIAL (its id or a unique prefix of 6+ characters) as the transcript shows it; ValueError
    in one line when no trial or several match."""
    from reviewer.store.labels import standing_by_labeler
    from reviewer.workflows.labels import resolve_trial

    trial_id = resolve_trial(db, ref)
    header = trial_header(db, trial_id)
    trial = load_trial(db, trial_id)
    record = native_record(db, trial_id)
    if header is None or trial is None or record is None:
        raise ValueError(f"no trial with id {ref!r}")
    return TrialView(
        header,
        trial,
        record,
        list(trial_violations(db, trial_id)),
        list(verdicts_for(db, trial_id)),
        list(standing_by_labeler(db, trial_id).values()),
        blind,
    )


def _without_judge(record: Any) -> Any:
    """A native record without the judge's verdict it carries (``judge``), for a blind view."""
    if isinstance(record, dict):
        return {k: v for k, v in record.items() if k != "judge"}
    return record
