"""Safe and repeatable writing: byte-identical re-exports, atomic writes, no overwrite without
--force, --append adds only new ids, and where --out puts the file."""

from __future__ import annotations

from pathlib import Path

import pytest

import reviewer.export.run as run_mod
from reviewer.export.files import ExportError, existing_ids, resolve_out, write_atomic
from reviewer.export.run import NothingToExport, export_tasks
from reviewer.export.select import Selection
from reviewer.store import open_store
from reviewer.store.labels import add_label
from tests.export.conftest import BuildDb, Spec, read_lines


def test_same_selection_gives_byte_identical_files(tmp_path: Path, sample_db: Path) -> None:
    db = open_store(sample_db)
    for fmt in ("native", "inspect"):
        a = export_tasks(db, Selection(include_judge=True), tmp_path / f"a-{fmt}.jsonl", fmt)
        b = export_tasks(db, Selection(include_judge=True), tmp_path / f"b-{fmt}.jsonl", fmt)
        assert a.ids == b.ids and a.written > 10
        first = (tmp_path / f"a-{fmt}.jsonl").read_bytes()
        assert first == (tmp_path / f"b-{fmt}.jsonl").read_bytes()
        export_tasks(
            db, Selection(include_judge=True), tmp_path / f"a-{fmt}.jsonl", fmt, force=True
        )
        assert (tmp_path / f"a-{fmt}.jsonl").read_bytes() == first
    redacted = [
        export_tasks(db, Selection(), tmp_path / f"r{i}.jsonl", redact=True) for i in (1, 2)
    ]
    assert (tmp_path / "r1.jsonl").read_bytes() == (tmp_path / "r2.jsonl").read_bytes()
    assert redacted[0].redacted == redacted[1].redacted == {"email": 1, "phone number": 1}


def test_default_out_is_regression_folder(tmp_path: Path) -> None:
    assert resolve_out(None, "native") == Path("regression/tasks.jsonl")
    assert resolve_out(None, "inspect") == Path("regression/inspect.jsonl")
    assert resolve_out(tmp_path / "out", "native") == tmp_path / "out" / "tasks.jsonl"
    assert resolve_out(tmp_path / "mine.JSONL", "inspect") == tmp_path / "mine.JSONL"
    (tmp_path / "f").write_text("x")
    with pytest.raises(ExportError, match="must end in .jsonl"):
        resolve_out(tmp_path / "f", "native")
    with pytest.raises(ExportError, match="must end in .jsonl"):
        resolve_out(tmp_path / "tasks.json", "native")
    (tmp_path / "d.jsonl").mkdir()
    with pytest.raises(ExportError, match="is a folder"):
        resolve_out(tmp_path / "d.jsonl", "native")


