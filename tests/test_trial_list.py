"""The trials list in the store: every filter, FTS search text, keyset pages, neighbours, positions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from reviewer.store import open_store, trial_list
from reviewer.store.trial_list import (
    FilterSequence,
    SearchError,
    TrialFilter,
    clear_cache,
    count,
    match_query,
    neighbour,
    page,
    position,
)
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, write_jsonl

NOW = "2025-01-01T00:00:0{}+00:00"


def _trial(run: str, task: str, i: int, passed: bool, words: str, **extra: Any) -> dict[str, Any]:
    rec = native_trial(task, passed=passed, run=run, trial=i, **extra)
    rec["messages"].append({"role": "assistant", "content": words})
    return rec


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite_utils.Database]:
    """Two runs: a has refund(1..3) x 2 trials, b has one trial of a hostile task id; verdicts on some."""
    recs = [
        _trial("a", "refund", 1, True, "refund issued to the card", judge={"verdict": "pass"}),
        _trial(
            "a", "refund", 2, False, "customer wanted a partial refund", judge={"verdict": "pass"}
        ),
        _trial(
            "a", "cancel", 1, False, "cancel_order on a shipped order", judge={"verdict": "fail"}
        ),
        _trial(
            "a", "cancel", 2, True, "order cancelled: status:pending", judge={"verdict": "error"}
        ),
        _trial("a", "address", 1, True, 'said "AND(" then stopped'),
        _trial("b", "[red]x[/]", 1, False, "exchange for a new item"),
    ]
    f = write_jsonl(tmp_path / "runs.jsonl", recs)
    path = tmp_path / "t.db"
    database = open_store(path)
    summary = import_paths(database, [f])
    assert summary.added == 6, summary
    clear_cache()
    yield database
    database.close()


def ids(db: sqlite_utils.Database, f: TrialFilter) -> list[tuple[str, str, int]]:
    return [(r.run, r.task_id, r.trial) for r in page(db, f).rows]


def tid(db: sqlite_utils.Database, run: str, task: str, trial: int) -> str:
    row = db.execute(
        "SELECT id FROM trials WHERE run = ? AND task_id = ? AND trial = ?", [run, task, trial]
    ).fetchone()
    return str(row[0])


def test_no_filter_lists_everything_in_import_order(db: sqlite_utils.Database) -> None:
    p = page(db, TrialFilter())
    assert (p.total, p.first_index, len(p.rows)) == (6, 0, 6)
    assert [r.seq for r in p.rows] == sorted(r.seq for r in p.rows)
    first = p.rows[0]
    assert (first.run, first.task_id, first.trial, first.success) == ("a", "refund", 1, True)
    assert first.verdict == "pass" and first.label is None and first.violations == 0
    assert p.rows[-1].task_id == "[red]x[/]"
    assert count(db, TrialFilter()) == 6


def test_run_task_and_outcome(db: sqlite_utils.Database) -> None:
    assert len(ids(db, TrialFilter(run="a"))) == 5
    assert ids(db, TrialFilter(run="b")) == [("b", "[red]x[/]", 1)]
    assert ids(db, TrialFilter(task_id="cancel")) == [("a", "cancel", 1), ("a", "cancel", 2)]
    assert ids(db, TrialFilter(run="a", outcome="fail")) == [("a", "refund", 2), ("a", "cancel", 1)]
    assert count(db, TrialFilter(outcome="pass")) == 3
    assert count(db, TrialFilter(run="nope")) == 0
    assert page(db, TrialFilter(run="nope")).rows == []


def test_judge_verdict_latest_of_any_judge(db: sqlite_utils.Database) -> None:
    assert ids(db, TrialFilter(verdict="fail")) == [("a", "cancel", 1)]
    assert ids(db, TrialFilter(verdict="error")) == [("a", "cancel", 2)]
    assert [t for _, t, _ in ids(db, TrialFilter(verdict="none"))] == ["address", "[red]x[/]"]
    # a later verdict of another judge overrides what the list shows and filters on
    target = tid(db, "a", "refund", 1)
    db.execute(
        "INSERT INTO verdicts (trial_id, judge, verdict, created_at) VALUES (?, 'judge-2', 'fail', ?)",
        [target, "2999-01-01T00:00:00+00:00"],
    )
    db.conn.commit()
    assert ids(db, TrialFilter(verdict="fail")) == [("a", "refund", 1), ("a", "cancel", 1)]
    assert ("a", "refund", 1) not in ids(db, TrialFilter(verdict="pass"))
    assert page(db, TrialFilter()).rows[0].verdict == "fail"
    assert ids(db, TrialFilter(verdict="fail", judge="judge-2")) == [("a", "refund", 1)]
    assert count(db, TrialFilter(verdict="none", judge="judge-2")) == 5


def _label(
    db: sqlite_utils.Database,
    trial_id: str,
    who: str,
    verdict: str | None,
    n: int,
    retracted: int = 0,
) -> None:
    db.execute(
        "INSERT INTO labels (trial_id, labeler, verdict, at, retracted) VALUES (?, ?, ?, ?, ?)",
        [trial_id, who, verdict, NOW.format(n), retracted],
    )
    db.conn.commit()


def test_labels_latest_standing_label_and_retractions(db: sqlite_utils.Database) -> None:
    r1, r2, c1 = tid(db, "a", "refund", 1), tid(db, "a", "refund", 2), tid(db, "a", "cancel", 1)
    _label(db, r1, "ana", "pass", 1)
    _label(db, r1, "ana", "fail", 2)
    _label(db, r1, "ana", "fail", 2, retracted=1)  # undoes "fail": "pass" stands again
    _label(db, r2, "ana", "fail", 1)
    _label(db, r2, "ana", "fail", 1, retracted=1)  # undone: no label
    _label(db, c1, "ana", "skip", 1)
    _label(db, c1, "ana", "skip", 9, retracted=1)  # names no stored label: retracts nothing
    _label(db, c1, "bo", "fail", 2)  # the latest labeler wins
    assert ids(db, TrialFilter(label="pass")) == [("a", "refund", 1)]
    assert ids(db, TrialFilter(label="fail")) == [("a", "cancel", 1)]
    assert ids(db, TrialFilter(label="skip")) == []
    assert ids(db, TrialFilter(label="skip", labeler="ana")) == [("a", "cancel", 1)]
    assert count(db, TrialFilter(label="none")) == 4
    assert ("a", "refund", 2) in ids(db, TrialFilter(label="none"))
    labels = {(r.task_id, r.trial): r.label for r in page(db, TrialFilter()).rows}
    assert labels[("refund", 1)] == "pass" and labels[("refund", 2)] is None
    assert labels[("cancel", 1)] == "fail"
    # a second undo retracts the label before
    _label(db, r1, "ana", "pass", 1, retracted=1)
    assert ids(db, TrialFilter(label="pass")) == []


def test_cluster_of_the_latest_clustering(db: sqlite_utils.Database) -> None:
    r2, c1 = tid(db, "a", "refund", 2), tid(db, "a", "cancel", 1)
    for cid, (cluster, members) in enumerate([("k1", [r2, c1]), ("k1", [c1])], start=1):
        db.execute(
            "INSERT INTO clusterings (id, scope, params, created_at, n_failures) VALUES (?, 'all', '{}', ?, 2)",
            [cid, NOW.format(cid)],
        )
        for m in members:
            db.execute(
                "INSERT INTO cluster_members (clustering_id, cluster_id, trial_id) VALUES (?, ?, ?)",
                [cid, cluster, m],
            )
    db.conn.commit()
    assert ids(db, TrialFilter(cluster_id="k1")) == [("a", "cancel", 1)]
    assert count(db, TrialFilter(cluster_id="k2")) == 0


def test_rule_violations(db: sqlite_utils.Database) -> None:
    c1, x = tid(db, "a", "cancel", 1), tid(db, "b", "[red]x[/]", 1)
    for trial_id, rule in ((c1, "no-cancel"), (c1, "no-cancel"), (x, "budget")):
        db.execute(
            "INSERT INTO violations (trial_id, rule_id, severity) VALUES (?, ?, 'forbidden')",
            [trial_id, rule],
        )
    db.conn.commit()
    assert ids(db, TrialFilter(rule_id="any")) == [("a", "cancel", 1), ("b", "[red]x[/]", 1)]
    assert ids(db, TrialFilter(rule_id="budget")) == [("b", "[red]x[/]", 1)]
    rows = {r.task_id: r.violations for r in page(db, TrialFilter(rule_id="any")).rows}
    assert rows == {"cancel": 2, "[red]x[/]": 1}


def test_search_words_phrases_prefixes_and_operators(db: sqlite_utils.Database) -> None:
    # every trial says "Refund order #W5521 please" (the fixture's messages)
    assert count(db, TrialFilter(search="refund")) == 6
    assert ids(db, TrialFilter(search="partial")) == [("a", "refund", 2)]
    assert ids(db, TrialFilter(search='"partial refund"')) == [("a", "refund", 2)]
    assert ids(db, TrialFilter(search='"refund partial"')) == []
    assert ids(db, TrialFilter(search="refund card")) == [("a", "refund", 1)]
    assert ids(db, TrialFilter(search="CARD")) == [("a", "refund", 1)]
    assert count(db, TrialFilter(search="cancel*")) == 2
    assert count(db, TrialFilter(search="card OR exchange")) == 2
    assert count(db, TrialFilter(search="refund NOT partial")) == 5
    assert ids(db, TrialFilter(search="refund", outcome="fail", run="a")) == [
        ("a", "refund", 2),
        ("a", "cancel", 1),
    ]
    assert ids(db, TrialFilter(search="card", run="b")) == []


@pytest.mark.parametrize(
    "text",
    ['"', 'say "AND(', "AND(", "status:pending", "a:b:c", "(", "))", "NEAR", "*", "x*y", "^"],
)
def test_special_characters_never_crash(db: sqlite_utils.Database, text: str) -> None:
    try:
        p = page(db, TrialFilter(search=text))
    except SearchError as e:
        assert "search" in str(e)
    else:
        assert p.total == len(p.rows)


def test_special_characters_are_searched_as_written(db: sqlite_utils.Database) -> None:
    assert ids(db, TrialFilter(search="AND(")) == [("a", "address", 1)]
    assert ids(db, TrialFilter(search="status:pending")) == [("a", "cancel", 2)]
    assert ids(db, TrialFilter(search="cancel_order")) == [("a", "cancel", 1)]
    assert match_query("   ") is None


@pytest.mark.parametrize("text", ["refund AND", "NOT refund", "(refund OR card", ":"])
def test_invalid_search_is_a_clear_error(db: sqlite_utils.Database, text: str) -> None:
    with pytest.raises(SearchError, match="search"):
        page(db, TrialFilter(search=text))
    with pytest.raises(SearchError):
        count(db, TrialFilter(search=text))


def test_match_query_quotes_words_and_keeps_explicit_operators() -> None:
    assert match_query('refund "a phrase"', system=True) == '"refund" "a phrase"'
    assert match_query('order#5 say"x"', system=True) == '"order#5" "say" "x"'
    assert match_query("refun*", system=True) == '"refun"*'
    assert match_query("(a OR b) NOT c:d", system=True) == '( "a" OR "b" ) NOT "c:d"'
    assert match_query("NEAR(a b, 5)", system=True) == 'NEAR( "a" "b" , 5 )'
    assert match_query("and or not", system=True) == '"and" "or" "not"'


@pytest.mark.parametrize("prefer_set", [True, False])
def test_scan_and_set_plans_agree(
    db: sqlite_utils.Database, monkeypatch: pytest.MonkeyPatch, prefer_set: bool
) -> None:
    c1 = tid(db, "a", "cancel", 1)
    _label(db, c1, "ana", "fail", 1)
    db.execute(
        "INSERT INTO violations (trial_id, rule_id, severity) VALUES (?, 'r', 'policy')", [c1]
    )
    db.conn.commit()
    filters = [
        TrialFilter(verdict="pass"),
        TrialFilter(verdict="none"),
        TrialFilter(verdict="fail", judge="nobody"),
        TrialFilter(label="fail"),
        TrialFilter(label="none", outcome="fail"),
        TrialFilter(rule_id="any"),
        TrialFilter(rule_id="r", run="a"),
        TrialFilter(search="refund", verdict="pass"),
        TrialFilter(search="order", outcome="fail", task_id="cancel"),
    ]
    expected = [ids(db, f) for f in filters]
    monkeypatch.setattr(trial_list, "_prefer_set", lambda total, n, limit: prefer_set)
    for f, want in zip(filters, expected, strict=True):
        walked, p = [], page(db, f, limit=1)
        while p.rows:
            walked += [(r.run, r.task_id, r.trial) for r in p.rows]
            p = page(db, f, after_seq=p.rows[-1].seq, limit=1)
        assert walked == want, f


# ---- paging on a bigger list ------------------------------------------------------------------------


@pytest.fixture
def big(tmp_path: Path) -> Iterator[sqlite_utils.Database]:
    recs = [
        _trial("r", f"task{i // 5}", i % 5 + 1, i % 3 != 0, "alpha" if i % 2 else "beta")
        for i in range(53)
    ]
    f = write_jsonl(tmp_path / "big.jsonl", recs)
    database = open_store(tmp_path / "big.db")
    import_paths(database, [f])
    clear_cache()
    yield database
    database.close()


@pytest.mark.parametrize(
    "f",
    [
        TrialFilter(),
        TrialFilter(outcome="fail"),
        TrialFilter(search="refund"),
        TrialFilter(search="refund", outcome="pass"),
    ],
)
def test_keyset_pages_cover_every_row_once_in_order(
    big: sqlite_utils.Database, f: TrialFilter
) -> None:
    expected = count(big, f)
    seen: list[int] = []
    p = page(big, f, limit=7)
    while True:
        assert p.first_index == len(seen)
        seen += [r.seq for r in p.rows]
        if not p.has_next:
            break
        p = page(big, f, after_seq=p.rows[-1].seq, limit=7, known_before=p.end_index)
    assert len(seen) == expected == len(set(seen)) and seen == sorted(seen)
    # and back again with before_seq, counting the index when no hint is given
    back: list[int] = []
    p = page(big, f, before_seq=seen[-1] + 1, limit=7)
    while p.rows:
        assert p.first_index == len(seen) - len(back) - len(p.rows)
        back = [r.seq for r in p.rows] + back
        p = page(big, f, before_seq=p.rows[0].seq, limit=7)
    assert back == seen
    assert page(big, f, after_seq=seen[-1], limit=7).rows == []


def test_neighbour_and_position_at_the_ends(big: sqlite_utils.Database) -> None:
    f = TrialFilter(outcome="fail")
    rows = page(big, f).rows
    first, second, last = rows[0].id, rows[1].id, rows[-1].id
    seq = FilterSequence(f)
    assert seq.neighbour(big, first, 1) == second
    assert seq.neighbour(big, second, -1) == first
    assert seq.neighbour(big, first, -1) is None
    assert seq.neighbour(big, last, 1) is None
    assert seq.neighbour(big, first, len(rows) - 1) == last
    assert seq.neighbour(big, first, len(rows)) is None
    assert seq.neighbour(big, "no-such-trial", 1) is None
    assert seq.position(big, first) == (1, len(rows))
    assert seq.position(big, last) == (len(rows), len(rows))
    assert position(big, f, rows[5].id) == (6, len(rows))
    passing = page(big, TrialFilter(outcome="pass")).rows[0].id
    assert seq.position(big, passing) is None  # not in this list
    assert (
        neighbour(big, f, passing, 1) is not None
    )  # but its place in seq order still has neighbours


def test_counts_follow_new_data(big: sqlite_utils.Database) -> None:
    f = TrialFilter(label="pass")
    assert count(big, f) == 0
    target = page(big, TrialFilter()).rows[3].id
    _label(big, target, "ana", "pass", 1)
    assert count(big, f) == 1
    assert count(big, TrialFilter(label="none")) == 52
