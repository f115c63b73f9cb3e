"""The CLI as users type it: --db and --labeler before or after any command; typos are not paths."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from tests.conftest import SAMPLE_RUNS, native_trial, write_jsonl


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args), env=env)
    return r.exit_code, r.stdout, r.stderr


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every registered command and subgroup as the words that name it, nested ones included."""
    for name, cmd in group.commands.items():
        yield (*prefix, name)
        if isinstance(cmd, click.Group):
            yield from command_paths(cmd, (*prefix, name))


ALL_COMMANDS = sorted(command_paths(cli))


def required_arguments(cmd: click.Command) -> list[str]:
    """A placeholder for each required argument and option, so the command's body (a spy here) is
    reached."""
    args = [
        p.type.choices[0] if isinstance(p.type, click.Choice) else f"arg{i}"
        for i, p in enumerate(cmd.params)
        if isinstance(p, click.Argument) and p.required
        for _ in range(max(p.nargs, 1))
    ]
    for p in cmd.params:
        if isinstance(p, click.Option) and p.required:
            args += [p.opts[0], p.type.choices[0] if isinstance(p.type, click.Choice) else "1"]
    return args


@pytest.fixture
def small_db(tmp_path: Path) -> str:
    trials = [native_trial("t1", passed=p, trial=i) for i, p in enumerate([True, False, True])]
    data = write_jsonl(tmp_path / "runs.jsonl", trials)
    code, _, err = invoke("--db", "small.db", "import", str(data))
    assert code == 0, err
    return "small.db"


def test_the_walk_finds_nested_commands() -> None:
    assert ("report",) in ALL_COMMANDS and ("labels", "export") in ALL_COMMANDS
    assert len(ALL_COMMANDS) > 10


@pytest.mark.parametrize("words", ALL_COMMANDS, ids=" ".join)
def test_every_command_takes_db_after_its_name(words: tuple[str, ...]) -> None:
    seen: dict[str, Any] = {}
    target = cli
    for w in words:
        assert isinstance(target, click.Group)
        target = target.commands[w]
    original = target.callback

    def spy(*_a: Any, **_k: Any) -> None:
        seen.update(click.get_current_context().obj)

    target.callback = spy
    try:
        args = [*words, "--db", "after.db", *required_arguments(target)]
        r = CliRunner().invoke(cli, args, catch_exceptions=False)
    finally:
        target.callback = original
    if isinstance(target, click.Group) and not target.invoke_without_command:
        # a bare group prints its usage; what matters is that --db parsed without an error
        assert "No such option" not in r.stderr, r.stderr
        return
    assert r.exit_code == 0 and seen.get("db") == "after.db", (r.exit_code, r.stderr)


def test_db_after_the_command_gives_the_same_report(small_db: str) -> None:
    code, before, err = invoke("--db", small_db, "report", "--json")
    assert code == 0, err
    code, after, err = invoke("report", "--db", small_db, "--json")
    assert code == 0, err
    assert before == after
    assert json.loads(after)["runs"][0]["tasks"][0]["c"] == 2


def test_db_after_a_nested_command_and_queues(small_db: str, tmp_path: Path) -> None:
    out_file = tmp_path / "labels.jsonl"
    code, _, err = invoke("labels", "export", "--db", small_db, str(out_file))
    assert code == 0, err
    assert out_file.exists() and "exported 0 labels" in err
    assert not Path("reviewer.db").exists()  # the default database was never opened
    code, out, err = invoke("queues", "--db", small_db, "--json")
    assert code == 0, err
    assert json.loads(out) == {"queues": []}


def test_db_after_the_command_wins_over_before_and_the_environment(small_db: str) -> None:
    code, out, err = invoke(
        "--db", "other.db", "report", "--db", small_db, "--json", env={"REVIEWER_DB": "env.db"}
    )
    assert code == 0, err
    assert json.loads(out)["runs"][0]["run"]
    assert not Path("other.db").exists() and not Path("env.db").exists()


def test_reviewer_db_environment_still_works(small_db: str) -> None:
    code, out, err = invoke("report", "--json", env={"REVIEWER_DB": small_db})
    assert code == 0, err
    assert json.loads(out)["runs"]


