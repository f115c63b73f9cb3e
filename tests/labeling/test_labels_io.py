"""Labels as JSONL: a round trip, two machines merged into a third, bad lines, time spellings."""

from __future__ import annotations

import errno
import io
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from reviewer.labeling.io import LabelFileError, export_labels, import_labels
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
    # (a.jsonl and b.jsonl hold the trials the databases were built from)
    export_labels(a, tmp_path / "labels-a.jsonl")
    export_labels(b, tmp_path / "labels-b.jsonl")

    c = build_db(SPECS, name="c.db")
    ra = import_labels(c, tmp_path / "labels-a.jsonl")
    rb = import_labels(c, tmp_path / "labels-b.jsonl")
    assert (ra.added, ra.duplicates) == (10, 0)
    assert (rb.added, rb.duplicates) == (8, 9)
    assert len(all_rows(c)) == 18
    assert set(all_rows(c)) == set(all_rows(a)) | set(all_rows(b))
    cur = current_labels(c)
    assert len([k for k in cur if k[1] == "ana"]) == 7
    assert len([k for k in cur if k[1] == "ben"]) == 8
    assert cur[(t[0], "ana")].note == "second look"
    assert (t[7], "ana") not in cur  # the undo travelled with the label
    for f in ("labels-a.jsonl", "labels-b.jsonl"):
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
    assert reasons.count("lone surrogate") == 2 and reasons.count("out of range in UTC") == 2
    assert "JSON nested deeper than 200 levels" in reasons


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


def _import_rows(db: sqlite_utils.Database, path: Path, rows: list[str]) -> Any:
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return import_labels(db, path)


def test_label_time_more_than_a_day_ahead_is_refused_with_file_line(
    build_db: BuildDb, tmp_path: Path
) -> None:
    """A label dated 9999-12-31 would outrank every later relabel for ever."""
    db = build_db(SPECS)
    t = ids(db)
    soon = (datetime.now(UTC) + timedelta(hours=2)).isoformat()
    rows = [
        {"trial": t[0], "labeler": "ana", "verdict": "fail", "at": "9999-12-31T00:00:00Z"},
        {"trial": t[1], "labeler": "ana", "verdict": "fail", "at": "2999-01-01T00:00:00+01:00"},
        {"trial": t[2], "labeler": "ana", "verdict": "fail", "at": soon},  # clock skew: kept
    ]
    f = tmp_path / "future.jsonl"
    r = _import_rows(db, f, [json.dumps(x) for x in rows])
    assert r.added == 1
    assert [s.split(": ", 1)[0] for s in r.skipped] == [f"{f}:1", f"{f}:2"]
    assert all("more than a day ahead" in s for s in r.skipped)
    assert set(current_labels(db)) == {(t[2], "ana")}


def test_label_time_that_overflows_in_utc_is_refused_with_file_line(
    build_db: BuildDb, tmp_path: Path
) -> None:
    db = build_db(SPECS)
    good = {"trial": ids(db)[0], "labeler": "ana", "verdict": "fail"}
    f = tmp_path / "early.jsonl"
    r = _import_rows(
        db,
        f,
        [
            json.dumps({**good, "at": "0001-01-01T00:00:00+05:00"}),
            json.dumps({**good, "at": "2024-05-01T12:00:00Z"}),
        ],
    )
    assert r.added == 1
    assert r.skipped == [
        f"{f}:1: at '0001-01-01T00:00:00+05:00' is out of range in UTC (before year 1 or after 9999)"
    ]


@pytest.mark.parametrize(
    "extra",
    [
        {"extra": float("nan")},
        {"note": "x", "meta": {"score": [1, float("inf")]}},
        {"criteria": {"a": True}, "weight": float("-inf")},
    ],
)
def test_nan_or_infinity_anywhere_in_a_label_line_is_refused(
    build_db: BuildDb, tmp_path: Path, extra: dict[str, Any]
) -> None:
    db = build_db(SPECS)
    good = {"trial": ids(db)[0], "labeler": "ana", "verdict": "fail", "at": "2024-05-01T12:00Z"}
    f = tmp_path / "nan.jsonl"
    r = _import_rows(db, f, [json.dumps({**good, **extra}), json.dumps({**good, "labeler": "b"})])
    assert r.added == 1
    assert len(r.skipped) == 1 and r.skipped[0].startswith(f"{f}:1: ")
    assert "is not a number reviewer stores" in r.skipped[0]


def _labeled(build_db: BuildDb) -> sqlite_utils.Database:
    db = build_db(SPECS)
    for tid in ids(db)[:6]:
        add_label(db, tid, "ana", "fail", note="n" * 200)
    return db


def test_labels_export_refuses_to_overwrite_without_force(
    build_db: BuildDb, tmp_path: Path
) -> None:
    db = _labeled(build_db)
    out = tmp_path / "labels.jsonl"
    out.write_text("old\n", encoding="utf-8")
    with pytest.raises(LabelFileError, match=r"labels.jsonl exists; --force replaces it$"):
        export_labels(db, out)
    assert out.read_text(encoding="utf-8") == "old\n"
    assert export_labels(db, out, force=True) == 6
    assert len(out.read_text(encoding="utf-8").splitlines()) == 6


