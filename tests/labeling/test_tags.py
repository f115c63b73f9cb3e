"""Failure tags: the rubric's categories, a fail's tag stored with the label, carried by
`reviewer labels give|export|import`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewer.labeling.rubric import RubricError, parse_rubric
from reviewer.labeling.tags import MAX_TAG, TagError, category_keys, check_tag
from reviewer.store import open_store
from reviewer.store.labels import current_labels
from reviewer.store.queries import trials_by_id_prefix
from reviewer.workflows.labels import give_label
from tests.conftest import native_trial, run_cli, write_jsonl

RUBRIC = """
name = "support"
version = "1"
pass_rule = "overall"
categories = ["wrong_refund", "cancelled shipped", "Wrong_tool", "2fa skipped"]
[[criteria]]
id = "looked_up"
question = "Looked up the order first?"
"""


def _rubric(categories: str) -> str:
    return RUBRIC.replace(RUBRIC.splitlines()[4], f"categories = {categories}")


def test_categories_are_read_and_each_gets_one_key() -> None:
    r = parse_rubric(RUBRIC)
    assert r.categories == ["wrong_refund", "cancelled shipped", "Wrong_tool", "2fa skipped"]
    # first letters while free; a taken letter or a digit start gets the next free digit
    assert category_keys(r.categories) == [
        ("w", "wrong_refund"),
        ("c", "cancelled shipped"),
        ("1", "Wrong_tool"),
        ("2", "2fa skipped"),
    ]
    assert parse_rubric(RUBRIC.replace(RUBRIC.splitlines()[4], "")).categories == []


@pytest.mark.parametrize(
    ("categories", "says"),
    [
        ('"wrong_refund"', "categories must be a list of strings"),
        ('["a", 3]', "categories must be a list of strings"),
        ('["a", "A"]', "'A' is listed twice"),
        ('["a", "  "]', "a category must not be empty"),
        (f'["{"x" * (MAX_TAG + 1)}"]', f"{MAX_TAG} characters at most"),
        (json.dumps([f"c{i}" for i in range(31)]), "at most 30, not 31"),
    ],
)
def test_bad_categories_are_one_line_naming_file_and_line(categories: str, says: str) -> None:
    with pytest.raises(RubricError) as e:
        parse_rubric(_rubric(categories), "rubric.toml")
    assert str(e.value).startswith("rubric.toml:5: categories") and says in str(e.value)
    assert "\n" not in str(e.value)


def test_a_tag_is_one_line_and_only_a_fail_has_one() -> None:
    assert check_tag("fail", "  wrong \n refund ") == "wrong refund"
    assert check_tag("fail", "  ") is None and check_tag("pass", None) is None
    with pytest.raises(TagError, match="give it with fail, not pass"):
        check_tag("pass", "wrong_refund")
    with pytest.raises(TagError, match=f"at most {MAX_TAG}"):
        check_tag("fail", "x" * (MAX_TAG + 1))


def _db(tmp_path: Path, name: str = "x.db") -> str:
    write_jsonl(tmp_path / "r.jsonl", [native_trial("t1", False), native_trial("t2", False)])
    assert run_cli("--db", name, "import", str(tmp_path / "r.jsonl"))[0] == 0
    return name


def _ids(path: str) -> list[str]:
    with open_store(path) as db:
        return sorted(str(r[0]) for r in trials_by_id_prefix(db, "", limit=10))


def test_a_tag_is_stored_with_the_label_and_a_category_keeps_its_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ids = _ids(_db(tmp_path))
    with open_store("x.db") as db:
        label = give_label(
            db, ids[0], "ann", "fail", tag="WRONG_REFUND", rubric=parse_rubric(RUBRIC)
        )
        assert label.tag == "wrong_refund"
        give_label(db, ids[1], "ann", "fail", tag="my own words")
        with pytest.raises(ValueError, match="give it with fail"):
            give_label(db, ids[1], "ann", "pass", tag="x")
        stored = current_labels(db)
    assert stored[(ids[0], "ann")].tag == "wrong_refund"
    assert stored[(ids[1], "ann")].tag == "my own words"


def test_labels_give_tag_and_export_import_carry_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    ids = _ids(_db(tmp_path))
    (tmp_path / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    code, out, err = run_cli(
        "--db", "x.db", "--labeler", "ann", "labels", "give", ids[0][:8], "fail",
        "--tag", "cancelled SHIPPED", "--rubric", "rubric.toml", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["tag"] == "cancelled shipped"
    code, _, err = run_cli("--db", "x.db", "labels", "give", ids[1], "pass", "--tag", "x")
    assert code == 1 and err == "reviewer: a tag names a failure: give it with fail, not pass\n"

    assert run_cli("--db", "x.db", "labels", "export", "l.jsonl")[0] == 0
    lines = [json.loads(x) for x in Path("l.jsonl").read_text().splitlines()]
    assert [x.get("tag") for x in lines] == ["cancelled shipped"]

    # into another database: the tag arrives; a tag on a pass line is skipped with its reason
    lines.append({**lines[0], "verdict": "pass", "at": "2026-01-01T00:00:00+00:00"})
    write_jsonl(Path("l2.jsonl"), lines)
    _db(tmp_path, "y.db")
    code, out, err = run_cli("--db", "y.db", "labels", "import", "l2.jsonl", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["added"] == 1
    assert result["skipped"] == ["l2.jsonl:2: a tag names a failure: give it with fail, not pass"]
    with open_store("y.db") as db:
        assert [lab.tag for lab in current_labels(db).values()] == ["cancelled shipped"]


def test_rubric_command_shows_the_tag_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rubric.toml").write_text(RUBRIC, encoding="utf-8")
    code, out, _ = run_cli("--db", "x.db", "rubric", "rubric.toml")
    assert code == 0
    assert "failure tags: [w] wrong_refund · [c] cancelled shipped · [1] Wrong_tool" in out
