"""The filtered, paged list of trials: keyset pages on seq, cached counts, steps through the list.

Every page is fetched by ``seq > after`` / ``seq < before`` with a LIMIT (never OFFSET), so a page costs
the same at row 1 and at row 98,000. Only counts grow with the database, and they are cached per filter
until the data they depend on changes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from reviewer.store.db import Store
from reviewer.store.search_query import SearchError, match_query, ts_query
from reviewer.store.summaries import verdicts_ready
from reviewer.store.trial_filter import (
    TrialFilter,
    clear_label_memo,
    conditions,
    data_version,
    latest_verdict,
    shown_label,
)

__all__ = [
    "FilterSequence",
    "Page",
    "SearchError",
    "TrialFilter",
    "TrialRow",
    "count",
    "match_query",
    "neighbour",
    "page",
    "position",
]


@dataclass(frozen=True)
class TrialRow:
    id: str
    seq: int
    run: str
    task_id: str
    trial: int
    success: bool
    reward: float | None
    steps: int
    cost_usd: float | None
    latency_s: float | None
    verdict: str | None
    label: str | None
    violations: int
    reason: str | None
    outcome: str = "fail"  # pass | fail | infra | unscored
    model: str | None = None  # the model the trial's metadata names (Inspect logs), if any
    tool_errors: int = 0
    #: the start of the trial's instruction (its first prompt, 400 characters at most) when it has
    #: no reason: what tells sessions with no outcome apart (Claude Code sessions of one project)
    prompt: str | None = None


@dataclass(frozen=True)
class Page:
    """``rows`` of the filtered list, starting at 0-based ``first_index`` of ``total``."""

    rows: list[TrialRow]
    total: int
    first_index: int

    @property
    def end_index(self) -> int:
        return self.first_index + len(self.rows)

    @property
    def has_next(self) -> bool:
        return self.end_index < self.total

    @property
    def has_previous(self) -> bool:
        return self.first_index > 0


def _run(db: Store, f: TrialFilter, sql: str, params: Sequence[Any]) -> list[Any]:
    try:
        return db.execute(sql, list(params)).fetchall()
    except sqlite3.OperationalError as e:
        msg = str(e)
        if f.search and (msg.startswith("fts5:") or "no such column" in msg or "MATCH" in msg):
            hint = "put words in double quotes to search for them as written"
            raise SearchError(f"invalid search {f.search!r} ({msg}): {hint}") from e
        if f.search and db.dialect == "postgres" and "tsquery" in msg:  # never made (ts_query)
            raise SearchError(f"invalid search {f.search!r} ({msg})") from e
        raise


@dataclass(frozen=True)
class _Search:
    """The search as the database's full-text index takes it: ``term``, a condition on
    ``trials_fts`` with one parameter, ``param``. ``ordered``: the index yields rowids in order
    (FTS5), so it can drive a page and stop after ``limit`` hits."""

    term: str
    param: str
    ordered: bool

    def seqs(self, bound: str = "") -> str:
        """``t.seq IN`` the matching rowids (``bound``: more conditions on them)."""
        return f"t.seq IN (SELECT rowid FROM trials_fts WHERE {self.term}{bound})"


def _match(db: Store, f: TrialFilter) -> _Search | None:
    """The search of ``f`` for ``db``: FTS5's MATCH on SQLite, a tsquery on PostgreSQL."""
    if not f.search:
        return None
    if db.dialect == "postgres":
        q = ts_query(f.search, system=f.search_system)
        if q is None:
            return None
        words = "(trials_fts.text || trials_fts.system)" if q.system else "trials_fts.text"
        return _Search(f"{words} @@ CAST(? AS tsquery)", q.query, ordered=False)
    match = match_query(f.search, system=f.search_system)
    return None if match is None else _Search("trials_fts MATCH ?", match, ordered=True)


# ---- counts ----------------------------------------------------------------------------------------

_CACHE_SIZE = 512
_cache: OrderedDict[tuple[Any, ...], int] = OrderedDict()
_cache_lock = threading.Lock()


def clear_cache() -> None:
    """Forget every cached count (tests; a writer that edits rows in place)."""
    with _cache_lock:
        _cache.clear()
    clear_label_memo()


# What a task_stats row counts of each outcome (its ``n`` counts every trial of the task).
_STATS_COUNT = {
    None: "n",
    "pass": "c",
    "fail": "n - c - infra - unscored",
    "infra": "infra",
    "unscored": "unscored",
}

# The same of a run_totals row (its ``n`` counts the scored trials only, as task_counts does).
_RUN_TOTALS_COUNT = {
    None: "n + infra + unscored",
    "pass": "c",
    "fail": "n - c",
    "infra": "infra",
    "unscored": "unscored",
}


