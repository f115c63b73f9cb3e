"""A shared queue: several labelers label one queue at once, each trial leased to one of them at a
time, so no trial is labeled twice (or by exactly N labelers when the queue asks for N); leases
expire, are renewed and released; each labeler's progress and, with N >= 2, how they agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from reviewer.store import open_store
from reviewer.store.labels import add_label, current_labels
from reviewer.store.queues import (
    PlaceTaken,
    claim_next,
    live_leases,
    peek_next,
    queue_items,
    release_leases,
)
from reviewer.workflows.labels import give_label
from reviewer.workflows.queues import make_queue, queue_status, team_progress
from tests.conftest import REPO, run_cli


def _shared(db_path: Path, n: int = 8, per_trial: int = 1, name: str = "team") -> list[str]:
    with open_store(db_path) as db:
        made = make_queue(db, "lead", n=n, name=name, per_trial=per_trial)
        assert made.created and made.queue.params["shared"]
        return [it.trial_id for it in queue_items(db, name)]


def test_two_labelers_get_different_trials_and_keep_theirs(sample_db: Path) -> None:
    ids = _shared(sample_db)
    with open_store(sample_db) as db:
        a = claim_next(db, "team", "ann", 1)
        b = claim_next(db, "team", "bob", 1)
        assert a is not None and b is not None
        assert (a.trial_id, b.trial_id) == (ids[0], ids[1])
        again = claim_next(db, "team", "ann", 1)  # opened again: the same trial, renewed
        assert again is not None and again.trial_id == ids[0]
        assert peek_next(db, "team", "cy", 1).trial_id == ids[2]  # type: ignore[union-attr]
        assert [k.labeler for k in live_leases(db, "team")] == ["ann", "bob"]
        add_label(db, ids[0], "ann", "pass", queue="team")
        nxt = claim_next(db, "team", "ann", 1)  # labeled: the next open one, not bob's
        assert nxt is not None and nxt.trial_id == ids[2]
        # a labeled trial's lease is no one's any more
        assert [(k.labeler, k.trial_id) for k in live_leases(db, "team")] == [
            ("bob", ids[1]),
            ("ann", ids[2]),
        ]
        assert release_leases(db, "team", "bob") == 1
        cy = claim_next(db, "team", "cy", 1)  # bob gave his back: it is cy's at once
        assert cy is not None and cy.trial_id == ids[1]


def test_an_expired_lease_is_anybodys_and_per_trial_counts_labelers(sample_db: Path) -> None:
    ids = _shared(sample_db, per_trial=2)
    with open_store(sample_db) as db:
        now = time.time()
        first = [claim_next(db, "team", w, 2, now=now) for w in ("ann", "bob", "cy")]
        # two labelers per trial: ann and bob share the first, cy gets the second
        assert [i.trial_id for i in first if i] == [ids[0], ids[0], ids[1]]
        later = now + 3600  # ann walked away: her lease expired, dan takes her place
        dan = claim_next(db, "team", "dan", 2, now=later, lease_s=60)
        assert dan is not None and dan.trial_id == ids[0]
        for who, verdict in (("bob", "pass"), ("dan", "fail")):
            add_label(db, ids[0], who, verdict, queue="team")
        ann = claim_next(db, "team", "ann", 2, now=later)
        assert ann is not None and ann.trial_id == ids[1]  # the first has its two labels


def test_a_label_without_a_place_is_refused_and_a_skip_fills_none(sample_db: Path) -> None:
    ids = _shared(sample_db)
    with open_store(sample_db) as db:
        assert claim_next(db, "team", "ann", 1).trial_id == ids[0]  # type: ignore[union-attr]
        with pytest.raises(PlaceTaken, match=r"held \(ann\)"):  # bob never took it
            give_label(db, ids[0], "bob", "fail", queue="team")
        give_label(db, ids[0], "ann", "pass", queue="team")  # hers: stored, lease given back
        assert live_leases(db, "team") == []
        with pytest.raises(PlaceTaken, match=r"has its 1 label"):
            give_label(db, ids[0], "cy", "fail", queue="team")
        give_label(db, ids[0], "ann", "fail", queue="team")  # changing her own label is fine
        with pytest.raises(ValueError, match="is not in queue 'team'"):
            other = db.execute(
                "SELECT id FROM trials WHERE id NOT IN (SELECT trial_id FROM queue_items) LIMIT 1"
            ).fetchone()[0]
            give_label(db, other, "ann", "pass", queue="team")
        # a skip leaves the trial to someone else
        assert claim_next(db, "team", "ann", 1).trial_id == ids[1]  # type: ignore[union-attr]
        give_label(db, ids[1], "ann", "skip", queue="team")
        assert claim_next(db, "team", "bob", 1).trial_id == ids[1]  # type: ignore[union-attr]
        assert claim_next(db, "team", "ann", 1).trial_id == ids[2]  # type: ignore[union-attr]
        status = queue_status(db, "team", "ann", outlook=False)
        assert status.done == 1  # ids[0] alone has its pass or fail label


def test_no_way_round_the_labels_per_trial(sample_db: Path) -> None:
    """A trial of a queue asking for 2 labels got 4 (found by a review): a labeler's skip, then a
    verdict once the places were full, was let in as "already theirs"; a label given without the
    queue, or in another queue, was not checked at all. Each is refused now, in one line; changing
    one's own verdict and skipping stay free."""
    ids = _shared(sample_db, per_trial=2)
    t = ids[0]
    with open_store(sample_db) as db:
        make_queue(db, "sam", n=4, name="sams-own")  # a queue of sam's own, not shared
        assert claim_next(db, "team", "sam", 2).trial_id == t  # type: ignore[union-attr]
        give_label(db, t, "sam", "skip", queue="team")  # a skip fills no place
        for who in ("ann", "bob"):
            assert claim_next(db, "team", who, 2).trial_id == t  # type: ignore[union-attr]
            give_label(db, t, who, "pass", queue="team")
        with pytest.raises(PlaceTaken, match=r"has its 2 labels or is held \(ann, bob\)"):
            give_label(db, t, "sam", "fail", queue="team")  # a skip is no place
        with pytest.raises(PlaceTaken, match="shared queue 'team'"):
            give_label(db, t, "dan", "fail")  # no queue named: the shared queue's cap holds
        if t in {it.trial_id for it in queue_items(db, "sams-own")}:
            with pytest.raises(PlaceTaken):
                give_label(db, t, "sam", "fail", queue="sams-own")
        give_label(db, t, "dan", "skip")  # a skip takes no place: free anywhere
        give_label(db, t, "ann", "fail", queue="team")  # her own place: she may change her mind
        give_label(db, t, "bob", "fail")  # his, given outside the queue: the same place
        verdicts = sorted(
            (who, lab.verdict)
            for (trial, who), lab in current_labels(db).items()
            if trial == t and lab.verdict in ("pass", "fail")
        )
        assert verdicts == [("ann", "fail"), ("bob", "fail")]


