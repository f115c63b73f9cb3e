"""Pair-judgement JSONL: sniffing, line checks, `reviewer import`, trial refs (resolved or kept)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from reviewer import ingest
from reviewer.cli import cli
from reviewer.ingest.pairs import PairRecord, parse, read_pairs
from reviewer.models import Skip
from reviewer.store import open_store
from reviewer.store.pairs import get_pair, pair_rows, resolve_ref
from tests.conftest import native_trial, write_jsonl

REF_A = {"run": "r1", "task_id": "t1", "trial": 1}
REF_B = {"run": "r1", "task_id": "t1", "trial": 2}


def line(**overrides: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "pair_id": "p1",
        "task_id": "t1",
        "a": REF_A,
        "b": REF_B,
        "judge": "claude/v1/pair",
        "order_ab": "a",
        "order_ba": "b",
        "human": "a",
        "rationale_ab": "A looked the order up first.",
        "rationale_ba": "B looked the order up first.",
    }
    rec.update(overrides)
    return {k: v for k, v in rec.items() if v is not ...}


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def trials_file(tmp_path: Path) -> Path:
    recs = [native_trial("t1", passed=p, trial=i) for i, p in ((1, True), (2, False))]
    recs[1]["messages"][-1]["content"] = "Refused."
    return write_jsonl(tmp_path / "r1.jsonl", recs)


def test_sniffed_as_pairs_and_not_as_trials(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "pairs.jsonl", [line()])
    assert ingest.sniff(f).NAME == "pairs"
    assert ingest.sniff(trials_file(tmp_path)).NAME == "native"
    long = write_jsonl(tmp_path / "long.jsonl", [line(rationale_ab="x" * 100_000)])
    assert ingest.sniff(long).NAME == "pairs"


def test_bad_lines_are_skipped_with_file_line_and_reason(tmp_path: Path) -> None:
    f = tmp_path / "pairs.jsonl"
    lines = [
        json.dumps(line()),
        "{not json",
        json.dumps([1, 2]),
        json.dumps(line(pair_id="p2", order_ab="A")),
        json.dumps(line(pair_id="p3", a={"run": "r1", "task_id": "t1", "trial": "1"})),
        json.dumps(line(pair_id="p4", judge="")),
        json.dumps(line(pair_id="p5", order_ba=...)),
        json.dumps(line(pair_id="p6", b=7)),
        "",
        json.dumps(line()),  # repeats p1 of the same judge
        json.dumps(line(judge="other")),  # same pair, another judge: fine
        json.dumps(line(pair_id="p7", order_ab=None, order_ba=None, human=None)),
    ]
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    records, skips = read_pairs(f)
    assert [(r.pair_id, r.judge) for r in records] == [
        ("p1", "claude/v1/pair"),
        ("p1", "other"),
        ("p7", "claude/v1/pair"),
    ]
    reasons = {s.line: s.reason for s in skips}
    assert set(reasons) == {2, 3, 4, 5, 6, 7, 8, 10}
    assert reasons[2].startswith("invalid JSON")
    assert "not a JSON object" in reasons[3]
    assert "order_ab must be a, b, tie or null" in reasons[4]
    assert reasons[5].startswith("a: ") and "whole number" in reasons[5]
    assert "judge must be a non-empty string" in reasons[6]
    assert "missing order_ba" in reasons[7]
    assert reasons[8].startswith("b: ")
    assert "repeats pair 'p1'" in reasons[10] and "line 1" in reasons[10]
    assert str(skips[0]) == f"{f}:2: {reasons[2]}"


def test_parse_yields_records_and_skips(tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(line()).encode() + b"\n\xff\xfe\n")
    out = list(parse(f))
    assert isinstance(out[0], PairRecord) and out[0].a == REF_A and out[0].source_line == 1
    assert isinstance(out[1], Skip) and "not UTF-8" in out[1].reason


def test_import_resolves_refs_to_stored_trials(tmp_path: Path) -> None:
    db_path = tmp_path / "x.db"
    assert invoke(db_path, "import", str(trials_file(tmp_path))).exit_code == 0
    db = open_store(db_path)
    ids = [r[0] for r in db.execute("SELECT id FROM trials ORDER BY trial").fetchall()]
    f = write_jsonl(
        tmp_path / "pairs.jsonl",
        [line(), line(pair_id="p2", a=ids[1], b=ids[0], order_ab="tie", order_ba="tie")],
    )
    result = invoke(db_path, "import", str(f))
    assert result.exit_code == 0, result.output
    assert "pairs: 2 pair judgements added" in result.stderr
    assert "imported 0 trials" not in result.stderr
    p1 = get_pair(db, "p1", "claude/v1/pair")
    assert p1 is not None and (p1.a_trial, p1.b_trial) == (ids[0], ids[1])
    assert p1.rationale_ab == "A looked the order up first." and p1.human == "a"
    p2 = get_pair(db, "p2", "claude/v1/pair")
    assert p2 is not None and (p2.a_trial, p2.b_trial) == (ids[1], ids[0])


def test_refs_to_trials_not_stored_are_kept_and_resolve_later(tmp_path: Path) -> None:
    db_path = tmp_path / "x.db"
    f = write_jsonl(tmp_path / "pairs.jsonl", [line(), line(pair_id="p2", a="abc", b="def")])
    result = invoke(db_path, "import", str(f))
    assert result.exit_code == 0, result.output
    assert "4 trial refs not in the store" in result.stderr
    db = open_store(db_path)
    p1 = get_pair(db, "p1", "claude/v1/pair")
    assert p1 is not None and json.loads(p1.a_trial or "") == REF_A
    assert get_pair(db, "p2", "claude/v1/pair").a_trial == "abc"  # type: ignore[union-attr]
    assert resolve_ref(db, p1.a_trial) is None
    assert invoke(db_path, "import", str(trials_file(tmp_path))).exit_code == 0
    stored = db.execute("SELECT id FROM trials WHERE trial = 1").fetchone()[0]
    assert resolve_ref(db, p1.a_trial) == stored


def test_reimport_adds_nothing_and_a_changed_line_replaces(tmp_path: Path) -> None:
    db_path = tmp_path / "x.db"
    f = write_jsonl(tmp_path / "pairs.jsonl", [line()])
    assert invoke(db_path, "import", str(f)).exit_code == 0
    again = invoke(db_path, "import", str(f))
    assert again.exit_code == 0 and "0 pair judgements added, 0 updated, 1 already" in again.stderr
    write_jsonl(f, [line(order_ba="a", rationale_ba="changed my mind")])
    changed = invoke(db_path, "import", "--json", str(f))
    assert changed.exit_code == 0 and "1 updated" in changed.stderr
    assert json.loads(changed.stdout)["pairs"] == 1
    (row,) = pair_rows(open_store(db_path))
    assert (row.order_ab, row.order_ba, row.rationale_ba) == ("a", "a", "changed my mind")
    assert row.source == "import"


def test_check_writes_nothing(tmp_path: Path) -> None:
    db_path = tmp_path / "x.db"
    f = write_jsonl(tmp_path / "pairs.jsonl", [line(), line(pair_id="p2")])
    result = invoke(db_path, "import", "--check", str(f))
    assert result.exit_code == 0, result.output
    assert "2 valid pair judgements (1 judge)" in result.stderr
    assert not db_path.exists() or pair_rows(open_store(db_path)) == []
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(line()) + "\n" + json.dumps(line(pair_id="x", human="B")) + "\n")
    assert invoke(db_path, "import", "--check", str(bad)).exit_code == 1


def test_a_file_of_bad_lines_imports_nothing_and_fails(tmp_path: Path) -> None:
    f = tmp_path / "pairs.jsonl"
    f.write_text(json.dumps(line(order_ab="first")) + "\n", encoding="utf-8")
    result = invoke(tmp_path / "x.db", "import", str(f))
    assert result.exit_code == 1
    assert f"{f}:1: order_ab must be a, b, tie or null" in result.stderr
