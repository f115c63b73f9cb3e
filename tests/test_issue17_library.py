"""The library side of issue 17's app items: the shared default k, the conversation-only search (and
migration m011 that indexes the system prompt apart), report columns that never run together, and
`reviewer export --harness-fails` with the reasons trials were skipped."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.metrics.passk import pass_hat_k, shared_k
from reviewer.store import open_store
from reviewer.store.search_query import match_query, search_words, snippet
from reviewer.store.trial_list import TrialFilter, count
from tests.conftest import native_trial, sample_copy, write_jsonl


def test_shared_k_is_one_k_every_run_has_that_still_separates_tasks() -> None:
    # runs of 8 and 6 trials a task: k is at most 6
    run_a = [(8, 8), (8, 7), (8, 6), (8, 4), (8, 5)]
    run_b = [(6, 5), (6, 5), (6, 5), (6, 3), (6, 4), (6, 6)]
    k = shared_k([run_a, run_b])
    assert k <= 6
    passing = [c for _, c in run_a + run_b if c > 0]
    # at least half of the tasks that ever pass keep pass^k above 0 ...
    assert sum(1 for c in passing if c >= k) * 2 >= len(passing)
    # ... and one more would not
    assert k == 6 or sum(1 for c in passing if c >= k + 1) * 2 < len(passing)
    assert k == 5
    assert any(pass_hat_k(n, c, k) for n, c in run_a) and any(pass_hat_k(n, c, k) for n, c in run_b)


def test_shared_k_edges() -> None:
    assert shared_k([]) == 1
    assert shared_k([[(1, 1), (1, 0)]]) == 1  # one trial per task
    assert shared_k([[(4, 0), (4, 0)]]) == 4  # nothing passes: the smallest n
    assert shared_k([[(0, 0), (5, 5)]]) == 5  # a task with no scored trial does not count
    assert shared_k([[(8, 1), (8, 1), (8, 8)]]) == 1  # most passing tasks pass once


def test_report_uses_the_shared_k(tmp_path: Path) -> None:
    db = str(sample_copy(tmp_path / "r.db"))
    out = (
        CliRunner()
        .invoke(cli, ["--db", db, "report", "--run", "support-v1", "--run", "support-v2"])
        .output
    )
    header = out.split("\n")[1]
    assert "pass^5" in header  # the app's default k for these two runs, beside each run's pass^n
    data = json.loads(
        CliRunner().invoke(cli, ["--db", db, "report", "--run", "support-v1", "--json"]).output
    )
    assert "6" in data["runs"][0]["average"]["pass_hat_k"]  # one run alone: its own shared k


def test_match_query_searches_the_conversation_unless_asked() -> None:
    assert match_query("refund") == 'text : ("refund")'
    assert match_query("refund", system=True) == '"refund"'
    assert search_words('refund* "a Phrase" OR x') == ["refund", "a phrase", "x"]


def test_snippet_marks_the_words() -> None:
    text, spans = snippet("one two three\nfour Refund five", ["refund"], 20)
    assert "\n" not in text and [text[a:b] for a, b in spans] == ["Refund"]
    assert snippet("nothing here", ["refund"]) == ("", [])


def system_trials(tmp_path: Path) -> Path:
    recs = []
    for i in range(3):
        rec = native_trial(f"t{i}", passed=True)
        rec["messages"] = [
            {"role": "system", "content": "We never give a discount."},
            {"role": "user", "content": "hello" + (" discount please" if i == 0 else "")},
            {"role": "assistant", "content": "ok"},
        ]
        recs.append(rec)
    return write_jsonl(tmp_path / "s.jsonl", recs)


def test_search_leaves_the_system_prompt_out_by_default(tmp_path: Path) -> None:
    db_path = tmp_path / "s.db"
    CliRunner().invoke(cli, ["--db", str(db_path), "import", str(system_trials(tmp_path))])
    db = open_store(db_path)
    assert count(db, TrialFilter(search="discount")) == 1
    assert count(db, TrialFilter(search="discount", search_system=True)) == 3
    assert count(db, TrialFilter(search="never")) == 0
    db.close()


def test_m011_indexes_old_databases_again(tmp_path: Path) -> None:
    """A database indexed before m011 (one column, system prompt included) is indexed again."""
    db_path = tmp_path / "old.db"
    CliRunner().invoke(cli, ["--db", str(db_path), "import", str(system_trials(tmp_path))])
    db = open_store(db_path)
    db.execute("DROP TABLE trials_fts")
    db.execute("CREATE VIRTUAL TABLE trials_fts USING fts5(text, content='', tokenize='unicode61')")
    db.execute("INSERT INTO trials_fts (rowid, text) SELECT seq, 'stale' FROM trials")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm013_fts_system'")
    db.conn.commit()
    db.close()
    db = open_store(db_path)
    assert count(db, TrialFilter(search="stale", search_system=True)) == 0
    assert count(db, TrialFilter(search="discount")) == 1
    assert count(db, TrialFilter(search="discount", search_system=True)) == 3
    db.close()


def test_report_columns_never_run_together(tmp_path: Path) -> None:
    """Regression: a 76,778 s latency ran into its neighbour columns in `reviewer report`."""
    recs = [native_trial("slow", passed=True, trial=1, latency_s=76778.0, cost_usd=1234.5)]
    recs.append(native_trial("slow", passed=False, trial=2, latency_s=76778.0, cost_usd=1234.5))
    path = write_jsonl(tmp_path / "slow.jsonl", recs)
    db = str(tmp_path / "r.db")
    CliRunner().invoke(cli, ["--db", db, "import", "--run", "slow", str(path)])
    out = CliRunner().invoke(cli, ["--db", db, "report", "--run", "slow"]).output
    lines = out.split("\n")
    head = next(i for i, line in enumerate(lines) if line.startswith("task") and "lat p50" in line)
    row = lines[head + 1]
    assert "76778.0s" in row
    cells = row.split()
    assert "76778.0s" in cells and cells.count("76778.0s") == 3  # p50, p95, max: apart
    assert len(cells) == 10  # the task and nine columns, none run into another


def test_export_harness_fails_from_the_cli(tmp_path: Path) -> None:
    recs = [native_trial(f"t{i}", passed=i < 2, trial=1) for i in range(5)]
    path = write_jsonl(tmp_path / "h.jsonl", recs)
    db = str(tmp_path / "h.db")
    CliRunner().invoke(cli, ["--db", db, "import", "--run", "h", str(path)])
    nothing = CliRunner().invoke(cli, ["--db", db, "export", "--out", str(tmp_path / "a")])
    assert nothing.exit_code != 0 and "--harness-fails" in nothing.output + nothing.stderr
    out = tmp_path / "b"
    result = CliRunner().invoke(
        cli, ["--db", db, "export", "--harness-fails", "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["written"] == 3 and data["sources"] == {"harness": 3}
    # a listed trial that is not exported says why
    ids = [r[0] for r in open_store(tmp_path / "h.db").execute("SELECT id FROM trials").fetchall()]
    result = CliRunner().invoke(
        cli,
        ["--db", db, "export", "--harness-fails", "--out", str(tmp_path / "c"), "--json"]
        + [x for tid in ids for x in ("--trial", tid)],
    )
    assert json.loads(result.stdout)["skipped"] == "skipped 2 trials: 2 passed"
