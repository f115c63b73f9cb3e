"""`reviewer cluster --with-judge` against the Messages API stand-in: names, merge proposals, the
cache, the cost cap, the estimate, retries, malformed replies, undo, and what the model may not do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reviewer.cli import cli
from reviewer.judge.standin import (
    Reply,
    StandIn,
    default_policy,
    error_reply,
    forced_tool,
    text_reply,
    tool_reply,
)
from reviewer.store.db import open_store
from reviewer.workflows.cluster_judge import ClusterJudgeRequest, judge_clusters

#: What the stand-in calls the sample's clusters (the write call its trials made most).
STANDIN_NAMES = {
    "called update_address",
    "called cancel_order on shipped orders",
    "called refund",
    "ended without taking any action",
    "called transfer_to_human",
}


def invoke(db: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db), "cluster", *args])


@pytest.fixture
def clustered(sample_db: Path) -> Path:
    r = invoke(sample_db)
    assert r.exit_code == 0, r.output
    return sample_db


def stored_json(db: Path) -> dict[str, Any]:
    r = invoke(db, "--stored", "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_names_and_proposals_then_nothing_sent_again(clustered: Path, standin: StandIn) -> None:
    offline = {c["id"]: c["name"] for c in stored_json(clustered)["clusters"]}
    n = len(offline)
    r = invoke(clustered, "--stored", "--with-judge", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    judge = data["judge"]
    assert (judge["names"]["requests"], judge["merges"]["requests"]) == (n, 1)
    assert standin.message_requests == n + 1
    assert {c["name"] for c in data["clusters"]} == STANDIN_NAMES
    # the offline name stays stored beside the judge's
    assert {c["id"]: c["generated_name"] for c in data["clusters"]} == offline
    assert {n["id"]: n["before"] for n in judge["named"]} == offline
    pairs = sorted(sorted(c["name"] for c in p["clusters"]) for p in judge["proposals"])
    assert pairs == [["called update_address"] * 2, ["ended without taking any action"] * 3]
    assert judge["applied"] == [] and len(data["clusters"]) == n  # proposals are not applied
    # nothing changed: every reply comes from the cache
    again = json.loads(invoke(clustered, "--stored", "--with-judge", "--json").stdout)["judge"]
    assert again["requests"] == 0 and again["names"]["cached"] == n
    assert again["proposals"] == judge["proposals"]
    assert standin.message_requests == n + 1
    # clustering again with the same data keeps the ids, and so the cache
    assert json.loads(invoke(clustered, "--with-judge", "--json").stdout)["judge"]["requests"] == 0


def test_the_text_output_lists_the_proposals_with_their_ids(
    clustered: Path, standin: StandIn
) -> None:
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge")
    assert r.exit_code == 0, r.output
    assert "merges the judge proposes" in r.stdout
    ids = [line.split(":")[0].strip() for line in r.stdout.splitlines() if "m-" in line]
    assert len(ids) == 2 and all(i.startswith("m-") for i in ids)
    assert f"named {n} clusters, 2 merge proposals; {n + 1} requests" in r.stderr


def test_estimate_sends_nothing_and_knows_the_cache(clustered: Path, standin: StandIn) -> None:
    n = len(stored_json(clustered)["clusters"]) + 1  # a name for each cluster, then the merges
    r = invoke(clustered, "--stored", "--with-judge", "--estimate", "--json")
    assert r.exit_code == 0, r.output
    est = json.loads(r.stdout)["estimate"]
    assert (est["requests"], est["to_send"], est["cached"]) == (n, n, 0)
    assert est["input_tokens"] > 0 and 0 < est["cost_usd"] <= est["cost_max_usd"]
    assert est["cap_usd"] == 10.0
    assert standin.message_requests == 0
    text = invoke(clustered, "--stored", "--with-judge", "--estimate")
    assert f"{n} to send" in text.stdout and "cost cap $10" in text.stdout
    invoke(clustered, "--stored", "--with-judge")
    after = json.loads(
        invoke(clustered, "--stored", "--with-judge", "--estimate", "--json").stdout
    )["estimate"]
    assert (after["to_send"], after["cached"]) == (0, n)


def test_accepting_a_merge_is_an_edit_undone_one_at_a_time(
    clustered: Path, standin: StandIn
) -> None:
    n = len(stored_json(clustered)["clusters"])
    first = json.loads(invoke(clustered, "--stored", "--with-judge", "--json").stdout)["judge"]
    pick = first["proposals"][0]
    r = invoke(clustered, "--stored", "--with-judge", "--apply-merge", pick["id"], "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["judge"]["applied"] == [pick["id"]] and data["judge"]["requests"] == 0
    assert len(data["clusters"]) == n - 1
    merged = [c for c in data["clusters"] if c["id"] in {x["id"] for x in pick["clusters"]}]
    assert len(merged) == 1 and merged[0]["size"] == sum(x["size"] for x in pick["clusters"])
    assert invoke(clustered, "undo").exit_code == 0
    back = stored_json(clustered)
    assert len(back["clusters"]) == n
    assert {c["name"] for c in back["clusters"]} == STANDIN_NAMES  # the names stay
    assert invoke(clustered, "undo").exit_code == 0  # then the names go: the offline ones again
    assert all(c["name"] == c["generated_name"] for c in stored_json(clustered)["clusters"])


def test_apply_merges_applies_every_proposal(clustered: Path, standin: StandIn) -> None:
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge", "--apply-merges", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    gone = sum(len(p["clusters"]) - 1 for p in data["judge"]["proposals"])
    assert len(data["judge"]["applied"]) == 2 and gone >= 2
    assert len(data["clusters"]) == n - gone


def test_an_unknown_proposal_id_is_a_warning(clustered: Path, standin: StandIn) -> None:
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge", "--apply-merge", "m-nothere")
    assert r.exit_code == 0, r.output
    assert "no merge proposal 'm-nothere'" in r.stderr
    assert len(stored_json(clustered)["clusters"]) == n


def test_429_and_500_are_retried(clustered: Path, standin: StandIn) -> None:
    wait = {"retry-after-ms": "10"}
    standin.script = [
        error_reply(429, "rate_limit_error", "slow down", wait),
        error_reply(500, "api_error", "oops", wait),
        error_reply(529, "overloaded_error", "busy", wait),
    ]
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge", "--json")
    assert r.exit_code == 0, r.output
    judge = json.loads(r.stdout)["judge"]
    # each cluster's name and the merges, plus the three errors retried
    assert len(judge["named"]) == n and judge["requests"] == n + 1 + 3
    assert "Traceback" not in r.output


def test_a_reply_without_a_name_is_a_warning_and_asked_again(
    clustered: Path, standin: StandIn
) -> None:
    standin.script = [text_reply({}, "I would call it a refund problem"), Reply(raw=b"not json")]
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge", "--json")
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    judge = json.loads(r.stdout)["judge"]
    assert len(judge["named"]) == n - 2
    no_name = [w for w in judge["warnings"] if "no name used" in w]
    assert len(no_name) == 2, judge["warnings"]
    assert "warning: cluster" in r.stderr
    # not cached: the next run asks for those two names again (and for merges, the names changed)
    again = json.loads(invoke(clustered, "--stored", "--with-judge", "--json").stdout)["judge"]
    assert (again["names"]["requests"], again["names"]["cached"]) == (2, n - 2)
    assert len(again["named"]) == n


@pytest.mark.parametrize(
    "merges, expected",
    [
        ([{"clusters": ["c-nope", "A"], "reason": "x"}], "no cluster with id 'c-nope'"),
        ([{"clusters": ["A", "B"]}, {"clusters": ["B", "C"]}], "is in two proposals"),
        ([{"clusters": ["A", "A"]}], "fewer than two different clusters"),
        (["A and B"], "not an object"),
        ([{"clusters": "A,B"}], "not a list of ids"),
    ],
)
def test_bad_proposals_are_left_out_with_a_warning(
    clustered: Path, standin: StandIn, merges: list[Any], expected: str
) -> None:
    ids = [c["id"] for c in stored_json(clustered)["clusters"]]
    real = {"A": ids[0], "B": ids[1], "C": ids[2]}

    def ids_of(x: Any) -> Any:
        if isinstance(x, str):
            return real.get(x, x)
        if isinstance(x, list):
            return [ids_of(i) for i in x]
        return {k: ids_of(v) if k == "clusters" else v for k, v in x.items()}

    def policy(params: dict[str, Any]) -> Reply:
        if forced_tool(params) == "propose_merges":
            return tool_reply(params, "propose_merges", {"merges": ids_of(merges)})
        return default_policy(params)

    standin.policy = policy
    r = invoke(clustered, "--stored", "--with-judge", "--json")
    assert r.exit_code == 0, r.output
    judge = json.loads(r.stdout)["judge"]
    assert judge["proposals"] == []
    assert any(expected in w for w in judge["warnings"]), judge["warnings"]
    assert "warning: merge proposal 1: " in r.stderr and expected in r.stderr


def test_malformed_merge_reply_is_one_warning(clustered: Path, standin: StandIn) -> None:
    def policy(params: dict[str, Any]) -> Reply:
        if forced_tool(params) == "propose_merges":
            return tool_reply(params, "propose_merges", {"merges": "merge A and B"})
        return default_policy(params)

    standin.policy = policy
    n = len(stored_json(clustered)["clusters"])
    r = invoke(clustered, "--stored", "--with-judge", "--json")
    assert r.exit_code == 0 and "Traceback" not in r.output
    judge = json.loads(r.stdout)["judge"]
    assert judge["proposals"] == [] and len(judge["named"]) == n
    assert judge["warnings"] == [
        "merge proposals ignored: malformed reply: propose_merges.merges must be a list, got str"
    ]


def test_the_cost_cap_stops_sending(clustered: Path, standin: StandIn) -> None:
    r = invoke(clustered, "--stored", "--with-judge", "--max-cost", "0.012", "--json")
    assert r.exit_code == 3, r.output
    judge = json.loads(r.stdout)["judge"]
    n = len(stored_json(clustered)["clusters"])
    assert 0 < judge["names"]["requests"] < n and judge["names"]["stopped_at_cap"]
    assert judge["merges"] is None  # not asked with names missing
    assert standin.message_requests == judge["names"]["requests"]
    assert "stopped at the cost cap" in r.stderr
    assert judge["cost_usd"] <= 0.012


def test_a_name_a_human_gave_is_kept_and_not_asked_for(clustered: Path, standin: StandIn) -> None:
    clusters = stored_json(clustered)["clusters"]
    first = clusters[0]["id"]
    assert invoke(clustered, "rename", first, "my own name").exit_code == 0
    data = json.loads(invoke(clustered, "--stored", "--with-judge", "--json").stdout)
    assert data["judge"]["names"]["requests"] == len(clusters) - 1
    assert data["judge"]["kept_human_names"] == [first]
    assert next(c for c in data["clusters"] if c["id"] == first)["name"] == "my own name"


def test_model_output_is_one_plain_bounded_line(clustered: Path, standin: StandIn) -> None:
    hostile = "[red]x[/] \x1b]0;owned\x07 called\nrefund\u202e twice " + "word " * 60 + "(3 of 4)."

    def policy(params: dict[str, Any]) -> Reply:
        if forced_tool(params) == "record_cluster_name":
            return tool_reply(params, "record_cluster_name", {"name": hostile})
        return default_policy(params)

    standin.policy = policy
    data = json.loads(invoke(clustered, "--stored", "--with-judge", "--json").stdout)
    for c in data["clusters"]:
        name = c["name"]
        assert name.startswith("[red]x[/] ]0;owned called refund twice word")
        assert len(name) <= 100 and name.endswith("…")
        assert not any(ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F for ch in name)
        assert "\u202e" not in name and "(3 of 4)" not in name


def test_offline_clustering_needs_no_key_and_the_pass_says_it_does(clustered: Path) -> None:
    assert invoke(clustered, "--json").exit_code == 0
    r = invoke(clustered, "--stored", "--with-judge")
    assert r.exit_code == 1
    assert r.stderr.strip().splitlines()[-1].startswith("reviewer: ANTHROPIC_API_KEY is not set")
    assert "Traceback" not in r.output


def test_judge_options_need_with_judge(clustered: Path) -> None:
    r = invoke(clustered, "--apply-merges")
    assert r.exit_code == 1 and "--apply-merges goes with --with-judge" in r.stderr


def test_no_clustering_is_one_line(sample_db: Path, standin: StandIn) -> None:
    r = invoke(sample_db, "--stored", "--with-judge")
    assert r.exit_code == 1 and "no clustering stored yet" in r.stderr
    assert standin.message_requests == 0


def test_a_cancel_keeps_the_names_that_arrived(clustered: Path, standin: StandIn) -> None:
    cancel = threading.Event()

    def progress(stats: Any, outcome: Any) -> None:
        cancel.set()  # stop after the first reply

    with open_store(clustered) as db:
        result = judge_clusters(
            db,
            ClusterJudgeRequest(overrides={"concurrency": 1}),
            on_progress=progress,
            cancel=cancel,
        )
    assert len(result.named) == 1 and result.merge_stats is None
    n = len(stored_json(clustered)["clusters"])
    assert result.names_stats is not None and result.names_stats.cancelled == n - 1
    assert standin.message_requests == 1
    names = {c["name"] for c in stored_json(clustered)["clusters"]}
    assert result.named[0].name in names


@pytest.mark.parametrize(
    "raw, kept",
    [
        (
            '"Called cancel_order on shipped orders (12 of 19)."',
            "Called cancel_order on shipped orders",
        ),
        ("  refunded   shipping\ttoo [3/4 failures] ", "refunded shipping too"),
        ("'gave up'", "gave up"),
    ],
)
def test_a_name_is_cleaned_of_quotes_counts_and_spaces(raw: str, kept: str) -> None:
    from reviewer.judge.cluster_reply import clean_name

    assert clean_name(raw) == kept


def test_a_name_too_short_is_a_problem() -> None:
    from reviewer.judge.cluster_reply import name_problem

    assert name_problem({"name": " . "})[0] is None
    assert name_problem({"name": 3})[1] == "record_cluster_name.name must be a string, got int"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_sending_and_keeps_what_arrived(
    clustered: Path, tmp_path: Path, api_key: str, sig: signal.Signals
) -> None:
    env = {**os.environ}
    n = len(stored_json(clustered)["clusters"])
    with StandIn(delay=1.0) as server:
        env |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": api_key}
        cmd = [sys.executable, "-m", "reviewer", "--db", str(clustered), "cluster", "--stored"]
        proc = subprocess.Popen(
            [*cmd, "--with-judge"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGTERM, sig)],
        )
        deadline = time.monotonic() + 30
        while server.message_requests < n and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig, err
        assert "every reply received is cached and the names that arrived are shown" in err
        assert "Traceback" not in err
        assert server.message_requests == n  # the merge request was never sent
        assert {c["name"] for c in stored_json(clustered)["clusters"]} == STANDIN_NAMES
        server.delay = 0.0
        again = subprocess.run(
            [*cmd, "--with-judge", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        assert again.returncode == 0, again.stderr
        judge = json.loads(again.stdout)["judge"]
        assert (judge["names"]["requests"], judge["merges"]["requests"]) == (0, 1)


def test_a_cached_rerun_adds_no_edit_one_undo_goes_back(clustered: Path, standin: StandIn) -> None:
    for _ in range(3):
        assert invoke(clustered, "--stored", "--with-judge").exit_code == 0
    r = invoke(clustered, "undo", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["undone"] == "judge names"
    assert all(c["name"] == c["generated_name"] for c in stored_json(clustered)["clusters"])
    assert invoke(clustered, "undo").exit_code == 1  # nothing more to undo


def test_no_failures_means_nothing_to_name(tmp_path: Path, standin: StandIn) -> None:
    from tests.conftest import native_trial, write_jsonl

    db = tmp_path / "p.db"
    write_jsonl(tmp_path / "ok.jsonl", [native_trial(f"t{i}") for i in range(3)])
    assert (
        CliRunner().invoke(cli, ["--db", str(db), "import", str(tmp_path / "ok.jsonl")]).exit_code
        == 0
    )
    r = invoke(db, "--with-judge")
    assert r.exit_code == 0, r.output
    assert "no clusters for the judge to name" in r.stderr
    est = invoke(db, "--stored", "--with-judge", "--estimate")
    assert est.exit_code == 0 and "no clusters for the judge to name" in est.stdout
    assert standin.message_requests == 0
