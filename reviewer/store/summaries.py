"""Summaries kept by triggers (migration m016): the latest verdict of each trial and its counts, and
per-run totals of ``task_stats``. Trials are only ever added; verdicts are added or re-graded in
place; ``task_stats`` rows are added, updated and (on a rebuild) deleted: each trigger below keeps
its summary equal to the slow computation it replaces (``tests/store/test_summaries.py`` checks
them against it on awkward data).
"""

from __future__ import annotations

import sqlite_utils

# The latest verdict of one trial (by created_at, then id), recomputed from the verdicts; {tid} is
# the trial id expression (OLD.trial_id or NEW.trial_id).
_RECOMPUTE = """
DELETE FROM trial_verdicts WHERE seq = (SELECT seq FROM trials WHERE id = {tid});
INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at)
SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at
FROM trials t JOIN verdicts v ON v.trial_id = t.id WHERE t.id = {tid}
ORDER BY v.created_at DESC, v.id DESC LIMIT 1;
"""

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
CREATE TRIGGER trial_verdicts_counted_insert AFTER INSERT ON trial_verdicts BEGIN
    INSERT INTO verdict_counts (run, outcome, verdict, n) VALUES (NEW.run, NEW.outcome, NEW.verdict, 1)
    ON CONFLICT (run, outcome, verdict) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER trial_verdicts_counted_delete AFTER DELETE ON trial_verdicts BEGIN
    UPDATE verdict_counts SET n = n - 1
    WHERE run = OLD.run AND outcome = OLD.outcome AND verdict = OLD.verdict;
END;
CREATE TRIGGER trial_verdicts_counted_update AFTER UPDATE ON trial_verdicts BEGIN
    UPDATE verdict_counts SET n = n - 1
    WHERE run = OLD.run AND outcome = OLD.outcome AND verdict = OLD.verdict;
    INSERT INTO verdict_counts (run, outcome, verdict, n) VALUES (NEW.run, NEW.outcome, NEW.verdict, 1)
    ON CONFLICT (run, outcome, verdict) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER verdicts_latest_insert AFTER INSERT ON verdicts BEGIN
    INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at)
    SELECT t.seq, t.run, t.outcome, NEW.id, NEW.verdict, NEW.created_at
    FROM trials t WHERE t.id = NEW.trial_id
    ON CONFLICT (seq) DO UPDATE SET verdict_id = excluded.verdict_id, verdict = excluded.verdict,
        created_at = excluded.created_at
    WHERE (excluded.created_at, excluded.verdict_id)
        > (trial_verdicts.created_at, trial_verdicts.verdict_id);
END;
CREATE TRIGGER verdicts_latest_update AFTER UPDATE ON verdicts BEGIN
    {_RECOMPUTE.format(tid="OLD.trial_id")}
    {_RECOMPUTE.format(tid="NEW.trial_id")}
END;
CREATE TRIGGER verdicts_latest_delete AFTER DELETE ON verdicts BEGIN
    {_RECOMPUTE.format(tid="OLD.trial_id")}
END;
CREATE TRIGGER trials_outcome_latest AFTER UPDATE OF outcome, run ON trials BEGIN
    UPDATE trial_verdicts SET outcome = NEW.outcome, run = NEW.run WHERE seq = NEW.seq;
END;
INSERT INTO trial_verdicts (seq, run, outcome, verdict_id, verdict, created_at)
SELECT t.seq, t.run, t.outcome, v.id, v.verdict, v.created_at
FROM latest_trial_verdicts v JOIN trials t ON t.id = v.trial_id;
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
    INSERT INTO run_totals (run, tasks, n, c, infra, unscored, cost_sum, cost_n)
    VALUES (NEW.run, 1, NEW.n - NEW.infra - NEW.unscored, NEW.c, NEW.infra, NEW.unscored,
        NEW.cost_sum, NEW.cost_n)
    ON CONFLICT (run) DO UPDATE SET tasks = tasks + 1, n = n + excluded.n, c = c + excluded.c,
        infra = infra + excluded.infra, unscored = unscored + excluded.unscored,
        cost_sum = cost_sum + excluded.cost_sum, cost_n = cost_n + excluded.cost_n;
    INSERT INTO run_groups (run, n, c, tasks)
    VALUES (NEW.run, NEW.n - NEW.infra - NEW.unscored, NEW.c, 1)
    ON CONFLICT (run, n, c) DO UPDATE SET tasks = tasks + 1;
END;
CREATE TRIGGER task_stats_totals_delete AFTER DELETE ON task_stats BEGIN
    UPDATE run_totals SET tasks = tasks - 1, n = n - (OLD.n - OLD.infra - OLD.unscored),
        c = c - OLD.c, infra = infra - OLD.infra, unscored = unscored - OLD.unscored,
        cost_sum = cost_sum - OLD.cost_sum, cost_n = cost_n - OLD.cost_n
    WHERE run = OLD.run;
    DELETE FROM run_totals WHERE run = OLD.run AND tasks = 0;
    UPDATE run_groups SET tasks = tasks - 1
    WHERE run = OLD.run AND n = OLD.n - OLD.infra - OLD.unscored AND c = OLD.c;
    DELETE FROM run_groups WHERE run = OLD.run AND tasks = 0;
END;
CREATE TRIGGER task_stats_totals_update AFTER UPDATE ON task_stats BEGIN
    UPDATE run_totals SET tasks = tasks - 1, n = n - (OLD.n - OLD.infra - OLD.unscored),
        c = c - OLD.c, infra = infra - OLD.infra, unscored = unscored - OLD.unscored,
        cost_sum = cost_sum - OLD.cost_sum, cost_n = cost_n - OLD.cost_n
    WHERE run = OLD.run;
    DELETE FROM run_totals WHERE run = OLD.run AND tasks = 0;
    UPDATE run_groups SET tasks = tasks - 1
    WHERE run = OLD.run AND n = OLD.n - OLD.infra - OLD.unscored AND c = OLD.c;
    DELETE FROM run_groups WHERE run = OLD.run AND tasks = 0;
    INSERT INTO run_totals (run, tasks, n, c, infra, unscored, cost_sum, cost_n)
    VALUES (NEW.run, 1, NEW.n - NEW.infra - NEW.unscored, NEW.c, NEW.infra, NEW.unscored,
        NEW.cost_sum, NEW.cost_n)
    ON CONFLICT (run) DO UPDATE SET tasks = tasks + 1, n = n + excluded.n, c = c + excluded.c,
        infra = infra + excluded.infra, unscored = unscored + excluded.unscored,
        cost_sum = cost_sum + excluded.cost_sum, cost_n = cost_n + excluded.cost_n;
    INSERT INTO run_groups (run, n, c, tasks)
    VALUES (NEW.run, NEW.n - NEW.infra - NEW.unscored, NEW.c, 1)
    ON CONFLICT (run, n, c) DO UPDATE SET tasks = tasks + 1;
END;
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
        if (line == "END;" if in_trigger else line.rstrip().endswith(";")):
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