def test_a_queue_of_two_labels_each_finishes_beside_one_of_one_on_the_same_trials(
    sample_db: Path,
) -> None:
    """Queue A asks for 2 labels a trial, B for 1, on the same trials: once carl labeled a trial in
    B, A handed it to dave, and his label was refused by B's cap, every time: A could never finish
    (found by a review). A label is held to the places of the queue it is given in; given outside
    any shared queue, to the most any of them asks for."""
    with open_store(sample_db) as db:
        make_queue(db, "lead", n=3, name="A", per_trial=2)
        make_queue(db, "lead", n=3, name="B", per_trial=1)
        b = claim_next(db, "B", "carl", 1)
        assert b is not None
        give_label(db, b.trial_id, "carl", "pass", queue="B")
        handed = [claim_next(db, "A", "dave", 2) for _ in range(1)][0]
        assert handed is not None and handed.trial_id == b.trial_id
        give_label(db, b.trial_id, "dave", "fail", queue="A")  # A's second place: his
        with pytest.raises(PlaceTaken, match="shared queue 'A'"):
            give_label(db, b.trial_id, "eve", "pass")  # outside: the most places, both filled
        assert queue_status(db, "A", "dave", outlook=False).done >= 1


def test_two_shared_queues_on_the_same_trials_respect_each_others_leases(
    sample_db: Path,
) -> None:
    with open_store(sample_db) as db:
        make_queue(db, "lead", n=4, name="small", per_trial=1)
        make_queue(db, "lead", n=8, name="big", per_trial=1)
        small = [it.trial_id for it in queue_items(db, "small")]
        big = [it.trial_id for it in queue_items(db, "big")]
        assert set(small) <= set(big)  # same data and seed: the small one inside the big one
        held = claim_next(db, "small", "ann", 1)
        assert held is not None
        taken = [claim_next(db, "big", f"b{i}", 1) for i in range(7)]
        assert held.trial_id not in {t.trial_id for t in taken if t is not None}
        with pytest.raises(PlaceTaken):
            give_label(db, held.trial_id, "b0", "fail", queue="big")


