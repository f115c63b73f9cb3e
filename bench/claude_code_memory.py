"""Peak memory of importing one large Claude Code session, as a ratio to the file's size.

A generated session (seeded: turns of a question, an answer with thinking and a tool call, and a
tool result that the record also holds again in ``toolUseResult``, as Claude Code writes it) of
``--mb`` MB is imported into a new database in a process of its own; the peak resident memory it
added is divided by the file size. The baseline, measured the same way in the same run, is
``json.loads`` of the session held as one line (every record parsed at once: what reading the
session whole costs). The import used to parse every record of the session and keep it (7.4x
the file for a real 500 MB session; 5.3x for this one at 50 MB). The target: the import takes
less than the baseline, i.e. the session is never held parsed; what it still holds is what it
stores: the messages, the record, the search text and SQLite's copy of one of them (and its
page cache of 64 MiB while importing, which dominates below 100 MB).

Run: python bench/claude_code_memory.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

WORDS = (
    "the order refund policy customer shipped tool call result error file line code test".split()
)


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n // 6))


def write_session(path: Path, mb: float, seed: int = 0) -> int:
    """A session file of about ``mb`` MB; returns its size in bytes."""
    rng = random.Random(seed)
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "~/shop",
        "sessionId": "bench-session",
        "version": "2.0.76",
        "gitBranch": "main",
    }
    size, n, parent = 0, 0, None
    with path.open("w", encoding="utf-8") as fh:

        def put(kind: str, message: dict[str, object], **extra: object) -> None:
            nonlocal size, n, parent
            n += 1
            uuid = f"u-{n}"
            line = json.dumps(
                {
                    "uuid": uuid,
                    "parentUuid": parent,
                    **common,
                    "type": kind,
                    "message": message,
                    "timestamp": f"2026-02-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
                    **extra,
                }
            )
            fh.write(line + "\n")
            size += len(line) + 1
            parent = uuid

        while size < mb * 1e6:
            put("user", {"role": "user", "content": _text(rng, 300)})
            call = f"toolu_{n}"
            put(
                "assistant",
                {
                    "id": f"msg_{n}",
                    "model": "claude-opus-4-5",
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": _text(rng, 800), "signature": "s"},
                        {"type": "text", "text": _text(rng, 400)},
                        {"type": "tool_use", "id": call, "name": "Read", "input": {"f": "a.py"}},
                    ],
                    "usage": {"input_tokens": 1000, "output_tokens": 200},
                },
            )
            result = _text(rng, rng.randint(5_000, 60_000))
            put(
                "user",
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": call, "content": result}],
                },
                toolUseResult={"type": "text", "file": {"filePath": "a.py", "content": result}},
            )
    return path.stat().st_size


_CHILD = """
import resource, sys
from pathlib import Path
def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
mode, path, db = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
import json
from reviewer.store import open_store
from reviewer.workflows.imports import import_paths
start = peak()
if mode == "baseline":
    with path.open("rb") as fh:
        line = b"[" + b",".join(x.rstrip(b"\\n") for x in fh) + b"]"
    value = json.loads(line)
    assert len(value) > 0
else:
    with open_store(db) as store:
        summary = import_paths(store, [path])
    assert summary.added == 1, summary.problems + [str(s) for s in summary.skipped]
print(peak() - start)
"""


def measure(mode: str, path: Path, db: Path) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, mode, str(path), str(db)],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(out.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=200)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        session = root / "-home-ana-shop" / "bench-session.jsonl"
        session.parent.mkdir()
        size = write_session(session, args.mb)
        base = measure("baseline", session, root / "unused.db")
        used = measure("import", session, root / "bench.db")
    print(f"session file:                      {size / 1e6:8.1f} MB")
    print(
        f"json.loads of it as one line:       {base / 1e6:8.1f} MB  ({base / size:.2f}x the file)"
    )
    print(
        f"reviewer import of it (peak added): {used / 1e6:8.1f} MB  ({used / size:.2f}x the file)"
    )
    print(f"import / baseline:                  {used / base:8.2f}")
    print(f"target: the import below the baseline: {'met' if used < base else 'NOT MET'}")


if __name__ == "__main__":
    main()
