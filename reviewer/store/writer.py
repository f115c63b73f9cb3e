"""Writing imported trials: rows holding each trial as a native JSON record (its identity in columns
only), the FTS index, verdicts, and the log of imported files."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from reviewer.models import Trial
from reviewer.record import decode, dumps, encode
from reviewer.store.db import Store
from reviewer.store.search_text import (
    FTS_DELETE_SQL,
    FTS_SQL,
    search_text,
    search_texts,
    system_text,
    tsvector_literal,
)
from reviewer.store.summaries import take_in_verdicts

_TRIAL_COLUMNS = (
    "seq id run task_id trial success passed reward reason n_messages assistant_turns tool_calls "
    "tool_errors steps input_tokens output_tokens cost_usd latency_s error_type error_message "
    "termination instruction metadata record source_file source_line imported_at outcome"
).split()
_TRIAL_SQL = f"INSERT INTO trials ({', '.join(_TRIAL_COLUMNS)}) VALUES ({', '.join('?' * len(_TRIAL_COLUMNS))})"

# On PostgreSQL the two columns are tsvectors given as literals (``fts_row``), which many rows at
# once reach by COPY directly


_TASK_STATS_SQL = (
    "INSERT INTO task_stats (run, task_id, n, c, steps_sum, cost_sum, cost_n, first_seq, infra, "
    "unscored) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, task_id) DO UPDATE SET "
    "n = task_stats.n + excluded.n, c = task_stats.c + excluded.c, "
    "steps_sum = task_stats.steps_sum + excluded.steps_sum, "
    "infra = task_stats.infra + excluded.infra, "
    "unscored = task_stats.unscored + excluded.unscored, "
    "cost_sum = task_stats.cost_sum + excluded.cost_sum, "
    "cost_n = task_stats.cost_n + excluded.cost_n, "
    "first_seq = MIN(task_stats.first_seq, excluded.first_seq)"
)
#: (the source a parameter too, so that on PostgreSQL many rows go by COPY: ``pg_sql.bulk_insert``)
_VERDICT_SQL = (
    "INSERT OR IGNORE INTO verdicts (trial_id, judge, verdict, rationale, model, rubric, cost_usd, "
    "source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def scan(t: Trial) -> tuple[str, str, int, int, int]:
    """What a trial's row and index entry need: the text full-text search sees
    (``search_text``), the system prompt (``system_text``), its assistant turns, tool calls and
    tool errors (the ``Trial`` properties of those names)."""
    return (*search_texts(t), *counts(t))


def counts(t: Trial) -> tuple[int, int, int]:
    """A trial's assistant turns, tool calls and tool errors, in one loop over its messages."""
    turns = calls = errors = 0
    for m in t.messages:
        role = m.role
        if role == "assistant":
            turns += 1
        elif role == "tool" and m.is_error:
            errors += 1
        if m.tool_calls:
            calls += len(m.tool_calls)
    return turns, calls, errors


def fts_row(db: Store, seq: int, t: Trial) -> tuple[int, str, str]:
    """A trial's row of DB's full-text index (``FTS_SQL``): its two texts for SQLite's
    FTS5, their words and places for PostgreSQL's tsvectors."""
    text, system = search_texts(t)
    if db.dialect == "sqlite":
        return seq, text, system
    return seq, tsvector_literal(text), _system_literal(system)


#: The system prompt's literal: most runs give every trial the same prompt, often long (tau-bench's
#: policy is 8 KB), so it is written once, not per trial.
_system_literal = functools.lru_cache(maxsize=16)(tsvector_literal)


@dataclass
class Pending:
    """A parsed trial with its final identity, ready to be written."""

    id: str
    run: str
    trial_no: int
    trial: Trial


class RunIndex:
    """What the database holds for one run: (task, trial) -> (id, source file), and the top trial numbers.

    Read once per import job and kept across its files: :meth:`refresh` reads only the rows added
    since (by another process, or by an earlier file of this job), so a run of N files costs O(N)."""

    def __init__(self, db: Store, run: str) -> None:
        self.run = run
        self.by_slot: dict[tuple[str, int], tuple[str, str | None]] = {}
        self.ids: set[str] = set()
        self.max_trial: dict[str, int] = {}
        self.last_seq = 0
        self.refresh(db)

    def refresh(self, db: Store) -> None:
        """Take in the run's rows written after the last one this index has seen."""
        for task_id, trial_no, tid, source, seq in db.execute(
            "SELECT task_id, trial, id, source_file, seq FROM trials WHERE run = ? AND seq > ? "
            "ORDER BY seq",
            [self.run, self.last_seq],
        ).fetchall():
            self.add(task_id, trial_no, tid, source)
            self.last_seq = seq

    def written(self, last_seq: int) -> None:
        """Rows up to ``last_seq`` were written by this job and are already in the index."""
        self.last_seq = max(self.last_seq, last_seq)

    def add(self, task_id: str, trial_no: int, tid: str, source: str | None) -> None:
        self.by_slot[(task_id, trial_no)] = (tid, source)
        self.ids.add(tid)
        if trial_no > self.max_trial.get(task_id, 0):
            self.max_trial[task_id] = trial_no


