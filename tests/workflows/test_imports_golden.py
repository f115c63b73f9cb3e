"""What an import stores, pinned: the sample runs, the Inspect, tau-bench and tau2 fixtures and a file of
awkward native records (unscored, infrastructure errors, graded rewards, judge verdicts, metadata,
arguments as a JSON string, non-ASCII text, a repeat, a bad line), imported into a new database,
then appended to and imported again, give tables whose content matches a digest made before the
import was sped up (issue 21). Every table is compared row by row, times blanked; the full-text index
by its terms (fts5vocab), not its pages, so tuning how the index is built may not change it. On
PostgreSQL every table both databases have holds the same; its full-text index is the one made
afresh from the stored records (``_same_as_sqlite``).

Regenerate the digest only for a change meant to alter what is stored:
``REVIEWER_WRITE_GOLDEN=1 python -m pytest tests/workflows/test_imports_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from reviewer.store import open_store
from reviewer.store.copy import columns, copy_database
from reviewer.store.db import Store
from reviewer.workflows.imports import import_paths, summary_lines
from tests.conftest import SAMPLE_RUNS, on_postgres

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "fixtures" / "import_golden.json"
#: Columns holding the time of the import (or of the audit after it): blanked before comparing.
TIMES = {"imported_at", "at", "created_at", "audited_at", "applied_at", "first_seen"}
#: Columns of JSON text: compared by the value they hold, whatever writes them (spaces, escapes).
JSON_TEXT = {"record", "metadata"}
#: The full-text index's own pages and settings: how it is built, compared through its terms instead.
FTS_PAGES = {"trials_fts_data", "trials_fts_idx", "trials_fts_config"}


def _awkward_lines() -> list[dict[str, Any]]:
    def msgs(text: str) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": "You are a support agent for order W12345."},
            {"role": "user", "content": text},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "name": "cancel_order", "arguments": '{"order_id": "W12345"}'}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": '{"cancelled": "RF998877"}'},
            {"role": "tool", "tool_call_id": "zz", "content": "Error: no such call"},
            {"role": "assistant", "content": [{"type": "text", "text": "Done — réf RF998877 ✓"}]},
        ]

    return [
        {
            "run": "odd",
            "task_id": "a",
            "trial": 1,
            "outcome": {"passed": True},
            "messages": msgs("x"),
        },
        {"run": "odd", "task_id": "a", "outcome": None, "messages": msgs("unscored")},
        {
            "run": "odd",
            "task_id": "a",
            "outcome": {"infra_error": True},
            "error": {"type": "Crash", "message": "harness died"},
            "messages": msgs("infra"),
        },
        {
            "task_id": "b",
            "outcome": {"reward": 0.4, "reason": "partial"},
            "messages": msgs("graded"),
            "judge": {"verdict": "FAIL", "rationale": ["r1", {"text": "r2"}], "model": "m"},
            "usage": {"input_tokens": 10, "output_tokens": 2, "cost_usd": 0.5},
            "latency_s": 1.25,
            "metadata": {"k": [1, 2], "ü": None},
            "instruction": "Cancel W12345",
            "termination": "max_steps",
        },
        {"task_id": "b", "trial": 7, "outcome": {"passed": False}, "messages": []},
    ]


def _write_inputs(root: Path) -> list[str]:
    shutil.copytree(SAMPLE_RUNS, root / "sample_runs")
    fixtures = REPO / "tests" / "fixtures"
    (root / "logs").mkdir()
    for rel in (
        "inspect/support.eval",
        "inspect/support.json",
        "tau_bench/grok-3-graded-5-tasks.json",
        "tau_bench/deepseek-v3-crashed.json",
        "tau2/airline-small.json",
    ):
        shutil.copy(fixtures / rel, root / "logs" / rel.replace("/", "-"))
    lines = [json.dumps(r, ensure_ascii=False) for r in _awkward_lines()]
    lines.insert(2, lines[0])  # a repeat
    lines.insert(3, "{not json")
    (root / "odd.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["sample_runs", "logs", "odd.jsonl"]


def _append(root: Path) -> None:
    extra = dict(_awkward_lines()[0], trial=5)
    extra["messages"] = extra["messages"][:3]
    with (root / "odd.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(extra) + "\n")


def _value(column: str, value: Any) -> Any:
    """A cell as compared: times blanked; a stored record or metadata as the JSON it holds; an audit fingerprint with its sets in sorted order (they
    are written in the order a set gives, which changes from one process to the next)."""
    if column in TIMES:
        return None
    if column in JSON_TEXT and isinstance(value, str):  # compared as JSON, not as its spelling
        return json.loads(value)
    if column == "fingerprint":
        fp = json.loads(value)
        fp[6] = sorted(fp[6])
        fp[7] = [[q, tool, m, sorted(values)] for q, tool, m, values in fp[7]]
        fp[8] = sorted(fp[8])
        return fp
    return value


def table_digests(db: Store) -> dict[str, str]:
    """Each table's rows (sorted, times blanked) hashed; the full-text index by its terms."""
    names = sorted(n for n in db.table_names() if not n.startswith("sqlite_"))
    out: dict[str, str] = {}
    for name in names:
        if name in FTS_PAGES or name == "trials_fts":
            continue
        cur = db.execute(f'SELECT {", ".join(columns(db, name))} FROM "{name}"')
        cols = [d[0] for d in cur.description]
        rows = [[_value(c, v) for c, v in zip(cols, row, strict=True)] for row in cur.fetchall()]
        text = json.dumps(sorted(json.dumps(r, default=repr) for r in rows))
        out[name] = f"{len(rows)}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    if db.dialect == "postgres":  # each trial's words (tsvectors) in a table of PostgreSQL's
        rows = db.execute("SELECT rowid, text::text, system::text FROM trials_fts").fetchall()
    else:
        db.execute(
            "CREATE VIRTUAL TABLE temp.fts_terms USING fts5vocab(main, trials_fts, instance)"
        )
        rows = db.execute("SELECT term, doc, col, offset FROM temp.fts_terms").fetchall()
    text = json.dumps(sorted(json.dumps(list(r)) for r in rows))
    out["trials_fts (terms)"] = f"{len(rows)}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
    return out


