"""The label store: append-only, committed at once, latest wins, undo by retraction (also after a
restart), skip, several labelers, rubric versions never silently mixed."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlite_utils

from reviewer.models import Criterion, Rubric
from reviewer.store import open_store
from reviewer.store.labels import (
    RubricVersionError,
    add_label,
    current_labels,
    ensure_rubric_version,
    history,
    labeled_trial_ids,
    undo_last,
)
from reviewer.store.queues import candidates
from tests.labeling.conftest import BuildDb


@pytest.fixture
def db(build_db: BuildDb) -> sqlite_utils.Database:
    return build_db([("t1", "pass", None), ("t1", "fail", "c1"), ("t2", "pass", None)])


def ids(db: sqlite_utils.Database) -> list[str]:
    return [c.trial_id for c in candidates(db)]


def row_count(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT COUNT(*) FROM labels").fetchone()[0])


def test_a_label_is_committed_at_once(db: sqlite_utils.Database, tmp_path: Path) -> None:
    a = ids(db)[0]
    label = add_label(db, a, "ana", "pass", {"x": True}, "fine", "p@1")
    other = open_store(tmp_path / "t.db")  # a second connection sees it without any commit call
    assert current_labels(other)[(a, "ana")] == label
    assert label.at.endswith("+00:00") and len(label.at.split(".")[1]) == len("123456+00:00")


def test_append_only_latest_wins_and_history_stays(db: sqlite_utils.Database) -> None:
    a = ids(db)[0]
    add_label(db, a, "ana", "pass")
    add_label(db, a, "ana", "fail", {"x": False}, "changed my mind")
    add_label(db, a, "ana", "pass", note="again")
    assert row_count(db) == 3
    cur = current_labels(db)[(a, "ana")]
    assert (cur.verdict, cur.note) == ("pass", "again")
    assert [h.verdict for h in history(db, a)] == ["pass", "fail", "pass"]
    ats = [h.at for h in history(db, a)]
    assert ats == sorted(ats) and len(set(ats)) == 3  # same second, still distinct and ordered


def test_undo_appends_a_retraction_and_the_previous_label_counts_again(
    db: sqlite_utils.Database,
) -> None:
    a, b, _ = ids(db)
    add_label(db, a, "ana", "pass")
    add_label(db, b, "ana", "fail")
    add_label(db, a, "ana", "fail")
    undone = undo_last(db, "ana")
    assert undone is not None and undone.retracted
    assert (undone.trial_id, undone.verdict) == (a, "fail")
    assert row_count(db) == 4  # nothing deleted
    assert current_labels(db)[(a, "ana")].verdict == "pass"
    assert undo_last(db, "ana").trial_id == b  # type: ignore[union-attr]
    assert (b, "ana") not in current_labels(db)
    assert undo_last(db, "ana").trial_id == a  # type: ignore[union-attr]
    assert current_labels(db) == {}
    assert undo_last(db, "ana") is None
    assert [(h.verdict, h.retracted) for h in history(db, a)] == [
        ("pass", False),
        ("pass", True),
        ("fail", False),
        ("fail", True),
    ]


def test_undo_after_reopening_the_database(db: sqlite_utils.Database, tmp_path: Path) -> None:
    a, b, _ = ids(db)
    add_label(db, a, "ana", "pass")
    add_label(db, b, "ana", "fail")
    db.close()
    again = open_store(tmp_path / "t.db")
    undone = undo_last(again, "ana")
    assert undone is not None and undone.trial_id == b
    again.close()
    third = open_store(tmp_path / "t.db")
    assert set(current_labels(third)) == {(a, "ana")}
    assert labeled_trial_ids(third, "ana") == {a}


def test_undo_within_a_queue_leaves_other_labels(db: sqlite_utils.Database) -> None:
    a, b, _ = ids(db)
    add_label(db, a, "ana", "pass", queue="q1")
    add_label(db, b, "ana", "pass")
    undone = undo_last(db, "ana", queue="q1")
    assert undone is not None and undone.trial_id == a and undone.queue == "q1"
    assert set(current_labels(db)) == {(b, "ana")}
    assert undo_last(db, "ana", queue="q1") is None


def test_skip_is_a_label_that_can_be_undone(db: sqlite_utils.Database) -> None:
    a = ids(db)[0]
    add_label(db, a, "ana", "skip", note="transcript truncated")
    assert current_labels(db)[(a, "ana")].verdict == "skip"
    assert labeled_trial_ids(db, "ana") == {a}
    undo_last(db, "ana")
    assert labeled_trial_ids(db, "ana") == set()


def test_two_labelers_are_independent(db: sqlite_utils.Database) -> None:
    a, b, _ = ids(db)
    add_label(db, a, "ana", "pass")
    add_label(db, a, "ben", "fail")
    add_label(db, b, "ben", "pass")
    undo_last(db, "ana")
    assert set(current_labels(db)) == {(a, "ben"), (b, "ben")}
    assert set(current_labels(db, labeler="ben")) == {(a, "ben"), (b, "ben")}
    assert current_labels(db, labeler="ana") == {}
    assert labeled_trial_ids(db, "ben") == {a, b}


def test_bad_labels_are_refused(db: sqlite_utils.Database) -> None:
    a = ids(db)[0]
    with pytest.raises(ValueError, match="verdict"):
        add_label(db, a, "ana", "maybe")
    with pytest.raises(ValueError, match="no trial"):
        add_label(db, "nope", "ana", "pass")
    add_label(db, a, "ana", "pass", at="2024-05-01T12:00:00Z")
    with pytest.raises(ValueError, match="already labeled"):
        add_label(db, a, "ana", "fail", at="2024-05-01T12:00:00+00:00")
    assert row_count(db) == 1


def test_current_labels_of_one_rubric_version(db: sqlite_utils.Database) -> None:
    a, b, _ = ids(db)
    add_label(db, a, "ana", "pass", rubric_ref="p@1")
    add_label(db, a, "ana", "fail", rubric_ref="p@2")
    add_label(db, b, "ana", "pass", rubric_ref="p@1")
    v1 = current_labels(db, rubric="p@1")
    assert {k: v.verdict for k, v in v1.items()} == {(a, "ana"): "pass", (b, "ana"): "pass"}
    v2 = current_labels(db, rubric="p@2")
    assert {k: v.verdict for k, v in v2.items()} == {(a, "ana"): "fail"}


def test_a_changed_rubric_needs_a_new_version(db: sqlite_utils.Database) -> None:
    r = Rubric("p", "1", [Criterion("a", "Is a fine?")])
    assert ensure_rubric_version(db, r) is True
    assert ensure_rubric_version(db, r) is False
    edited = Rubric("p", "1", [Criterion("a", "Is a fine?"), Criterion("b", "And b?")])
    with pytest.raises(RubricVersionError, match="bump its version"):
        ensure_rubric_version(db, edited)
    edited.version = "2"
    assert ensure_rubric_version(db, edited) is True
    help_only = Rubric("p", "1", [Criterion("a", "Is a fine?", help="new help", key="9")])
    assert ensure_rubric_version(db, help_only) is False
