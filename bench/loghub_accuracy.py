"""Loghub-2k grouping accuracy of `reviewer signatures`, beside Drain3 with masking.

Loghub-2k (https://github.com/logpai/loghub) holds 2,000 labeled lines of each of 16 systems,
`<System>/<System>_2k.log_structured.csv` with the message in `Content` and its true event in
`EventId` (logpai/logparser's `data/loghub_2k` has the same files with corrected templates,
`..._structured_corrected.csv`, preferred when present). For each dataset found it prints the
grouping accuracy (the share of lines whose predicted group is exactly the lines of their true
group, the log-parsing benchmarks' metric) of the grouping `reviewer signatures` prints, and, when
drain3 is installed (`pip install '.[bench]'`), that of Drain3 with its example masking and the
time of ours as a ratio of Drain3's, best of three, in the same run. Targets: average >= 0.90
(Drain 0.866 and LILAC 0.909 published) and time ratio <= 1.

    python bench/loghub_accuracy.py DIR                  # or LOGHUB_DIR=DIR
    python bench/loghub_accuracy.py tests/fixtures/loghub  # the 351-line subset kept in the tests
"""

from __future__ import annotations

import csv
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reviewer.clustering.signature import signatures_of_lines  # noqa: E402
from tests.clustering.logs import grouping_accuracy  # noqa: E402

DATASETS = (
    "Android Apache BGL Hadoop HDFS HealthApp HPC Linux Mac OpenSSH OpenStack Proxifier Spark "
    "Thunderbird Windows Zookeeper"
).split()
TARGET = 0.90
REPEATS = 3
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


def find(folder: Path, name: str) -> Path | None:
    """The structured file of one dataset, in ``folder/<name>/`` or ``folder`` itself."""
    for where in (folder / name, folder):
        found = sorted(where.glob(f"{name}_*.log_structured*.csv")) if where.is_dir() else []
        corrected = [p for p in found if "corrected" in p.name]
        if corrected or found:
            return (corrected or found)[0]
    return None


def read(path: Path) -> tuple[list[str], list[str]]:
    with path.open(newline="", encoding="utf-8", errors="replace") as f:
        rows = list(csv.DictReader(f))
    if not rows or "Content" not in rows[0] or "EventId" not in rows[0]:
        raise SystemExit(f"{path}: no Content and EventId columns")
    return [r["Content"] or "" for r in rows], [r["EventId"] for r in rows]


def ours(lines: list[str]) -> list[str]:
    return list(signatures_of_lines(lines))


def drain(lines: list[str]) -> list[str]:
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.profiling_enabled = False
    config.masking_instructions = [MaskingInstruction(p, m) for p, m in DRAIN_MASKS]
    miner = TemplateMiner(config=config)
    return [str(miner.add_log_message(line)["cluster_id"]) for line in lines]


def best_time(run: Callable[[list[str]], list[str]], lines: list[str]) -> tuple[list[str], float]:
    seconds, groups = float("inf"), []
    for _ in range(REPEATS):
        start = time.perf_counter()
        groups = run(lines)
        seconds = min(seconds, time.perf_counter() - start)
    return groups, seconds


def main() -> None:
    arg = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("LOGHUB_DIR", "")
    if not arg:
        raise SystemExit("no Loghub-2k folder: give it as an argument or in LOGHUB_DIR")
    folder = Path(arg)
    if not folder.is_dir():
        raise SystemExit(f"{folder}: no such folder (want <System>/<System>_2k.log_structured.csv)")
    found = {name: find(folder, name) for name in DATASETS}
    missing = [name for name, path in found.items() if path is None]
    if len(missing) == len(DATASETS):
        raise SystemExit(f"{folder}: none of the 16 <System>_2k.log_structured.csv files")
    with_drain = importlib.util.find_spec("drain3") is not None
    print(
        f"{'dataset':<12} {'lines':>5} {'groups':>6}  {'reviewer':>8}"
        + ("  drain3" if with_drain else "")
    )
    ours_acc, drain_acc, ours_s, drain_s, n_lines = [], [], 0.0, 0.0, 0
    for name, path in found.items():
        if path is None:
            continue
        lines, truth = read(path)
        groups, seconds = best_time(ours, lines)
        ours_acc.append(grouping_accuracy(groups, truth))  # type: ignore[arg-type]
        ours_s += seconds
        n_lines += len(lines)
        row = f"{name:<12} {len(lines):>5} {len(set(truth)):>6}  {ours_acc[-1]:>8.3f}"
        if with_drain:
            groups, seconds = best_time(drain, lines)
            drain_acc.append(grouping_accuracy(groups, truth))  # type: ignore[arg-type]
            drain_s += seconds
            row += f"  {drain_acc[-1]:.3f}"
        print(row)
    if missing:
        print(f"missing (left out of the average): {', '.join(missing)}")
    average = sum(ours_acc) / len(ours_acc)
    line = f"{'average':<12} {n_lines:>5} {'':>6}  {average:>8.3f}"
    if with_drain:
        line += f"  {sum(drain_acc) / len(drain_acc):.3f}"
    print(line)
    verdict = "met" if average >= TARGET and not missing else "NOT MET"
    print(
        f"grouping accuracy {average:.3f} over {len(ours_acc)} datasets (target >= {TARGET}): {verdict}"
    )
    if not with_drain:
        print("drain3 is not installed (pip install '.[bench]'): speed not compared")
        return
    ratio = ours_s / drain_s
    print(
        f"time {ours_s:.3f} s against Drain3 with masking {drain_s:.3f} s: ratio {ratio:.2f} "
        f"(target <= 1): {'met' if ratio <= 1 else 'NOT MET'}"
    )


if __name__ == "__main__":
    main()
