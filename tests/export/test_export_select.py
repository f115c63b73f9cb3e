"""Which trials an export chooses: human fails by default, judge fails no human contradicted on
request, runs, clusters, one per cluster, a labeler, and always the same order."""

from __future__ import annotations

import pytest

from reviewer.export.select import (
    Selection,
    SelectionError,
    resolve_cluster,
    select,
    skipped_reasons,
)
from reviewer.store.labels import add_label, undo_last
from tests.export.conftest import BuildDb, Spec


def chosen(db: object, **kw: object) -> list[tuple[int, str]]:
    return [(c.key.trial, c.source) for c in select(db, Selection(**kw))]  # type: ignore[arg-type]


def test_default_is_human_fail_labels_only(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a", "fail"), Spec("b", "fail"), Spec("c", "pass"), Spec("d")])
    add_label(db, ids[0], "ana", "fail")
    add_label(db, ids[2], "ana", "fail")  # the judge said pass; the human's fail counts
    add_label(db, ids[3], "ana", "skip")
    assert chosen(db) == [(1, "human"), (3, "human")]


def test_latest_label_counts_and_undo_restores_the_one_before(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a"), Spec("b")])
    add_label(db, ids[0], "ana", "fail")
    add_label(db, ids[0], "ana", "pass")  # changed her mind
    add_label(db, ids[1], "ana", "fail")
    add_label(db, ids[1], "bob", "pass", at="2000-01-01T00:00:00")  # older than ana's fail
    assert chosen(db) == [(2, "human")]
    undo_last(db, "ana")  # retracts ana's fail on b, the latest label she gave
    assert chosen(db) == []
    add_label(db, ids[1], "bob", "fail")
    assert chosen(db) == [(2, "human")]


def test_labeler_narrows_to_one_persons_labels(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a"), Spec("b")])
    add_label(db, ids[0], "ana", "fail")
    add_label(db, ids[1], "bob", "fail")
    assert chosen(db, labeler="bob") == [(2, "human")]
    assert chosen(db, labeler="cy") == []
    (c,) = select(db, Selection(labeler="ana"))
    assert c.label is not None and c.label.labeler == "ana"


def test_judge_fails_not_contradicted_by_a_human(build_db: BuildDb) -> None:
    db, ids = build_db(
        [
            Spec("a", "fail"),
            Spec("b", "fail"),
            Spec("c", "fail"),
            Spec("d", "pass"),
            Spec("e", "fail"),
        ]
    )
    add_label(db, ids[1], "ana", "pass")  # contradicts the judge
    add_label(db, ids[2], "ana", "skip")  # does not
    add_label(db, ids[4], "ana", "fail")  # already a human fail
    assert chosen(db) == [(5, "human")]
    assert chosen(db, include_judge=True) == [(1, "judge"), (3, "judge"), (5, "human")]
    judge_only = select(db, Selection(include_judge=True))[0]
    assert judge_only.label is None and judge_only.verdict is not None
    assert judge_only.verdict.verdict == "fail"


def test_a_pass_by_any_labeler_contradicts_the_judge(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a", "fail")])
    add_label(db, ids[0], "bob", "pass")
    add_label(db, ids[0], "ana", "skip")
    assert chosen(db, include_judge=True) == []


def test_runs_filter_and_unknown_run(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a"), Spec("b")])
    add_label(db, ids[0], "ana", "fail")
    assert chosen(db, runs=("r1",)) == [(1, "human")]
    with pytest.raises(SelectionError, match="no run named 'nope'"):
        select(db, Selection(runs=("nope",)))


def test_order_is_run_task_trial_whatever_the_label_order(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("zeta"), Spec("alpha"), Spec("mid"), Spec("alpha")])
    for tid in reversed(ids):
        add_label(db, tid, "ana", "fail")
    assert [(c.key.task_id, c.key.trial) for c in select(db, Selection())] == [
        ("alpha", 2),
        ("alpha", 4),
        ("mid", 3),
        ("zeta", 1),
    ]


def test_cluster_by_id_prefix_or_rank(build_db: BuildDb) -> None:
    db, ids = build_db(
        [
            Spec("a", cluster="cbig"),
            Spec("b", cluster="cbig"),
            Spec("c", cluster="csmall"),
            Spec("d"),
        ]
    )
    for tid in ids:
        add_label(db, tid, "ana", "fail")
    assert chosen(db, cluster="cbig") == [(1, "human"), (2, "human")]
    assert chosen(db, cluster="cs") == [(3, "human")]
    assert resolve_cluster(db, "1") == "cbig"  # biggest first, as `reviewer cluster` ranks them
    assert resolve_cluster(db, "2") == "csmall"
    with pytest.raises(SelectionError, match="matches several clusters"):
        resolve_cluster(db, "c")
    with pytest.raises(SelectionError, match="is not a cluster id"):
        resolve_cluster(db, "zz")


def test_cluster_without_a_clustering(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a")])
    add_label(db, ids[0], "ana", "fail")
    with pytest.raises(SelectionError, match="no clustering stored yet"):
        select(db, Selection(cluster="c1"))


def test_one_per_cluster_takes_the_representative_and_keeps_unclustered(build_db: BuildDb) -> None:
    db, ids = build_db(
        [
            Spec("a", cluster="c1"),
            Spec("b", cluster="c1"),
            Spec("c", cluster="c1"),  # c1's representative (its last member)
            Spec("d", cluster="c2"),
            Spec("e", cluster="c2"),  # c2's representative, but not labeled
            Spec("f"),
            Spec("g"),
        ]
    )
    for i in (0, 1, 2, 3, 5, 6):
        add_label(db, ids[i], "ana", "fail")
    picked = select(db, Selection(one_per_cluster=True))
    assert [c.key.trial for c in picked] == [3, 4, 6, 7]
    assert [c.cluster.cluster_id if c.cluster else None for c in picked] == ["c1", "c2", None, None]
    assert picked[0].cluster is not None and picked[0].cluster.cluster_name == "name of c1"


def test_trial_ids_narrow_to_a_trial_or_a_list(build_db: BuildDb) -> None:
    db, ids = build_db([Spec("a", "fail"), Spec("b")])
    add_label(db, ids[1], "ana", "fail")
    assert chosen(db, trial_ids=(ids[0],)) == []
    assert chosen(db, trial_ids=(ids[0],), include_judge=True) == [(1, "judge")]
    assert chosen(db, trial_ids=tuple(ids)) == [(2, "human")]


def test_every_trial_of_a_cluster_or_list_left_out_is_counted_with_its_reason(
    build_db: BuildDb,
) -> None:
    """`export --cluster 1 --judge-fails` left out the cluster's judge passes without a word."""
    db, ids = build_db(
        [
            Spec("a", "fail", "k"),
            Spec("b", "pass", "k"),
            Spec("c", "pass", "k"),
            Spec("d", None, "k"),
            Spec("e", "fail", "k"),
            Spec("f", "pass", "other"),
        ]
    )
    add_label(db, ids[4], "ana", "pass")
    sel = Selection(cluster="k", include_judge=True)
    got = select(db, sel)
    assert [c.key.trial for c in got] == [1]
    assert skipped_reasons(db, sel, got) == (
        "skipped 4 trials: 2 harness failures the judge passed, "
        "1 harness failures nobody labeled or judged, 1 labeled pass by a human"
    )
    listed = Selection(trial_ids=(ids[0], ids[1], ids[3], ids[5]), include_judge=True)
    assert skipped_reasons(db, listed, select(db, listed)) == (
        "skipped 3 trials: 2 harness failures the judge passed, "
        "1 harness failures nobody labeled or judged"
    )
    both = Selection(cluster="k", trial_ids=(ids[0], ids[5]), include_judge=True)
    assert skipped_reasons(db, both, select(db, both)) == "skipped 1 trial: 1 not in cluster k"
    one = Selection(cluster="k", include_judge=True, include_harness=True, one_per_cluster=True)
    assert skipped_reasons(db, one, select(db, one)) == (
        "skipped 4 trials: 3 more of a cluster with one task exported (one per cluster), "
        "1 labeled pass by a human"
    )
    assert skipped_reasons(db, Selection(include_judge=True), got) == ""  # no scope: no list
