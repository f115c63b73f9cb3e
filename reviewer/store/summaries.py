"""Summaries for big databases (migration m016): the latest verdict of each trial and its counts,
and per-run totals of ``task_stats``, each equal to the slow computation it replaces
(``tests/store/test_summaries.py`` checks them on awkward data).

Trials are added (a newer version of a session replaces its row in place, ``writer.replace_trial``,
updating its ``task_stats`` row and its outcome, which the triggers below follow); verdicts are added (on import, by the judge) or re-graded and deleted in
place; ``task_stats`` rows are added, updated and (on a rebuild) deleted. Triggers keep the
summaries true on every update and delete, and on ``task_stats`` inserts (one per task). A new
verdict is taken in by :func:`take_in_verdicts`, which each writer of verdicts calls in its own
transaction (one set-based pass over the new rows: a trigger per inserted verdict cost SQLite 8 µs
even when it did nothing). A reader asks :func:`verdicts_ready` first and reads the m006 view
instead when a verdict was written without it, so the answer is the same either way.
"""

from __future__ import annotations

import sqlite3

import sqlite_utils

# A trial's latest verdict (by created_at, then id) worked out again from its verdicts, with its
# count moved; {tid} is the trial id expression (OLD.trial_id or NEW.trial_id).
_RECOMPUTE = """
UPDATE verdict_counts SET n = n - 1 WHERE (run, outcome, verdict) = (
    SELECT run, outcome, verdict FROM trial_verdicts
    WHERE seq = (SELECT seq FROM trials WHERE id = {tid}));
DELETE FROM trial_verdicts WHERE seq = (SELECT seq FROM trials WHERE id = {tid});
INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at)
SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at
FROM trials t JOIN verdicts v ON v.trial_id = t.id WHERE t.id = {tid}
ORDER BY v.created_at DESC, v.id DESC LIMIT 1;
INSERT INTO verdict_counts (run, outcome, verdict, n)
SELECT run, outcome, verdict, 1 FROM trial_verdicts
WHERE seq = (SELECT seq FROM trials WHERE id = {tid})
ON CONFLICT (run, outcome, verdict) DO UPDATE SET n = n + 1;
"""

#: A task's row of ``task_stats`` added to / taken from its run's totals (the triggers below).
_ADD_TASK = """\
    INSERT INTO run_totals (run, tasks, n, c, infra, unscored, cost_sum, cost_n)
    VALUES (NEW.run, 1, NEW.n - NEW.infra - NEW.unscored, NEW.c, NEW.infra, NEW.unscored,
        NEW.cost_sum, NEW.cost_n)
    ON CONFLICT (run) DO UPDATE SET tasks = tasks + 1, n = n + excluded.n, c = c + excluded.c,
        infra = infra + excluded.infra, unscored = unscored + excluded.unscored,
        cost_sum = cost_sum + excluded.cost_sum, cost_n = cost_n + excluded.cost_n;
    INSERT INTO run_groups (run, n, c, tasks)
    VALUES (NEW.run, NEW.n - NEW.infra - NEW.unscored, NEW.c, 1)
    ON CONFLICT (run, n, c) DO UPDATE SET tasks = tasks + 1;
"""


def _remove_task(other: str) -> str:
    """A task's row taken from its run's totals. Its cost sum is a plain subtraction, except when
    either sum is infinite (costs near 1e308 stored by an older version): infinity less infinity
    is NaN, which SQLite stores as NULL, and the write failed (``NOT NULL constraint failed``) on
    every later import into the run. Then the run's sum is taken again over its other rows, as the
    slow computation does; ``other`` leaves out the row an update is about to add back."""
    return f"""\
    UPDATE run_totals SET tasks = tasks - 1, n = n - (OLD.n - OLD.infra - OLD.unscored),
        c = c - OLD.c, infra = infra - OLD.infra, unscored = unscored - OLD.unscored,
        cost_sum = CASE WHEN abs(cost_sum) = 9e999 OR abs(OLD.cost_sum) = 9e999
            THEN (SELECT TOTAL(s.cost_sum) FROM task_stats s WHERE s.run = OLD.run{other})
            ELSE cost_sum - OLD.cost_sum END,
        cost_n = cost_n - OLD.cost_n
    WHERE run = OLD.run;
    DELETE FROM run_totals WHERE run = OLD.run AND tasks = 0;
    UPDATE run_groups SET tasks = tasks - 1
    WHERE run = OLD.run AND n = OLD.n - OLD.infra - OLD.unscored AND c = OLD.c;
    DELETE FROM run_groups WHERE run = OLD.run AND tasks = 0;
"""


_NOT_NEW = " AND NOT (s.run = NEW.run AND s.task_id = NEW.task_id)"
_TOTALS_DELETE = f"""CREATE TRIGGER task_stats_totals_delete AFTER DELETE ON task_stats BEGIN
{_remove_task("")}END;"""
_TOTALS_UPDATE = f"""CREATE TRIGGER task_stats_totals_update AFTER UPDATE ON task_stats BEGIN
{_remove_task(_NOT_NEW)}{_ADD_TASK}END;"""

