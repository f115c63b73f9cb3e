"""Labels as JSONL: a round trip, two machines merged into a third, bad lines, time spellings."""

from __future__ import annotations

import io
import json
from pathlib import Path

import sqlite_utils

from reviewer.labeling.io import export_labels, import_labels
from reviewer.store.labels import add_label, current_labels, history, undo_last
from reviewer.store.queues import candidates
from tests.labeling.conftest import BuildDb, Spec

SPECS: list[Spec] = [(f"task{i % 3}", "pass" if i % 2 else "fail", None) for i in range(12)]


def ids(db: sqlite_utils.Database) -> list[str]:
    return [c.trial_id for c in candidates(db)]


def all_rows(db: sqlite_utils.Database) -> list[tuple[object, ...]]:
    return db.execute(
        "SELECT trial_id, labeler, verdict, criteria, note, rubric, at, retracted FROM labels "
        "ORDER BY trial_id, labeler, at, retracted"
    ).fetchall()


def test_round_trip_keeps_the_whole_history(build_db: BuildDb, tmp_path: Path) -> None:
    src = build_db(SPECS, name="src.db")
    t = ids(src)
    add_label(src, t[0], "ana", "pass", {"a": True, "b": None}, "ok", "p@1")
    add_label(src, t[1], "ana", "fail", {"a": False}, 'a "quoted"\nnote ✓', "p@1")
    add_label(src, t[1], "ana", "skip")
    undo_last(src, "ana")
    out = tmp_path / "labels.jsonl"
    assert export_labels(src, out) == 4
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["trial"] == {"run": "r1", "task_id": "task0", "trial": 1}
    assert set(lines[0]) == {
        "trial",
        "trial_id",
        "labeler",
        "verdict",
        "criteria",
        "note",
        "rubric",
        "at",
        "retracted",
    }
    assert [x["retracted"] for x in lines] == [False, False, False, True]
    assert [x["at"] for x in lines] == sorted(x["at"] for x in lines)

    dst = build_db(SPECS, name="dst.db")
    result = import_labels(dst, out)
    assert (result.added, result.duplicates, result.skipped) == (4, 0, [])
    assert all_rows(dst) == all_rows(src)
    assert current_labels(dst) == current_labels(src)
    assert history(dst, t[1]) == history(src, t[1])
    again = tmp_path / "again.jsonl"
    export_labels(dst, again)
    assert again.read_bytes() == out.read_bytes()


def test_two_machines_merge_into_a_third_without_duplicates(
    build_db: BuildDb, tmp_path: Path
) -> None:
    a = build_db(SPECS, name="a.db")
    b = build_db(SPECS, name="b.db")
    t = ids(a)
    assert ids(b) == t
    for tid in t[:8]:
        add_label(a, tid, "ana", "pass")
    undo_last(a, "ana")
    # ana's first file reached machine b, then ben labels overlapping trials there
    export_labels(a, tmp_path / "a1.jsonl")
    assert import_labels(b, tmp_path / "a1.jsonl").added == 9
    for tid in t[4:12]:
        add_label(b, tid, "ben", "fail")
    add_label(a, t[0], "ana", "fail", note="second look")  # more work on machine a
    export_labels(a, tmp_path / "a.jsonl")
    export_labels(b, tmp_path / "b.jsonl")

    c = build_db(SPECS, name="c.db")
    ra = import_labels(c, tmp_path / "a.jsonl")
    rb = import_labels(c, tmp_path / "b.jsonl")
    assert (ra.added, ra.duplicates) == (10, 0)
    assert (rb.added, rb.duplicates) == (8, 9)
    assert len(all_rows(c)) == 18
    assert set(all_rows(c)) == set(all_rows(a)) | set(all_rows(b))
    cur = current_labels(c)
    assert len([k for k in cur if k[1] == "ana"]) == 7
    assert len([k for k in cur if k[1] == "ben"]) == 8
    assert cur[(t[0], "ana")].note == "second look"
    assert (t[7], "ana") not in cur  # the undo travelled with the label
    for f in ("a.jsonl", "b.jsonl"):
        r = import_labels(c, tmp_path / f)
        assert r.added == 0 and not r.skipped
    assert len(all_rows(c)) == 18


