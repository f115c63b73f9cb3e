"""Inspect log import speed: ``.eval`` and ``.json`` logs written by inspect-ai itself, 8,000 samples.

The input is made with inspect-ai's own ``read_eval_log`` / ``write_eval_log``: ``--samples``
distinct samples of realistic length, each a conversation of 21 to 41 messages (a system prompt
shared by all, a customer's request, then tool calls with their results and the agent's replies,
every text, id and argument drawn afresh), on the test fixture's sample for the rest (scores,
events, metadata; ``tests/fixtures/inspect/support.eval``). ``--copies`` writes the old input
instead, the fixture's 16 short samples copied with new ids, whose repeated texts flatter the
import. Skips (exit 0) when inspect-ai is not installed; it is not a dependency of reviewer
(``pip install inspect-ai`` in a separate environment to run this).

Prints, as medians of interleaved runs (wall and CPU time):

- ``.eval``: ``reviewer import`` against reading every member of the zip (Zstandard members, as newer
  inspect-ai writes, through libzstd as the importer reads them) and ``json.loads`` of it (target
  <= 3x), and against inspect-ai's own ``read_eval_log`` (for scale);
- ``.json``: ``reviewer import`` against ``json.loads`` of the file (target <= 2.5x), and the Python
  heap's peak during the import against the peak of ``json.loads`` alone (target <= 1.5x).

The last lines say "met" or "not met" for each target. Run:
``python bench/inspect_speed.py [--samples 8000] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reviewer.store import open_store
from reviewer.workflows.imports import ImportSummary, import_paths

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "inspect" / "support.eval"


WORDS = (
    "order refund shipped delivered customer policy address cancel return item damaged verify "
    "email account payment card total amount store credit warehouse tracking carrier label please "
    "thanks package invoice discount exchange replacement subscription plan upgrade billing date"
).split()
TOOLS = ("get_order_details", "get_user_details", "cancel_pending_order", "modify_address")


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _conversation(rng: random.Random, system: str) -> list[Any]:
    """21 to 41 messages, every text drawn afresh: a request, then rounds of a tool call, its
    result and the agent's reply."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall

    out: list[Any] = [
        ChatMessageSystem(content=system),
        ChatMessageUser(content=_sentence(rng, rng.randint(15, 40))),
    ]
    target = rng.randint(21, 41)
    while len(out) < target - 1:
        call_id = f"call_{rng.getrandbits(48):012x}"
        tool = rng.choice(TOOLS)
        args = {"order_id": f"#W{rng.randint(1000000, 9999999)}", "reason": _sentence(rng, 4)}
        out.append(
            ChatMessageAssistant(
                content=_sentence(rng, rng.randint(5, 25)),
                tool_calls=[ToolCall(id=call_id, function=tool, arguments=args)],
            )
        )
        body = {
            "order_id": args["order_id"],
            "status": rng.choice(["pending", "shipped", "delivered", "cancelled"]),
            "items": [
                {"item_id": str(rng.randint(10**9, 10**10)), "price": round(rng.random() * 500, 2)}
                for _ in range(rng.randint(1, 5))
            ],
            "note": _sentence(rng, rng.randint(5, 30)),
        }
        out.append(ChatMessageTool(content=json.dumps(body), tool_call_id=call_id, function=tool))
    out.append(ChatMessageAssistant(content=_sentence(rng, rng.randint(20, 60))))
    return out


