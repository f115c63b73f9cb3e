"""Pairwise judging in both orders against a stand-in whose position bias is planted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.bias import bias_report
from reviewer.judge.jobs import BUILTIN_RUBRIC
from reviewer.judge.pairs import sample_pairs
from reviewer.judge.pairwise import map_winner, preference_jobs
from reviewer.judge.runner import Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import Reply, StandIn, error_reply, text_reply, tool_reply
from reviewer.store.db import open_store
from reviewer.store.pairs import pair_rows

SAMPLE_RUNS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "sample_small"


def _transcripts(params: dict[str, Any]) -> tuple[str, str]:
    text = params["messages"][0]["content"]
    a = text.split("<transcript_a>", 1)[1].split("</transcript_a>", 1)[0]
    b = text.split("<transcript_b>", 1)[1].split("</transcript_b>", 1)[0]
    return a, b


def _h(s: str) -> int:
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16)


def planted(share_first: float, ties: float = 0.0) -> Any:
    """A judge that, for a fixed subset of pairs (chosen by the pair, whatever the order), always
    picks the transcript shown first; ties on another fixed subset; else a fixed 'true' winner."""

    def policy(params: dict[str, Any]) -> Reply:
        first, second = _transcripts(params)
        key = _h("".join(sorted((first, second))))
        u = (key % 1000) / 1000
        if u < share_first:
            winner = "A"
        elif u < share_first + ties:
            winner = "tie"
        else:
            better = min(first, second, key=_h)  # order-independent truth
            winner = "A" if better == first else "B"
        return tool_reply(params, "record_preference", {"winner": winner, "rationale": "planted"})

    policy.share = share_first  # type: ignore[attr-defined]
    return policy


@pytest.fixture
def both_runs(tmp_path: Path) -> sqlite_utils.Database:
    from reviewer.workflows.imports import import_paths

    db = open_store(tmp_path / "pairs.db")
    import_paths(db, [SAMPLE_RUNS / "support-v1.jsonl", SAMPLE_RUNS / "support-v2.jsonl"])
    return db


def _judge(db: sqlite_utils.Database, n: int, **kw: Any) -> Any:
    settings = JudgeSettings(concurrency=4, max_retries=2, timeout_s=10.0)
    pairs = sample_pairs(db, n, seed=3, runs=("support-v1", "support-v2"))
    runner = Runner(db, settings, backoff_s=0.01, **kw)
    stats = runner.run(preference_jobs(db, pairs, BUILTIN_RUBRIC, settings), 2 * len(pairs))
    judge = settings.judge_id(BUILTIN_RUBRIC.ref, kind="pair")
    return pairs, stats, bias_report(pair_rows(db, judge), judge).judges[0]


def _expected_first(pairs: Any, db: sqlite_utils.Database, share: float) -> int:
    """How many sampled pairs the planted policy biases, computed from the same prompts."""
    settings = JudgeSettings()
    jobs = list(preference_jobs(db, pairs, BUILTIN_RUBRIC, settings))
    n = 0
    for ab in jobs[::2]:
        first, second = _transcripts(ab.params)
        n += (_h("".join(sorted((first, second)))) % 1000) / 1000 < share
    return n


def test_winners_are_mapped_back_to_a_and_b() -> None:
    assert [map_winner("ab", w) for w in ("A", "B", "tie")] == ["a", "b", "tie"]
    assert [map_winner("ba", w) for w in ("A", "B", "tie")] == ["b", "a", "tie"]
    assert map_winner("ab", "error") is None


def test_both_orders_are_asked_with_the_preference_tool(
    both_runs: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.policy = planted(0.0)
    pairs, stats, _ = _judge(both_runs, 4)
    assert stats.done == 8 and standin.message_requests == 8
    bodies = [r["body"] for r in standin.requests]
    assert {b["tool_choice"]["name"] for b in bodies} == {"record_preference"}
    shown = [_transcripts(b) for b in bodies]
    # every request has its swapped twin: the same pair, the other order
    assert all((b, a) in shown for a, b in shown)


def test_the_report_recovers_the_planted_share(
    both_runs: sqlite_utils.Database, standin: StandIn
) -> None:
    share = 0.4
    standin.policy = planted(share)
    pairs, stats, report = _judge(both_runs, 30)
    expected = _expected_first(pairs, both_runs, share)
    assert 5 <= expected <= 20  # the plant is neither empty nor everything
    assert report.counts["biased_first"] == expected
    assert report.counts["consistent"] == len(pairs) - expected
    assert report.counts["biased_second"] == report.counts["error"] == 0
    # first slot: every biased pair wins it twice; consistent pairs win it once in two
    assert report.first_slot.wins == 2 * expected + (len(pairs) - expected)


def test_ties_errors_and_retries_are_counted_as_defined(
    both_runs: sqlite_utils.Database, standin: StandIn
) -> None:
    standin.policy = planted(0.0, ties=1.0)  # a tie in both orders: consistent
    standin.script = [
        error_reply(429, "rate_limit_error", "slow", {"retry-after-ms": "5"}),
        text_reply({}, "they are both fine"),  # no tool call: this order is an error
    ]
    pairs, stats, report = _judge(both_runs, 6)
    assert stats.errors == 1 and stats.failed == 0
    assert report.counts["error"] == 1
    assert report.counts["consistent"] == len(pairs) - 1
    assert report.aggregate.tie == len(pairs)


def test_a_tie_in_one_order_only_leans_to_the_slot_that_won_the_other(
    both_runs: sqlite_utils.Database, standin: StandIn
) -> None:
    def policy(params: dict[str, Any]) -> Reply:
        first, second = _transcripts(params)
        winner = "tie" if first < second else "A"
        return tool_reply(params, "record_preference", {"winner": winner, "rationale": "x"})

    standin.policy = policy
    pairs, _, report = _judge(both_runs, 5)
    # MT-Bench: a tie in one order and a first-slot win in the other is biased toward first
    assert report.counts["biased_first"] == len(pairs)


def test_bias_cli_runs_the_pairs_then_reports(tmp_path: Path, standin: StandIn) -> None:
    from reviewer.workflows.imports import import_paths

    path = tmp_path / "cli.db"
    db = open_store(path)
    import_paths(db, [SAMPLE_RUNS / "support-v1.jsonl", SAMPLE_RUNS / "support-v2.jsonl"])
    db.close()
    standin.policy = planted(1.0)  # always the first shown
    args = ["--db", str(path), "bias", "--pairs", "6", "--runs", "support-v1", "support-v2"]
    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    judge = data["judges"][0]
    assert judge["counts"]["biased_first"] == {"n": 6, "pct": 100.0}
    assert "each in order AB and BA" in r.stderr
    again = CliRunner().invoke(cli, [*args, "--json"])
    assert again.exit_code == 0 and standin.message_requests == 12  # the second run is cached