def test_progress_and_agreement_between_labelers(sample_db: Path) -> None:
    ids = _shared(sample_db, per_trial=2)
    labels = {
        ids[0]: {"ann": "pass", "bob": "pass"},
        ids[1]: {"ann": "pass", "cy": "fail"},
        ids[2]: {"bob": "fail", "cy": "fail"},
        ids[3]: {"ann": "fail", "cy": "fail"},
        ids[4]: {"bob": "pass"},
    }
    with open_store(sample_db) as db:
        for trial_id, by in labels.items():
            for who, verdict in by.items():
                add_label(db, trial_id, who, verdict, queue="team")
        status = queue_status(db, "team", "ann", outlook=False)
        team = status.team
    assert team is not None and team.shared and status.shared
    assert (status.done, status.total) == (4, 8)  # trials with both their labels
    assert team.by_labeler == {"ann": 3, "bob": 3, "cy": 3}
    assert [it.trial_id for it in team.disagreements] == [ids[1]]
    assert team.disagreements[0].agreement == 0.5 and team.disagreements[0].majority is None
    # coincidences: pass-pass 2, pass-fail 1 + 1, fail-fail 4; n_pass 3, n_fail 5, n 8:
    # alpha = 1 - D_o / D_e = 1 - 2 / (2 * 3 * 5 / 7) = 1 - 14 / 30
    assert team.alpha == pytest.approx(1 - 14 / 30)
    payload = team.to_dict()["agreement"]
    assert payload["items"] == 4 and payload["unanimous"] == 3


def test_every_queue_counts_each_labeler(sample_db: Path) -> None:
    with open_store(sample_db) as db:
        queue = make_queue(db, "ann", n=5, name="solo").queue
        for it in queue.items[:2]:
            add_label(db, it.trial_id, "ann", "pass", queue="solo")
        add_label(db, queue.items[0].trial_id, "bob", "fail")  # given outside the queue
        team = team_progress(db, queue)
    assert team.by_labeler == {"ann": 2, "bob": 1} and not team.shared


def test_cli_shared_queue_next_release_and_errors(sample_db: Path) -> None:
    db = str(sample_db)
    code, out, err = run_cli(
        "--db", db, "sample", "--size", "6", "--shared", "--labels-per-trial", "2", "--json"
    )
    assert code == 0, err
    made = json.loads(out)
    assert made["shared"] and made["labels_per_trial"] == 2
    name = made["name"]
    assert name.endswith("-shared-s0")
    took = {}
    for who in ("ann", "bob", "cy"):
        code, out, err = run_cli("--db", db, "--labeler", who, "queues", name, "--next", "--json")
        assert code == 0, err
        took[who] = json.loads(out)["next_trial"]
    assert took["ann"] == took["bob"] != took["cy"]
    code, out, _ = run_cli("--db", db, "queues", name, "--json")
    team = json.loads(out)["queues"][0]["team"]
    assert sorted(k["labeler"] for k in team["leases"]) == ["ann", "bob", "cy"]
    # a lease's end as a time in UTC too (as created_at is), and the seconds it has left
    from datetime import datetime

    for k in team["leases"]:
        at = datetime.fromisoformat(k["expires_at"])
        assert at.utcoffset() is not None and at.timestamp() == int(k["expires"])
        assert 19 * 60 < k["seconds_left"] <= 20 * 60
    code, out, err = run_cli("--db", db, "--labeler", "cy", "queues", name, "--release", "--json")
    assert code == 0 and json.loads(out)["released"] == 1, err
    code, out, err = run_cli("--db", db, "queues", name)
    assert code == 0 and "ann holds position 1" in out and "cy holds" not in out, err
    assert "0 / 6 trials have all 2 pass or fail labels" in out and "20 min left" in out
    # usage errors are one line, exit 2
    for args, said in (
        (["sample", "--labels-per-trial", "2"], "--labels-per-trial needs --shared"),
        (["sample", "--shared", "--active"], "--shared does not go with --active"),
        (["queues", "--next"], "need a queue NAME"),
        (["queues", "nope"], "no queue named 'nope'"),
    ):
        code, _, err = run_cli("--db", db, *args)
        assert code == 2 and said in err and "Traceback" not in err, (args, err)
    run_cli("--db", db, "sample", "--size", "3", "--name", "mine")
    code, _, err = run_cli("--db", db, "queues", "mine", "--next")
    assert code == 2 and "is not shared" in err
    # a labeler's name is trimmed ("ann " is ann); one that cannot be a name is a usage error
    code, out, err = run_cli("--db", db, "--labeler", " ann ", "queues", name, "--next", "--json")
    assert code == 0 and json.loads(out)["next_trial"] == took["ann"], err
    for bad in ("", "   ", "a\x1b]0;t\x07b", "x" * 61, "a\ud800b", "nul\x00"):
        code, _, err = run_cli("--db", db, "--labeler", bad, "queues", name, "--next")
        assert code == 2 and "a labeler is a name of 1 to 60" in err, (bad, err)
    # the hint labels as the labeler it was given to, in this database, quoted for the shell
    code, out, err = run_cli("--db", db, "--labeler", "d an", "queues", name, "--next")
    assert code == 0, err
    assert f"reviewer --db {db} --labeler 'd an' labels give " in out
    assert f"VERDICT --queue {name}" in out


