"""The standing-label rule (migration m006's views): retractions, merge order, and every reader agreeing."""

from __future__ import annotations

import random

from reviewer.models import Label
from reviewer.store.export_select import human_labels
from reviewer.store.labels import (
    current_labels,
    labeled_trial_ids,
    merge_labels,
    shown_labels,
    standing_by_labeler,
)
from reviewer.store.queues import Queue, QueueItem, queue_progress, save_queue
from reviewer.store.trial_list import TrialFilter, clear_cache, page
from tests.labeling.conftest import BuildDb


def _at(minute: int) -> str:
    return f"2025-03-01T10:{minute:02d}:00.000000+00:00"


def _label(trial: str, who: str, verdict: str, minute: int, retracted: bool = False) -> Label:
    return Label(trial, who, verdict, {}, "", None, _at(minute), retracted)


def test_labels_merge_the_same_in_any_order(build_db: BuildDb) -> None:
    db0 = build_db([("a", None, None)] * 3, name="first.db")
    a, b, c = [r[0] for r in db0.execute("SELECT id FROM trials ORDER BY trial")]
    rows = [
        _label(a, "ana", "pass", 1),
        _label(a, "ana", "fail", 2),
        _label(a, "ana", "fail", 2, retracted=True),  # undo: pass stands again
        _label(b, "ana", "fail", 1),
        _label(b, "ana", "pass", 7, retracted=True),  # names no stored label: retracts nothing
        _label(b, "bo", "pass", 3),  # the latest labeler's label is the one shown
        _label(c, "ana", "skip", 1),
        _label(c, "ana", "skip", 1, retracted=True),
    ]
    expected = {(a, "ana"): "pass", (b, "ana"): "fail", (b, "bo"): "pass"}
    rng = random.Random(3)
    for i in range(6):
        db = build_db([("a", None, None)] * 3, name=f"order{i}.db")
        shuffled = rows[:]
        rng.shuffle(shuffled)
        # in two files, in any order: a retraction may arrive before its label
        merge_labels(db, shuffled[:4])
        merge_labels(db, shuffled[4:])
        assert {k: v.verdict for k, v in current_labels(db).items()} == expected
        assert {t: v.verdict for t, v in shown_labels(db).items()} == {a: "pass", b: "pass"}
        assert {t: v.verdict for t, v in human_labels(db).items()} == {a: "pass", b: "pass"}
        assert {t: v.verdict for t, v in shown_labels(db, "ana").items()} == {a: "pass", b: "fail"}
        assert {w: v.verdict for w, v in standing_by_labeler(db, b).items()} == {
            "ana": "fail",
            "bo": "pass",
        }
        assert labeled_trial_ids(db, "ana") == {a, b}
        clear_cache()
        rows_shown = {r.id: r.label for r in page(db, TrialFilter()).rows}
        assert rows_shown == {a: "pass", b: "pass", c: None}
        items = [QueueItem(p, t, None, "none", None) for p, t in enumerate((a, b, c))]
        save_queue(db, Queue("q", "ana", 0, "", items=items))
        assert queue_progress(db, "q") == (2, 3, 2)


def test_judge_labeled_selects_trials_with_a_standing_label(build_db: BuildDb) -> None:
    from reviewer.store.judging import select_trials

    db = build_db([("a", None, None)] * 3)
    a, b, c = [r[0] for r in db.execute("SELECT id FROM trials ORDER BY trial")]
    merge_labels(
        db,
        [
            _label(a, "ana", "pass", 1),
            _label(b, "ana", "fail", 1),
            _label(b, "ana", "fail", 1, retracted=True),
        ],
    )
    assert select_trials(db, labeled=True) == [a]
