"""`reviewer sample`, `queues`, `labels export|import` and `rubric` end to end on sample_runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.store import open_store
from reviewer.store.labels import add_label, ensure_rubric_version
from reviewer.store.queries import trials_by_id_prefix
from reviewer.store.queues import queue_items
from tests.conftest import (
    SAMPLE_RUNS,
    native_trial,
    on_postgres,
    run_cli,
    sample_copy,
    stored,
    write_jsonl,
)


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args), input=input)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def sample_db() -> str:
    sample_copy("s.db", SAMPLE_RUNS, "cluster")
    return "s.db"


def test_sample_makes_a_balanced_queue(sample_db: str) -> None:
    code, out, err = invoke("--db", sample_db, "sample", "--n", "50", "--labeler", "ana", "--json")
    assert code == 0, err
    s = json.loads(out)
    assert s["name"] == "ana-s0" and s["n"] == 50
    fails = s["available"]["fail"]
    assert s["verdicts"] == {"fail": fails, "pass": 50 - fails}  # every judged failure, < 25
    assert s["tasks_covered"] == s["tasks_total"] == 8
    assert s["clusters_covered"] == s["clusters_total"] > 1
    code, out2, _ = invoke("--db", sample_db, "sample", "--labeler", "ana", "--name", "b", "--json")
    assert code == 0
    items = queue_items(open_store(sample_db), "ana-s0")
    assert [it.trial_id for it in items] == [
        it.trial_id for it in queue_items(open_store(sample_db), "b")
    ]


def test_sample_text_summary_and_existing_names(sample_db: str) -> None:
    args = (
        "--db",
        sample_db,
        "sample",
        "--n",
        "10",
        "--labeler",
        "ana",
        "--split",
        "--run",
        "support-v1",
    )
    code, out, err = invoke(*args)
    assert code == 0, err
    assert (
        out.splitlines()[0]
        == "queue 'ana-support-v1-s0' for ana: 10 trials (seed 0, run support-v1)"
    )
    assert "judge verdict: fail 5 (of 10), pass 5 (of 30)" in out
    assert "tasks covered: 5 of 5" in out
    assert "split: dev 5, test 5" in out
    code, out, err = invoke(*args)
    assert code == 1 and out == ""
    assert err.startswith("reviewer: queue 'ana-support-v1-s0' exists (0 / 10 labeled)")
    assert len(err.splitlines()) == 1 and "--replace" in err
    code, out, err = invoke(*args, "--replace", "--n", "12")
    assert code == 0, err
    assert "12 trials" in out


def test_sample_errors_are_one_line(sample_db: str) -> None:
    code, _, err = invoke("--db", sample_db, "sample", "--run", "nope")
    assert code == 2 and err.startswith("reviewer: no run named 'nope'")
    code, _, err = invoke("--db", sample_db, "sample", "--n", "0")
    assert code == 2  # click's usage error
    code, _, err = invoke("--db", "empty.db", "sample")
    missing = "no runs in" if on_postgres() else "no database"  # a test's name for a database
    assert code == 2 and err.startswith(f"reviewer: {missing} empty.db")
    code, _, err = invoke("--db", sample_db, "sample", "--judge", "gpt-9")
    assert code == 2 and err.startswith("reviewer: no verdicts by judge 'gpt-9'; judges: ")
    code, out, err = invoke("--db", sample_db, "sample", "--n", "100", "--labeler", "ana")
    assert code == 0 and "asked for 100, the database has 88 trials: the queue holds 88" in err
    db = open_store(sample_db)
    for it in queue_items(db, "ana-s0"):
        add_label(db, it.trial_id, "ana", "skip")
    code, out, err = invoke("--db", sample_db, "sample", "--labeler", "ana", "--name", "more")
    assert code == 1 and err == "reviewer: nothing to sample: ana has labeled all 88 trials\n"


def test_sample_reads_the_labeler_from_config(sample_db: str) -> None:
    Path("reviewer.toml").write_text('labeler = "cora"\n', encoding="utf-8")
    code, out, err = invoke("--db", sample_db, "sample", "--n", "5", "--json")
    assert code == 0, err
    assert json.loads(out)["labeler"] == "cora"
    code, out, err = invoke("--db", sample_db, "--labeler", "dan", "sample", "--n", "5", "--json")
    assert code == 0, err
    assert json.loads(out)["labeler"] == "dan"


def test_queues_show_progress(sample_db: str) -> None:
    code, out, err = invoke("--db", sample_db, "queues")
    assert code == 0 and out == "" and "no queues yet" in err
    invoke("--db", sample_db, "sample", "--n", "50", "--labeler", "ana")
    db = open_store(sample_db)
    items = queue_items(db, "ana-s0")
    for it in items[:23]:
        add_label(db, it.trial_id, "ana", "pass", queue="ana-s0")
    code, out, err = invoke("--db", sample_db, "queues")
    assert code == 0, err
    header, row = out.splitlines()
    assert header.split()[:4] == ["queue", "labeler", "progress", "next"]
    assert row.split()[:6] == ["ana-s0", "ana", "23", "/", "50", "24"]
    code, out, _ = invoke("--db", sample_db, "queues", "--json", "--labeler", "ben")
    q = json.loads(out)["queues"][0]
    assert (q["name"], q["labeler"], q["done"], q["total"], q["next_position"]) == (
        "ana-s0",
        "ben",
        0,
        50,
        1,
    )


def test_labels_export_and_import(sample_db: str, tmp_path: Path) -> None:
    db = open_store(sample_db)
    trial = db.execute("SELECT id FROM trials ORDER BY seq LIMIT 1").fetchone()[0]
    add_label(db, trial, "ana", "fail", {"looked_up": False}, "no lookup", "support-policy@1")
    code, out, err = invoke("--db", sample_db, "labels", "export", "-")
    assert code == 0, err
    assert json.loads(out)["trial"]["run"] == "support-v1"
    assert "exported 1 label to stdout" in err
    code, _, err = invoke("--db", sample_db, "labels", "export", "l.jsonl", "--labeler", "ana")
    assert code == 0 and Path("l.jsonl").read_text(encoding="utf-8") == out
    # the filter's name is taken as --labeler takes one everywhere: trimmed, or refused
    code, trimmed, err = invoke("--db", sample_db, "labels", "export", "-", "--labeler", " ana ")
    assert code == 0 and trimmed == out, err
    code, _, err = invoke("--db", sample_db, "labels", "export", "-", "--labeler", "a\x1b[2Jb")
    assert code == 2 and "printable characters" in err

    sample_copy("other.db")
    code, out, err = invoke("--db", "other.db", "labels", "import", "l.jsonl", "--json")
    assert code == 0, err
    assert json.loads(out) == {"file": "l.jsonl", "added": 1, "duplicates": 0, "skipped": []}
    code, _, err = invoke(
        "--db", "other.db", "labels", "import", "-", input=Path("l.jsonl").read_text()
    )
    assert code == 0 and "imported 0 labels from <stdin>; 1 already stored; 0 skipped" in err

    Path("bad.jsonl").write_text("nope\n", encoding="utf-8")
    code, _, err = invoke("--db", "other.db", "labels", "import", "bad.jsonl")
    assert code == 1 and err.splitlines()[0].startswith("bad.jsonl:1: not JSON")
    code, _, err = invoke("--db", "other.db", "labels", "import", "missing.jsonl")
    assert code == 1 and err == "reviewer: missing.jsonl: cannot read: No such file or directory\n"


def test_labels_export_to_an_existing_file_needs_force(sample_db: str) -> None:
    db = open_store(sample_db)
    trial = db.execute("SELECT id FROM trials ORDER BY seq LIMIT 1").fetchone()[0]
    add_label(db, trial, "ana", "fail")
    Path("l.jsonl").write_text("kept\n", encoding="utf-8")
    code, _, err = invoke("--db", sample_db, "labels", "export", "l.jsonl")
    assert (code, err) == (1, "reviewer: l.jsonl exists; --force replaces it\n")
    assert Path("l.jsonl").read_text(encoding="utf-8") == "kept\n"
    code, _, err = invoke("--db", sample_db, "labels", "export", "l.jsonl", "--force")
    assert code == 0, err
    assert json.loads(Path("l.jsonl").read_text(encoding="utf-8"))["labeler"] == "ana"
    assert [p.name for p in Path().iterdir() if p.name.startswith(".l.jsonl")] == []


def test_labels_import_of_json_nested_100000_deep_is_one_line_and_the_rest_imported(
    sample_db: str,
) -> None:
    db = open_store(sample_db)
    run, task, trial = db.execute("SELECT run, task_id, trial FROM trials LIMIT 1").fetchone()
    good = {"trial": {"run": run, "task_id": task, "trial": trial}, "labeler": "ana"}
    rows = [
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        json.dumps({**good, "verdict": "fail", "at": "2024-05-01T12:00:00Z"}),
        "[" * 100_000 + "]" * 100_000,
        json.dumps({**good, "verdict": "pass", "at": "2024-05-02T12:00:00Z"}),
    ]
    Path("deep.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, _, err = invoke("--db", sample_db, "labels", "import", "deep.jsonl")
    assert code == 0, err
    assert err.splitlines() == [
        "deep.jsonl:1: JSON nested deeper than 200 levels",
        "deep.jsonl:3: JSON nested deeper than 200 levels",
        "imported 2 labels from deep.jsonl; 0 already stored; 2 skipped",
    ]


def test_rubric_show_check_and_errors(tmp_path: Path) -> None:
    code, out, err = invoke("rubric", str(SAMPLE_RUNS / "rubric.toml"))
    assert code == 0, err
    assert out.splitlines()[0].startswith("support-policy@1  pass rule: all")
    assert "[1] looked_up" in out
    code, out, err = invoke("rubric", str(SAMPLE_RUNS / "rubric.toml"), "--check")
    assert code == 0 and out == "" and "ok (support-policy@1, 4 criteria)" in err
    code, out, _ = invoke("rubric", str(SAMPLE_RUNS / "rubric.toml"), "--json")
    assert json.loads(out)["ref"] == "support-policy@1"

    bad = Path("bad.toml")
    bad.write_text(
        'name = "p"\nversion = "1"\n\n[[criteria]]\nid = "y"\nquestion = "Y?"\nkey = "1"\n'
        '\n[[criteria]]\nid = "x"\nquestion = "X?"\nkey = "1"\n',
        encoding="utf-8",
    )
    code, out, err = invoke("rubric", "bad.toml", "--check")
    assert code == 1 and out == ""
    assert err == "reviewer: bad.toml:12: criterion 'x': key '1' is already used by 'y'\n"
    code, _, err = invoke("rubric")
    assert code == 1 and err.startswith("reviewer: no rubric")
    Path("rubric.toml").write_text(
        (SAMPLE_RUNS / "rubric.toml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    code, out, _ = invoke("rubric")
    assert code == 0 and "support-policy@1" in out


def test_rubric_edited_without_a_version_bump_is_refused(tmp_path: Path) -> None:
    from reviewer.labeling.rubric import load_rubric

    db = open_store("r.db")
    ensure_rubric_version(db, load_rubric(SAMPLE_RUNS / "rubric.toml"))
    db.close()
    text = (SAMPLE_RUNS / "rubric.toml").read_text(encoding="utf-8")
    Path("rubric.toml").write_text(text.replace("before acting on it?", "first?"), encoding="utf-8")
    code, _, err = invoke("--db", "r.db", "rubric", "--check")
    assert code == 1 and "bump its version" in err


def test_every_labeling_command_has_help() -> None:
    for args in (
        ["sample"],
        ["queues"],
        ["labels"],
        ["labels", "export"],
        ["labels", "import"],
        ["rubric"],
    ):
        code, out, _ = invoke(*args, "--help")
        assert code == 0 and "Usage:" in out, args


def test_a_configured_rubric_that_does_not_load_is_the_same_line_for_the_app_and_labels_give(
    sample_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewer.tui.app import ReviewerApp

    monkeypatch.setattr(ReviewerApp, "run", lambda self: None)  # never a real terminal app here
    Path("reviewer.toml").write_text('rubric = "gone.toml"\n', encoding="utf-8")
    with open_store(sample_db) as db:
        (trial,) = db.conn.execute("SELECT id FROM trials ORDER BY seq LIMIT 1").fetchone()
    code, _, given = invoke("--db", sample_db, "labels", "give", trial, "pass")
    assert code == 1 and given.startswith("reviewer: ") and "gone.toml" in given
    # the app's entry decides its rubric by the same rule (it used to open with another one)
    code, _, opened = invoke("--db", sample_db, "open")
    assert code == 1 and opened == given


# Folded in from tests/test_labels_give_attacks.py:
# Regression tests: `labels give` stored a label in a queue that does not exist, and took
# --criterion answers with no rubric to check them against.


def _one_trial(tmp_path: Path) -> str:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1"), native_trial("t2")])
    assert run_cli("--db", "x.db", "import", str(tmp_path / "r.jsonl"))[0] == 0
    with open_store("x.db") as db:
        return str(trials_by_id_prefix(db, "", limit=1)[0][0])


def test_labels_give_unknown_or_empty_queue_is_refused(tmp_path: Path) -> None:
    tid = _one_trial(tmp_path)
    code, out, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--queue", "nosuchq")
    assert code == 2 and err == "reviewer: no queue named 'nosuchq'; queues: none\n"
    code, _, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--queue", "")
    assert code == 2 and err == "reviewer: --queue must not be empty\n"
    assert stored("x.db", "labels") == 0
    assert run_cli("--db", "x.db", "labels", "give", tid, "pass")[0] == 0


def test_labels_give_criterion_without_rubric_is_refused(tmp_path: Path) -> None:
    tid = _one_trial(tmp_path)
    code, _, err = run_cli("--db", "x.db", "labels", "give", tid, "pass", "--criterion", "x=yes")
    assert code == 2 and err.startswith("reviewer: --criterion needs a rubric")
    assert len(err.splitlines()) == 1 and stored("x.db", "labels") == 0


def test_an_export_never_puts_a_file_in_a_devices_or_pipes_place(tmp_path: Path) -> None:
    """`labels export /dev/full --force`, as root, renamed its output over the device (found by a
    review): a path that exists and is not a regular file is refused, and left as it was."""
    import os
    import stat

    from reviewer.export.files import write_atomic

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    sample_copy("x.db")
    code, _, err = run_cli("--db", "x.db", "labels", "export", str(fifo), "--force")
    assert "not a regular file (a device, a pipe or a socket)" in err and code != 0
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    with pytest.raises(OSError, match="not a regular file"):
        write_atomic(fifo, ["x\n"])
    assert stat.S_ISFIFO(fifo.stat().st_mode) and not list(tmp_path.glob(".pipe.*"))


def test_rubric_without_a_file_shows_the_rubric_the_app_labels_with(tmp_path: Path) -> None:
    """`reviewer sample_runs/` labels with the folder's rubric.toml; `reviewer rubric` beside it
    said 'no rubric: give FILE, ...' (found by a new user who wanted the criteria's keys in
    the shell while labeling). It shows the stored rubric, and makes no database to look."""
    code, _, err = invoke("--db", "i.db", "import", str(SAMPLE_RUNS))
    assert code == 0, err
    assert not Path("rubric.toml").exists()
    code, out, err = invoke("--db", "i.db", "rubric")
    assert code == 0, err
    assert out.startswith("support-policy@1  pass rule: all") and "[1] looked_up" in out
    code, out, err = invoke("--db", "i.db", "rubric", "--check")
    assert code == 0 and "ok (support-policy@1, 4 criteria)" in err
    if not on_postgres():
        code, _, err = invoke("--db", "none.db", "rubric")
        assert code == 1 and err.startswith("reviewer: no rubric")
        assert not Path("none.db").exists()


def test_a_label_with_no_one_to_give_it_asks_who_in_one_line(
    sample_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A container's user with no login name (no USER, a uid /etc/passwd does not hold) labeled
    as "unknown": two such labelers replaced each other's labels and counted as one."""
    import getpass

    def no_login_name() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.setattr(getpass, "getuser", no_login_name)
    code, out, err = invoke("--db", sample_db, "sample", "--shared", "--size", "2", "--json")
    assert code == 0, err
    name = json.loads(out)["name"]
    with open_store(sample_db) as db:
        trial = queue_items(db, name)[0].trial_id
    for args in (
        ["labels", "give", trial, "pass"],
        ["queues", name, "--next"],
        ["queues", name, "--release"],
    ):
        code, out, err = invoke("--db", sample_db, *args)
        assert (code, out) == (2, "") and err == (
            "reviewer: who is labeling? there is no login name to go by: give --labeler NAME (or "
            'set REVIEWER_LABELER, or labeler = "NAME" in reviewer.toml)\n'
        ), (args, err)
    assert stored(sample_db, "labels") == 0
    code, _, err = invoke("--db", sample_db, "--labeler", "ann", "labels", "give", trial, "pass")
    assert code == 0, err
    monkeypatch.setenv("REVIEWER_LABELER", "bob")
    code, out, err = invoke("--db", sample_db, "queues", name, "--next")
    assert code == 0 and "held by bob" in out, err
