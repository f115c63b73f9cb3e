"""`reviewer export` end to end on the sample runs, and the round trip through `reviewer import`."""

from __future__ import annotations

import json
from pathlib import Path

from reviewer.store import open_store
from tests.conftest import on_postgres
from tests.export.conftest import invoke, read_lines


def test_export_then_import_shows_the_tasks(sample_db: Path) -> None:
    code, out, err = invoke("--db", str(sample_db), "export")
    assert code == 0, err
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith("exported 3 tasks to regression/tasks.jsonl (native) from ")
    assert all(line.startswith("  ") for line in lines[1:])
    tasks = read_lines(Path("regression/tasks.jsonl"))
    assert len(tasks) == 3

    code, out, err = invoke("--db", str(sample_db), "import", "regression/tasks.jsonl")
    assert code == 0, err
    assert "regression/tasks.jsonl: a regression task list with 3 tasks from run support-v1" in err
    assert "imported 0 trials" not in err  # a task list is listed, never imported as trials
    assert len(err.splitlines()) == 1
    rows = out.splitlines()
    assert [r.split()[0] for r in rows] == [t["id"] for t in tasks]
    assert rows[0].split()[1] == "{run}/{task_id}/{trial}".format(**tasks[0]["provenance"])

    code, out, err = invoke("--db", str(sample_db), "import", "--json", "regression/tasks.jsonl")
    assert code == 0, err
    (listed,) = json.loads(out)["task_lists"]
    assert [t["id"] for t in listed["tasks"]] == [t["id"] for t in tasks]
    assert listed["runs"] == ["support-v1"] and listed["problems"] == 0

    code, _, err = invoke("import", "--check", "regression/tasks.jsonl")
    assert code == 0, err


def test_import_names_the_bad_lines_of_a_task_list(sample_db: Path) -> None:
    assert invoke("--db", str(sample_db), "export", "--out", "t.jsonl")[0] == 0
    text = Path("t.jsonl").read_text(encoding="utf-8")
    broken = json.loads(text.splitlines()[0])
    broken["provenance"]["trial"] = "three"
    del broken["expected"]["text"]
    Path("t.jsonl").write_text(text + json.dumps(broken) + "\n{oops\n", encoding="utf-8")
    code, out, err = invoke("--db", str(sample_db), "import", "t.jsonl")
    assert code == 0
    assert (
        "t.jsonl:4: expected.text must be a non-empty string; provenance.trial must be an integer"
        in err
    )
    assert "t.jsonl:5: invalid JSON" in err
    assert "3 tasks from run support-v1 and" in err and "2 bad lines" in err
    assert len(out.splitlines()) == 3
    code, _, _ = invoke("import", "--check", "t.jsonl")
    assert code == 1


def test_json_summary_formats_and_options(sample_db: Path) -> None:
    db = str(sample_db)
    code, out, err = invoke(
        "--db", db, "export", "--format", "inspect", "--judge-fails", "--one-per-cluster", "--json"
    )
    assert code == 0, err
    s = json.loads(out)
    assert s["file"] == "regression/inspect.jsonl" and s["format"] == "inspect"
    assert s["written"] == s["total"] == len(read_lines(Path(s["file"])))
    clustered = [c["tasks"] for c in s["clusters"]]
    assert clustered and set(clustered) == {1}  # one per cluster
    assert set(s["sources"]) == {"human", "judge"}

    code, out, err = invoke("--db", db, "export", "--run", "support-v2", "--out", "v2", "--json")
    assert code == 1 and json.loads(out) == {"error": err.removeprefix("reviewer: ").strip()}
    assert err == (
        "reviewer: nothing to export: no trial is labeled fail by a human in run support-v2; "
        "--judge-fails adds judge fails no human contradicted; --harness-fails adds the "
        "harness's failures\n"
    )
    code, out, err = invoke(
        "--db", db, "export", "--run", "support-v2", "--judge-fails", "--out", "v2"
    )
    assert code == 0, err
    assert {t["provenance"]["run"] for t in read_lines(Path("v2/tasks.jsonl"))} == {"support-v2"}


