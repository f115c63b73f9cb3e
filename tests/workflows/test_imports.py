"""Importing files into the store: ids, repeats, bad input, atomicity, and the CLI around it."""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.ingest.base import IngestError
from reviewer.ingest.files import default_run_name
from reviewer.store import open_store, trial_list
from reviewer.store.db import Store
from reviewer.store.trial_filter import TrialFilter
from reviewer.store.writer import IMPORT_CACHE_KIB, import_cache
from reviewer.workflows.imports import ImportProgress, import_paths
from tests.conftest import SAMPLE_RUNS, native_trial, stored, write_jsonl


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def count(db_path: Path, table: str = "trials") -> int:
    db = open_store(db_path)
    try:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        db.close()


def search_count(db: Store, text: str, *, system: bool = False) -> int:
    """How many trials the full-text index finds TEXT in (the system prompt too with SYSTEM)."""
    return trial_list.count(db, TrialFilter(search=text, search_system=system), cached=False)


def test_import_native_and_again_adds_nothing(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "r1.jsonl",
        [native_trial("a"), native_trial("a", passed=False), native_trial("b")],
    )
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    assert "imported 3 trials (1 run, 2 tasks)" in err
    assert count(Path("x.db")) == 3
    db = open_store("x.db")
    assert [r[0] for r in db.execute("SELECT n_messages FROM trials")] == [5, 5, 5]
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0
    assert "nothing new: all 3 trials were already stored" in err
    assert count(Path("x.db")) == 3


def test_the_summary_counts_tasks_not_run_task_pairs(tmp_path: Path) -> None:
    """Two runs of the same two tasks hold two tasks (it said four); a task of one run only adds
    one; --check and --json count alike."""
    recs = [native_trial(t, run=r) for r in ("v1", "v2") for t in ("a", "b")]
    recs.append(native_trial("c", run="v2"))
    f = write_jsonl(tmp_path / "r.jsonl", recs)
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(f))
    assert "5 valid trials (2 runs, 3 tasks)" in err, err
    code, out, err = run_cli("--db", "x.db", "import", "--json", str(f))
    assert code == 0, err
    assert json.loads(out)["tasks"] == 3
    code, _, err = run_cli("--db", "y.db", "import", str(f))
    assert "imported 5 trials (2 runs, 3 tasks)" in err, err


def test_the_summary_names_the_runs_it_read(tmp_path: Path) -> None:
    """The runs are named after the count line (what `report --run` takes): sorted, a hostile
    name made visible on one line and quoted, past eight the rest counted; --check names them too;
    a blank name or one holding the list's own commas stays readable, a long one is cut."""
    recs = [native_trial("a", run=f"run-{i:02d}") for i in range(10)]
    recs.append(native_trial("a", run="evil\n\x1b[31mred[/]"))
    f = write_jsonl(tmp_path / "r.jsonl", recs)
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(f))
    assert code == 0, err
    want = "runs: 'evil ⏎ ␛[31mred[/]', 'run-00', 'run-01', 'run-02', 'run-03', 'run-04', 'run-05', 'run-06'"
    assert err.splitlines()[1] == want + " and 3 more", err
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    lines = err.splitlines()
    assert lines[0].startswith("imported 11 trials (11 runs, 1 task)") and lines[1] == (
        want + " and 3 more"
    ), err
    code, _, err = run_cli(
        "--db", "x.db", "import", str(write_jsonl(tmp_path / "one.jsonl", recs[:1]))
    )
    assert err.splitlines()[:2] == [
        "nothing new: the 1 trial was already stored; 0 skipped",
        "run: 'run-00'",
    ], err
    odd = [native_trial("a", run=r) for r in ("   ", "a, b and 3 more", "x" * 20_000)]
    code, _, err = run_cli("--db", "z.db", "import", str(write_jsonl(tmp_path / "o.jsonl", odd)))
    assert code == 0, err
    assert err.splitlines()[1] == (f"runs: '   ', 'a, b and 3 more', '{'x' * 99}…{'x' * 100}'"), err
    code, _, err = run_cli("--db", "z.db", "report", "--run", "y" * 5000)
    assert code == 1 and len(err) < 500 and "'   ', 'a, b and 3 more', 'xxx" in err, err


