"""Calibration queues: pass/fail balance, task and cluster coverage, seeds, exclusion, split, resume."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewer.calibration.sampling import (
    NothingToSample,
    allocate,
    make_queue,
    queue_summary,
    stratified_sample,
)
from reviewer.store import open_store
from reviewer.store.labels import add_label, undo_last
from reviewer.store.queues import (
    Candidate,
    QueueExists,
    candidates,
    list_queues,
    queue_items,
    queue_progress,
)
from tests.labeling.conftest import BuildDb, Spec


def specs(n_pass: int, n_fail: int, tasks: int = 4, clusters: int = 5) -> list[Spec]:
    out: list[Spec] = []
    for i in range(n_pass):
        out.append((f"task{i % tasks}", "pass", None))
    for i in range(n_fail):
        out.append((f"task{i % tasks}", "fail", f"c{i % clusters}"))
    return out


def trials(db: sqlite_utils.Database, name: str) -> list[str]:
    return [it.trial_id for it in queue_items(db, name)]


def test_balanced_when_the_data_allows(build_db: BuildDb) -> None:
    db = build_db(specs(60, 40))
    q = make_queue(db, "q", 50, seed=1, labeler="ana")
    assert Counter(it.verdict for it in q.items) == {"pass": 25, "fail": 25}
    s = queue_summary(q)
    assert s["verdicts"] == {"fail": 25, "pass": 25}
    assert s["available"] == {"fail": 40, "pass": 60}


def test_as_balanced_as_possible_when_failures_are_few(build_db: BuildDb) -> None:
    db = build_db(specs(80, 10))
    q = make_queue(db, "q", 50, seed=1, labeler="ana")
    assert Counter(it.verdict for it in q.items) == {"pass": 40, "fail": 10}


def test_trials_without_a_verdict_are_their_own_class(build_db: BuildDb) -> None:
    db = build_db(specs(30, 30) + [("task0", None, None)] * 30)
    q = make_queue(db, "q", 30, seed=0, labeler="ana")
    assert Counter(it.verdict for it in q.items) == {"pass": 10, "fail": 10, "none": 10}


def test_allocate_shares_out_evenly_and_passes_on_what_a_class_lacks() -> None:
    assert allocate({"pass": 66, "fail": 22}, 50) == {"pass": 28, "fail": 22}
    assert allocate({"pass": 100, "fail": 100}, 51) == {"pass": 25, "fail": 26}
    assert allocate({"pass": 3, "fail": 2}, 50) == {"pass": 3, "fail": 2}
    assert allocate({"pass": 0, "fail": 9, "none": 1}, 6) == {"pass": 0, "fail": 5, "none": 1}


def test_every_task_and_cluster_is_covered(build_db: BuildDb) -> None:
    # 8 tasks; failures of 6 clusters, clusters spread unevenly over tasks
    spec: list[Spec] = [(f"task{i % 8}", "pass", None) for i in range(80)]
    spec += [(f"task{i % 8}", "fail", f"c{min(i % 11, 5)}") for i in range(60)]
    db = build_db(spec)
    q = make_queue(db, "q", 16, seed=3, labeler="ana")
    by_class: dict[str, set[str]] = {}
    for it in q.items:
        by_class.setdefault(it.verdict, set()).add(it.task_id)
    assert by_class == {
        "pass": {f"task{i}" for i in range(8)},
        "fail": {f"task{i}" for i in range(8)},
    }
    assert {it.cluster for it in q.items if it.verdict == "fail"} == {f"c{i}" for i in range(6)}
    s = queue_summary(q)
    assert (s["tasks_covered"], s["tasks_total"]) == (8, 8)
    assert (s["clusters_covered"], s["clusters_total"]) == (6, 6)


def test_same_seed_same_queue_other_seed_another(build_db: BuildDb) -> None:
    db = build_db(specs(60, 40))
    a = make_queue(db, "a", 20, seed=7, labeler="ana")
    b = make_queue(db, "b", 20, seed=7, labeler="ana")
    c = make_queue(db, "c", 20, seed=8, labeler="ana")
    assert [it.trial_id for it in a.items] == [it.trial_id for it in b.items]
    assert [it.trial_id for it in a.items] != [it.trial_id for it in c.items]
    assert set(trials(db, "a")) != set(trials(db, "c"))


def test_same_seed_same_queue_in_another_database(build_db: BuildDb) -> None:
    one = build_db(specs(30, 30), name="one.db")
    two = build_db(specs(30, 30), name="two.db", reverse=True)  # same trials, imported backwards
    assert [c.trial_id for c in candidates(one)] == [c.trial_id for c in candidates(two)][::-1]
    q1 = make_queue(one, "q", 10, seed=5, labeler="ana", split="half")
    q2 = make_queue(two, "q", 10, seed=5, labeler="ana", split="half")
    assert [(it.trial_id, it.split) for it in q1.items] == [
        (it.trial_id, it.split) for it in q2.items
    ]


def test_the_order_is_shuffled_but_stable(build_db: BuildDb, tmp_path: Path) -> None:
    db = build_db(specs(60, 40))
    q = make_queue(db, "q", 50, seed=2, labeler="ana")
    assert [it.position for it in q.items] == list(range(1, 51))
    verdicts = [it.verdict for it in q.items]
    assert verdicts != sorted(verdicts)  # not all fails first
    db.close()
    again = open_store(tmp_path / "t.db")
    assert [it.trial_id for it in queue_items(again, "q")] == [it.trial_id for it in q.items]
    assert [x.name for x in list_queues(again)] == ["q"]


def test_already_labeled_trials_are_left_out(build_db: BuildDb) -> None:
    db = build_db(specs(10, 10))
    every = [c.trial_id for c in candidates(db)]
    for tid in every[:5]:
        add_label(db, tid, "ana", "pass")
    add_label(db, every[5], "ana", "skip")
    add_label(db, every[6], "ana", "fail")
    undo_last(db, "ana")  # retracted: may be sampled again
    add_label(db, every[7], "ben", "fail")  # another labeler's label does not count
    q = make_queue(db, "q", 50, seed=0, labeler="ana")
    got = {it.trial_id for it in q.items}
    assert got == set(every) - set(every[:6])
    assert queue_summary(q)["already_labeled"] == 6


def test_dev_test_split_alternates_within_strata(build_db: BuildDb) -> None:
    db = build_db(specs(60, 40))
    q = make_queue(db, "q", 50, seed=4, labeler="ana", split="half")
    halves = Counter(it.split for it in q.items)
    assert halves == {"dev": 25, "test": 25}
    for verdict in ("pass", "fail"):
        per = Counter(it.split for it in q.items if it.verdict == verdict)
        assert abs(per["dev"] - per["test"]) <= 1
    strata: dict[tuple[str, str, str | None], Counter[str | None]] = {}
    for it in q.items:
        strata.setdefault((it.verdict, it.task_id, it.cluster), Counter())[it.split] += 1
    for c in strata.values():
        assert abs(c["dev"] - c["test"]) <= 1
    again = make_queue(db, "q2", 50, seed=4, labeler="ana", split="half")
    assert [(it.trial_id, it.split) for it in again.items] == [
        (it.trial_id, it.split) for it in q.items
    ]
    assert queue_summary(q)["split"] == {"dev": 25, "test": 25}
    assert make_queue(db, "q3", 10, seed=4, labeler="ana").items[0].split is None


def test_progress_resumes_at_the_first_unlabeled_item(build_db: BuildDb, tmp_path: Path) -> None:
    db = build_db(specs(20, 20))
    q = make_queue(db, "q", 10, seed=0, labeler="ana")
    assert queue_progress(db, "q") == (0, 10, 1)
    for it in q.items[:3]:
        add_label(db, it.trial_id, "ana", "pass", queue="q")
    add_label(db, q.items[4].trial_id, "ana", "skip", queue="q")
    add_label(db, q.items[3].trial_id, "ben", "pass")
    db.close()
    again = open_store(tmp_path / "t.db")
    assert queue_progress(again, "q") == (4, 10, 4)
    assert queue_progress(again, "q", "ben") == (1, 10, 1)
    undo_last(again, "ana", queue="q")
    assert queue_progress(again, "q") == (3, 10, 4)
    for it in q.items:
        add_label(again, it.trial_id, "ana", "fail")
    assert queue_progress(again, "q") == (10, 10, None)


def test_names_are_unique_unless_replaced(build_db: BuildDb) -> None:
    db = build_db(specs(10, 10))
    make_queue(db, "q", 5, seed=0, labeler="ana")
    with pytest.raises(QueueExists):
        make_queue(db, "q", 5, seed=1, labeler="ana")
    replaced = make_queue(db, "q", 8, seed=1, labeler="ana", replace=True)
    assert trials(db, "q") == [it.trial_id for it in replaced.items]
    assert len(list_queues(db)) == 1


def test_run_filter_and_small_pools(build_db: BuildDb) -> None:
    db = build_db(specs(3, 2), name="t.db", run="r1")
    q = make_queue(db, "q", 50, seed=0, labeler="ana", run="r1")
    assert len(q.items) == 5
    with pytest.raises(NothingToSample, match="no trials of run other"):
        make_queue(db, "none", 5, seed=0, labeler="ana", run="other")
    for it in q.items:
        add_label(db, it.trial_id, "ana", "pass")
    with pytest.raises(NothingToSample, match="ana has labeled all 5 trials"):
        make_queue(db, "none", 5, seed=0, labeler="ana")
    assert [x.name for x in list_queues(db)] == ["q"]  # nothing stored for an empty sample
    with pytest.raises(ValueError):
        make_queue(db, "bad", 0, labeler="ana")


pools = st.lists(
    st.tuples(
        st.sampled_from(["pass", "fail", "none"]),
        st.sampled_from(["t1", "t2", "t3"]),
        st.sampled_from([None, "c1", "c2"]),
    ),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(pool=pools, n=st.integers(1, 70), seed=st.integers(0, 2**32))
def test_sample_size_classes_and_determinism(
    pool: list[tuple[str, str, str | None]], n: int, seed: int
) -> None:
    cands = [Candidate(f"id{i:03}", "r", t, i, v, c) for i, (v, t, c) in enumerate(pool)]
    items = stratified_sample(cands, n, seed, split=True)
    assert len(items) == min(n, len(cands))
    assert len({it.trial_id for it in items}) == len(items)
    available = Counter(c.verdict for c in cands)
    assert Counter(it.verdict for it in items) == {
        k: v for k, v in allocate(dict(available), n).items() if v
    }
    assert items == stratified_sample(list(reversed(cands)), n, seed, split=True)
    halves = Counter(it.split for it in items)
    assert abs(halves["dev"] - halves["test"]) <= 1