def write_logs(folder: Path, samples: int, copies: bool = False) -> tuple[Path, Path]:
    """An .eval and a .json log of ``samples`` samples, written by inspect-ai: distinct ones of
    realistic length, or with ``copies`` the fixture's own copied."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(FIXTURE))
    template = log.samples or []
    rng = random.Random(7)
    system = _sentence(rng, 80)
    out = []
    for i in range(samples):
        s = template[i % len(template)].model_copy(deep=True)
        s.id = f"{s.id}-{i // len(template):05d}"  # the template's epochs kept: ids stay unique
        if not copies:
            s.messages = _conversation(rng, system)
            s.input = s.messages[1].text
        out.append(s)
    log.samples = out
    log.eval.dataset.samples = samples
    eval_path, json_path = folder / "big.eval", folder / "big.json"
    write_eval_log(log, str(eval_path), format="eval")
    write_eval_log(log, str(json_path), format="json")
    return eval_path, json_path


def read_members(path: Path) -> int:
    """The floor for .eval: unzip every member (a Zstandard one, as newer inspect-ai writes, through
    the importer's own libzstd reader: zipfile reads those only from Python 3.14) and json.loads it."""
    from reviewer.ingest.inspect_log import _ZSTD, _zstd

    n = 0
    with zipfile.ZipFile(path) as zf, path.open("rb") as raw:
        for info in zf.infolist():
            if not info.filename.endswith(".json"):
                continue
            if info.compress_type == _ZSTD:
                raw.seek(info.header_offset + 26)
                name_len, extra_len = struct.unpack("<HH", raw.read(4))
                raw.seek(info.header_offset + 30 + name_len + extra_len)
                json.loads(_zstd()(raw.read(info.compress_size), info.file_size))
            else:
                json.loads(zf.read(info))
            n += 1
    return n


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def peak_mb(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def child_rss(code: str) -> float:
    """Peak resident memory (MB) of a fresh Python process running CODE (json and reviewer loaded)."""
    prelude = (
        "import json, resource\n"
        "from reviewer.store import open_store\n"
        "from reviewer.workflows.imports import import_paths\n"
    )
    tail = "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
    out = subprocess.run(
        [sys.executable, "-c", prelude + code + tail], capture_output=True, text=True, check=True
    )
    return int(out.stdout.split()[-1]) / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--samples", type=int, default=8000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--copies", action="store_true", help="the old input: the fixture's samples copied"
    )
    args = ap.parse_args()
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        print("inspect-ai is not installed: skipped (pip install inspect-ai to run this bench)")
        return
    from inspect_ai.log import read_eval_log

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        eval_path, json_path = write_logs(root, args.samples, args.copies)
        kind = "copies of the fixture's" if args.copies else "distinct, 21-41 messages each,"
        print(
            f"wrote {args.samples:,} samples ({kind}) with inspect-ai in {time.perf_counter() - t0:.1f} s: "
            f".eval {eval_path.stat().st_size / 1e6:.1f} MB, .json {json_path.stat().st_size / 1e6:.1f} MB"
        )
        runs: dict[str, list[tuple[float, float]]] = {}

        def run(name: str, fn: Callable[[], object]) -> None:
            runs.setdefault(name, []).append(timed(fn))

        imported: list[ImportSummary] = []
        for attempt in range(args.repeat):
            run("eval floor", lambda: read_members(eval_path))
            run("eval inspect", lambda: read_eval_log(str(eval_path)))
            for name, path in (("eval import", eval_path), ("json import", json_path)):
                db = open_store(root / f"{name[:4]}{attempt}.db")
                run(name, lambda db=db, path=path: imported.append(import_paths(db, [str(path)])))
                db.close()
            run("json floor", lambda: json.loads(json_path.read_bytes()))
        assert all(s.added == args.samples for s in imported), [s.added for s in imported]
        med = {
            k: (statistics.median(v[0] for v in vs), statistics.median(v[1] for v in vs))
            for k, vs in runs.items()
        }
        for name, (wall, cpu) in med.items():
            print(f"  {name:13} wall {wall:6.2f} s  cpu {cpu:6.2f} s")

        def ratio(a: str, b: str) -> str:
            return f"{med[a][1] / med[b][1]:.2f}x cpu, {med[a][0] / med[b][0]:.2f}x wall"

        print(
            f".eval import vs unzip + json.loads of every member: {ratio('eval import', 'eval floor')}"
        )
        print(
            f".eval import vs inspect-ai's read_eval_log:        {ratio('eval import', 'eval inspect')}"
        )
        print(
            f".json import vs json.loads of the file:            {ratio('json import', 'json floor')}"
        )
        parsed = peak_mb(lambda: json.loads(json_path.read_bytes()))
        db = open_store(root / "mem.db")
        imported = peak_mb(lambda: import_paths(db, [str(json_path)]))
        db.close()
        rss_parse = child_rss(f"json.loads(open({str(json_path)!r}, 'rb').read())")
        rss_import = child_rss(
            f"import_paths(open_store({str(root / 'rss.db')!r}), [{str(json_path)!r}])"
        )
        print(
            f".json memory: peak resident set of a process that imports it {rss_import:.0f} MB vs "
            f"one that json.loads it {rss_parse:.0f} MB: {rss_import / rss_parse:.2f}x"
        )
        eval_x = med["eval import"][1] / med["eval floor"][1]
        json_x = med["json import"][1] / med["json floor"][1]
        heap_x = imported / parsed
        print("targets (CPU time; the audit runs in every import and is counted):")
        for line, value, target in (
            (f".eval import vs zip + zstd + json.loads: {eval_x:.2f}x", eval_x, 3.0),
            (f".json import vs json.loads: {json_x:.2f}x", json_x, 2.5),
            (
                f".json import heap peak {imported:.0f} MB vs json.loads {parsed:.0f} MB: "
                f"{heap_x:.2f}x",
                heap_x,
                1.5,
            ),
        ):
            print(f"  {line} (target <= {target:g}x): {'met' if value <= target else 'not met'}")


if __name__ == "__main__":
    sys.exit(main())