def test_a_row_the_database_refuses_rolls_back_its_own_file_only(tmp_path: Path) -> None:
    """Task ids that differ only by a NUL are two on SQLite; PostgreSQL keeps a NUL as U+2400,
    so there they are one, and its refusal rolls back that file alone, said in one line naming
    the file, while the next file is imported and the summary printed."""
    from tests.conftest import on_postgres

    twins = [native_trial("z\x00z", run="n", trial=1), native_trial("z\u2400z", run="n", trial=1)]
    first = write_jsonl(tmp_path / "a.jsonl", twins)
    second = write_jsonl(tmp_path / "b.jsonl", [native_trial("fine", run="m")])
    code, _, err = run_cli("--db", "x.db", "import", str(first), str(second))
    if not on_postgres():
        assert code == 0 and count(Path("x.db")) == 3, err
        return
    lines = err.splitlines()
    refused = f"reviewer: {first}: cannot import: the database refused a row (duplicate key value"
    assert lines[0].startswith(refused) and "DETAIL: Key (run, task_id, trial)" in lines[0], err
    assert lines[0].endswith("already exists.)") and "CONTEXT" not in err, err
    assert "imported 1 trial (1 run, 1 task) from 1 file; 0 skipped; 1 file failed" in err, err
    assert code == 1 and count(Path("x.db")) == 1


def test_trial_numbers_default_to_order_within_run_and_task(tmp_path: Path) -> None:
    recs = [native_trial("a", passed=p, latency_s=i) for i, p in enumerate([True, False, True])]
    f = write_jsonl(tmp_path / "r.jsonl", recs)
    run_cli("--db", "x.db", "import", str(f))
    db = open_store("x.db")
    rows = db.execute("SELECT trial, success FROM trials ORDER BY trial").fetchall()
    assert rows == [(1, 1), (2, 0), (3, 1)]


def test_stable_ids_do_not_depend_on_the_database(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a"), native_trial("b")])
    run_cli("--db", "one.db", "import", str(f))
    run_cli("--db", "two.db", "import", str(f))
    ids = [
        sorted(r[0] for r in open_store(p).execute("SELECT id FROM trials"))
        for p in ("one.db", "two.db")
    ]
    assert ids[0] == ids[1] and len(ids[0]) == 2


def test_invalid_json_line_is_reported_and_the_rest_imported(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    lines = [
        json.dumps(native_trial("a")),
        '{"task_id": "b", "messages": [',
        json.dumps(native_trial("c")),
    ]
    f.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0
    assert f"{f}:2: invalid JSON" in err
    assert "Traceback" not in err
    assert count(Path("x.db")) == 2


def test_record_without_task_id_is_skipped_with_its_line(tmp_path: Path) -> None:
    bad = native_trial("a")
    del bad["task_id"]
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("z"), bad])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0
    assert f"{f}:2: missing task_id" in err
    assert count(Path("x.db")) == 1
    # an empty one is there, and said to be empty (it read "missing", found by an attack)
    f = write_jsonl(tmp_path / "e.jsonl", [native_trial("y"), {**native_trial("b"), "task_id": ""}])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0 and f"{f}:2: task_id is empty" in err