def _verdict_count(db: Store, f: TrialFilter) -> int | None:
    """The count of a filter on the latest verdict of any judge with run and outcome, summed from
    ``verdict_counts`` (m016: one row per run, outcome and verdict); None for any other filter, or
    while a verdict written without ``take_in_verdicts`` is not counted there yet."""
    if f.verdict is None or f.judge is not None or f.task_id is not None:
        return None
    if f.label is not None or f.cluster_id is not None or f.rule_id is not None:
        return None
    if f.search is not None or not verdicts_ready(db):
        return None
    q, params = _equal(run=f.run, outcome=f.outcome)
    if f.verdict == "none":
        # everyone less the judged, in one statement: one snapshot of both tables (two statements
        # straddling another process's commit of judged trials counted them judged, not there)
        everyone = _RUN_TOTALS_COUNT.get(f.outcome)
        if everyone is None:
            return None
        where = " AND ".join(q) or "1"
        in_run = "run = ?" if f.run is not None else "1"
        row = db.execute(
            f"SELECT (SELECT COALESCE(SUM({everyone}), 0) FROM run_totals WHERE {in_run}) "
            f"- (SELECT COALESCE(SUM(n), 0) FROM verdict_counts WHERE {where})",
            [*([f.run] if f.run is not None else []), *params],
        )
        return int(row.fetchone()[0])
    where = " AND ".join([*q, "verdict = ?"])
    row = db.execute(
        f"SELECT COALESCE(SUM(n), 0) FROM verdict_counts WHERE {where}", [*params, f.verdict]
    )
    return int(row.fetchone()[0])


def _equal(**columns: str | None) -> tuple[list[str], list[str]]:
    """``column = ?`` conditions and their parameters for the columns given a value."""
    given = {c: v for c, v in columns.items() if v is not None}
    return [f"{c} = ?" for c in given], list(given.values())


def _stats_count(db: Store, f: TrialFilter) -> int | None:
    """The count of a filter on run, task and outcome alone, summed from the per-task counts the
    importer keeps (``task_stats``, one row per task: O(tasks), not O(trials)); None for any other
    filter. Trials are only ever added (never updated or deleted), through the writer that keeps
    these counts, so the sum is the same number as counting the trials."""
    if f.verdict is not None:
        return _verdict_count(db, f)
    if f.label is not None or f.cluster_id is not None:
        return None
    if f.rule_id is not None or f.search is not None:
        return None
    expr = _STATS_COUNT.get(f.outcome)
    if expr is None:
        return None
    q, params = _equal(run=f.run, task_id=f.task_id)
    where = " AND ".join(q) or "1"
    if f.task_id is None:  # the same sums per run, kept in run_totals (m016): O(runs)
        expr = _RUN_TOTALS_COUNT[f.outcome]
        row = db.execute(f"SELECT COALESCE(SUM({expr}), 0) FROM run_totals WHERE {where}", params)
        return int(row.fetchone()[0])
    row = db.execute(f"SELECT COALESCE(SUM({expr}), 0) FROM task_stats WHERE {where}", params)
    return int(row.fetchone()[0])


def _before_in_order(f: TrialFilter, before: int) -> tuple[str, list[Any]]:
    """The condition "comes before the trial ``before`` (a seq) in the list's order"."""
    key = f.key_sql("t")
    mark = f.key_sql("x")
    return f"({key}, t.seq) < ((SELECT {mark} FROM trials x WHERE x.seq = ?), ?)", [before, before]


def _count(db: Store, f: TrialFilter, before: int | None = None) -> int:
    """Trials matching ``f`` (with ``seq < before`` when given: before that trial in the list's order)."""
    if before is None and (n := _stats_count(db, f)) is not None:
        return n
    match = _match(db, f)
    if before is not None and f.sort is not None:
        q = conditions(db, replace(f, search=None), correlated=False)
        if match is not None:
            q.add(match.seqs(), match.param)
        term, tp = _before_in_order(f, before)
        q.add(term, *tp)
        sql = f"SELECT COUNT(*) FROM trials t WHERE {q.where()}"
        return int(_run(db, f, sql, q.params)[0][0])
    rest = replace(f, search=None)
    bound = "" if before is None else " AND rowid < ?"
    bp: list[Any] = [] if before is None else [before]
    params: list[Any]
    if rest.is_empty and match is None:
        # rowid range, or the smallest index for the whole table
        if db.dialect == "postgres":  # no rowid there: seq is the key
            bound = bound.replace("rowid", "seq")
        sql, params = f"SELECT COUNT(*) FROM trials WHERE 1{bound}", bp
    elif rest.is_empty and match is not None:
        sql = f"SELECT COUNT(*) FROM trials_fts WHERE {match.term}{bound}"
        params = [match.param, *bp]
    else:
        q = conditions(db, rest, correlated=False)
        if match is not None:
            q.add(match.seqs(bound), match.param, *bp)
        elif before is not None:
            q.add("t.seq < ?", before)
        sql, params = f"SELECT COUNT(*) FROM trials t WHERE {q.where()}", q.params
    return int(_run(db, f, sql, params)[0][0])