def test_a_labeler_the_queue_has_nothing_more_for_is_told_the_rest_wait_for_others(
    sample_db: Path,
) -> None:
    """ann labeled every trial of a queue of two labels each: it is not done (its table said
    "0 / 3 ... done", --next only "nothing left"); the others' places wait for other labelers."""
    db = str(sample_db)
    ids = _shared(sample_db, n=3, per_trial=2)
    with open_store(sample_db) as store:
        for trial in ids:
            give_label(store, trial, "ann", "pass", queue="team")
    code, _, err = run_cli("--db", db, "--labeler", "ann", "queues", "team", "--next")
    assert code == 0 and err == (
        "nothing left in team for ann: the team has 0 / 3 trials fully labeled; ann labeled 3; "
        "the rest wait for other labelers (or are held by them)\n"
    )
    code, out, err = run_cli("--db", db, "--labeler", "ann", "queues")
    assert code == 0, err
    assert out.splitlines()[1].split()[:5] == ["team", "ann", "(team)", "0", "/"]
    assert out.splitlines()[1].split()[6] == "others"
    with open_store(sample_db) as store:
        for trial in ids:
            give_label(store, trial, "bob", "fail", queue="team")
    code, out, err = run_cli("--db", db, "--labeler", "ann", "queues")
    assert code == 0 and out.splitlines()[1].split()[6] == "done", err
    code, _, err = run_cli("--db", db, "--labeler", "ann", "queues", "team", "--next")
    assert (
        err
        == "nothing left in team for ann: the team has 3 / 3 trials fully labeled; ann labeled 3\n"
    )


LABELER = """
import sys, time
from reviewer.store import open_store
from reviewer.workflows.labels import give_label
from reviewer.workflows.queues import queue_status

db_path, queue, who, go = sys.argv[1:5]
db = open_store(db_path)
open(go + "." + who, "w").close()
while not __import__("os").path.exists(go):
    time.sleep(0.005)
longest, n = 0.0, 0
while True:
    t = time.monotonic()
    item = queue_status(db, queue, who, outlook=False, claim=True).next_item
    if item is None:
        break
    give_label(db, item.trial_id, who, ("pass", "fail")[n % 2], queue=queue)
    longest, n = max(longest, time.monotonic() - t), n + 1
    time.sleep(0.15)  # reading the next transcript: labeling lasts while the imports run
print(n, longest)
"""