_SCHEMA = f"""
CREATE INDEX trials_metrics ON trials(run, seq, task_id, outcome, success, steps, cost_usd,
    latency_s, tool_calls, tool_errors, id);
CREATE TABLE trial_verdicts (
    seq INTEGER PRIMARY KEY,
    run TEXT NOT NULL,
    outcome TEXT NOT NULL,
    verdict_id INTEGER NOT NULL,
    verdict TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX trial_verdicts_verdict ON trial_verdicts(verdict, seq);
CREATE TABLE verdict_counts (
    run TEXT NOT NULL,
    outcome TEXT NOT NULL,
    verdict TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (run, outcome, verdict)
);
CREATE TABLE summary_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    verdicts_seen INTEGER NOT NULL
);
CREATE TRIGGER verdicts_latest_update AFTER UPDATE ON verdicts BEGIN
    {_RECOMPUTE.format(tid="OLD.trial_id")}
    {_RECOMPUTE.format(tid="NEW.trial_id")}
END;
CREATE TRIGGER verdicts_latest_delete AFTER DELETE ON verdicts BEGIN
    {_RECOMPUTE.format(tid="OLD.trial_id")}
    -- the next verdict may take this id again (rowids are reused after the top one is deleted)
    UPDATE summary_state SET verdicts_seen = MIN(verdicts_seen, OLD.id - 1);
END;
CREATE TRIGGER trials_outcome_latest AFTER UPDATE OF outcome, run ON trials BEGIN
    UPDATE verdict_counts SET n = n - 1 WHERE (run, outcome, verdict) = (
        SELECT run, outcome, verdict FROM trial_verdicts WHERE seq = OLD.seq);
    UPDATE trial_verdicts SET outcome = NEW.outcome, run = NEW.run WHERE seq = NEW.seq;
    INSERT INTO verdict_counts (run, outcome, verdict, n)
    SELECT run, outcome, verdict, 1 FROM trial_verdicts WHERE seq = NEW.seq
    ON CONFLICT (run, outcome, verdict) DO UPDATE SET n = n + 1;
END;
INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at)
SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at
FROM latest_trial_verdicts v JOIN trials t ON t.id = v.trial_id;
INSERT INTO verdict_counts (run, outcome, verdict, n)
SELECT run, outcome, verdict, COUNT(*) FROM trial_verdicts GROUP BY run, outcome, verdict;
INSERT INTO summary_state (id, verdicts_seen) SELECT 1, COALESCE(MAX(id), 0) FROM verdicts;
CREATE TABLE run_totals (
    run TEXT PRIMARY KEY,
    tasks INTEGER NOT NULL,
    n INTEGER NOT NULL,
    c INTEGER NOT NULL,
    infra INTEGER NOT NULL,
    unscored INTEGER NOT NULL,
    cost_sum REAL NOT NULL,
    cost_n INTEGER NOT NULL
);
CREATE TABLE run_groups (
    run TEXT NOT NULL,
    n INTEGER NOT NULL,
    c INTEGER NOT NULL,
    tasks INTEGER NOT NULL,
    PRIMARY KEY (run, n, c)
);
CREATE TRIGGER task_stats_totals_insert AFTER INSERT ON task_stats BEGIN
{_ADD_TASK}END;
{_TOTALS_DELETE}
{_TOTALS_UPDATE}
INSERT INTO run_totals (run, tasks, n, c, infra, unscored, cost_sum, cost_n)
SELECT run, COUNT(*), SUM(n - infra - unscored), SUM(c), SUM(infra), SUM(unscored),
    TOTAL(cost_sum), SUM(cost_n)
FROM task_stats GROUP BY run;
INSERT INTO run_groups (run, n, c, tasks)
SELECT run, n - infra - unscored, c, COUNT(*) FROM task_stats GROUP BY run, n - infra - unscored, c
"""


def _statements(script: str) -> list[str]:
    """The script's statements: a trigger's body (BEGIN ... END;) stays one statement."""
    out: list[str] = []
    current: list[str] = []
    in_trigger = False
    for line in script.strip().splitlines():
        current.append(line)
        if line.startswith("CREATE TRIGGER"):
            in_trigger = True
        if line == "END;" if in_trigger else line.rstrip().endswith(";"):
            out.append("\n".join(current).rstrip().rstrip(";"))
            current, in_trigger = [], False
    if current:
        out.append("\n".join(current))
    return out


#: m016's statements, in order (the migration runs them one by one).
STATEMENTS = _statements(_SCHEMA)


def create(db: sqlite_utils.Database) -> None:
    """Make the summaries and fill them from the stored data (migration m016)."""
    for statement in STATEMENTS:
        db.execute(statement)