def _cached_count(db: Store, f: TrialFilter, before: int | None = None) -> int:
    version = data_version(db)
    if version is None:
        return _count(db, f, before)
    key = (version, f, before)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    n = _count(db, f, before)
    with _cache_lock:
        _cache[key] = n
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return n


def count(db: Store, f: TrialFilter, *, cached: bool = True) -> int:
    """How many trials match ``f``; SearchError for an invalid search."""
    return _cached_count(db, f) if cached else _count(db, f)


# ---- pages -----------------------------------------------------------------------------------------


def _prefer_set(total: int, n: int, limit: int) -> bool:
    """Scanning in seq order finds a page after about limit * n / total rows; fetching and sorting the
    whole match costs about total. Scan unless the match is so sparse that the set is cheaper."""
    return total * total < limit * n


def _slice(
    db: Store,
    f: TrialFilter,
    *,
    after: int | None = None,
    before: int | None = None,
    limit: int,
    desc: bool = False,
    from_seq: int | None = None,
) -> list[tuple[int, str]]:
    """(seq, id) of up to ``limit`` matching trials strictly between ``after`` and ``before`` (seqs
    of trials in the list: with a sort, the trials after and before those in the sort's order), or
    from ``from_seq`` on (that trial included)."""
    match = _match(db, f)
    total = _cached_count(db, f)
    if total == 0:
        return []
    if f.sort is not None:
        return _sorted_slice(
            db, f, match, after=after, before=before, limit=limit, desc=desc, from_seq=from_seq
        )
    if from_seq is not None:
        after = from_seq - 1
    sparse = _prefer_set(total, _cached_count(db, TrialFilter()), limit)
    q = conditions(db, f, correlated=not sparse)
    order = "DESC" if desc else "ASC"
    if match is not None and match.ordered and not sparse:
        # the FTS index yields rowids in order: let it drive, so a page stops after `limit` hits
        key = "trials_fts.rowid"
        source = "trials_fts CROSS JOIN trials t ON t.seq = trials_fts.rowid"
        q.terms.insert(0, match.term)
        q.params.insert(0, match.param)
    else:
        key, source = "t.seq", "trials t"
        if match is not None:
            q.add(match.seqs(), match.param)
    if after is not None:
        q.add(f"{key} > ?", after)
    if before is not None:
        q.add(f"{key} < ?", before)
    sql = f"SELECT t.seq, t.id FROM {source} WHERE {q.where()} ORDER BY {key} {order} LIMIT ?"
    return [(int(s), str(i)) for s, i in _run(db, f, sql, [*q.params, limit])]


def _sorted_slice(
    db: Store,
    f: TrialFilter,
    match: _Search | None,
    *,
    after: int | None,
    before: int | None,
    limit: int,
    desc: bool,
    from_seq: int | None = None,
) -> list[tuple[int, str]]:
    """``_slice`` in a sort's order: (key, seq) after and before the key of the boundary trials. The
    whole match is read and sorted for each page (no index per sort column): a run's list, or a
    million trials in about a second."""
    q = conditions(db, f, correlated=False)
    if match is not None:
        q.add(match.seqs(), match.param)
    key = f.key_sql("t")
    mark = f.key_sql("x")
    if after is not None:
        q.add(f"({key}, t.seq) > ((SELECT {mark} FROM trials x WHERE x.seq = ?), ?)", after, after)
    if from_seq is not None:
        q.add(
            f"({key}, t.seq) >= ((SELECT {mark} FROM trials x WHERE x.seq = ?), ?)",
            from_seq,
            from_seq,
        )
    if before is not None:
        term, tp = _before_in_order(f, before)
        q.add(term, *tp)
    order = "DESC" if desc else "ASC"
    sql = (
        f"SELECT t.seq, t.id FROM trials t WHERE {q.where()} "
        f"ORDER BY {key} {order}, t.seq {order} LIMIT ?"
    )
    return [(int(s), str(i)) for s, i in _run(db, f, sql, [*q.params, limit])]


