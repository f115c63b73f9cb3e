"""`reviewer signatures` against Drain3: grouping accuracy and time on varied error lines.

Lines of 40 kinds of events from HTTP servers, JVM and Python, the Linux kernel, schedulers,
databases and agent tools (tests/clustering/logs.py, seeded, with true groups), flattened to one
line each. Prints, for each method, the grouping accuracy and the best of three times for all lines, and the
time of `reviewer signatures` as a ratio of Drain3's with masking, measured in the same run. The
digit-mask baseline (every token with a digit is one placeholder) is printed beside. Drain3 is
measured when it is installed (`pip install drain3`; it is no dependency of reviewer).

    python bench/signatures_speed.py           # 50000 lines
    python bench/signatures_speed.py 10000 3   # 10000 lines, seed 3
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reviewer.clustering.signature import signatures_of_lines  # noqa: E402
from tests.clustering.logs import digit_mask, grouping_accuracy, lines  # noqa: E402

# Drain3's own example masking (its README and drain3.ini), the usual "Drain3 with masking"
DRAIN_MASKS = [
    (r"((?<=[^A-Za-z0-9])|^)(([0-9a-f]{2,}:){3,}([0-9a-f]{2,}))((?=[^A-Za-z0-9])|$)", "ID"),
    (r"((?<=[^A-Za-z0-9])|^)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})((?=[^A-Za-z0-9])|$)", "IP"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9a-f]{6,} ?){3,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)([0-9A-F]{4} ?){4,}((?=[^A-Za-z0-9])|$)", "SEQ"),
    (r"((?<=[^A-Za-z0-9])|^)(0x[a-f0-9A-F]+)((?=[^A-Za-z0-9])|$)", "HEX"),
    (r"((?<=[^A-Za-z0-9])|^)([\-\+]?\d+)((?=[^A-Za-z0-9])|$)", "NUM"),
    (r"(?<=executed cmd )(\".+?\")", "CMD"),
]


def drain(texts: list[str], masking: bool) -> list[str]:
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.profiling_enabled = False
    config.masking_instructions = (
        [MaskingInstruction(p, m) for p, m in DRAIN_MASKS] if masking else []
    )
    miner = TemplateMiner(config=config)
    ids = [miner.add_log_message(t)["cluster_id"] for t in texts]
    return [str(i) for i in ids]


REPEATS = 3


def timed(label: str, run, texts: list[str], truth: list[int]) -> float:  # type: ignore[no-untyped-def]
    """Grouping accuracy and the best of ``REPEATS`` times (the machine may be shared)."""
    seconds = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        groups = run(texts)
        seconds = min(seconds, time.perf_counter() - start)
    print(f"{label:<28} grouping accuracy {grouping_accuracy(groups, truth):.3f}  {seconds:7.2f} s")
    return seconds


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    events = lines(n, seed)
    texts = [" ".join(line.split()) for line, _ in events]
    truth = [t for _, t in events]
    print(f"{n} lines, {len(set(truth))} true groups, seed {seed}")
    timed("digit-mask baseline", lambda ts: [digit_mask(t) for t in ts], texts, truth)
    ours = timed("reviewer signatures", lambda ts: list(signatures_of_lines(ts)), texts, truth)
    timed(
        "reviewer, no templates",
        lambda ts: list(signatures_of_lines(ts, templates=False)),
        texts,
        truth,
    )
    if importlib.util.find_spec("drain3") is None:
        print("drain3 is not installed: pip install drain3 to compare")
        return
    masked = timed("Drain3 with masking", lambda ts: drain(ts, True), texts, truth)
    plain = timed("Drain3", lambda ts: drain(ts, False), texts, truth)
    print(f"time of reviewer signatures / Drain3 with masking: {ours / masked:.2f}")
    print(f"time of reviewer signatures / Drain3:              {ours / plain:.2f}")


if __name__ == "__main__":
    main()
