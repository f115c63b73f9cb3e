"""Time the trials list (``page`` / ``count``) on 100,000 trials against the same queries on 100 trials.

Both databases are generated with plain inserts into the store's schema (small records, an FTS row,
a verdict per trial, some labels, violations and a clustering). Each figure is the best of several
interleaved runs; the ratio big / small should stay near 1 for pages (keyset: independent of size)
and grows with size only for counts, which the list caches per filter.
Run: ``python bench/trial_list_speed.py [--trials N] [--small N] [--repeat N] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

from reviewer.store import open_store
from reviewer.store.trial_list import TrialFilter, clear_cache, count, page
from reviewer.store.writer import rebuild_task_stats

WORDS = (
    "order refund cancel shipped delivered exchange address payment card customer policy agent "
    "lookup item return label warehouse invoice discount coupon loyalty tracking carrier damaged"
).split()
NOW = "2025-01-01T00:00:00+00:00"


def build(path: Path, n: int, seed: int = 7) -> None:
    """``n`` trials over 10 runs, 10 trials per task; every 50th trial mentions 'zebrafish'."""
    rng = random.Random(seed)
    db = open_store(path)
    runs = [f"run-{i}" for i in range(10)]
    per_run = max(1, n // len(runs))
    trials, fts, verdicts, labels, violations, members = [], [], [], [], [], []
    for seq in range(1, n + 1):
        r = min((seq - 1) // per_run, len(runs) - 1)
        k = (seq - 1) % per_run
        task, trial_no = f"task_{k // 10:05d}", k % 10 + 1
        ok = rng.random() < 0.7
        tid = f"t{seq:08d}"
        steps = rng.randint(2, 30)
        reason = None if ok else f"expected refund of {rng.randint(5, 90)}.00"
        record = f'{{"task_id": "{task}", "messages": []}}'
        trials.append(
            (
                seq,
                tid,
                runs[r],
                task,
                trial_no,
                int(ok),
                int(ok),
                float(ok),
                reason,
                8,
                4,
                steps - 4,
                0,
                steps,
                rng.uniform(0.005, 0.08),
                rng.lognormvariate(2.3, 0.5),
                record,
                NOW,
            )
        )
        text = " ".join(rng.choices(WORDS, k=30)) + (" zebrafish" if seq % 50 == 0 else "")
        fts.append((seq, text))
        judged_ok = ok if rng.random() < 0.9 else not ok
        verdicts.append((tid, "judge-a", "pass" if judged_ok else "fail", NOW))
        if seq % 97 == 0:
            labels.append((tid, "ana", rng.choice(["pass", "fail", "skip"]), NOW))
        if rng.random() < 0.08:
            violations.append((tid, rng.choice(["lookup-before-refund", "budget"]), "policy"))
        if not ok:
            members.append((1, f"c{rng.randint(0, 20)}", tid))
    with db.atomic():
        for name in runs:
            db.execute("INSERT INTO runs (name, imported_at) VALUES (?, ?)", [name, NOW])
        c = db.conn
        c.executemany(
            "INSERT INTO trials (seq, id, run, task_id, trial, success, passed, reward, reason, "
            "n_messages, assistant_turns, tool_calls, tool_errors, steps, cost_usd, latency_s, record, "
            "imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            trials,
        )
        c.executemany("INSERT INTO trials_fts (rowid, text) VALUES (?, ?)", fts)
        c.executemany(
            "INSERT INTO verdicts (trial_id, judge, verdict, created_at) VALUES (?, ?, ?, ?)",
            verdicts,
        )
        c.executemany(
            "INSERT INTO labels (trial_id, labeler, verdict, at) VALUES (?, ?, ?, ?)", labels
        )
        c.executemany(
            "INSERT INTO violations (trial_id, rule_id, severity) VALUES (?, ?, ?)", violations
        )
        db.execute(
            "INSERT INTO clusterings (id, scope, params, created_at, n_failures) VALUES (1, 'all', '{}', ?, ?)",
            [NOW, len(members)],
        )
        c.executemany(
            "INSERT INTO cluster_members (clustering_id, cluster_id, trial_id) VALUES (?, ?, ?)",
            members,
        )
    rebuild_task_stats(db)
    db.close()


def max_seq(db: sqlite_utils.Database) -> int:
    return int(db.execute("SELECT MAX(seq) FROM trials").fetchone()[0])


CASES: dict[str, TrialFilter] = {
    "no filter": TrialFilter(),
    "outcome fail": TrialFilter(outcome="fail"),
    "run": TrialFilter(run="run-3"),
    "run + outcome": TrialFilter(run="run-3", outcome="fail"),
    "judge fail": TrialFilter(verdict="fail"),
    "label pass": TrialFilter(label="pass"),
    "cluster": TrialFilter(cluster_id="c3"),
    "any violation": TrialFilter(rule_id="any"),
    "search 'refund'": TrialFilter(search="refund"),
    "search rare word": TrialFilter(search="zebrafish"),
    "search + outcome": TrialFilter(search="refund shipped", outcome="fail"),
}


def timings(db: sqlite_utils.Database, repeat: int, limit: int) -> dict[str, float]:
    """Best seconds per query; counts are timed uncached, pages with the count already cached."""
    end = max_seq(db)
    jobs: dict[str, Callable[[], object]] = {}
    for name, f in CASES.items():
        jobs[f"page   {name}"] = lambda f=f: page(db, f, limit=limit)
        jobs[f"count  {name}"] = lambda f=f: count(db, f, cached=False)
    # deep pages: the caller knows its index from the page it turns, as the screen does
    deep: list[tuple[str, TrialFilter, dict[str, int]]] = [
        ("deep, no filter", TrialFilter(), {"after_seq": end - 2 * limit}),
        ("deep, outcome fail", TrialFilter(outcome="fail"), {"after_seq": end - 4 * limit}),
        ("deep, search 'refund'", TrialFilter(search="refund"), {"after_seq": end - 2 * limit}),
        ("deep, judge fail", TrialFilter(verdict="fail"), {"after_seq": end - 4 * limit}),
        ("back from the end (before_seq)", TrialFilter(), {"before_seq": end - limit // 2}),
    ]
    for name, f, where in deep:
        jobs[f"page   {name}"] = lambda f=f, where=where: page(
            db, f, limit=limit, known_before=1, **where
        )
    jobs["page   deep, no hint (index count cached)"] = lambda: page(
        db, TrialFilter(outcome="fail"), after_seq=end - 4 * limit, limit=limit
    )
    out: dict[str, float] = {}
    for name, job in jobs.items():
        job()  # warm the page cache and the count cache
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            job()
            best = min(best, time.perf_counter() - start)
        out[name] = best
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument(
        "--limit", type=int, default=20, help="page size for the ratios (fits the small db)"
    )
    ap.add_argument("--keep", type=Path, help="build the databases in DIR and keep them")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        paths = {n: where / f"trials-{n}.db" for n in (args.small, args.trials)}
        for n, path in paths.items():
            if not path.exists():
                start = time.perf_counter()
                build(path, n)
                print(f"built {n:,} trials in {time.perf_counter() - start:.1f}s", flush=True)
        dbs = {n: open_store(p) for n, p in paths.items()}
        clear_cache()
        small = timings(dbs[args.small], args.repeat, args.limit)
        big = timings(dbs[args.trials], args.repeat, args.limit)
        ui = timings(dbs[args.trials], args.repeat, 200)
        head = (
            f"{'query (page size ' + str(args.limit) + ')':40} {args.small:>9,} {args.trials:>9,}"
        )
        print(f"{head}   ratio   {args.trials:,} x 200 rows")
        for name in small:
            s, b = small[name], big[name]
            u = "(same)" if name.startswith("count") else f"{ui[name] * 1e3:.2f}ms"
            print(f"{name:40} {s * 1e3:7.2f}ms {b * 1e3:7.2f}ms {b / s:6.1f}x   {u:>9}")
        for db in dbs.values():
            db.close()


if __name__ == "__main__":
    main()