def test_redact_says_how_many_it_masked(sample_db: Path) -> None:
    code, _, err = invoke("--db", str(sample_db), "export", "--redact")
    assert code == 0, err
    assert err.splitlines()[-1] == "redacted 2 secrets (1 email, 1 phone number)"
    text = Path("regression/tasks.jsonl").read_text(encoding="utf-8")
    assert "ana@example.com" not in text and "555 0100" not in text
    assert "<redacted:email>" in text and "<redacted:phone-number>" in text
    assert "W5521 ($25.00 on 2024-05-13)" in text  # ids, prices and dates survive


def test_overwrite_append_and_errors_are_one_line(sample_db: Path) -> None:
    db = str(sample_db)
    assert invoke("--db", db, "export")[0] == 0
    code, out, err = invoke("--db", db, "export")
    assert code == 1 and out == ""
    assert err == (
        "reviewer: regression/tasks.jsonl exists; --append adds the new tasks to it, "
        "--force replaces it\n"
    )
    code, _, err = invoke("--db", db, "export", "--append")
    assert code == 0
    assert err.startswith(
        "exported 0 tasks to regression/tasks.jsonl (native); 3 already in the file"
    )
    code, _, err = invoke("--db", db, "export", "--append", "--judge-fails")
    assert code == 0 and "3 already in the file" in err
    assert invoke("--db", db, "export", "--force")[0] == 0
    assert len(read_lines(Path("regression/tasks.jsonl"))) == 3
    for args, message in (
        (["--cluster", "nope"], "reviewer: --cluster 'nope' is not a cluster id, prefix or rank;"),
        (["--run", "nope"], "reviewer: no run named 'nope'; runs: 'support-v1', 'support-v2'"),
        (["--out", "x.json"], "reviewer: x.json: not a folder, and --out FILE must end in .jsonl"),
        (["--force", "--append"], "reviewer: --force replaces the file and --append adds to it"),
        (["--labeler", "bob"], "reviewer: nothing to export: no trial is labeled fail by 'bob'"),
    ):
        code, out, err = invoke("--db", db, "export", *args)
        assert code == 1 and out == "", args
        assert err.startswith(message) and len(err.splitlines()) == 1, err
    Path("bad.jsonl").write_text("not json\n")
    code, _, err = invoke("--db", db, "export", "--out", "bad.jsonl", "--append")
    assert code == 1 and err.startswith("reviewer: bad.jsonl:1: invalid JSON")
    assert "Traceback" not in err


def test_export_on_an_empty_database_says_so() -> None:
    code, _, err = invoke("--db", "empty.db", "export")
    assert code == 1
    missing = "no runs in" if on_postgres() else "no database"  # a test's name for a database
    assert err == f"reviewer: {missing} empty.db; import some first: reviewer import PATH\n"
    assert not Path("empty.db").exists()  # a mistyped --db is not left behind
    open_store("empty.db").close()  # made, and empty
    code, _, err = invoke("--db", "empty.db", "export")
    assert code == 1
    assert err == "reviewer: no runs in empty.db; import some first: reviewer import PATH\n"


def test_cluster_option_by_rank(sample_db: Path) -> None:
    code, out, err = invoke(
        "--db", str(sample_db), "export", "--judge-fails", "--cluster", "1", "--json"
    )
    assert code == 0, err
    s = json.loads(out)
    assert len(s["clusters"]) == 1 and s["unclustered"] == 0


