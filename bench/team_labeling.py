"""Several labelers on one shared queue while CI imports and the production monitor write the same
database: how long a label (and the next lease) waits, against the same labelers alone.

Five labeler processes take and label trials of one shared queue (`queue_status(claim=True)` then
`give_label`, as the label screen does, with a short pause for reading); in the busy round two
`reviewer import`s of 2,000 trials each and a `reviewer monitor --follow` of two days of production
conversations run at the same time. Prints, per round, the labels given and the time each label and
lease took (median, 95th percentile, max), then the busy round's figures as ratios to the quiet
round's, and checks that every trial got exactly N labels from different labelers and that every
imported trial was stored.

Run: ``python bench/team_labeling.py [--size 200] [--per-trial 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LABELERS = ("ann", "bob", "cy", "dan", "eve")
LABELER = """
import json, os, sys, time
from reviewer.store import open_store
from reviewer.workflows.labels import give_label
from reviewer.workflows.queues import queue_status

db_path, queue, who, go = sys.argv[1:5]
db = open_store(db_path)
open(go + "." + who, "w").close()
while not os.path.exists(go):
    time.sleep(0.005)
waits = []
while True:
    t = time.monotonic()
    item = queue_status(db, queue, who, outlook=False, claim=True).next_item
    if item is None:
        break
    give_label(db, item.trial_id, who, ("pass", "fail")[len(waits) % 2], queue=queue)
    waits.append(time.monotonic() - t)
    time.sleep(0.05)  # reading the next transcript
print(json.dumps(waits))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _cli(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "reviewer", "--db", str(db), *args]


def one_round(base: Path, work: Path, size: int, per_trial: int, busy: bool) -> dict[str, object]:
    db = work / ("busy.db" if busy else "quiet.db")
    shutil.copy(base, db)
    subprocess.run(
        _cli(
            db,
            "--labeler",
            "lead",
            "sample",
            "--shared",
            "--labels-per-trial",
            str(per_trial),
            "--size",
            str(size),
            "--name",
            "team",
        ),
        check=True,
        capture_output=True,
        env=_env(),
    )
    go = work / f"go-{'busy' if busy else 'quiet'}"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", LABELER, str(db), "team", w, str(go)],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in LABELERS
    ]
    while not all(Path(f"{go}.{w}").exists() for w in LABELERS):
        time.sleep(0.01)
    writers: list[subprocess.Popen[str]] = []
    monitor = None
    if busy:
        writers = [
            subprocess.Popen(
                _cli(db, "import", str(work / f"ci-{x}.jsonl")),
                env=_env(),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            for x in "ab"
        ]
        monitor = subprocess.Popen(
            _cli(db, "monitor", "--no-judge", "--follow", str(work / "prod"), "--interval", "0.2"),
            env=_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    go.write_text("go")
    waits: list[float] = []
    for p in procs:
        out, err = p.communicate(timeout=900)
        if p.returncode:
            sys.exit(f"a labeler failed: {err.strip()[-500:]}")
        waits += json.loads(out)
    for w in writers:
        _, err = w.communicate(timeout=900)
        if w.returncode:
            sys.exit(f"an import failed: {err.strip()[-500:]}")
    from reviewer.store import open_store
    from reviewer.store.labels import current_labels
    from reviewer.store.queues import queue_items

    with open_store(db) as store:
        if monitor is not None:
            want = sum(len(p.read_text().splitlines()) for p in (work / "prod").iterdir())
            deadline = time.monotonic() + 300
            while (
                store.execute("SELECT COUNT(*) FROM trials WHERE run = 'production'").fetchone()[0]
                < want
                and time.monotonic() < deadline
            ):
                time.sleep(0.2)
            monitor.terminate()
            monitor.wait(timeout=30)
        per = Counter(t for (t, _) in current_labels(store))
        ids = [it.trial_id for it in queue_items(store, "team")]
        exact = all(per[t] == per_trial for t in ids)
        runs = dict(store.execute("SELECT run, COUNT(*) FROM trials GROUP BY run").fetchall())
    return {"waits": waits, "exact": exact, "runs": runs, "trials": len(ids)}


def _row(name: str, waits: list[float]) -> str:
    q = statistics.quantiles(waits, n=20)
    return (
        f"  {name:<6} {len(waits):>5} labels   median {statistics.median(waits) * 1000:7.1f} ms"
        f"   p95 {q[18] * 1000:7.1f} ms   max {max(waits) * 1000:8.1f} ms"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=200, help="trials in the shared queue")
    ap.add_argument("--per-trial", type=int, default=2, help="labels per trial")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        base = work / "base.db"
        subprocess.run(
            _cli(base, "import", str(REPO / "sample_runs")),
            check=True,
            capture_output=True,
            env=_env(),
        )
        lines = (REPO / "sample_runs" / "support-v1.jsonl").read_text().splitlines()
        for x in "ab":  # 2,000 trials each, distinct runs
            with (work / f"ci-{x}.jsonl").open("w") as f:
                for i in range(2000):
                    rec = json.loads(lines[i % len(lines)])
                    rec.update(run=f"ci-{x}", trial=i + 1)
                    f.write(json.dumps(rec) + "\n")
        prod = work / "prod"
        prod.mkdir()
        subprocess.run(
            [sys.executable, str(REPO / "sample_runs" / "generate.py"), "--production", str(prod)],
            check=True,
            capture_output=True,
            env=_env(),
        )
        for extra in sorted(prod.iterdir())[2:]:
            extra.unlink()
        print(
            f"{len(LABELERS)} labelers, a shared queue of {args.size} trials, "
            f"{args.per_trial} labels per trial"
        )
        quiet = one_round(base, work, args.size, args.per_trial, busy=False)
        busy = one_round(base, work, args.size, args.per_trial, busy=True)
        print(_row("alone", quiet["waits"]))  # type: ignore[arg-type]
        print(_row("busy", busy["waits"]))  # type: ignore[arg-type]
        qw, bw = quiet["waits"], busy["waits"]
        assert isinstance(qw, list) and isinstance(bw, list)
        print(
            f"busy / alone: median {statistics.median(bw) / statistics.median(qw):.2f}x, "
            f"max {max(bw) / max(qw):.2f}x (busy: 2 imports of 2,000 trials and monitor --follow)"
        )
        runs = busy["runs"]
        assert isinstance(runs, dict)
        stored = runs.get("ci-a") == runs.get("ci-b") == 2000
        print(
            f"every trial exactly {args.per_trial} labels: alone {quiet['exact']}, busy "
            f"{busy['exact']}; every imported trial stored: {stored}"
        )


if __name__ == "__main__":
    main()