@pytest.mark.parametrize("per_trial", [1, 2])
def test_five_labelers_two_imports_and_a_monitor_at_once(
    sample_db: Path, tmp_path: Path, per_trial: int
) -> None:
    """Five labeler processes on one shared queue while two CI imports and `monitor --follow`
    write the same file: every trial gets exactly ``per_trial`` labels from different labelers,
    every imported trial is stored, and no one waited long."""
    size = 40
    ids = _shared(sample_db, n=size, per_trial=per_trial)
    lines = (REPO / "sample_runs" / "support-v1.jsonl").read_text().splitlines()[:120]
    ci = []
    for run in ("ci-a", "ci-b"):
        path = tmp_path / f"{run}.jsonl"
        path.write_text("".join(json.dumps({**json.loads(x), "run": run}) + "\n" for x in lines))
        ci.append(path)
    prod = tmp_path / "prod"
    prod.mkdir()
    subprocess.run(
        [sys.executable, str(REPO / "sample_runs" / "generate.py"), "--production", str(prod)],
        check=True,
        capture_output=True,
    )
    keep = sorted(prod.iterdir())[:2]
    for extra in sorted(prod.iterdir())[2:]:
        extra.unlink()
    prod_lines = sum(len(p.read_text().splitlines()) for p in keep)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    go = tmp_path / "go"
    who = ["ann", "bob", "cy", "dan", "eve"]
    labelers = [
        subprocess.Popen(
            [sys.executable, "-c", LABELER, str(sample_db), "team", w, str(go)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in who
    ]
    cli = [sys.executable, "-m", "reviewer", "--db", str(sample_db)]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"go.{w}").exists() for w in who):
        assert all(p.poll() is None for p in labelers), [p.communicate() for p in labelers]
        assert time.monotonic() < deadline, "labelers never became ready"
        time.sleep(0.01)
    go.write_text("go")
    writers = [
        subprocess.Popen([*cli, "import", str(p)], env=env, stderr=subprocess.PIPE, text=True)
        for p in ci
    ]
    monitor = subprocess.Popen(
        [*cli, "monitor", "--no-judge", "--follow", str(prod), "--interval", "0.2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    done = [p.communicate(timeout=300) for p in labelers]
    for p, (_, err) in zip(labelers, done, strict=True):
        assert p.returncode == 0, err
    for p in writers:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with open_store(sample_db) as db:
        deadline = time.monotonic() + 120
        while (
            db.execute("SELECT COUNT(*) FROM trials WHERE run = 'production'").fetchone()[0]
            < prod_lines
        ):
            assert monitor.poll() is None, monitor.communicate()
            assert time.monotonic() < deadline, "monitor --follow never caught up"
            time.sleep(0.2)
        monitor.terminate()
        monitor.communicate(timeout=30)
        per_trial_labels = Counter(t for (t, _) in current_labels(db))
        per_run = dict(db.execute("SELECT run, COUNT(*) FROM trials GROUP BY run").fetchall())
    assert {t: per_trial_labels[t] for t in ids} == dict.fromkeys(ids, per_trial)
    assert per_run["ci-a"] == per_run["ci-b"] == len(lines)
    counts = [int(out.split()[0]) for out, _ in done]
    assert sum(counts) == size * per_trial
    longest = max(float(out.split()[1]) for out, _ in done)
    # a label and the next lease waited for the imports' write lock at most this long (each
    # import commits per file; the lock is never held for a whole run of files)
    assert longest < 30, longest


def test_a_new_shared_queue_leaves_out_trials_already_fully_labeled(sample_db: Path) -> None:
    with open_store(sample_db) as db:
        first = make_queue(db, "lead", n=6, name="one", per_trial=2).queue
        ids = [it.trial_id for it in first.items]
        for who in ("ann", "bob"):
            add_label(db, ids[0], who, "pass")
        add_label(db, ids[1], "ann", "fail")  # one label of two: still open
        add_label(db, ids[2], "cy", "skip")  # a skip is no verdict
        again = make_queue(db, "lead", n=6, name="two", per_trial=2).queue
        solo = make_queue(db, "lead", n=6, name="three").queue  # not shared: the old rule
    kept = {it.trial_id for it in again.items}
    assert ids[0] not in kept and {ids[1], ids[2]} <= kept
    assert again.params["already_labeled"] == 1
    assert ids[0] in {it.trial_id for it in solo.items}


def test_leases_go_by_the_server_s_clock_not_a_labeler_s(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a PostgreSQL server the labelers' machines share, a lease is taken and expired by the
    server's clock: bob's laptop running 25 minutes fast neither takes ann's trial as free (it
    did, and deleted her lease: her label was then refused) nor holds his own for 45 minutes
    (found by an attack on shared queues)."""
    from types import SimpleNamespace

    from reviewer.store import queues

    code, _, err = run_cli("--db", pg_url, "import", str(REPO / "sample_runs"))
    assert code == 0, err
    with open_store(pg_url) as db:
        make_queue(db, "lead", n=4, name="team", per_trial=1)
        ids = [it.trial_id for it in queue_items(db, "team")]
        ann = claim_next(db, "team", "ann", 1)
        assert ann is not None and ann.trial_id == ids[0]
        real = time.time
        monkeypatch.setattr(queues, "time", SimpleNamespace(time=lambda: real() + 25 * 60))
        bob = claim_next(db, "team", "bob", 1)  # on bob's machine
        assert bob is not None and bob.trial_id == ids[1]
        monkeypatch.undo()
        leases = {k.labeler: k for k in live_leases(db, "team")}
        assert set(leases) == {"ann", "bob"}
        assert all(19 * 60 < k.left <= 20 * 60 for k in leases.values())
        give_label(db, ids[0], "ann", "pass", queue="team")  # her place was kept
