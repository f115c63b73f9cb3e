"""[judge] instructions: a file's name reads the file, other text is the instructions themselves,
and a file name that names no file is refused in one line (it was sent as the text: "/tmp" joined
every prompt and changed the judge id, with no word said; found by an attacker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.judge.settings import JudgeConfigError, settings_from_config


def test_a_file_is_read_and_text_is_taken_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "judge.txt").write_text("Be strict about refunds.\n", encoding="utf-8")
    read = settings_from_config({"instructions": "judge.txt"}, tmp_path)
    assert read.instructions == "Be strict about refunds."
    given = settings_from_config({"instructions": "Be strict about refunds."}, tmp_path)
    assert given.instructions == "Be strict about refunds."
    assert settings_from_config({"instructions": "strict"}, tmp_path).instructions == "strict"


@pytest.mark.parametrize(
    ("value", "said"),
    [("judge.txt", "no such file"), ("/tmp", "a folder"), ("prompts/extra.md", "no such file")],
)
def test_a_file_name_that_names_no_file_is_refused(tmp_path: Path, value: str, said: str) -> None:
    with pytest.raises(JudgeConfigError) as e:
        settings_from_config({"instructions": value}, tmp_path)
    assert str(e.value).startswith("[judge] instructions: ") and said in str(e.value)
    assert "\n" not in str(e.value)


def test_the_command_says_it_in_one_line(tmp_path: Path) -> None:
    from tests.conftest import native_trial, run_cli, write_jsonl

    assert (
        run_cli("--db", "x.db", "import", str(write_jsonl(tmp_path / "a.jsonl", [native_trial()])))[
            0
        ]
        == 0
    )
    Path("reviewer.toml").write_text('[judge]\ninstructions = "/tmp"\n', encoding="utf-8")
    code, _, err = run_cli("--db", "x.db", "judge", "--estimate")
    assert code != 0 and "[judge] instructions: /tmp: a folder" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