def replace_cost_triggers(db: sqlite_utils.Database) -> None:
    """The triggers that take a task's row out of its run's totals, made again (migration m017: a
    database migrated by the first m016 has the ones that failed on infinite cost sums)."""
    for name, sql in (
        ("task_stats_totals_delete", _TOTALS_DELETE),
        ("task_stats_totals_update", _TOTALS_UPDATE),
    ):
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
        db.execute(sql.rstrip().removesuffix(";"))


# The trials given a verdict since the last take-in (parameter: summary_state.verdicts_seen).
_NEW_VERDICTS = "FROM verdicts v JOIN trials t ON t.id = v.trial_id WHERE v.id > ?"
_TOUCHED = f"SELECT t.seq {_NEW_VERDICTS}"


def take_in_verdicts(db: sqlite_utils.Database) -> None:
    """Take the verdicts written since the last call into ``trial_verdicts`` and ``verdict_counts``
    (inside the caller's transaction; every writer of verdicts calls it after writing them)."""
    try:
        row = db.execute(
            "SELECT verdicts_seen, (SELECT MAX(id) FROM verdicts) FROM summary_state"
        ).fetchone()
    except sqlite3.OperationalError:  # a database opened without migrating: m016 fills it later
        return
    if row is None or row[1] is None or row[1] <= row[0]:
        return
    seen, top = row
    # all or nothing, inside the caller's transaction or alone (a savepoint outside one is one)
    db.execute("SAVEPOINT take_in_verdicts")
    try:
        _take_in(db, seen, top)
    except BaseException:
        db.execute("ROLLBACK TO take_in_verdicts")
        db.execute("RELEASE take_in_verdicts")
        raise
    db.execute("RELEASE take_in_verdicts")


def _take_in(db: sqlite_utils.Database, seen: int, top: int) -> None:
    counted = (
        "INSERT INTO verdict_counts (run, outcome, verdict, n) "
        "SELECT run, outcome, verdict, {sign}COUNT(*) FROM trial_verdicts "
        f"WHERE seq IN ({_TOUCHED}) GROUP BY run, outcome, verdict "
        "ON CONFLICT (run, outcome, verdict) DO UPDATE SET n = verdict_counts.n + excluded.n"
    )
    db.execute(counted.format(sign="-"), [seen])  # the touched trials' old latest, uncounted
    db.execute(
        "INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at) "
        f"SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at {_NEW_VERDICTS} "
        # each trial's latest new verdict alone: one statement may change a row once only
        "AND NOT EXISTS (SELECT 1 FROM verdicts w WHERE w.trial_id = v.trial_id AND w.id > ? "
        "AND (w.created_at, w.id) > (v.created_at, v.id)) "
        "ORDER BY v.id "
        "ON CONFLICT (seq) DO UPDATE SET verdict_id = excluded.verdict_id, "
        "verdict = excluded.verdict, created_at = excluded.created_at "
        "WHERE (excluded.created_at, excluded.verdict_id) "
        "> (trial_verdicts.created_at, trial_verdicts.verdict_id)",
        [seen, seen],
    )
    db.execute(counted.format(sign=""), [seen])  # and their latest now, counted
    db.execute("UPDATE summary_state SET verdicts_seen = ?", [top])


def verdicts_ready(db: sqlite_utils.Database) -> bool:
    """Whether ``trial_verdicts`` has taken in every verdict (else read the m006 view)."""
    try:
        row = db.execute(
            "SELECT verdicts_seen >= COALESCE((SELECT MAX(id) FROM verdicts), 0) FROM summary_state"
        ).fetchone()
    except sqlite3.OperationalError:  # not migrated yet
        return False
    return bool(row and row[0])


def latest_verdict_sql(db: sqlite_utils.Database, *, scored_only: bool = False) -> str:
    """SQL for the latest verdict of any judge on trial ``t`` (None when it has none; with
    ``scored_only``, None unless it is pass or fail): from ``trial_verdicts`` when it is ready,
    else from the ``latest_trial_verdicts`` view."""
    if verdicts_ready(db):
        extra = " AND lv.verdict IN ('pass', 'fail')" if scored_only else ""
        return f"(SELECT lv.verdict FROM trial_verdicts lv WHERE lv.seq = t.seq{extra})"
    extra = " AND v.verdict IN ('pass', 'fail')" if scored_only else ""
    return f"(SELECT v.verdict FROM latest_trial_verdicts v WHERE v.trial_id = t.id{extra})"


def judged_with_sql(db: sqlite_utils.Database) -> str:
    """SQL over trial ``t`` with one ``?`` (a verdict): its latest verdict is that one (as a set,
    for counts)."""
    if verdicts_ready(db):
        return "t.seq IN (SELECT lv.seq FROM trial_verdicts lv WHERE lv.verdict = ?)"
    return "t.id IN (SELECT v.trial_id FROM latest_trial_verdicts v WHERE v.verdict = ?)"
