"""The runner takes jobs a round at a time (one cache query, one claim transaction) and stores the
replies that arrive together in one transaction; what it claimed and did not send is let go."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reviewer.judge import runner
from reviewer.judge.claims import CLAIM_TTL_S
from reviewer.judge.jobs import BUILTIN_RUBRIC, verdict_jobs
from reviewer.judge.reply import Job
from reviewer.judge.runner import Runner
from reviewer.judge.settings import JudgeSettings
from reviewer.judge.standin import StandIn, default_policy
from reviewer.store.db import Store, open_store
from reviewer.store.judging import cache_get, cache_get_many, cache_put, claim_many, select_trials
from tests.conftest import SAMPLE_RUNS


def _jobs(db: Store, settings: JudgeSettings, n: int | None = None) -> list[Job]:
    ids = select_trials(db, ["support-v1"])[:n]
    return list(verdict_jobs(db, ids, BUILTIN_RUBRIC, settings))


def _claims(db: Store) -> list[tuple[Any, ...]]:
    return db.execute("SELECT key, owner, expires_at FROM judge_claims ORDER BY key").fetchall()


def _plant(db: Store, key: str, owner: str, expires_at: float) -> None:
    db.execute(
        "INSERT INTO judge_claims (key, owner, expires_at) VALUES (?, ?, ?)",
        [key, owner, expires_at],
    )
    db.conn.commit()


def test_claim_many_decides_each_key_of_a_round_by_the_claim_rules(db: Store) -> None:
    now = 1_000_000.0
    gone_holder = "elsewhere:7:dead"
    keys = [j.key for j in _jobs(db, JudgeSettings(), 8)]
    with db.transaction():
        cache_put(db, keys[0], {"model": "m"}, "{}")
    _plant(db, keys[1], "other:1:live", now + 60)  # another owner's live claim
    _plant(db, keys[2], "other:1:late", now - 1)  # expired
    _plant(db, keys[3], "me", now + 5)  # our own
    _plant(db, keys[4], gone_holder, now + 60)  # its holder is gone
    _plant(db, keys[5], "other:1:live", now)  # expires exactly now
    asked = [*keys, keys[6], keys[1]]  # a key asked twice is decided once
    states = claim_many(db, asked, "me", now, CLAIM_TTL_S, lambda h: h == gone_holder)
    assert states == {
        keys[0]: "cached",
        keys[1]: "taken",
        **{k: "claimed" for k in keys[2:]},
    }
    rows = {r[0]: (r[1], r[2]) for r in _claims(db)}
    assert rows == {
        keys[1]: ("other:1:live", now + 60),
        **{k: ("me", now + CLAIM_TTL_S) for k in keys[2:]},
    }


def test_cache_get_many_finds_every_stored_reply_among_many_keys(db: Store) -> None:
    keys = [f"k{i:04d}" for i in range(1200)]
    with db.transaction():
        for k in keys[::7]:
            cache_put(db, k, {"model": "m"}, json.dumps({"k": k}))
    got = cache_get_many(db, [*keys, "k0000", "absent"])
    assert set(got) == set(keys[::7])
    for k in keys[::7]:
        assert got[k] == cache_get(db, k)


class _InstantClient:
    """Answers every request at once (no network), so every reply of a round arrives together."""

    def __init__(self) -> None:
        self.messages = self
        self.with_raw_response = self
        self.sent = 0

    async def create(self, **params: Any) -> Any:
        self.sent += 1
        body = json.dumps(default_policy(params).body)
        return type("Raw", (), {"http_response": type("R", (), {"text": body})()})()

    async def close(self) -> None:
        pass


def test_replies_arriving_together_are_stored_in_one_transaction(
    db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    groups: list[int] = []
    real = runner.store_outcomes

    def counted(db: Store, outcomes: Any, owner: Any = None) -> None:
        groups.append(len(outcomes))
        real(db, outcomes, owner)

    monkeypatch.setattr(runner, "store_outcomes", counted)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake")
    settings = JudgeSettings(concurrency=8)
    jobs = _jobs(db, settings, 16)
    stats = Runner(db, settings, client_factory=lambda s: _InstantClient()).run(jobs, len(jobs))
    assert stats.done == 16 and stats.requests == 16
    assert sum(groups) == 16 and max(groups) > 1  # fewer transactions than replies
    n = db.execute("SELECT COUNT(*) FROM verdicts WHERE source = 'judge'").fetchone()[0]
    assert n == 16


def test_a_reply_that_cannot_be_stored_fails_alone_and_its_group_is_stored(
    db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake")
    settings = JudgeSettings(concurrency=8)
    jobs = _jobs(db, settings, 4)
    gone = Job(
        "verdict", "no-such-trial", jobs[0].judge, jobs[0].rubric, "gone-key", jobs[0].params
    )
    stats = Runner(db, settings, client_factory=lambda s: _InstantClient()).run([*jobs, gone], 5)
    assert stats.done == 4 and stats.failed == 1
    assert stats.failures and stats.failures[0].startswith("no-such-trial: IntegrityError")
    n = db.execute("SELECT COUNT(*) FROM verdicts WHERE source = 'judge'").fetchone()[0]
    assert n == 4
    assert _claims(db) == []


def test_a_cancelled_run_lets_go_of_requests_it_claimed_but_did_not_send(
    db: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "release_claims", lambda db, owner: None)  # only the unsent go
    let_go: list[str] = []
    real = runner.release_keys

    def recorded(db: Store, keys: list[str], owner: str) -> None:
        let_go.extend(keys)
        real(db, keys, owner)

    monkeypatch.setattr(runner, "release_keys", recorded)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake")
    cancel = threading.Event()

    def progress(stats: Any, outcome: Any) -> None:
        if stats.done >= 2:
            cancel.set()

    settings = JudgeSettings(concurrency=4)
    jobs = _jobs(db, settings)
    client = _InstantClient()
    stats = Runner(
        db, settings, cancel=cancel, on_progress=progress, client_factory=lambda s: client
    ).run(jobs, len(jobs))
    # the first round was sent and stored; the second, claimed meanwhile, was not sent
    assert stats.requests == client.sent == 4 and stats.cancelled == 36
    assert len(let_go) == 4
    assert _claims(db) == []
    marks = ",".join("?" * len(let_go))
    stored = db.execute(f"SELECT COUNT(*) FROM verdicts WHERE cache_key IN ({marks})", let_go)
    assert stored.fetchone()[0] == 0  # let go because they were not sent
    assert stats.requests + len(let_go) <= 40


def test_a_claim_left_in_this_process_by_a_finished_run_is_taken_over(
    db: Store, standin: StandIn
) -> None:
    settings = JudgeSettings(concurrency=3)
    jobs = _jobs(db, settings)
    left = f"{socket.gethostname()}:{os.getpid()}:finished"
    _plant(db, jobs[0].key, left, time.time() + CLAIM_TTL_S)
    stats = Runner(db, settings).run(jobs, len(jobs))
    assert stats.skipped_claimed == 0 and stats.done == 40
    assert standin.message_requests == 40


def test_the_standin_takes_a_burst_of_connections_and_answers_without_nagle_delay() -> None:
    """A backlog of 5 made a burst of 16 connects wait a second for a retried SYN; Nagle held each
    reply's body for the client's delayed ACK (about 40 ms)."""
    server = StandIn()
    try:
        assert server._server.request_queue_size >= 256
        assert server._server.RequestHandlerClass.disable_nagle_algorithm is True  # type: ignore[attr-defined]
    finally:
        server._server.server_close()


def test_the_sdk_is_imported_with_the_collector_paused_and_then_running() -> None:
    code = (
        "import gc, sys\n"
        "from reviewer.judge.runner import import_sdk\n"
        "seen = []\n"
        "gc.callbacks.append(lambda phase, info: seen.append(phase))\n"
        "import_sdk()\n"
        "assert 'anthropic' in sys.modules and gc.isenabled()\n"
        "assert not seen, seen\n"  # no collection ran during the import
        "gc.disable(); import_sdk(); assert not gc.isenabled()\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_the_judge_command_freezes_the_sdk_objects_once_after_its_import() -> None:
    code = (
        "import gc, sys\n"
        "from reviewer.commands.judge import settle_sdk\n"
        "calls = []\n"
        "step = settle_sdk(lambda stats, o: calls.append(gc.get_freeze_count()))\n"
        "step(None, None)\n"
        "assert calls == [0]\n"  # the SDK is not imported yet: nothing frozen
        "import anthropic\n"
        "step(None, None); frozen = gc.get_freeze_count(); assert frozen > 100000, frozen\n"
        "gc.unfreeze(); step(None, None); assert calls[-1] == 0\n"  # only once
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.parametrize("concurrency", [4, 120])
def test_connections_are_kept_alive_and_reused_at_any_concurrency(
    tmp_path: Path, standin: StandIn, concurrency: int
) -> None:
    """The SDK keeps at most 100 connections alive: beyond that, each request of a round would open
    a connection of its own (a TLS handshake at the real API) unless the pool is sized to the
    concurrency."""
    from reviewer.workflows.imports import import_paths

    sample = SAMPLE_RUNS / "support-v1.jsonl"
    records = [json.loads(x) for x in sample.read_text().splitlines() if x.strip()]
    src = tmp_path / "many.jsonl"
    with src.open("w") as fh:
        for i in range(2 * concurrency):  # two rounds: the second can reuse the first's
            rec = {**records[i % len(records)], "run": "many", "task_id": f"task-{i:04d}"}
            fh.write(json.dumps(rec) + "\n")
    standin.delay = 0.2  # every request of a round is in flight at once
    with open_store(tmp_path / "many.db") as db:
        import_paths(db, [src])
        settings = JudgeSettings(concurrency=concurrency)
        jobs = list(verdict_jobs(db, select_trials(db), BUILTIN_RUBRIC, settings))
        stats = Runner(db, settings).run(jobs, len(jobs))
    assert stats.done == len(jobs) == 2 * concurrency
    opened = {r["peer"] for r in standin.requests if r["path"] == "/v1/messages"}
    assert len(opened) <= concurrency


def test_the_judge_command_leaves_no_object_frozen_in_a_process_that_goes_on(
    db_path: Path, standin: StandIn
) -> None:
    """The command freezes the SDK's objects during the run; under a test runner (or any caller
    that goes on) they are handed back to the collector when it ends."""
    import gc

    from click.testing import CliRunner

    from reviewer.cli import cli

    before = gc.get_freeze_count()
    r = CliRunner().invoke(cli, ["--db", str(db_path), "judge", "--limit", "3"])
    assert r.exit_code == 0, r.output
    assert standin.message_requests == 3
    assert gc.get_freeze_count() == 0 <= before
