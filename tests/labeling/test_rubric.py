"""rubric.toml: the sample loads, every mistake is named with file and line, the pass rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewer.labeling.rubric import (
    RubricError,
    load_rubric,
    parse_rubric,
    verdict_from_criteria,
)
from tests.conftest import SAMPLE_RUNS

HEAD = 'name = "policy"\nversion = "1"\n'


def crit(cid: str, key: str | None = None, **extra: str) -> str:
    text = f'\n[[criteria]]\nid = "{cid}"\nquestion = "Is {cid} fine?"\n'
    if key is not None:
        text += f'key = "{key}"\n'
    return text + "".join(f'{k} = "{v}"\n' for k, v in extra.items())


def error_of(text: str, file: str = "rubric.toml") -> RubricError:
    with pytest.raises(RubricError) as info:
        parse_rubric(text, file)
    return info.value


def test_sample_rubric_loads() -> None:
    r = load_rubric(SAMPLE_RUNS / "rubric.toml")
    assert r.ref == "support-policy@1"
    assert r.pass_rule == "all"
    assert [c.key for c in r.criteria] == ["1", "2", "3", "4"]
    assert r.criteria[0].id == "looked_up"
    assert r.criteria[0].help.startswith("A get_order")


def test_duplicate_key_names_both_criteria_and_the_line() -> None:
    text = HEAD + crit("y", "1") + crit("x", "1")
    err = error_of(text)
    assert str(err) == "rubric.toml:12: criterion 'x': key '1' is already used by 'y'"
    assert (err.file, err.line) == ("rubric.toml", 12)
    assert text.splitlines()[11] == 'key = "1"'


@pytest.mark.parametrize(
    "key",
    ["p", "f", "s", "u", "n", "e", "j", "k", "q", "?", " ", "P", "x", "c", "v", "[", "]", "/"],
)
def test_fixed_labeling_keys_are_refused(key: str) -> None:
    err = error_of(HEAD + crit("x", key))
    assert err.line == 7
    assert "criterion 'x'" in err.reason and "fixed labeling key" in err.reason


@pytest.mark.parametrize("key", ["space", "enter", "escape", "12", ""])
def test_keys_are_one_character(key: str) -> None:
    assert "one character" in error_of(HEAD + crit("x", key)).reason


def test_digits_and_free_letters_are_fine_and_missing_keys_get_free_digits() -> None:
    r = parse_rubric(HEAD + crit("a", "1") + crit("b") + crit("c", "z") + crit("d"))
    assert [c.key for c in r.criteria] == ["1", "2", "z", "3"]


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (HEAD + "colour = 1\n" + crit("x"), 3, "unknown setting 'colour'"),
        (HEAD + crit("x", "1", qestion="?"), 8, "criterion 'x': unknown field 'qestion'"),
        ('version = "1"\n' + crit("x"), None, "missing 'name'"),
        ('name = "p"\n' + crit("x"), None, "missing 'version'"),
        (HEAD, None, "missing 'criteria'"),
        (HEAD + "criteria = []\n", 3, "criteria is empty"),
        (HEAD + 'criteria = "x"\n', 3, "array of tables"),
        (HEAD + crit("x") + crit("x"), 9, "criterion 'x': id is already used at line 5"),
        (HEAD + 'pass_rule = "any"\n' + crit("x"), 3, "pass_rule must be"),
        (HEAD + "\n[[criteria]]\nquestion = 'q'\n", 4, "criterion 1: missing 'id'"),
        (HEAD + "\n[[criteria]]\nid = 'a b'\nquestion = 'q'\n", 5, "id must be letters"),
        (HEAD + "\n[[criteria]]\nid = 'a'\nquestion = ''\n", 6, "question must be"),
        ('name = ""\nversion = "1"\n' + crit("x"), 1, "name must be"),
        ('name = "p"\nversion = true\n' + crit("x"), 2, "version must be"),
    ],
)
def test_errors_name_the_line(text: str, line: int | None, needle: str) -> None:
    err = error_of(text)
    assert err.line == line, str(err)
    assert needle in err.reason
    prefix = f"rubric.toml:{line}: " if line else "rubric.toml: "
    assert str(err).startswith(prefix)


def test_toml_syntax_errors_keep_their_line() -> None:
    err = error_of(HEAD + "\n[[criteria]\nid = 'x'\n", "r.toml")
    assert err.line == 4
    assert str(err).startswith("r.toml:4: not valid TOML: ")
    assert "(at line" not in str(err)


def test_multiline_strings_do_not_confuse_line_numbers() -> None:
    text = HEAD + '\n[[criteria]]\nid = "a"\nquestion = """Is it\nkey = "1"\nfine?"""\nkey = "q"\n'
    err = error_of(text)
    assert err.line == 9
    assert "key 'q'" in err.reason


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(RubricError, match="no such file"):
        load_rubric(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "\xff"\n')
    with pytest.raises(RubricError, match="not UTF-8"):
        load_rubric(bad)


def test_version_number_becomes_text_and_digest_tracks_meaning() -> None:
    a = parse_rubric('name = "p"\nversion = 2\n' + crit("x", "1", help="h"))
    assert a.ref == "p@2"
    same_meaning = parse_rubric('name = "p"\nversion = 2\n' + crit("x", "2", help="other help"))
    assert a.digest == same_meaning.digest
    changed = parse_rubric('name = "p"\nversion = 2\n' + crit("x", "1") + crit("y", "2"))
    assert changed.digest != a.digest


def test_verdict_from_criteria_all_rule() -> None:
    r = parse_rubric(HEAD + crit("a") + crit("b"))
    assert verdict_from_criteria(r, {"a": True, "b": True}) == "pass"
    assert verdict_from_criteria(r, {"a": True, "b": False}) == "fail"
    assert verdict_from_criteria(r, {"a": False}) == "fail"
    assert verdict_from_criteria(r, {"a": True, "b": None}) is None
    assert verdict_from_criteria(r, {}) is None
    assert verdict_from_criteria(r, {"a": True, "b": True, "zzz": False}) == "pass"


def test_overall_rule_leaves_the_verdict_to_the_labeler() -> None:
    r = parse_rubric(HEAD + 'pass_rule = "overall"\n' + crit("a"))
    assert verdict_from_criteria(r, {"a": False}) is None