#: Page cache while a file is imported (KiB): the id, run and task indexes and the full-text index
#: take inserts all over their b-trees, and a page evicted from a small cache is written to the
#: log again each time it changes (at 80,000 trials: 16% fewer bytes written, 9% less time).
IMPORT_CACHE_KIB = 64 * 1024
#: Log pages between two checkpoints while a file is imported (64 MiB, the default is 1,000): the
#: index pages every file changes again are copied into the database once per checkpoint, not after
#: every file (at 100,000 trials: about 8% less time in SQLite). The import job ends with a
#: checkpoint (:func:`checkpoint`), so the log does not keep what it wrote.
IMPORT_CHECKPOINT_PAGES = 16384


@contextmanager
def import_cache(db: Store) -> Iterator[None]:
    """A larger page cache and fewer checkpoints for the connection while an import writes, the
    usual ones after (SQLite's own settings: nothing to change on PostgreSQL)."""
    if db.dialect != "sqlite":
        yield
        return
    before = db.execute("PRAGMA cache_size").fetchone()[0]
    pages = db.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    db.execute(f"PRAGMA cache_size=-{IMPORT_CACHE_KIB}")
    db.execute(f"PRAGMA wal_autocheckpoint={IMPORT_CHECKPOINT_PAGES}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size={int(before)}")
        db.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")


def checkpoint(db: Store) -> str | None:
    """Copy what the write-ahead log holds into the database file (after an import's files), as far
    as readers allow (never waiting for them); nothing is lost either way, the log is durable, so
    a checkpoint SQLite cannot make (the disk full) is not an error: its reason is returned."""
    if db.dialect != "sqlite":
        return None
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.OperationalError as exc:
        return str(exc)
    return None


def next_seq(db: Store) -> int:
    row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM trials").fetchone()
    return int(row[0]) + 1


def ensure_run(
    db: Store, run: str, source: str, fmt: str, now: str, pass_rule: str | None = None
) -> str | None:
    """Record the run if it is new, with the pass rule its trials are judged by; for a run already
    stored, returns the rule it was first imported with ("" when none was recorded), else None."""
    cur = db.execute(
        "INSERT OR IGNORE INTO runs (name, source, format, imported_at, pass_rule) "
        "VALUES (?, ?, ?, ?, ?)",
        [run, source, fmt, now, pass_rule],
    )
    if cur.rowcount:
        return None
    row = db.execute("SELECT pass_rule FROM runs WHERE name = ?", [run]).fetchone()
    return None if row is None else (row[0] or "")


def set_pass_rule(db: Store, run: str, pass_rule: str) -> None:
    """Record the rule a new run's trials were judged by, once its first file is read (inside the
    caller's transaction)."""
    db.execute("UPDATE runs SET pass_rule = ? WHERE name = ?", [pass_rule, run])


def pass_rule_of(db: Store, run: str) -> str | None:
    """The pass rule a run's trials were judged by on import (JSON), None when none was recorded."""
    row = db.execute("SELECT pass_rule FROM runs WHERE name = ?", [run]).fetchone()
    return None if row is None else row[0]


#: Per (run, task): the ``task_stats`` sums of trials written but not yet added to the table.
TaskStats = dict[tuple[str, str], list[Any]]


