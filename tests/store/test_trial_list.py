"""The trials list in the store: every filter, FTS search text, keyset pages, neighbours, positions."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reviewer.cli import cli
from reviewer.metrics.passk import pass_hat_k, shared_k
from reviewer.store import open_store, trial_list
from reviewer.store.search_query import match_query, search_words, snippet
from reviewer.store.trial_list import (
    FilterSequence,
    SearchError,
    TrialFilter,
    clear_cache,
    count,
    neighbour,
    page,
    position,
)
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, sample_copy, write_jsonl

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


def test_words_at_the_index_limit_are_imported_and_searched(tmp_path: Path) -> None:
    """A word of 2,046 bytes, the longest a PostgreSQL tsvector holds, is indexed and found; one
    of 2,047 is left out of PostgreSQL's index (it failed the whole import there) and the words
    around it are still found, on either store."""
    longest, too_long = "k" * 2046, "q" * 2047
    rec = _trial("a", "long", 1, True, f"before {longest} after {too_long} end")
    database = open_store(tmp_path / "t.db")
    try:
        summary = import_paths(database, [write_jsonl(tmp_path / "runs.jsonl", [rec])])
        assert summary.added == 1, summary
        for text in ("before", longest, "after", "end"):
            assert ids(database, TrialFilter(search=text)) == [("a", "long", 1)], text[:10]
    finally:
        database.close()


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("refund AND", "AND needs a word after it"),
        ("NOT refund", "NOT needs a word before it"),
        ("refund OR NOT card", "OR needs a word after it"),
        ("(refund OR card", "search"),
        (":", "search"),
    ],
)
def test_invalid_search_is_a_clear_error(db: sqlite_utils.Database, text: str, why: str) -> None:
    """The same message on both backends, about the search as typed: FTS5's own named a
    parenthesis the user never typed ('near ")"', found by a review)."""
    with pytest.raises(SearchError, match=why) as raised:
        page(db, TrialFilter(search=text))
    assert 'near ")"' not in str(raised.value)
    with pytest.raises(SearchError, match=why):
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


# Folded in from tests/test_trial_list_counts.py:
# Counts of the trials list on run, task and outcome are summed from the per-task counts the importer
# keeps (O(tasks)); they must equal counting the trials themselves, for every such filter.


def _outcome(i: int) -> dict[str, Any] | None:
    return [
        {"passed": True},
        {"passed": False},
        {"passed": False, "infra_error": True},
        None,
        {"passed": False},
    ][i % 5]


def test_counts_by_run_task_and_outcome_equal_counting_the_trials(tmp_path: Path) -> None:
    for part in range(2):  # two files, so the per-task counts are added to, not only created
        records = []
        for i in range(60):
            rec = native_trial(f"task{i % 7}", trial=part * 100 + i // 7 + 1)
            rec["run"] = f"run{i % 3}"
            rec["outcome"] = _outcome(i * 3 + part)
            records.append(rec)
        write_jsonl(tmp_path / f"part{part}.jsonl", records)
        with open_store(tmp_path / "x.db") as db:
            import_paths(db, [str(tmp_path / f"part{part}.jsonl")])
    with open_store(tmp_path / "x.db") as db:
        everything = page(db, TrialFilter(), limit=10_000).rows
        assert len(everything) == 120
        outcomes = {r.outcome for r in everything}
        assert outcomes == {"pass", "fail", "infra", "unscored"}
        runs = [None, "run0", "run1", "run2", "nope"]
        tasks = [None, "task0", "task6", "nope"]
        kinds = [None, "pass", "fail", "infra", "unscored"]
        for run, task, outcome in itertools.product(runs, tasks, kinds):
            f = TrialFilter(run=run, task_id=task, outcome=outcome)  # type: ignore[arg-type]
            expected = sum(
                1
                for r in everything
                if (run is None or r.run == run)
                and (task is None or r.task_id == task)
                and (outcome is None or r.outcome == outcome)
            )
            clear_cache()
            assert count(db, f, cached=False) == expected, f
            assert count(db, f) == expected, f
            assert page(db, f, limit=10_000).total == expected, f


# Folded in from tests/test_issue17_library.py:
# The library side of issue 17's app items: the shared default k, the conversation-only search (and
# migration m011 that indexes the system prompt apart), report columns that never run together, and
# `reviewer export --harness-fails` with the reasons trials were skipped.


def test_shared_k_is_one_k_every_run_has_that_still_separates_tasks() -> None:
    # runs of 8 and 6 trials a task: k is at most 6
    run_a = [(8, 8), (8, 7), (8, 6), (8, 4), (8, 5)]
    run_b = [(6, 5), (6, 5), (6, 5), (6, 3), (6, 4), (6, 6)]
    k = shared_k([run_a, run_b])
    assert k <= 6
    passing = [c for _, c in run_a + run_b if c > 0]
    # at least half of the tasks that ever pass keep pass^k above 0 ...
    assert sum(1 for c in passing if c >= k) * 2 >= len(passing)
    # ... and one more would not
    assert k == 6 or sum(1 for c in passing if c >= k + 1) * 2 < len(passing)
    assert k == 5
    assert any(pass_hat_k(n, c, k) for n, c in run_a) and any(pass_hat_k(n, c, k) for n, c in run_b)


def test_shared_k_edges() -> None:
    assert shared_k([]) == 1
    assert shared_k([[(1, 1), (1, 0)]]) == 1  # one trial per task
    assert shared_k([[(4, 0), (4, 0)]]) == 4  # nothing passes: the smallest n
    assert shared_k([[(0, 0), (5, 5)]]) == 5  # a task with no scored trial does not count
    assert shared_k([[(8, 1), (8, 1), (8, 8)]]) == 1  # most passing tasks pass once


def test_report_uses_the_shared_k(tmp_path: Path) -> None:
    db = str(sample_copy(tmp_path / "r.db"))
    out = (
        CliRunner()
        .invoke(cli, ["--db", db, "report", "--run", "support-v1", "--run", "support-v2"])
        .output
    )
    header = out.split("\n")[1]
    assert "pass^5" in header  # the app's default k for these two runs, beside each run's pass^n
    data = json.loads(
        CliRunner().invoke(cli, ["--db", db, "report", "--run", "support-v1", "--json"]).output
    )
    assert "6" in data["runs"][0]["average"]["pass_hat_k"]  # one run alone: its own shared k


def test_match_query_searches_the_conversation_unless_asked() -> None:
    assert match_query("refund") == 'text : ("refund")'
    assert match_query("refund", system=True) == '"refund"'
    assert search_words('refund* "a Phrase" OR x') == ["refund", "a phrase", "x"]


def test_snippet_marks_the_words() -> None:
    text, spans = snippet("one two three\nfour Refund five", ["refund"], 20)
    assert "\n" not in text and [text[a:b] for a, b in spans] == ["Refund"]
    assert snippet("nothing here", ["refund"]) == ("", [])


@pytest.mark.parametrize(
    ("text", "words", "marked"),
    [
        # search folds case and diacritics (the index's rule), and so does the snippet it shows
        ('set_city {"city": "Zürich"}', ["zurich"], ["Zürich"]),
        ('set_city {"city": "Zürich"}', ["ZÜRICH".lower()], ["Zürich"]),
        ("İstanbul office", ["istanbul"], ["İstanbul"]),  # lower-cased, İ is two characters
        ("a cafe\u0301 and a CAFÉ", ["cafe"], ["cafe\u0301", "CAFÉ"]),  # a combining mark
        ("東京で会いましょう", ["東京"], ["東京"]),
        ("Η ΟΔΟΣ είναι", ["οδος"], ["ΟΔΟΣ"]),  # a final sigma, capital or not, is a sigma
        ("안녕하세요 주문 끝", ["끝"], ["끝"]),  # a Hangul syllable stays one character
    ],
)
def test_snippet_finds_what_search_finds_whatever_the_case_and_accents(
    text: str, words: list[str], marked: list[str]
) -> None:
    shown, spans = snippet(text, words, 80)
    assert [shown[a:b] for a, b in spans] == marked


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="aAéÉİıΣσςΟοδ안녕끝 \u0301\u0308\u094dनम.", min_size=1, max_size=40),
    st.integers(0, 39),
    st.integers(1, 6),
)
@example("A" * 13 + "\u0301" * 4 + ".", 13, 1)  # a match past the context kept before it
def test_every_word_a_snippet_marks_is_the_word_searched(text: str, at: int, size: int) -> None:
    """Whatever folds to more or fewer characters (combining marks, İ, Hangul), a marked span of
    the text shown folds to the word searched, and the text shown is the text's own."""
    from reviewer.store.search_query import _folded

    folded = _folded(text)[0]
    word = folded[at : at + size].strip()
    if not word or word not in folded or not re.fullmatch(r"[^\W_]+", word):
        return  # a search's words are letters and digits (search_words keeps no other term)
    shown, spans = snippet(text, [word], 10_000)
    # the text's own, from a little before the first match ("…" says it starts later)
    assert spans and " ".join(text.split("\n")).endswith(shown.removeprefix("…"))
    for a, b in spans:
        assert _folded(shown[a:b])[0] == word, (text, word, shown[a:b])


