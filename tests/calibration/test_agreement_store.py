"""The agreement report on a real store: labels and verdicts collected, scoped and left out as said."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer.calibration.agreement import (
    Pair,
    criteria_agreement,
    human_agreement,
    judge_agreement,
)
from reviewer.calibration.kappa import cohen_kappa
from reviewer.calibration.report import build_report, first_line, trust_threshold
from reviewer.store import open_store
from reviewer.store.agreement_data import UnknownScope, gather_agreement
from reviewer.store.labels import add_label, undo_last
from tests.conftest import sample_copy

IMPORTED = "claude-sonnet-4-5:support-policy@1"
RUBRIC = "support-policy@1"


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Any]:
    path = sample_copy(tmp_path / "s.db")
    store = open_store(path)
    yield store
    store.close()


def trials(db: Any) -> list[tuple[str, bool]]:
    """(id, harness success) of every trial, in import order."""
    rows = db.conn.execute("SELECT id, success FROM trials ORDER BY seq").fetchall()
    return [(r[0], bool(r[1])) for r in rows]


def add_verdict(db: Any, trial_id: str, judge: str, verdict: str, rationale: str = "") -> None:
    db.conn.execute(
        "INSERT INTO verdicts (trial_id, judge, verdict, rationale, source, created_at) "
        "VALUES (?, ?, ?, ?, 'test', '2025-01-01T00:00:00')",
        [trial_id, judge, verdict, rationale],
    )
    db.conn.commit()


def outcome(ok: bool) -> str:
    return "pass" if ok else "fail"


def label_all(db: Any, who: str, rows: list[tuple[str, bool]], rubric: str = RUBRIC) -> None:
    for tid, ok in rows:
        add_label(db, tid, who, outcome(ok), rubric_ref=rubric)


def assert_json_clean(report: Any) -> dict[str, Any]:
    """The JSON form survives a strict round trip (no NaN, no infinity)."""
    text = json.dumps(report.to_dict(), allow_nan=False)
    return dict(json.loads(text))


def test_numbers_are_the_calibration_functions_on_the_collected_pairs(db: Any) -> None:
    rows = trials(db)[:30]
    label_all(db, "ana", rows)
    expected = []
    for i, (tid, ok) in enumerate(rows):
        judged = outcome(ok) if i % 5 else outcome(not ok)  # every fifth one flipped
        add_verdict(db, tid, "j2", judged, f"first line {i}\nsecond line")
        expected.append(Pair(tid, outcome(ok), judged))
    data = gather_agreement(db, judge="j2")
    assert data.judge == "j2" and data.labeler == "ana" and data.rubric == RUBRIC
    assert sorted(data.pairs.items()) == sorted((p.trial_id, (p.human, p.judge)) for p in expected)
    report = build_report(data, threshold=0.5, seed=3)
    # pairs come in trial id order, which the seeded bootstrap depends on
    expected.sort(key=lambda p: p.trial_id)
    # j2 graded only the labeled trials: its verdict mix is the labels' own
    assert data.judge_mix == {
        "pass": sum(p.judge == "pass" for p in expected),
        "fail": 30 - sum(p.judge == "pass" for p in expected),
    }
    reference = judge_agreement(
        expected, seed=3, trust_threshold=0.5, labeler="ana", judge_mix=data.judge_mix
    )
    got = assert_json_clean(report)["agreement"]
    want = json.loads(json.dumps(reference.to_dict()))
    want.pop("disagreements")
    assert got == want
    assert report.agreement.n == 30 and len(report.disagreements) == 6
    d = report.disagreements[0]
    assert d.rationale.startswith("first line") and d.run.startswith("support-")
    assert d.human != d.judge and d.trial >= 1


def test_default_judge_is_the_one_with_most_verdicts_on_labeled_trials(db: Any) -> None:
    rows = trials(db)[:10]
    label_all(db, "ana", rows)
    for tid, ok in rows[:4]:
        add_verdict(db, tid, "j2", outcome(ok))
    data = gather_agreement(db)
    assert data.judge == IMPORTED and data.judge_default
    assert data.judges == {IMPORTED: 10, "j2": 4}
    assert "the judge with the most verdicts" in build_report(data).render()


def test_error_verdicts_and_skip_labels_are_left_out_and_counted(db: Any) -> None:
    rows = trials(db)[:12]
    label_all(db, "ana", rows[:10])
    add_label(db, rows[10][0], "ana", "skip", rubric_ref=RUBRIC)
    add_label(db, rows[11][0], "ana", "pass", rubric_ref=RUBRIC)  # j2 never graded it
    for i, (tid, ok) in enumerate(rows[:11]):
        add_verdict(db, tid, "j2", "error" if i < 3 else outcome(ok))
    data = gather_agreement(db, judge="j2")
    assert (data.judge_errors, data.skip_labels, data.ungraded) == (3, 1, 1)
    assert len(data.pairs) == 7 and rows[0][0] not in data.pairs
    text = build_report(data).render()
    assert "left out 3 judge errors, 1 skip label, 1 labeled trial the judge has not graded" in text
    left = assert_json_clean(build_report(data))["left_out"]
    assert left["judge_errors"] == 3 and left["skip_labels"] == 1 and left["not_graded"] == 1


def test_rubric_versions_are_never_mixed(db: Any) -> None:
    rows = trials(db)
    label_all(db, "ana", rows[:6], rubric="support-policy@1")
    label_all(db, "ana", rows[6:10], rubric="support-policy@2")
    latest = gather_agreement(db)
    assert latest.rubric == "support-policy@2" and latest.rubric_default
    assert set(latest.pairs) == {t for t, _ in rows[6:10]}
    assert latest.other_rubrics == {"support-policy@1": 6}
    older = gather_agreement(db, rubric="support-policy@1")
    assert set(older.pairs) == {t for t, _ in rows[:6]}
    assert older.other_rubrics == {"support-policy@2": 4}
    text = build_report(latest).render()
    assert "rubric   support-policy@2  (the latest used; --rubric REF)" in text
    assert "6 labels under other rubric versions left out: support-policy@1 (6)" in text
    with pytest.raises(UnknownScope, match="rubrics: support-policy@1, support-policy@2"):
        gather_agreement(db, rubric="support-policy@9")


def test_a_retracted_label_no_longer_counts(db: Any) -> None:
    rows = trials(db)[:5]
    label_all(db, "ana", rows)
    assert len(gather_agreement(db).pairs) == 5
    undo_last(db, "ana")
    assert set(gather_agreement(db).pairs) == {t for t, _ in rows[:4]}


def test_unknown_judge_and_labeler_name_what_exists(db: Any) -> None:
    label_all(db, "ana", trials(db)[:3])
    with pytest.raises(UnknownScope, match=f"judges: '{IMPORTED}'"):
        gather_agreement(db, judge="nope")
    with pytest.raises(UnknownScope, match="labelers: 'ana'"):
        gather_agreement(db, labeler="zed")


def test_one_class_only_is_explained_never_nan(db: Any) -> None:
    passed = [r for r in trials(db) if r[1]][:12]
    label_all(db, "ana", passed)
    for tid, _ in passed:
        add_verdict(db, tid, "j2", "pass")
    report = build_report(gather_agreement(db, judge="j2"))
    assert report.agreement.kappa is None and report.agreement.explanation
    assert "kappa is undefined" in report.render()
    assert "no verdict yet: 12 labels, it needs 30" in report.render()
    assert assert_json_clean(report)["agreement"]["kappa"] is None


@pytest.mark.parametrize("n", [0, 1])
def test_tiny_or_no_overlap_is_explained(db: Any, n: int) -> None:
    rows = trials(db)[:3]
    label_all(db, "ana", rows)
    add_verdict(db, trials(db)[-1][0], "j2", "pass")  # j2 exists, on a trial nobody labeled
    for tid, ok in rows[:n]:
        add_verdict(db, tid, "j2", outcome(ok))
    report = build_report(gather_agreement(db, judge="j2"))
    assert report.agreement.n == n and report.agreement.kappa is None
    assert report.agreement.explanation
    assert_json_clean(report)


def test_an_empty_store_says_what_is_missing(tmp_path: Path) -> None:
    store = open_store(tmp_path / "empty.db")
    try:
        report = build_report(gather_agreement(store))
    finally:
        store.close()
    assert report.data.judge is None and report.data.labeler is None
    assert any("no pass/fail labels yet" in n for n in report.notes)
    assert any("no judge verdicts" in n for n in report.notes)
    assert "rubric   none" in report.render()
    assert_json_clean(report)


def test_two_labelers_give_the_ceiling_and_the_default_is_the_busier_one(db: Any) -> None:
    rows = trials(db)[:20]
    label_all(db, "ana", rows)
    bo = [(t, ok if i % 4 else not ok) for i, (t, ok) in enumerate(rows[:12])]
    label_all(db, "bo", bo)
    data = gather_agreement(db)
    assert data.labeler == "ana" and data.labelers == {"ana": 20, "bo": 12}
    report = build_report(data)
    assert report.human is not None
    want = cohen_kappa([outcome(ok) for _, ok in rows[:12]], [outcome(ok) for _, ok in bo])
    assert report.human.pairwise[0].kappa == pytest.approx(want)
    assert "Human vs human agreement (the ceiling)" in report.render()
    only_bo = gather_agreement(db, labeler="bo")
    assert only_bo.labeler == "bo" and set(only_bo.pairs) == {t for t, _ in bo}


def test_three_labelers_give_fleiss_and_alpha(db: Any) -> None:
    rows = trials(db)[:15]
    for who, flip in (("ana", 0), ("bo", 3), ("cy", 5)):
        label_all(db, who, [(t, ok if i % 7 != flip else not ok) for i, (t, ok) in enumerate(rows)])
    data = gather_agreement(db)
    report = build_report(data)
    assert report.human is not None
    reference = human_agreement(data.human)
    assert report.human.fleiss == pytest.approx(reference.fleiss)
    assert report.human.alpha == pytest.approx(reference.alpha)
    assert report.human.n_fleiss == 15
    assert "Fleiss' kappa" in report.render() and "Krippendorff's alpha" in report.render()


def test_criteria_agreement_is_human_vs_human_in_rubric_order(db: Any) -> None:
    rows = trials(db)[:10]
    for i, (tid, ok) in enumerate(rows):
        add_label(
            db,
            tid,
            "ana",
            outcome(ok),
            criteria={"looked_up": True, "followed_policy": ok},
            rubric_ref=RUBRIC,
        )
        add_label(
            db,
            tid,
            "bo",
            outcome(ok),
            criteria={"looked_up": i % 3 != 0, "followed_policy": ok, "resolved_correctly": None},
            rubric_ref=RUBRIC,
        )
    db.conn.execute(
        "INSERT OR REPLACE INTO rubrics (ref, digest, definition, first_seen) VALUES (?, 'x', ?, 'now')",
        [RUBRIC, json.dumps({"criteria": [{"id": "looked_up"}, {"id": "followed_policy"}]})],
    )
    db.conn.commit()
    data = gather_agreement(db)
    report = build_report(data)
    assert [b.first + "~" + b.second for b in report.criteria] == ["ana~bo"]
    rows_got = report.criteria[0].rows
    assert [r.criterion for r in rows_got] == ["looked_up", "followed_policy"]
    want = criteria_agreement(data.criteria["ana"], data.criteria["bo"], ["followed_policy"])
    assert rows_got[1].kappa == pytest.approx(want[0].kappa)
    assert rows_got[0].explanation  # ana answered looked_up yes every time: a constant rater
    assert "Agreement per criterion, ana ~ bo" in report.render()


def test_hostile_strings_are_shown_literally(db: Any) -> None:
    rows = trials(db)[:4]
    label_all(db, "[red]x[/]", rows)
    for tid, ok in rows:
        add_verdict(db, tid, "\x1b]8;;evil\x07j", outcome(not ok), "\x1b[31mred\x1b[0m [/foo]")
    text = build_report(gather_agreement(db, judge="\x1b]8;;evil\x07j")).render()
    assert "\x1b" not in text and "\x07" not in text
    assert "[red]x[/]" in text and "[/foo]" in text


def test_trust_threshold_comes_from_the_option_the_config_or_the_default() -> None:
    assert trust_threshold({}) == 0.6
    assert trust_threshold({"trust_threshold": 0.7}) == 0.7
    assert trust_threshold({"trust_threshold": 0.7}, 0.4) == 0.4
    for bad in ("high", 2, float("nan"), True):
        with pytest.raises(ValueError, match="trust_threshold"):
            trust_threshold({"trust_threshold": bad})


def test_first_line_skips_blank_lines() -> None:
    assert first_line("\n  \n  the reason  \nmore") == "the reason"
    assert first_line(None) == ""


def test_the_judges_mix_counts_its_latest_verdicts_and_follows_every_change(db: Any) -> None:
    from reviewer.store.agreement_data import judge_mix

    rows = trials(db)[:6]
    for i, (tid, _) in enumerate(rows):
        add_verdict(db, tid, "j3", "pass" if i < 4 else "fail")
    assert judge_mix(db, "j3") == {"pass": 4, "fail": 2}
    assert judge_mix(db, "j3") == {"pass": 4, "fail": 2}  # from the cache
    db.conn.execute(
        "UPDATE verdicts SET verdict = 'error' WHERE trial_id = ? AND judge = 'j3'", [rows[0][0]]
    )
    db.conn.commit()
    assert judge_mix(db, "j3") == {"pass": 3, "fail": 2}  # an in-place change is seen
    add_verdict(db, trials(db)[7][0], "j3", "fail")
    assert judge_mix(db, "j3") == {"pass": 3, "fail": 3}  # and a new verdict
    assert judge_mix(db, None) == {}