def write_batch(
    db: Store,
    batch: Sequence[Pending],
    seq: int,
    source_file: str,
    now: str,
    stats: TaskStats | None = None,
) -> int:
    """Insert ``batch`` inside the caller's transaction; returns the next free seq.

    With ``stats``, the batch's per-task sums are added to it and written by the caller
    (``write_task_stats``, once a file): a task's row is then updated once a file, not once a
    batch. That matters on PostgreSQL, where each update of a task's row updates its run's
    totals row by trigger, and a row updated thousands of times in one transaction makes every
    further update of it slower (a file of 30,000 trials with its tasks interleaved, as a
    harness writes trial after trial of every task, took 15 times SQLite's time).

    The records are written and let go before the search texts are made, so a trial of hundreds
    of MB (a long Claude Code session) never has its messages, its record, its search text and
    SQLite's copy of one of them in memory at once."""
    trial_rows: list[tuple[Any, ...]] = []
    verdict_rows: list[tuple[Any, ...]] = []
    own = stats is None
    if stats is None:
        stats = {}
    for p in batch:
        t = p.trial
        outcome = t.outcome
        turns, calls, tool_errors = counts(t)
        trial_rows.append(_trial_row(p, seq, source_file, now, turns, calls, tool_errors))
        st = stats.get((p.run, t.task_id))
        if st is None:
            st = stats[(p.run, t.task_id)] = [0, 0, 0, 0.0, 0, seq, 0, 0]
        st[0] += 1
        st[1] += 1 if outcome == "pass" else 0
        st[6] += 1 if outcome == "infra" else 0
        st[7] += 1 if outcome == "unscored" else 0
        st[2] += turns + calls
        if t.usage.cost_usd is not None:
            st[3] += t.usage.cost_usd
            st[4] += 1
        seq += 1
        if t.judge is not None:
            verdict_rows.append(_verdict_row(p, now))
    conn = db.conn
    conn.executemany(_TRIAL_SQL, trial_rows)
    first = trial_rows[0][0] if trial_rows else seq
    del trial_rows
    conn.executemany(FTS_SQL, (fts_row(db, i, p.trial) for i, p in enumerate(batch, first)))
    if own:
        write_task_stats(db, stats)
    if verdict_rows:
        conn.executemany(_VERDICT_SQL, verdict_rows)
        take_in_verdicts(db)  # the latest verdict per trial and its counts (m016)
    return seq


def write_task_stats(db: Store, stats: TaskStats) -> None:
    """Add ``stats`` (``write_batch``'s sums) to ``task_stats``, in the caller's transaction, and
    empty it."""
    if stats:
        db.conn.executemany(_TASK_STATS_SQL, [(run, task, *v) for (run, task), v in stats.items()])
        stats.clear()


def _trial_row(
    p: Pending, seq: int, source_file: str, now: str, turns: int, calls: int, tool_errors: int
) -> tuple[Any, ...]:
    """A trial's row of ``trials`` (the columns of ``_TRIAL_COLUMNS``), given the counts
    :func:`scan` found in it."""
    t = p.trial
    err = t.error
    outcome = t.outcome
    return (
        seq,
        p.id,
        p.run,
        t.task_id,
        p.trial_no,
        1 if outcome == "pass" else 0,
        None if t.passed is None else int(t.passed),
        t.reward,
        t.reason,
        len(t.messages),
        turns,
        calls,
        tool_errors,
        turns + calls,
        t.usage.input_tokens,
        t.usage.output_tokens,
        t.usage.cost_usd,
        t.latency_s,
        err.type if err else None,
        err.message if err else None,
        t.termination,
        t.instruction,
        dumps(t.metadata) if t.metadata else None,
        encode(t),
        source_file,
        t.source_line,
        now,
        outcome,
    )


def _verdict_row(p: Pending, now: str) -> tuple[Any, ...]:
    j = p.trial.judge
    assert j is not None
    return (
        p.id,
        j.judge or "imported",
        j.verdict,
        j.rationale,
        j.model,
        j.rubric,
        j.cost_usd,
        "import",
        now,
    )


@dataclass(frozen=True)
class StoredVersion:
    """The stored trial of a session (a trial a format identifies by a metadata key, such as a
    Claude Code session id): enough to tell whether another version of it is newer."""

    id: str
    task_id: str
    trial_no: int
    n_messages: int
    ended_at: str | None


class SessionIndex:
    """The stored trials of a run by their ``metadata[key]`` (a Claude Code session id), with what
    tells their versions apart; the first stored wins should two share a key.

    Read once per import job and kept across its files, like :class:`RunIndex`: :meth:`refresh`
    reads only the rows added since; a version this job puts in place is told with :meth:`put`."""

    def __init__(self, db: Store, run: str, key: str) -> None:
        self.run = run
        self.key = key
        self.by_key: dict[str, StoredVersion] = {}
        self.last_seq = 0
        self.refresh(db)

    def refresh(self, db: Store) -> None:
        rows = db.execute(
            "SELECT json_extract(metadata, '$.' || ?), id, task_id, trial, n_messages, "
            "json_extract(metadata, '$.ended_at'), seq FROM trials WHERE run = ? AND seq > ? "
            "AND json_valid(metadata) AND json_type(metadata, '$.' || ?) = 'text' ORDER BY seq",
            [self.key, self.run, self.last_seq, self.key],
        ).fetchall()
        for value, tid, task_id, trial_no, n, ended, seq in rows:
            self.by_key.setdefault(
                value,
                StoredVersion(tid, task_id, trial_no, n, ended if isinstance(ended, str) else None),
            )
            self.last_seq = seq

    def put(self, key: str, version: StoredVersion) -> None:
        self.by_key[key] = version