def system_trials(tmp_path: Path) -> Path:
    recs = []
    for i in range(3):
        rec = native_trial(f"t{i}", passed=True)
        rec["messages"] = [
            {"role": "system", "content": "We never give a discount."},
            {"role": "user", "content": "hello" + (" discount please" if i == 0 else "")},
            {"role": "assistant", "content": "ok"},
        ]
        recs.append(rec)
    return write_jsonl(tmp_path / "s.jsonl", recs)


def test_search_leaves_the_system_prompt_out_by_default(tmp_path: Path) -> None:
    db_path = tmp_path / "s.db"
    CliRunner().invoke(cli, ["--db", str(db_path), "import", str(system_trials(tmp_path))])
    db = open_store(db_path)
    assert count(db, TrialFilter(search="discount")) == 1
    assert count(db, TrialFilter(search="discount", search_system=True)) == 3
    assert count(db, TrialFilter(search="never")) == 0
    db.close()


# SQLite's own upgrade: an FTS5 table of one column indexed again by m013; PostgreSQL's schema is
# made whole (schema_postgres.sql), with no older index to upgrade
@pytest.mark.sqlite_only
def test_m011_indexes_old_databases_again(tmp_path: Path) -> None:
    """A database indexed before m011 (one column, system prompt included) is indexed again."""
    db_path = tmp_path / "old.db"
    CliRunner().invoke(cli, ["--db", str(db_path), "import", str(system_trials(tmp_path))])
    db = open_store(db_path)
    db.execute("DROP TABLE trials_fts")
    db.execute("CREATE VIRTUAL TABLE trials_fts USING fts5(text, content='', tokenize='unicode61')")
    db.execute("INSERT INTO trials_fts (rowid, text) SELECT seq, 'stale' FROM trials")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm013_fts_system'")
    db.conn.commit()
    db.close()
    db = open_store(db_path)
    assert count(db, TrialFilter(search="stale", search_system=True)) == 0
    assert count(db, TrialFilter(search="discount")) == 1
    assert count(db, TrialFilter(search="discount", search_system=True)) == 3
    db.close()


