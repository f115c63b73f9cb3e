"""The trials list sorted by cost, latency, steps or tool errors (issue 32, item 4): every page, the
page back, the transcript's next / previous and a trial's position follow the sort, ties and trials
without the value (no cost recorded) in a stable place, checked against Python's own sort."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reviewer.store import open_store
from reviewer.store.db import Store
from reviewer.store.trial_filter import SORT_COLUMNS
from reviewer.store.trial_list import TrialFilter, clear_cache, neighbour, page, position
from reviewer.workflows.imports import import_paths
from tests.conftest import native_trial, run_cli, write_jsonl

N = 57


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Store]:
    rng = random.Random(7)
    recs: list[dict[str, Any]] = []
    for i in range(N):
        rec = native_trial(f"t{i % 9}", passed=rng.random() < 0.4, run="a", trial=i // 9 + 1)
        # few distinct values: many ties; some trials without a cost or a latency
        if rng.random() < 0.8:
            rec["usage"] = {"cost_usd": rng.choice([0.01, 0.02, 0.02, 0.5, 1.25])}
        if rng.random() < 0.7:
            rec["latency_s"] = rng.choice([1.0, 3.5, 3.5, 12.0])
        for _ in range(rng.randrange(0, 4)):
            rec["messages"].append({"role": "tool", "name": "get_order", "content": "Error: 500"})
        recs.append(rec)
    store = open_store(tmp_path / "s.db")
    assert import_paths(store, [write_jsonl(tmp_path / "a.jsonl", recs)]).added == N
    clear_cache()
    yield store
    store.close()


def expected(db: Store, f: TrialFilter) -> list[str]:
    """The list's order by Python: by the column (the worst first unless ascending), missing values
    last, then in import order."""
    column = SORT_COLUMNS[str(f.sort)]
    where = "" if f.outcome is None else f" WHERE outcome = '{f.outcome}'"
    rows = db.execute(f"SELECT seq, id, {column} FROM trials{where}").fetchall()

    def key(r: Any) -> tuple[Any, ...]:
        value = r[2]
        if value is None:
            return (1, 0, r[0])
        return (0, value if f.ascending else -value, r[0])

    return [r[1] for r in sorted(rows, key=key)]


@pytest.mark.parametrize("sort", sorted(SORT_COLUMNS))
@pytest.mark.parametrize("ascending", [False, True])
@pytest.mark.parametrize("outcome", [None, "fail"])
def test_pages_neighbours_and_positions_follow_the_sort(
    db: Store, sort: Any, ascending: bool, outcome: Any
) -> None:
    f = TrialFilter(outcome=outcome, sort=sort, ascending=ascending)
    want = expected(db, f)
    assert len(want) > 10
    # forward, 7 at a time
    got: list[str] = []
    p = page(db, f, limit=7)
    assert p.total == len(want)
    while True:
        assert p.first_index == len(got)
        got += [r.id for r in p.rows]
        if not p.rows or len(got) >= p.total:
            break
        p = page(db, f, after_seq=p.rows[-1].seq, limit=7)
    assert got == want
    # back from the end, without the known counts: the positions are counted in the sort's order
    last = page(db, f, after_seq=None, limit=len(want)).rows[-1]
    back = page(db, f, before_seq=last.seq, limit=5)
    assert [r.id for r in back.rows] == want[-6:-1]
    assert back.first_index == len(want) - 6
    # the transcript's next / previous and "trial 12 of 40"
    for i in (0, 5, len(want) - 1):
        assert position(db, f, want[i]) == (i + 1, len(want))
        assert neighbour(db, f, want[i], 1) == (want[i + 1] if i + 1 < len(want) else None)
        assert neighbour(db, f, want[i], -1) == (want[i - 1] if i > 0 else None)
        assert neighbour(db, f, want[i], 3) == (want[i + 3] if i + 3 < len(want) else None)


def test_the_sort_is_not_a_filter(db: Store) -> None:
    assert TrialFilter(sort="cost").is_empty
    assert page(db, TrialFilter(sort="cost")).total == N
    rows = page(db, TrialFilter(sort="cost")).rows
    costs = [r.cost_usd for r in rows]
    known = [c for c in costs if c is not None]
    assert known == sorted(known, reverse=True) and costs[len(known) :] == [None] * (N - len(known))


def test_reviewer_trials_lists_the_same_order_as_text_and_json(db: Store, tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    f = TrialFilter(outcome="fail", sort="cost")
    want = expected(db, f)
    code, out, err = run_cli(
        "--db", path, "trials", "--outcome", "fail", "--sort", "cost", "--limit", "5", "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    assert [t["id"] for t in data["trials"]] == want[:5]
    assert data["total"] == len(want) and data["sort"] == "cost" and data["ascending"] is False
    assert data["filter"] == {"outcome": "fail"}
    code, out, err = run_cli("--db", path, "trials", "--sort", "latency", "--ascending")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["id", "run", "task", "#", "outcome"]
    latencies = [ln.split()[7] for ln in lines[1:]]
    shown = [float(x.rstrip("s")) for x in latencies if x != "-"]
    assert shown == sorted(shown) and latencies[-1] == "-"  # none recorded: last
    assert f"of {N} trials, sorted by latency, lowest first" in err
    code, out, _ = run_cli("--db", path, "trials", "--outcome", "fail", "--sort", "cost")
    assert [ln.split()[0] for ln in out.splitlines()[1:6]] == [i[:8] for i in want[:5]]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--ascending"], "--ascending goes with --sort"),
        (["--run", "nope"], "no run named 'nope'"),
        (["--search", 'refund AND ("'], "invalid search"),
    ],
)
def test_reviewer_trials_refuses_in_one_line(
    db: Store, tmp_path: Path, args: list[str], message: str
) -> None:
    code, out, err = run_cli("--db", str(tmp_path / "s.db"), "trials", *args)
    assert code == 1 and out == ""
    assert err.startswith("reviewer: ") and message in err and len(err.strip().splitlines()) == 1