def _import_all(root: Path) -> tuple[dict[str, str], list[str]]:
    paths = _write_inputs(root)
    printed: list[str] = []
    with open_store(root / "golden.db") as db:
        printed += summary_lines(import_paths(db, paths), False)
        _append(root)
        printed += summary_lines(import_paths(db, ["odd.jsonl"]), False)
        printed += summary_lines(import_paths(db, paths), False)
        return table_digests(db), printed


def test_every_table_holds_what_it_held_before_the_speed_up(tmp_path: Path) -> None:
    digests, printed = _import_all(tmp_path)
    got = {"tables": digests, "printed": printed}
    if os.environ.get("REVIEWER_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert got["printed"] == want["printed"]
    if on_postgres():
        _same_as_sqlite(tmp_path, digests, want["tables"])
        return
    assert got["tables"] == want["tables"]


def _same_as_sqlite(root: Path, digests: dict[str, str], want: dict[str, str]) -> None:
    """PostgreSQL holds what the digest pins in every table both databases have; in place of
    SQLite's own (the migrations' log, FTS5's pages and terms) its migrations' log holds as many
    rows, and its full-text index is the one made afresh from the stored records (by `reviewer
    copy`, with the import's own code for a trial's entry)."""
    got = dict(digests)
    want = dict(want)
    rows = got.pop("_reviewer_migrations").split(":")[0]
    assert rows == want.pop("_sqlite_migrations").split(":")[0]
    del want["trials_fts_docsize"], want["trials_fts (terms)"]
    index = got.pop("trials_fts (terms)")
    assert got == want
    with open_store(root / "golden.db") as db, open_store(root / "afresh.db") as fresh:
        assert copy_database(db, fresh).verified
        assert index == table_digests(fresh)["trials_fts (terms)"]
        assert index.startswith(f"{db.execute('SELECT COUNT(*) FROM trials').fetchone()[0]}:")


def test_the_digest_sees_a_changed_row(tmp_path: Path) -> None:
    """The comparison can fail: one value of one stored record changed shows in its table's
    digest (a space added does not: a record is compared as the JSON it holds)."""
    digests, _ = _import_all(tmp_path)
    with open_store(tmp_path / "golden.db") as db:
        with db.transaction():
            db.execute("UPDATE trials SET record = replace(record, 'true', 'false') WHERE seq = 1")
            db.execute("INSERT INTO trials_fts (rowid, text, system) VALUES (999999, 'zebra', '')")
        after = table_digests(db)
    assert after["trials"] != digests["trials"]
    assert after["trials_fts (terms)"] != digests["trials_fts (terms)"]
    assert after["runs"] == digests["runs"]
