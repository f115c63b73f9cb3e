"""Importing one run spread over many small files: time for 2,000 files vs 500, as a ratio.

Linear work gives ~4x; the old per-file re-read of the whole run gave ~16x (10,000 files: 144 s).
Run: python bench/import_many_files.py [--small 500] [--large 2000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from reviewer.store import open_store
from reviewer.workflows.imports import import_paths


def trial(i: int) -> dict[str, object]:
    return {
        "run": "one",
        "task_id": f"task_{i % 50}",
        "outcome": {"passed": i % 3 != 0},
        "messages": [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ],
    }


def timed(root: Path, files: int, per_file: int) -> float:
    folder = root / f"runs{files}"
    folder.mkdir()
    for f in range(files):
        with (folder / f"part{f:05d}.jsonl").open("w") as fh:
            for j in range(per_file):
                fh.write(json.dumps(trial(f * per_file + j)) + "\n")
    db = open_store(root / f"bench{files}.db")
    t0 = time.perf_counter()
    summary = import_paths(db, [str(folder)])
    elapsed = time.perf_counter() - t0
    db.close()
    assert summary.added == files * per_file, summary.added
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--small", type=int, default=500)
    ap.add_argument("--large", type=int, default=2000)
    ap.add_argument("--per-file", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = timed(Path(tmp), args.small, args.per_file)
        large = timed(Path(tmp), args.large, args.per_file)
    expected = args.large / args.small
    print(f"{args.small:,} files: {small:.2f} s; {args.large:,} files: {large:.2f} s")
    print(
        f"ratio: {large / small:.1f}x for {expected:.0f}x the files "
        f"(linear ~{expected:.0f}x, quadratic ~{expected**2:.0f}x)"
    )


if __name__ == "__main__":
    main()