def _rows(db: Store, f: TrialFilter, seqs: Sequence[int]) -> list[TrialRow]:
    """The list columns of the trials ``seqs`` (a page), in the order given."""
    if not seqs:
        return []
    marks = ",".join("?" * len(seqs))
    jp = [] if f.judge is None else [f.judge]
    lp = [] if f.labeler is None else [f.labeler]
    rows = db.execute(
        "SELECT t.id, t.seq, t.run, t.task_id, t.trial, t.success, t.reward, t.steps, t.cost_usd, "
        f"t.latency_s, {latest_verdict(f.judge is not None)}, "
        "(SELECT COUNT(*) FROM violations x WHERE x.trial_id = t.id), t.reason, "
        f"{shown_label(f.labeler is not None)}, t.outcome, "
        "CASE WHEN json_valid(t.metadata) THEN json_extract(t.metadata, '$.model') END, "
        "t.tool_errors, CASE WHEN COALESCE(t.reason, '') = '' THEN substr(t.instruction, 1, 400) "
        f"END FROM trials t WHERE t.seq IN ({marks}) ORDER BY t.seq",
        [*jp, *lp, *seqs],
    ).fetchall()
    at = {seq: i for i, seq in enumerate(seqs)}
    rows = sorted(rows, key=lambda r: at[int(r[1])])
    return [
        TrialRow(
            id=r[0],
            seq=r[1],
            run=r[2],
            task_id=r[3],
            trial=r[4],
            success=bool(r[5]),
            reward=r[6],
            steps=r[7],
            cost_usd=r[8],
            latency_s=r[9],
            verdict=r[10],
            label=r[13],
            violations=int(r[11]),
            reason=r[12],
            outcome=str(r[14]),
            model=r[15] if isinstance(r[15], str) and r[15] else None,
            tool_errors=int(r[16] or 0),
            prompt=r[17] or None,
        )
        for r in rows
    ]


def page(
    db: Store,
    f: TrialFilter,
    after_seq: int | None = None,
    before_seq: int | None = None,
    limit: int = 200,
    *,
    known_before: int | None = None,
    from_seq: int | None = None,
) -> Page:
    """The ``limit`` matching trials after ``after_seq`` (or before ``before_seq``, or from
    ``from_seq`` on, that trial included: the page shown, read again; none: the first).

    ``known_before`` is how many matching trials lie before the boundary when the caller knows it from
    the page it is turning (``p.end_index`` forward, ``p.first_index`` back): it saves a count.
    """
    if sum(x is not None for x in (after_seq, before_seq, from_seq)) > 1:
        raise ValueError("page: give one of after_seq, before_seq and from_seq")
    total = _cached_count(db, f)
    if before_seq is not None:
        hits = _slice(db, f, before=before_seq, limit=limit, desc=True)[::-1]
    else:
        hits = _slice(db, f, after=after_seq, limit=limit, from_seq=from_seq)
    rows = _rows(db, f, [s for s, _ in hits])
    if not rows:
        first = total if after_seq is not None or from_seq is not None else 0
    elif after_seq is None and before_seq is None and from_seq is None:
        first = 0
    elif known_before is not None:
        first = known_before if before_seq is None else max(0, known_before - len(rows))
    else:
        first = _cached_count(db, f, rows[0].seq)
    return Page(rows, total, first)


def _seq_of(db: Store, trial_id: str) -> int | None:
    row = db.execute("SELECT seq FROM trials WHERE id = ?", [trial_id]).fetchone()
    return None if row is None else int(row[0])


def neighbour(db: Store, f: TrialFilter, trial_id: str, step: int) -> str | None:
    """The trial ``step`` places after (negative: before) ``trial_id`` in the list, None past an end."""
    seq = _seq_of(db, trial_id)
    if seq is None:
        return None
    if step == 0:
        return trial_id
    if step > 0:
        hits = _slice(db, f, after=seq, limit=step)
    else:
        hits = _slice(db, f, before=seq, limit=-step, desc=True)
    return hits[-1][1] if len(hits) == abs(step) else None


def position(db: Store, f: TrialFilter, trial_id: str) -> tuple[int, int] | None:
    """(1-based position, total) of ``trial_id`` in the list, or None when it is not in it."""
    seq = _seq_of(db, trial_id)
    unsorted = replace(f, sort=None)  # whether it is in the list does not depend on the order
    if seq is None or not _slice(db, unsorted, after=seq - 1, before=seq + 1, limit=1):
        return None
    return _cached_count(db, f, seq) + 1, _cached_count(db, f)


class FilterSequence:
    """The filtered list as a ``TrialSequence`` for the transcript viewer's next / previous."""

    def __init__(self, f: TrialFilter) -> None:
        self.filter = f

    def neighbour(self, db: Store, trial_id: str, step: int) -> str | None:
        return neighbour(db, self.filter, trial_id, step)

    def position(self, db: Store, trial_id: str) -> tuple[int, int] | None:
        return position(db, self.filter, trial_id)