def test_report_columns_never_run_together(tmp_path: Path) -> None:
    """Regression: a 76,778 s latency ran into its neighbour columns in `reviewer report`."""
    recs = [native_trial("slow", passed=True, trial=1, latency_s=76778.0, cost_usd=1234.5)]
    recs.append(native_trial("slow", passed=False, trial=2, latency_s=76778.0, cost_usd=1234.5))
    path = write_jsonl(tmp_path / "slow.jsonl", recs)
    db = str(tmp_path / "r.db")
    CliRunner().invoke(cli, ["--db", db, "import", "--run", "slow", str(path)])
    out = CliRunner().invoke(cli, ["--db", db, "report", "--run", "slow"]).output
    lines = out.split("\n")
    head = next(i for i, line in enumerate(lines) if line.startswith("task") and "lat p50" in line)
    row = lines[head + 1]
    assert "76778.0s" in row
    cells = row.split()
    assert "76778.0s" in cells and cells.count("76778.0s") == 3  # p50, p95, max: apart
    assert len(cells) == 10  # the task and nine columns, none run into another


def test_export_harness_fails_from_the_cli(tmp_path: Path) -> None:
    recs = [native_trial(f"t{i}", passed=i < 2, trial=1) for i in range(5)]
    path = write_jsonl(tmp_path / "h.jsonl", recs)
    db = str(tmp_path / "h.db")
    CliRunner().invoke(cli, ["--db", db, "import", "--run", "h", str(path)])
    nothing = CliRunner().invoke(cli, ["--db", db, "export", "--out", str(tmp_path / "a")])
    assert nothing.exit_code != 0 and "--harness-fails" in nothing.output + nothing.stderr
    out = tmp_path / "b"
    result = CliRunner().invoke(
        cli, ["--db", db, "export", "--harness-fails", "--out", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["written"] == 3 and data["sources"] == {"harness": 3}
    # a listed trial that is not exported says why
    ids = [r[0] for r in open_store(tmp_path / "h.db").execute("SELECT id FROM trials").fetchall()]
    result = CliRunner().invoke(
        cli,
        ["--db", db, "export", "--harness-fails", "--out", str(tmp_path / "c"), "--json"]
        + [x for tid in ids for x in ("--trial", tid)],
    )
    assert json.loads(result.stdout)["skipped"] == "skipped 2 trials: 2 passed"


def test_a_snippet_finds_a_term_s_words_apart_as_search_does() -> None:
    """Search splits `cancel_order` into two words and finds "cancel order"; the snippet looked
    for the term as written and showed nothing beside every trial found (`reviewer trials
    --search cancel_order`: an empty match column)."""
    shown, spans = snippet("[URGENT] cancel order W8888!!", search_words("cancel_order"), 80)
    assert shown == "[URGENT] cancel order W8888!!" and spans == [(9, 21)]
    shown, spans = snippet("say a\nphrase here", search_words('"a phrase"'), 80)
    assert shown == "say a phrase here" and spans == [(4, 12)]
    assert snippet("call cancel_order now", search_words("cancel_order"), 80)[1] == [(5, 17)]
    assert snippet("cancellation", search_words("cancel order"), 80)[1] == [(0, 6)]