def test_a_commands_own_labeler_keeps_its_meaning(small_db: str) -> None:
    code, out, err = invoke("--db", small_db, "--labeler", "dan", "sample", "--n", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["labeler"] == "dan"
    code, out, err = invoke(
        "--db", small_db, "--labeler", "dan", "sample", "--labeler", "eve", "--n", "2", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["labeler"] == "eve"
    code, out, err = invoke(
        "--db",
        small_db,
        "sample",
        "--n",
        "2",
        "--json",
        "--name",
        "q3",
        env={"REVIEWER_LABELER": "fay"},
    )
    assert code == 0, err
    assert json.loads(out)["labeler"] == "fay"
    code, out, _ = invoke("sample", "--help")
    assert "REVIEWER_LABELER" in out


class _Opened:
    """Stands in for the app: records how `reviewer` would have opened it."""

    calls: list[dict[str, Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs

    def run(self) -> None:
        _Opened.calls.append(self.kwargs)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    import reviewer.tui.app

    _Opened.calls = []
    monkeypatch.setattr(reviewer.tui.app, "ReviewerApp", _Opened)
    return _Opened.calls


def test_an_existing_path_still_imports_and_opens(opened: list[dict[str, Any]]) -> None:
    code, _, err = invoke(str(SAMPLE_RUNS), "--db", "s.db", "--labeler", "dan")
    assert code == 0, err
    assert "imported" in err
    assert len(opened) == 1
    assert str(opened[0]["db_path"]) == "s.db" and opened[0]["labeler"] == "dan"


def test_no_command_opens_the_app(opened: list[dict[str, Any]]) -> None:
    code, _, err = invoke("--db", "e.db")
    assert code == 0, err
    assert len(opened) == 1 and str(opened[0]["db_path"]) == "e.db"


def test_a_typo_is_not_taken_for_a_path(opened: list[dict[str, Any]]) -> None:
    code, out, err = invoke("reprot", "--db", "x.db")
    assert code == 2
    assert out == ""
    assert err == "reviewer: no command or path named 'reprot'; did you mean: report, export\n"
    assert not opened and not Path("x.db").exists()


def test_an_unknown_word_far_from_any_command(opened: list[dict[str, Any]]) -> None:
    code, _, err = invoke("--db", "x.db", "zzzzzz")
    assert code == 2
    assert err.strip().splitlines() == [
        "reviewer: no command or path named 'zzzzzz'; see reviewer --help"
    ]
    assert not opened and not Path("x.db").exists()


def test_a_command_added_to_a_subgroup_later_gets_db(
    small_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = cli.commands["labels"]
    assert isinstance(labels, click.Group)

    @click.command()
    @click.pass_context
    def probe(ctx: click.Context) -> None:
        click.echo(ctx.obj["db"])

    monkeypatch.setitem(labels.commands, "probe", probe)
    code, out, err = invoke("labels", "probe", "--db", small_db)
    assert code == 0, err
    assert out.strip() == small_db


def test_only_commands_with_their_own_labeler_say_so() -> None:
    """The note about a command's own --labeler appears on exactly the commands that have one."""
    runner = CliRunner()
    for words in (("report",), ("cluster", "merge")):
        out = runner.invoke(cli, [*words, "--help"]).output
        assert "own option" not in out, words
        assert out.count("--labeler TEXT") == 1, words
    assert "own option" in runner.invoke(cli, ["agreement", "--help"]).output


def test_a_stored_pass_rule_damaged_by_hand_reads_as_the_default(small_db: str) -> None:
    """A pass rule nested past the parser's depth (a store edited by hand) is the default rule,
    not an internal error."""
    from reviewer.store import open_store

    with open_store(small_db) as db, db.transaction():
        db.execute("UPDATE runs SET pass_rule = ?", ["[" * 100_000 + "]" * 100_000])
    code, out, err = invoke("--db", small_db, "report")
    assert code == 0, err
    assert "t1" in out and "internal error" not in err


def test_copy_does_not_list_the_options_it_does_not_use() -> None:
    """`copy` names both databases itself: its help lists neither --db nor --labeler, which
    `report`'s lists (it still parses them, as every command does)."""
    code, out, _ = invoke("copy", "--help")
    assert code == 0 and "SRC DST" in out
    options = out.split("Options:")[1]
    assert "--db" not in options and "--labeler" not in options
    code, out, _ = invoke("report", "--help")
    options = out.split("Options:")[1]
    assert "--db DB" in options and "--labeler" in options
    options = invoke("signatures", "--help")[1].split("Options:")[1]  # reads lines, no store
    assert "--db" not in options and "--labeler" not in options
    options = invoke("labels", "import", "--help")[1].split("Options:")[1]  # the file's labelers
    assert "--db DB" in options and "--labeler" not in options


def test_an_argument_that_is_not_utf8_is_one_line(small_db: str, tmp_path: Path) -> None:
    """Bytes that are not UTF-8 in an argument the store must take (a task id) are refused in one
    line naming the argument, exit 2 (they were an internal error); in a search they separate
    words, as on PostgreSQL, where they made no error."""
    import subprocess
    import sys

    def run(*args: str | bytes) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from reviewer.cli import main; main()", "--db", small_db]
            + list(args),  # type: ignore[arg-type]
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    done = run("trials", "--task", b"ab\xff")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "reviewer: the argument 'ab<U+DCFF>' is not UTF-8 text: give it as UTF-8\n"
    ), done.stderr
    found = run("trials", "--search", b"order\xffw5521", "--json")
    assert found.returncode == 0, found.stderr
    plain = run("trials", "--search", '"order w5521"', "--json")
    got, want = json.loads(found.stdout), json.loads(plain.stdout)
    assert got["total"] == want["total"] == 3 and got["trials"] == want["trials"], found.stdout
