"""`reviewer trials --search` says what the search found in each trial, as the app's trials
screen does: a `match` column in place of the reason (and `match` in --json), found as search
finds words (case and diacritics aside), also inside tool calls' arguments; hostile text in it
is shown, never obeyed."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from reviewer.cli import cli
from tests.conftest import native_trial, write_jsonl


def _db(tmp_path: Path) -> str:
    moved = native_trial("move", passed=False, trial=1, run="z")
    moved["messages"][2]["tool_calls"][0]["arguments"] = {"city": "Zürich", "zip": "8001"}
    moved["outcome"]["reason"] = "wrong city"
    hostile = native_trial("bell", passed=False, trial=1, run="z")
    hostile["messages"][1]["content"] = "zurich \x1b]8;;http://evil\x07link\x1b]8;;\x07 [bold]x[/]"
    hostile["outcome"]["reason"] = "\x1b[2Jcleared"
    other = native_trial("other", passed=True, trial=1, run="z")
    db = str(tmp_path / "t.db")
    src = write_jsonl(tmp_path / "z.jsonl", [moved, hostile, other])
    done = CliRunner().invoke(cli, ["--db", db, "import", str(src)])
    assert done.exit_code == 0, done.output
    return db


def test_a_search_shows_what_it_found_in_each_trial(tmp_path: Path) -> None:
    db = _db(tmp_path)
    done = CliRunner().invoke(cli, ["--db", db, "trials", "--search", "zurich"])
    assert done.exit_code == 0, done.output
    head, moved, hostile = done.stdout.splitlines()
    assert head.split()[-1] == "match" and "reason" not in head
    assert moved.endswith('…order {"city": "Zürich", "zip": "8001"} wrong city')
    assert "\x1b" not in hostile and "\x07" not in hostile and "[bold]x[/]" in hostile
    plain = CliRunner().invoke(cli, ["--db", db, "trials"])
    assert plain.stdout.splitlines()[0].split()[-1] == "reason" and "wrong city" in plain.stdout
    assert "\x1b" not in plain.stdout and "cleared" in plain.stdout  # a reason is data too


def test_a_search_in_json_gives_each_trial_its_match(tmp_path: Path) -> None:
    db = _db(tmp_path)
    done = CliRunner().invoke(cli, ["--db", db, "trials", "--search", "ZÜRICH", "--json"])
    assert done.exit_code == 0, done.output
    rows = {r["task_id"]: r for r in json.loads(done.stdout)["trials"]}
    assert set(rows) == {"move", "bell"}
    assert "Zürich" in rows["move"]["match"] and rows["move"]["reason"] == "wrong city"
    assert rows["bell"]["match"].startswith("…") or rows["bell"]["match"].startswith("zurich")
    unsearched = json.loads(CliRunner().invoke(cli, ["--db", db, "trials", "--json"]).stdout)
    assert all("match" not in r for r in unsearched["trials"])


def test_a_usage_error_with_json_still_prints_json(tmp_path: Path) -> None:
    """A refusal of a command given --json prints {"error": ...} on stdout, a usage error (a bad
    option value, a missing argument) too; without --json, nothing on stdout."""
    db = _db(tmp_path)
    for args, said in (
        (["report", "--json", "--k", "5000"], "k must be from 1 to 1000"),
        (["compare", "--json"], "Missing argument"),
        (["trials", "--json", "--sort", "nope"], "--sort"),
    ):
        done = CliRunner().invoke(cli, ["--db", db, *args])
        assert done.exit_code == 2, done.output
        assert said in json.loads(done.stdout)["error"], done.stdout
    # a group option's bad value, before the command; a nested command's missing argument
    for args in (["--labeler", "", "report", "--json"], ["cluster", "rename", "--json"]):
        done = CliRunner().invoke(cli, ["--db", db, *args])
        assert done.exit_code == 2 and len(json.loads(done.stdout)) == 1, done.stdout
    plain = CliRunner().invoke(cli, ["--db", db, "report", "--k", "5000"])
    assert plain.exit_code == 2 and plain.stdout == "", plain.stdout


def test_an_unknown_cluster_is_one_line_naming_the_clusters(tmp_path: Path) -> None:
    from tests.conftest import SAMPLE_RUNS, sample_copy

    db = str(sample_copy(tmp_path / "s.db", SAMPLE_RUNS, "cluster"))
    ranked = json.loads(
        CliRunner().invoke(cli, ["--db", db, "cluster", "--stored", "--json"]).stdout
    )
    first = ranked["clusters"][0]["id"]
    done = CliRunner().invoke(cli, ["--db", db, "trials", "--cluster", "zz"])
    assert done.exit_code == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(
        f"reviewer: --cluster 'zz' is not a cluster id, prefix or rank; clusters: '{first}', "
    )
    done = CliRunner().invoke(cli, ["--db", db, "trials", "--cluster", "zz", "--json"])
    assert done.exit_code == 2 and json.loads(done.stdout)["error"] == line.removeprefix(
        "reviewer: "
    )
    one = json.loads(
        CliRunner().invoke(cli, ["--db", db, "trials", "--cluster", "1", "--json"]).stdout
    )
    assert one["filter"] == {"cluster_id": first} and one["total"] == ranked["clusters"][0]["size"]
    # an empty one is a prefix of every id: it said "matches several clusters"
    done = CliRunner().invoke(cli, ["--db", db, "trials", "--cluster", ""])
    assert done.exit_code == 2 and done.stderr == (
        "reviewer: --cluster must not be empty: give a cluster's id, prefix or rank\n"
    )


def test_sessions_with_no_outcome_are_told_apart_by_their_first_prompt(tmp_path: Path) -> None:
    """Claude Code sessions of one project: one run, one task, no outcome, no reason; the list's
    last column is then each session's first prompt (hostile text shown, never obeyed), in --json
    too. A page where some trial has a reason keeps the reason column."""
    prompts = ["Explore the codebase structure", "Fix the \x1b[2Jflaky test\nin ci", "Plan it"]
    recs = []
    for i, prompt in enumerate(prompts):
        rec = native_trial("project", run="claude-code · project", trial=i + 1, outcome=None)
        rec["messages"][1]["content"] = prompt
        rec["instruction"] = prompt  # as the Claude Code import sets it
        recs.append(rec)
    db = str(tmp_path / "cc.db")
    src = write_jsonl(tmp_path / "cc.jsonl", recs)
    assert CliRunner().invoke(cli, ["--db", db, "import", str(src)]).exit_code == 0
    out = CliRunner().invoke(cli, ["--db", db, "trials"]).stdout
    head, *rows = out.splitlines()[: 1 + len(prompts)]
    assert head.split()[-1] == "prompt"
    assert rows[0].endswith("Explore the codebase structure")
    assert "\x1b" not in out and rows[1].endswith("Fix the ␛[2Jflaky test ⏎ in ci")
    data = json.loads(CliRunner().invoke(cli, ["--db", db, "trials", "--json"]).stdout)
    assert [t["prompt"] for t in data["trials"]][::2] == [prompts[0], prompts[2]]
    assert all(t["reason"] is None for t in data["trials"])
    # with a reason on the page, the column is the reason again
    (tmp_path / "x").mkdir()
    reasons = CliRunner().invoke(cli, ["--db", _db(tmp_path / "x"), "trials"]).stdout
    assert reasons.splitlines()[0].split()[-1] == "reason"


def test_ids_that_share_their_first_8_characters_are_shown_until_they_part(tmp_path: Path) -> None:
    """At 100,000 trials two ids share their first 8 hex digits about once: the list then shows
    each of them as far as it takes to tell it from every stored id, a prefix `show` takes."""
    from reviewer.store import open_store

    db = _db(tmp_path)
    twins = ["abcdef0123aa00000000", "abcdef0123bb00000000"]
    with open_store(db) as store, store.atomic():
        seqs = [r[0] for r in store.execute("SELECT seq FROM trials ORDER BY seq").fetchall()]
        for seq, new in zip(seqs, [*twins, "ffff0000000000000000"], strict=True):
            store.execute("UPDATE trials SET id = ? WHERE seq = ?", [new, seq])
    out = CliRunner().invoke(cli, ["--db", db, "trials"]).stdout
    shown = [line.split()[0] for line in out.splitlines()[1:4]]
    assert shown == ["abcdef0123a", "abcdef0123b", "ffff0000"]
    for prefix, full in zip(shown[:2], twins, strict=True):
        done = CliRunner().invoke(cli, ["--db", db, "show", prefix])
        assert done.exit_code == 0 and full in done.stdout
