"""Two OS processes labeling one database file at once: both succeed and no label is lost."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewer.store import open_store
from reviewer.store.labels import current_labels, history
from reviewer.store.queues import candidates
from tests.conftest import REPO
from tests.labeling.conftest import BuildDb

LABELS_EACH = 200

CHILD = """
import os, sys, time
from reviewer.store import open_store
from reviewer.store.labels import add_label, undo_last

db_path, labeler, go = sys.argv[1], sys.argv[2], sys.argv[3]
ids = sys.argv[4].split(",")
db = open_store(db_path)
open(go + "." + str(os.getpid()), "w").close()  # ready
deadline = time.monotonic() + 60
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("no go signal")
    time.sleep(0.001)
for i in range(int(sys.argv[5])):
    add_label(db, ids[i % len(ids)], labeler, ("pass", "fail", "skip")[i % 3], {"a": i % 2 == 0},
              f"label {i}", "p@1")
    if i % 50 == 49:
        # undo reads before it writes: the case a deferred transaction would fail with "locked"
        assert undo_last(db, labeler) is not None
db.close()
"""


@pytest.mark.parametrize("labelers", [("ana", "ben"), ("ana", "ana")], ids=["two", "same"])
def test_two_processes_label_at_once(
    build_db: BuildDb, tmp_path: Path, labelers: tuple[str, str]
) -> None:
    db = build_db([(f"task{i % 4}", "pass", None) for i in range(20)])
    ids = [c.trial_id for c in candidates(db)]
    db.close()
    go = tmp_path / "go"
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                str(tmp_path / "t.db"),
                who,
                str(go),
                ",".join(ids),
                str(LABELS_EACH),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for who in labelers
    ]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"go.{p.pid}").exists() for p in procs):  # both have the db open
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        assert time.monotonic() < deadline, "children never became ready"
        time.sleep(0.01)
    go.write_text("go")  # they start labeling together
    results = [p.communicate(timeout=120) for p in procs]
    for p, (_, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err
    check = open_store(tmp_path / "t.db")
    total = check.execute("SELECT COUNT(*) FROM labels WHERE retracted = 0").fetchone()[0]
    undos = check.execute("SELECT COUNT(*) FROM labels WHERE retracted = 1").fetchone()[0]
    per_process_undos = LABELS_EACH // 50
    assert total == 2 * LABELS_EACH
    assert undos == 2 * per_process_undos
    assert {k[0] for k in current_labels(check)} == set(ids)
    assert sum(len(history(check, t)) for t in ids) == total + undos