def test_non_utf8_line_is_reported(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    good = json.dumps(native_trial("a")).encode()
    bad = (
        json.dumps(native_trial("b")).encode().replace(b"support agent", b"support \xff\xfe agent")
    )
    f.write_bytes(good + b"\n" + bad + b"\n")
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0
    assert f"{f}:2: not UTF-8: byte 0xff" in err
    assert count(Path("x.db")) == 1


def test_identical_records_without_trial_numbers_say_how_to_keep_both(tmp_path: Path) -> None:
    """Two identical records with no trial number are one record written twice or two tries that
    went the same way: the second is skipped, and the line says a trial number keeps both
    (--check says the same); numbered, they are two trials (and the audit's copies)."""
    rec = native_trial("a")
    assert "trial" not in rec
    f = write_jsonl(tmp_path / "r.jsonl", [rec, rec])
    why = "repeats the trial at line 1 (identical, and neither has a trial number: give each try"
    for args, exit_code in ((("import", "--check"), 1), (("import",), 0)):
        code, _, err = run_cli("--db", "x.db", *args, str(f))
        assert code == exit_code and f"{f}:2: {why}" in err, err
    assert count(Path("x.db")) == 1
    numbered = write_jsonl(tmp_path / "n.jsonl", [dict(rec, trial=1), dict(rec, trial=2)])
    code, _, err = run_cli("--db", "y.db", "import", str(numbered))
    assert code == 0 and "imported 2 trials" in err and "skipped" in err, err
    assert count(Path("y.db")) == 2


def test_trial_repeated_in_one_file_is_skipped(tmp_path: Path) -> None:
    rec = native_trial("a", trial=1)
    other = native_trial("a", trial=1, latency_s=3.0)
    f = write_jsonl(tmp_path / "r.jsonl", [rec, rec, other])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0
    assert f"{f}:2: repeats the trial at line 1" in err
    assert f"{f}:3: trial 1 of task 'a' in run 'r1' is already taken by a different record" in err
    assert count(Path("x.db")) == 1


def test_unknown_format_names_the_formats_we_read(tmp_path: Path) -> None:
    f = tmp_path / "notes.json"
    f.write_text('{"hello": "world"}')
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 1
    assert f"{f}: unknown format: " in err and "; reviewer reads native JSONL" in err
    assert "Inspect AI" in err and "tau-bench" in err


def test_missing_path_and_empty_directory(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli("--db", "x.db", "import", str(empty), str(tmp_path / "nope.jsonl"))
    assert code == 1
    assert f"{empty}: no files to import" in err
    assert f"{tmp_path / 'nope.jsonl'}: no such file or directory" in err
    assert "Traceback" not in err


def test_a_single_20_mb_message_imports(tmp_path: Path) -> None:
    big = native_trial("big")
    big["messages"][1]["content"] = "word " * (4 * 1024 * 1024)
    f = write_jsonl(tmp_path / "r.jsonl", [big])
    code, _, err = run_cli("--db", "x.db", "import", str(f))
    assert code == 0, err
    db = open_store("x.db")
    (record,) = db.execute("SELECT record FROM trials").fetchone()
    assert len(json.loads(record)["messages"][1]["content"]) == 5 * 4 * 1024 * 1024


def test_directory_is_walked_and_unknown_files_are_ignored(tmp_path: Path) -> None:
    d = tmp_path / "runs"
    (d / "sub").mkdir(parents=True)
    write_jsonl(d / "v1.jsonl", [native_trial("a", run=None)])
    write_jsonl(d / "sub" / "v2.jsonl", [native_trial("a", run=None)])
    (d / "notes.json").write_text('{"x": 1}')
    code, _, err = run_cli("--db", "x.db", "import", str(d))
    assert code == 0, err
    assert "ignored" in err
    db = open_store("x.db")
    assert sorted(r[0] for r in db.execute("SELECT name FROM runs")) == ["v1", "v2"]


def test_a_file_that_fails_halfway_leaves_the_database_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", [native_trial("a", run=None)])
    run_cli("--db", "x.db", "import", str(first))
    before = (count(Path("x.db")), count(Path("x.db"), "verdicts"), count(Path("x.db"), "runs"))

    from reviewer.ingest import native

    many = write_jsonl(
        tmp_path / "second.jsonl", [native_trial(f"t{i}", run=None) for i in range(5000)]
    )
    real_parse = native.parse

    def breaks_halfway(path: Path):  # type: ignore[no-untyped-def]
        for i, rec in enumerate(real_parse(path)):
            if i == 4000:
                raise IngestError(str(path), "device went away", line=4001)
            yield rec

    monkeypatch.setattr(native, "parse", breaks_halfway)
    code, _, err = run_cli("--db", "x.db", "import", str(many))
    assert code == 1
    assert f"{many}:4001: device went away" in err
    after = (count(Path("x.db")), count(Path("x.db"), "verdicts"), count(Path("x.db"), "runs"))
    assert after == before
    db = open_store("x.db")
    assert search_count(db, "support", system=True) == 1  # the search index rolled back too


def test_check_validates_without_writing(tmp_path: Path) -> None:
    bad = native_trial("b")
    bad["outcome"] = {"reason": "no result"}
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a"), bad])
    code, _, err = run_cli("--db", "x.db", "import", "--check", str(f))
    assert code == 1
    assert f"{f}:2: outcome needs passed or reward" in err
    assert "1 valid trial" in err
    assert not Path("x.db").exists()
    good = write_jsonl(tmp_path / "good.jsonl", [native_trial("a")])
    code, _, _ = run_cli("--db", "x.db", "import", "--check", str(good))
    assert code == 0


def test_run_override_and_json_summary(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a"), native_trial("b")])
    code, out, _ = run_cli("--db", "x.db", "import", "--run", "mine", "--json", str(f))
    assert code == 0
    data = json.loads(out)
    assert data["added"] == 2 and data["runs"] == ["mine"]


def test_fts_finds_message_text(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a")])
    run_cli("--db", "x.db", "import", str(f))
    db = open_store("x.db")
    assert search_count(db, "refunded") == 1
    assert search_count(db, "nonexistentword") == 0


def test_default_run_name() -> None:
    assert default_run_name(Path("a/support-v1.jsonl")) == "support-v1"
    assert default_run_name(Path("a/support-v1/results.json")) == "support-v1"


def test_task_stats_follow_imports(tmp_path: Path) -> None:
    from reviewer.store.queries import count_groups, list_runs, task_counts
    from reviewer.store.writer import rebuild_task_stats

    write_jsonl(
        tmp_path / "a.jsonl", [native_trial("a", passed=True), native_trial("b", passed=False)]
    )
    write_jsonl(tmp_path / "b.jsonl", [native_trial("a", passed=False, latency_s=1.0)])
    run_cli("--db", "x.db", "import", str(tmp_path / "a.jsonl"))
    run_cli("--db", "x.db", "import", str(tmp_path / "b.jsonl"), str(tmp_path / "a.jsonl"))
    db = open_store("x.db")
    assert task_counts(db, "r1") == [("a", 2, 1), ("b", 1, 0)]
    assert sorted(count_groups(db, "r1")) == [(1, 0, 1), (2, 1, 1)]
    (run,) = list_runs(db)
    assert (run.tasks, run.trials, run.passed) == (2, 3, 1)
    before = task_counts(db, "r1")
    rebuild_task_stats(db)
    assert task_counts(db, "r1") == before


def test_the_import_workflow_applies_a_folders_rules_and_rubric(tmp_path: Path) -> None:
    from reviewer.store.queries import latest_rubric
    from reviewer.store.violations import rule_set_count, violation_total
    from reviewer.workflows.imports import import_paths

    with open_store(tmp_path / "x.db") as db:
        summary = import_paths(db, [SAMPLE_RUNS])
        assert (summary.added, summary.rules_count, summary.problems) == (88, 3, [])
        assert summary.rules_file == str(SAMPLE_RUNS / "rules.toml")
        assert summary.rubric is not None and summary.rubric_file == str(
            SAMPLE_RUNS / "rubric.toml"
        )
        assert (rule_set_count(db), violation_total(db)) == (1, 13)
        rubric = latest_rubric(db)
        assert rubric is not None and rubric.ref == summary.rubric.ref
        # the same rules again: nothing to set, the new trials (none) are checked against them
        again = import_paths(db, [SAMPLE_RUNS])
        assert (again.added, again.rules_file, again.violations) == (0, None, 0)
        assert (rule_set_count(db), violation_total(db)) == (1, 13)


def test_new_trials_are_checked_against_the_active_rules(tmp_path: Path) -> None:
    from reviewer.workflows.imports import import_paths

    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "rules.toml").write_text(
        '[[rule]]\nid = "no-lookups"\ntype = "forbid_tool"\ntool = "get_order"\n', encoding="utf-8"
    )
    write_jsonl(folder / "a.jsonl", [native_trial("a")])
    later = write_jsonl(tmp_path / "b.jsonl", [native_trial("b"), native_trial("c")])
    with open_store(tmp_path / "x.db") as db:
        assert import_paths(db, [folder]).rules_count == 1
        summary = import_paths(db, [later])
        assert (summary.rules_file, summary.violations) == (None, 2)
        assert summary.rule_lines() == ["rules: 2 violations in the new trials"]


def test_a_broken_rules_or_rubric_file_is_one_problem_line_and_the_trials_still_import(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / "rules.toml").write_text('[[rule]]\nid = "x"\ntype = "nope"\n', encoding="utf-8")
    (folder / "rubric.toml").write_text("not [ toml", encoding="utf-8")
    write_jsonl(folder / "a.jsonl", [native_trial("a")])
    code, _, err = run_cli("--db", "x.db", "import", str(folder))
    assert code == 0, err
    assert "imported 1 trial (1 run, 1 task)" in err
    assert f"reviewer: rules not applied: {folder / 'rules.toml'}:3:" in err
    assert f"reviewer: {folder / 'rubric.toml'}" in err
    assert "Traceback" not in err


def test_cancelling_rolls_back_the_file_being_read_and_keeps_the_ones_before(
    tmp_path: Path,
) -> None:
    from reviewer.workflows.imports import import_paths

    folder = tmp_path / "runs"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [native_trial("a")])
    write_jsonl(folder / "b.jsonl", [native_trial(f"t{i}") for i in range(5000)])
    write_jsonl(folder / "c.jsonl", [native_trial("c")])
    reports: list[int] = []
    with open_store(tmp_path / "x.db") as db:
        summary = import_paths(
            db,
            [folder],
            progress=lambda at: reports.append(at.records),
            cancelled=lambda: bool(reports) and reports[-1] >= 2000,
        )
        assert summary.cancelled and [f.cancelled for f in summary.files] == [False, True]
        assert summary.added == 1
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone()[0] == 1


# Folded in from tests/test_import_speed_settings.py:
# What the importer changes for speed is put back after each file: the cycle collector runs again
# (also after a file that fails halfway) and the connection's page cache is its usual size again.


def test_the_collector_runs_again_after_a_file_good_or_broken(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [native_trial("a"), native_trial("b")])
    broken = tmp_path / "broken.eval"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    seen: list[bool] = []

    def inside(at: ImportProgress) -> None:
        if at.file and at.files_done == 0:  # reported from inside the file, not before or after
            seen.append(gc.isenabled())

    with open_store(tmp_path / "x.db") as db:
        assert gc.isenabled()
        summary = import_paths(db, [str(good)], progress=inside)
        assert summary.added == 2
        assert seen and not any(seen)  # paused while the file was read
        assert gc.isenabled()
        import_paths(db, [str(broken)])
        assert gc.isenabled()


@pytest.mark.sqlite_only  # SQLite's page cache (PRAGMA cache_size); nothing to set on PostgreSQL
def test_the_page_cache_is_put_back(tmp_path: Path) -> None:
    with open_store(tmp_path / "x.db") as db:
        before = db.execute("PRAGMA cache_size").fetchone()[0]
        with import_cache(db):
            assert db.execute("PRAGMA cache_size").fetchone()[0] == -IMPORT_CACHE_KIB
        assert db.execute("PRAGMA cache_size").fetchone()[0] == before


@pytest.mark.sqlite_only  # SQLite's write-ahead log; PostgreSQL has no checkpoint to make
def test_a_checkpoint_a_full_disk_refuses_is_told_and_the_import_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The trials are in the log once a file commits: a full disk that refuses the checkpoint after
    the import (it said "disk is full" with no summary, the trials stored) is a warning under the
    summary, and the import exits 0."""
    import sqlite3

    real = Store.execute

    def execute(self: Store, sql: str, *args: object) -> object:
        if sql.startswith("PRAGMA wal_checkpoint"):
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, sql, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Store, "execute", execute)
    f = write_jsonl(tmp_path / "r.jsonl", [native_trial("a"), native_trial("b")])
    code, _, err = run_cli("--db", str(tmp_path / "x.db"), "import", str(f))
    assert code == 0, err
    assert "imported 2 trials (1 run, 2 tasks)" in err
    assert (
        "reviewer: warning: the database's log could not be copied into its file (database or "
        "disk is full): what was imported is stored in the log" in err
    )
    monkeypatch.undo()
    assert count(tmp_path / "x.db") == 2


def test_a_full_disk_after_a_file_is_stored_keeps_that_files_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multi-file import whose second file met a full disk printed only "the disk is full" and
    exited 1, the first file committed and not told (found by an attack on an 8 MB tmpfs): the
    summary says what the first added, and the failure names the file rolled back."""
    import sqlite3

    import reviewer.workflows.imports as imports

    a = write_jsonl(tmp_path / "a.jsonl", [native_trial("t1"), native_trial("t2")])
    b = write_jsonl(tmp_path / "b.jsonl", [native_trial("t3")])
    c = write_jsonl(tmp_path / "c.jsonl", [native_trial("t4")])
    real = imports.import_file
    calls = []

    def full_on_the_second(db: Any, path: Any, **kw: Any) -> Any:
        calls.append(path)
        if len(calls) == 2:
            raise sqlite3.OperationalError("database or disk is full")
        return real(db, path, **kw)

    monkeypatch.setattr(imports, "import_file", full_on_the_second)
    code, _, err = run_cli("--db", "x.db", "import", str(a), str(b), str(c))
    assert code == 1 and len(calls) == 2
    assert "the disk is full" in err and f"{b} was rolled back; 1 more file not read" in err
    assert "the files before it are stored" in err
    assert "imported 2 trials (1 run, 2 tasks) from 1 file" in err
    assert stored() == 2


def test_the_rules_file_reviewer_toml_names_is_applied_on_import(tmp_path: Path) -> None:
    """`rules = "…"` in reviewer.toml, documented as the rules applied on import, was read and
    never used: an import now applies it when no folder it imports brings a rules.toml of its own,
    and a file it names that is not there is said (found by an attacker)."""
    (tmp_path / "checks.toml").write_text(
        '[[rule]]\nid = "no-lookups"\ntype = "forbid_tool"\ntool = "get_order"\n', encoding="utf-8"
    )
    (tmp_path / "reviewer.toml").write_text('rules = "checks.toml"\n', encoding="utf-8")
    src = write_jsonl(tmp_path / "a.jsonl", [native_trial("a"), native_trial("b")])
    code, _, err = run_cli("--db", "x.db", "import", str(src))
    assert code == 0, err
    assert f"rules: 1 from {tmp_path / 'checks.toml'}, checked on every trial" in err
    code, out, _ = run_cli("--db", "x.db", "rules")
    assert code == 0 and "no-lookups" in out and "2" in out

    (tmp_path / "reviewer.toml").write_text('rules = "nope.toml"\n', encoding="utf-8")
    code, _, err = run_cli("--db", "y.db", "import", str(src))
    assert code == 0, err
    assert (
        f"rules not applied: {tmp_path / 'nope.toml'} (rules in reviewer.toml): no such file" in err
    )
    code, _, err = run_cli("--db", "y.db", "rules")
    assert (
        code == 1 and f"reviewer.toml's rules names {tmp_path / 'nope.toml'}: no such file" in err
    )