_UPDATE_COLUMNS = [c for c in _TRIAL_COLUMNS if c not in ("seq", "id", "run", "task_id", "trial")]
_REPLACE_SQL = f"UPDATE trials SET {', '.join(f'{c} = ?' for c in _UPDATE_COLUMNS)} WHERE seq = ?"
_STATS_DELTA_SQL = (
    "UPDATE task_stats SET c = c + ?, steps_sum = steps_sum + ?, cost_sum = cost_sum + ?, "
    "cost_n = cost_n + ?, infra = infra + ?, unscored = unscored + ? WHERE run = ? AND task_id = ?"
)


def replace_trial(db: Store, p: Pending, source_file: str, now: str) -> int:
    """Put a newer version of a stored trial in place of the old one, inside the caller's
    transaction: the same row (id, seq, run, task, trial number), so its labels, verdicts, queue
    places and cluster stay with it; its record, columns, full-text entry and ``task_stats`` are
    the new version's, its rule violations and monitor checks are dropped to be made again.
    Returns the row's seq."""
    seq, run, task_id, trial_no, record, outcome, steps, cost = db.execute(
        "SELECT seq, run, task_id, trial, record, outcome, steps, cost_usd FROM trials WHERE id = ?",
        [p.id],
    ).fetchone()
    conn = db.conn
    try:
        old = decode(record, run=run, task_id=task_id, trial=trial_no)
    except ValueError:
        pass  # a record no version could read was never indexed
    else:
        if db.dialect == "sqlite":
            conn.execute(FTS_DELETE_SQL, [seq, search_text(old), system_text(old)])
    if db.dialect != "sqlite":
        conn.execute("DELETE FROM trials_fts WHERE rowid = ?", [seq])
    turns, calls, tool_errors = counts(p.trial)
    row = _trial_row(p, seq, source_file, now, turns, calls, tool_errors)
    values = dict(zip(_TRIAL_COLUMNS, row, strict=True))
    del row
    conn.execute(_REPLACE_SQL, [*(values.pop(c) for c in _UPDATE_COLUMNS), seq])
    conn.execute(FTS_SQL, fts_row(db, seq, p.trial))
    new = p.trial
    new_cost = new.usage.cost_usd
    conn.execute(
        _STATS_DELTA_SQL,
        [
            (new.outcome == "pass") - (outcome == "pass"),
            turns + calls - (steps or 0),
            (new_cost or 0.0) - (cost or 0.0),
            (new_cost is not None) - (cost is not None),
            (new.outcome == "infra") - (outcome == "infra"),
            (new.outcome == "unscored") - (outcome == "unscored"),
            run,
            task_id,
        ],
    )
    if new.judge is not None:
        conn.execute(_VERDICT_SQL, _verdict_row(p, now))
        take_in_verdicts(db)
    conn.execute("DELETE FROM violations WHERE trial_id = ?", [p.id])
    conn.execute("DELETE FROM monitor_trials WHERE trial_id = ?", [p.id])
    return int(seq)


def record_import(
    db: Store, file: str, fmt: str, added: int, already: int, skipped: int, now: str
) -> None:
    """Log one imported file in ``imports`` (inside the caller's transaction)."""
    db.execute(
        "INSERT INTO imports (file, format, added, already, skipped, at) VALUES (?, ?, ?, ?, ?, ?)",
        [file, fmt, added, already, skipped, now],
    )


def rebuild_task_stats(db: Store) -> None:
    """Recompute the per-task counts from the trials (for data written without ``write_batch``)."""
    with db.transaction():
        db.execute("DELETE FROM task_stats")
        db.execute(
            "INSERT INTO task_stats (run, task_id, n, c, steps_sum, cost_sum, cost_n, first_seq, "
            "infra, unscored) "
            "SELECT run, task_id, COUNT(*), SUM(outcome = 'pass'), SUM(steps), "
            "TOTAL(cost_usd), COUNT(cost_usd), MIN(seq), SUM(outcome = 'infra'), "
            "SUM(outcome = 'unscored') FROM trials GROUP BY run, task_id"
        )


def run_key_of(db: Store, run: str, key: str) -> tuple[bool, str | None]:
    """Whether ``run`` exists, and the metadata ``key`` of its first trial (which eval it holds)."""
    row = db.execute(
        "SELECT (SELECT CASE WHEN json_valid(t.metadata) THEN json_extract(t.metadata, '$.' || ?) "
        "END FROM trials t WHERE t.run = r.name ORDER BY t.seq LIMIT 1) FROM runs r WHERE r.name = ?",
        [key, run],
    ).fetchone()
    if row is None:
        return False, None
    return True, None if row[0] is None else str(row[0])