def test_labels_export_on_a_full_disk_keeps_the_old_file(
    build_db: BuildDb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills after the first lines: the previous export stays whole, no temp file is left."""
    db = _labeled(build_db)
    out = tmp_path / "labels.jsonl"
    export_labels(db, out)
    before = out.read_bytes()
    add_label(db, ids(db)[7], "ben", "pass")
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, fh: Any) -> None:
            self.fh, self.writes = fh, 0

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            self.fh.close()

        def write(self, s: str) -> int:
            self.writes += 1
            if self.writes > 2:
                self.fh.write(s[: len(s) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return int(self.fh.write(s))

        def __getattr__(self, name: str) -> Any:
            return getattr(self.fh, name)

    monkeypatch.setattr(os, "fdopen", lambda *a, **k: FullDisk(real_fdopen(*a, **k)))
    with pytest.raises(LabelFileError, match="cannot write: No space left on device"):
        export_labels(db, out, force=True)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if "labels" in p.name) == ["labels.jsonl"]


def test_a_line_over_the_record_limit_is_read_past_not_held(
    build_db: BuildDb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A labels file's lines were read whole whatever their length (`labels import /dev/zero`
    took 24 GB before it was killed); a line over REVIEWER_MAX_RECORD_MB is skipped as an import
    skips one, and the lines after it are merged."""
    db = build_db(SPECS)
    t = ids(db)
    good = {"trial": t[0], "labeler": "ana", "verdict": "fail", "at": "2024-05-01T12:00:00Z"}
    f = tmp_path / "long.jsonl"
    f.write_bytes(b"x" * (3 << 20) + b"\n" + json.dumps(good).encode() + b"\n")
    monkeypatch.setenv("REVIEWER_MAX_RECORD_MB", "1")
    r = import_labels(db, f)
    assert r.added == 1
    assert r.skipped == [
        f"{f}:1: record is 3.0 MiB, over the 1.0 MiB limit per record (REVIEWER_MAX_RECORD_MB)"
    ]
    with pytest.raises(LabelFileError, match="/dev/zero: a device, not a labels file"):
        import_labels(db, "/dev/zero")


def test_every_name_the_store_holds_survives_export_and_import(
    build_db: BuildDb, tmp_path: Path
) -> None:
    """A labeler's name as stored (a login name with two spaces or a tab, a long one) comes back
    the same from a labels file, into a new database and into the same one (all duplicates)."""
    src = build_db(SPECS, name="src.db")
    t = ids(src)
    names = ["ana", "bo  b", "tab\tby", "n" * 70]
    for i, name in enumerate(names):
        add_label(src, t[i % len(t)], name, "pass")
    out = tmp_path / "labels.jsonl"
    assert export_labels(src, out) == len(names)
    dst = build_db(SPECS, name="dst.db")
    r = import_labels(dst, out)
    assert (r.added, r.skipped) == (len(names), [])
    assert sorted(current_labels_by(dst)) == sorted(names)
    again = import_labels(src, out)
    assert (again.added, again.duplicates, again.skipped) == (0, len(names), [])


def current_labels_by(db: sqlite_utils.Database) -> list[str]:
    return [r[0] for r in db.execute("SELECT DISTINCT labeler FROM labels").fetchall()]


def test_a_labeler_no_face_could_store_is_a_skipped_line(build_db: BuildDb, tmp_path: Path) -> None:
    """A labels file's labeler with an escape sequence, a line break or 1,000 characters was
    stored (and shown); it is skipped with its file and line, the names a store holds still read."""
    from reviewer.models import MAX_STORED_LABELER

    db = build_db(SPECS)
    t = ids(db)
    good = {"trial": t[0], "labeler": "ana", "verdict": "fail", "at": "2026-01-01T00:00:00Z"}
    bad = ["\x1b[2J[red]evil", "x" * 1000, "a\nb", "  ", "x" * (MAX_STORED_LABELER + 1)]
    f = tmp_path / "lab.jsonl"
    r = _import_rows(db, f, [json.dumps({**good, "labeler": name}) for name in [*bad, " ana "]])
    assert r.added == 1
    assert r.skipped == [
        f"{f}:{i}: labeler must be 1 to {MAX_STORED_LABELER} printable characters"
        for i in range(1, len(bad) + 1)
    ]
    assert current_labels_by(db) == ["ana"]


def test_a_line_cut_short_is_named_at_its_own_end(build_db: BuildDb, tmp_path: Path) -> None:
    """A label line cut short (a copy interrupted mid-line) was said to fail at 'column 1': the
    place the parser gave was on the next line, past the line end (found by an attacker)."""
    db = build_db(SPECS)
    f = tmp_path / "cut.jsonl"
    f.write_bytes(b'{"trial": "zzz"\n{"trial": "zz" "x"}\r\n')
    r = import_labels(db, f)
    assert r.skipped == [
        f"{f}:1: not JSON: Expecting ',' delimiter (column 16)",
        f"{f}:2: not JSON: Expecting ',' delimiter (column 16)",
    ]