def test_exports_into_the_default_folder(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a")])
    add_label(db, ids[0], "ana", "fail")
    summary = export_tasks(db, Selection())
    assert summary.path == Path("regression/tasks.jsonl")
    assert len(read_lines(Path("regression/tasks.jsonl"))) == 1  # cwd is tmp_path (conftest)


def test_refuses_to_overwrite_without_force(tmp_path: Path, build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a"), Spec("b")])
    add_label(db, ids[0], "ana", "fail")
    out = tmp_path / "t.jsonl"
    out.write_text("precious\n")
    with pytest.raises(ExportError, match="exists; --append adds the new tasks to it, --force"):
        export_tasks(db, Selection(), out)
    assert out.read_text() == "precious\n"
    export_tasks(db, Selection(), out, force=True)
    assert [t["provenance"]["trial"] for t in read_lines(out)] == [1]
    with pytest.raises(ExportError, match="give one of them"):
        export_tasks(db, Selection(), out, force=True, append=True)


def test_append_adds_only_new_ids_and_keeps_the_old_bytes(
    tmp_path: Path, build_db: BuildDb
) -> None:
    db, ids = build_db([Spec("a"), Spec("b"), Spec("c")])
    out = tmp_path / "t.jsonl"
    add_label(db, ids[1], "ana", "fail")
    first = export_tasks(db, Selection(), out, append=True)  # no file yet: append creates it
    assert (first.written, first.already, first.total) == (1, 0, 1)
    before = out.read_bytes()
    add_label(db, ids[0], "ana", "fail")
    add_label(db, ids[2], "ana", "fail")
    second = export_tasks(db, Selection(), out, append=True)
    assert (second.written, second.already, second.total) == (2, 1, 3)
    after = out.read_bytes()
    assert after.startswith(before)
    assert [t["provenance"]["trial"] for t in read_lines(out)] == [2, 1, 3]
    assert existing_ids(out, "native") == [first.ids[0], *second.ids]
    third = export_tasks(db, Selection(), out, append=True)
    assert (third.written, third.already, third.total) == (0, 3, 3)
    assert out.read_bytes() == after
    assert "3 already in the file, 3 in all" in third.lines()[0]


def test_append_refuses_a_file_it_did_not_write(tmp_path: Path, build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a")])
    add_label(db, ids[0], "ana", "fail")
    out = tmp_path / "t.jsonl"
    out.write_text('{"format": "reviewer-task/1", "id": "x"}\n\n{not json\n')
    with pytest.raises(ExportError, match=r"t\.jsonl:3: invalid JSON"):
        export_tasks(db, Selection(), out, append=True)
    out.write_text('{"id": "x", "input": "hi"}\n')
    with pytest.raises(ExportError, match=r"t\.jsonl:1: not a native task"):
        export_tasks(db, Selection(), out, append=True)
    export_tasks(db, Selection(), out, "inspect", append=True)
    assert existing_ids(out, "inspect")[0] == "x" and len(existing_ids(out, "inspect")) == 2
    with pytest.raises(ExportError, match=r"t\.jsonl:1: a task needs an id"):
        out.write_text("[1, 2]\n")
        existing_ids(out, "native")


def test_a_failure_midway_leaves_no_partial_file(
    tmp_path: Path, build_db: BuildDb, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, ids = build_db([Spec("a"), Spec("b"), Spec("c")])
    for tid in ids:
        add_label(db, tid, "ana", "fail")
    real = run_mod.build_task
    built: list[str] = []

    def flaky(c, trial, ctx):  # type: ignore[no-untyped-def]
        if len(built) == 2:
            raise OSError(28, "No space left on device")
        built.append(c.key.trial_id)
        return real(c, trial, ctx)

    monkeypatch.setattr(run_mod, "build_task", flaky)
    out = tmp_path / "sub" / "t.jsonl"
    with pytest.raises(OSError, match="No space left"):
        export_tasks(db, Selection(), out)
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # the temp file is gone too
    # an existing file survives a failed --force and a failed --append unchanged
    out.write_text("old\n")
    for kw in ({"force": True}, {"append": True}):
        built.clear()
        out.write_text('{"format": "reviewer-task/1", "id": "old"}\n')
        with pytest.raises(OSError):
            export_tasks(db, Selection(), out, **kw)  # type: ignore[arg-type]
        assert out.read_text() == '{"format": "reviewer-task/1", "id": "old"}\n'
        assert [p.name for p in out.parent.iterdir()] == ["t.jsonl"]


def test_write_atomic_keeps_the_mode_and_adds_a_missing_newline(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    write_atomic(out, ["a\n"])
    assert out.stat().st_mode & 0o777 == 0o644
    out.write_text("a")  # no trailing newline
    out.chmod(0o600)
    write_atomic(out, ["b\n"], keep_existing=True)
    assert out.read_text() == "a\nb\n"
    assert out.stat().st_mode & 0o777 == 0o600


def test_nothing_to_export_writes_nothing(tmp_path: Path, build_db: BuildDb) -> None:
    db, _ = build_db([Spec("a", "fail")])
    with pytest.raises(NothingToExport, match="no trial is labeled fail by a human; --judge-fails"):
        export_tasks(db, Selection(), tmp_path / "t.jsonl")
    with pytest.raises(NothingToExport, match="by 'bob' .*in run r1"):
        export_tasks(db, Selection(labeler="bob", runs=("r1",)), tmp_path / "t.jsonl")
    assert not (tmp_path / "t.jsonl").exists()


def test_summary_names_the_clusters(tmp_path: Path, build_db: BuildDb) -> None:
    db, ids = build_db(
        [Spec("a", cluster="c1"), Spec("b", cluster="c1"), Spec("c", cluster="c2"), Spec("d")]
    )
    for tid in ids:
        add_label(db, tid, "ana", "fail")
    s = export_tasks(db, Selection(), tmp_path / "t.jsonl")
    assert s.lines() == [
        f"exported 4 tasks to {tmp_path / 't.jsonl'} (native) from 2 clusters",
        "  2 from name of c1 [c1]",
        "  1 from name of c2 [c2]",
        "  1 in no cluster",
    ]
    data = s.to_json()
    assert data["clusters"] == [
        {"id": "c1", "name": "name of c1", "tasks": 2},
        {"id": "c2", "name": "name of c2", "tasks": 1},
    ]
    assert data["unclustered"] == 1 and data["sources"] == {"human": 4} and data["redacted"] is None