def test_trial_and_list_filters_narrow_the_selection(sample_db: Path) -> None:
    code, out, err = invoke("--db", str(sample_db), "export", "--json", "--out", "all.jsonl")
    assert code == 0, err
    every = json.loads(out)["ids"]
    assert len(every) == 3
    db = open_store(sample_db)
    try:
        first = db.execute(
            "SELECT trial_id FROM labels WHERE labeler = 'ana' AND verdict = 'fail' ORDER BY id"
        ).fetchone()[0]
    finally:
        db.close()
    code, out, err = invoke(
        "--db", str(sample_db), "export", "--trial", first, "--json", "--out", "one.jsonl"
    )
    assert code == 0, err
    (task,) = read_lines(Path("one.jsonl"))
    assert task["provenance"]["trial_id"] == first and json.loads(out)["ids"] == [task["id"]]
    code, out, err = invoke(
        "--db", str(sample_db), "export", "--label", "fail", "--outcome", "fail", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["ids"] == every
    code, _, err = invoke("--db", str(sample_db), "export", "--outcome", "pass")
    assert code == 1
    assert err.strip() == (
        "reviewer: nothing to export: no trial is labeled fail by a human among the chosen "
        "trials (skipped 66 trials: 60 passed, 6 judge fails); --judge-fails adds judge fails "
        "no human contradicted; --harness-fails adds the harness's failures"
    )
    code, out, err = invoke("--db", str(sample_db), "export", "--search", "zzqx", "--json")
    assert code == 1 and "among the chosen trials" in err
    assert json.loads(out) == {"error": err.removeprefix("reviewer: ").strip()}


def test_export_of_a_trial_that_is_not_there_names_it(sample_db: Path) -> None:
    """`export --trial nope` said "nothing to export ... 1 not a failure a human or judge named"."""
    code, out, err = invoke("--db", str(sample_db), "export", "--trial", "nope", "--out", "x.jsonl")
    assert code == 1 and err.strip().splitlines() == [
        "reviewer: no trial with id 'nope' (give the id or its first 6+ characters)"
    ]
    code, out, _ = invoke("--db", str(sample_db), "export", "--trial", "nope", "--json")
    assert code == 1
    assert json.loads(out)["error"].startswith("no trial with id 'nope'")
    assert not Path("x.jsonl").exists()


def test_an_out_path_under_a_file_says_the_file_is_no_folder(
    tmp_path: Path, sample_db: Path
) -> None:
    """`--out afile/x.jsonl` said "afile: File exists", and one more level down "Not a
    directory" (found by an attack): both name the file that is in the way."""
    (tmp_path / "afile").write_text("")
    for out in ("afile/x.jsonl", "afile/deeper/x.jsonl"):
        code, _, err = invoke(
            "--db", str(sample_db), "export", "--judge-fails", "--out", str(tmp_path / out)
        )
        assert code == 1 and err.endswith(f"{tmp_path / 'afile'} is a file, not a folder\n"), err


def test_a_cluster_export_counts_every_member_it_leaves_out(sample_db: Path) -> None:
    """`export --cluster 1 --judge-fails` wrote 9 of 17 and said nothing of the 8 the judge passed."""
    db = open_store(sample_db)
    try:
        sizes = [
            r[0]
            for r in db.execute(
                "SELECT size FROM clusters WHERE clustering_id = (SELECT MAX(id) FROM clusterings) "
                "ORDER BY size DESC, rank"
            ).fetchall()
        ]
    finally:
        db.close()
    said = []
    for rank, size in enumerate(sizes, 1):
        args = ["export", "--cluster", str(rank), "--judge-fails", "--json", "--out", f"c{rank}"]
        code, out, err = invoke("--db", str(sample_db), *args)
        if code == 1:  # nothing: the reasons are in the error, every member counted
            skipped = json.loads(out)["error"].split(" (", 1)[1].split(")")[0]
            selected = 0
        else:
            assert code == 0, err
            skipped, selected = json.loads(out)["skipped"], json.loads(out)["selected"]
            assert not skipped or skipped in err.splitlines()
        left_out = int(skipped.split()[1]) if skipped else 0
        assert selected + left_out == size, (rank, skipped)
        if skipped:
            counts = [int(part.split()[0]) for part in skipped.split(": ", 1)[1].split(", ")]
            assert sum(counts) == left_out
        said.append(skipped)
    assert any("harness failures the judge passed" in s for s in said), said
