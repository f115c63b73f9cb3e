"""The real sample_runs/ folder the README tours: its generator reproduces it byte for byte and keeps
the production stream the monitor's example reads; its two runs tell the story the README tells
(support-v2 is cheaper, faster and shorter, but less reliable, and it breaks the forbidden rule)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from reviewer.metrics.fisher import fisher_one_sided
from tests.conftest import REAL_SAMPLE_RUNS, imported, run_cli

RUNS = ("support-v1", "support-v2")
WRITTEN = ("support-v1.jsonl", "support-v2.jsonl", "ground_truth.json", "rules.toml", "rubric.toml")


def _trials(run: str) -> list[dict]:
    text = (REAL_SAMPLE_RUNS / f"{run}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _generator_copy(tmp_path: Path) -> Path:
    """generate.py and its wording alone in a folder: it writes its files next to itself."""
    folder = tmp_path / "sample_runs"
    folder.mkdir()
    for name in ("generate.py", "wording.txt"):
        shutil.copy(REAL_SAMPLE_RUNS / name, folder / name)
    return folder / "generate.py"


def test_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    script = _generator_copy(tmp_path)
    subprocess.run([sys.executable, str(script)], check=True)
    for name in WRITTEN:
        assert (script.parent / name).read_bytes() == (REAL_SAMPLE_RUNS / name).read_bytes(), name


def test_production_stream_is_unchanged(tmp_path: Path) -> None:
    """The monitor's example (docs/ci-and-monitoring.md) reads this stream: it must not move when the eval changes
    (digests of the stream as generated at commit 5ccd5f3)."""
    script = _generator_copy(tmp_path)
    out = tmp_path / "prod"
    args = ["--production", str(out), "--days", "2", "--per-day", "40"]
    subprocess.run([sys.executable, str(script), *args], check=True)
    digests = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}
    assert digests == {
        "production-2025-06-01.jsonl": (
            "86db34fddcf40e12af6f62f648f7da94102a7312d86ad026e7bd176b87b637db"
        ),
        "production-2025-06-02.jsonl": (
            "df2e730d3082343dfb19307ec9635cecee1b4e058f92fd1ff11d6b5c3be99d39"
        ),
    }


def test_fifty_shared_tasks_with_5_to_8_trials_each() -> None:
    counts = {run: Counter(t["task_id"] for t in _trials(run)) for run in RUNS}
    assert len(counts["support-v1"]) == 50
    assert counts["support-v1"].keys() == counts["support-v2"].keys()
    for run in RUNS:
        assert all(5 <= n <= 8 for n in counts[run].values()), run
    assert sum(counts["support-v1"].values()) == 397
    assert sum(counts["support-v2"].values()) == 296


def test_ground_truth_names_every_failure_and_no_trial_names_its_mode() -> None:
    truth = json.loads((REAL_SAMPLE_RUNS / "ground_truth.json").read_text(encoding="utf-8"))
    modes = {mode for run in RUNS for mode in truth[run].values()}
    assert len(modes) == 7
    for run in RUNS:
        trials = _trials(run)
        failed = {f"{t['task_id']}/{t['trial']}" for t in trials if not t["outcome"]["passed"]}
        assert set(truth[run]) == failed
        text = (REAL_SAMPLE_RUNS / f"{run}.jsonl").read_text(encoding="utf-8")
        assert not [mode for mode in modes if mode in text]


def test_the_judge_is_right_85_to_90_percent_of_the_time() -> None:
    for run in RUNS:
        trials = _trials(run)
        right = sum((t["judge"]["verdict"] == "pass") == t["outcome"]["passed"] for t in trials)
        assert 0.85 <= right / len(trials) <= 0.90, run


def test_compare_says_cheaper_and_faster_but_less_reliable_and_breaking_a_rule() -> None:
    sample = imported(REAL_SAMPLE_RUNS)
    sample.copy("reviewer.db")
    assert "audit: no finding in 2 runs" in sample.stderr
    code, out, err = run_cli("compare", "support-v1", "support-v2", "--json")
    assert code == 0, err
    rows = {r["metric"]: r for r in json.loads(out)["summary"]}
    worse = rows["pass_hat_k"]
    assert worse["direction"] == "worse" and worse["ci95"][1] < 0
    for metric in ("avg_steps", "cost_per_task", "p95_latency_s"):
        assert rows[metric]["mark"] == '<-- "better"', metric
    assert rows["pass_at_1"]["direction"] == "within noise"
    for metric in ("forbidden_rate", "rule:no-cancel-after-shipped"):
        assert rows[metric]["direction"] == "RED FLAG" and rows[metric]["old"] == 0.0
    # the rise is beyond noise by itself: a one-sided exact test on trials, 0 of 397 vs 8 of 296
    broke = round(rows["forbidden_rate"]["new"] * 296)
    assert broke == 8
    assert fisher_one_sided(397, 397, 296 - broke, 296) < 0.01
    code, text, _ = run_cli("compare", "support-v1", "support-v2")
    lines = {line.split("  ")[0]: line for line in text.splitlines()}
    assert lines["pass^5 (overall)"].endswith("<-- worse")
    assert lines["cost / task"].endswith('<-- "better"')
    assert lines["forbidden-tool rate"].split()[2] == "0.0%"
    assert lines["forbidden-tool rate"].endswith("<-- RED FLAG")