def test_trial_refs_resolve_by_id_or_by_run_task_trial(build_db: BuildDb, tmp_path: Path) -> None:
    db = build_db(SPECS)
    t = ids(db)
    base = {"labeler": "ana", "verdict": "pass", "at": "2024-05-01T12:00:00Z"}
    lines = [
        {**base, "trial": {"run": "r1", "task_id": "task0", "trial": 1}, "trial_id": "stale"},
        {**base, "trial": t[1]},
        {**base, "trial_id": t[2]},
    ]
    f = tmp_path / "refs.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    r = import_labels(db, f)
    assert (r.added, r.skipped) == (3, [])
    assert {k[0] for k in current_labels(db)} == set(t[:3])


def test_bad_lines_are_reported_and_good_ones_kept(build_db: BuildDb, tmp_path: Path) -> None:
    db = build_db(SPECS)
    t = ids(db)
    good = {"trial": t[0], "labeler": "ana", "verdict": "pass", "at": "2024-05-01T12:00:00Z"}
    rows = [
        json.dumps(good).encode(),
        b"{not json",
        b"[1, 2]",
        json.dumps({**good, "verdict": "maybe"}).encode(),
        json.dumps({**good, "trial": {"run": "r1", "task_id": "task0", "trial": 99}}).encode(),
        json.dumps({**good, "at": "yesterday"}).encode(),
        json.dumps({k: v for k, v in good.items() if k != "labeler"}).encode(),
        json.dumps({**good, "criteria": {"a": "yes"}}).encode(),
        b"",
        b'{"labeler": "\xff"}',
        json.dumps({**good, "at": "2024-05-01T14:00:00+02:00"}).encode(),  # the same time
    ]
    f = tmp_path / "bad.jsonl"
    f.write_bytes(b"\n".join(rows) + b"\n")
    r = import_labels(db, f)
    assert (r.added, r.duplicates) == (1, 1)
    assert [s.split(": ", 1)[0] for s in r.skipped] == [
        f"{f}:{i}" for i in (2, 3, 4, 5, 6, 7, 8, 10)
    ]
    reasons = " | ".join(r.skipped)
    for needle in (
        "not JSON",
        "expected a JSON object",
        "verdict must be",
        "unknown trial r1/task0/99",
        "not an ISO-8601 time",
        "labeler",
        "criteria",
        "not UTF-8",
    ):
        assert needle in reasons


def test_hostile_lines_are_skipped_not_fatal(build_db: BuildDb, tmp_path: Path) -> None:
    """A lone surrogate, a time out of the calendar's range or JSON nested 100,000 deep is one
    skipped line; the good line beside them is merged."""
    db = build_db(SPECS)
    t = ids(db)
    good = {"trial": t[0], "labeler": "ana", "verdict": "fail", "at": "2024-05-01T12:00:00Z"}
    rows = [
        json.dumps({**good, "labeler": "\ud800"}).encode(),
        json.dumps({**good, "note": "x\udfff"}).encode(),
        json.dumps({**good, "at": "0001-01-01T00:00:00+05:00"}).encode(),
        json.dumps({**good, "at": "9999-12-31T23:59:59-23:59"}).encode(),
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps(good).encode(),
    ]
    f = tmp_path / "hostile.jsonl"
    f.write_bytes(b"\n".join(rows) + b"\n")
    r = import_labels(db, f)
    assert r.added == 1
    assert [s.split(": ", 1)[0] for s in r.skipped] == [f"{f}:{i}" for i in (1, 2, 3, 4, 5)]
    reasons = " | ".join(r.skipped)
    assert reasons.count("lone surrogate") == 2 and reasons.count("not an ISO-8601 time") == 2


def test_streams_and_one_labeler(build_db: BuildDb) -> None:
    db = build_db(SPECS)
    t = ids(db)
    add_label(db, t[0], "ana", "pass")
    add_label(db, t[1], "ben", "fail")
    out = io.StringIO()
    assert export_labels(db, out, labeler="ben") == 1
    assert json.loads(out.getvalue())["labeler"] == "ben"
    other = build_db(SPECS, name="other.db")
    r = import_labels(other, io.BytesIO(out.getvalue().encode()))
    assert r.added == 1
