"""SQL for `reviewer judge`: the response cache, verdicts it writes, the trials it selects, batches.

The API key is never passed to anything here: the cache holds the request parameters (model, prompt,
tools, sampling) and the reply body, nothing from the HTTP headers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.store.db import Store
from reviewer.store.labels import now_at
from reviewer.store.summaries import take_in_verdicts


@dataclass(frozen=True)
class CachedReply:
    body: str
    created_at: str


def cache_get(db: Store, key: str) -> CachedReply | None:
    row = db.execute("SELECT response, created_at FROM judge_cache WHERE key = ?", [key]).fetchone()
    return CachedReply(row[0], row[1]) if row else None


def cache_get_many(db: Store, keys: Sequence[str]) -> dict[str, CachedReply]:
    """The cached replies of ``keys`` that have one (one query per 500 keys)."""
    rows = _rows_in(db, "SELECT key, response, created_at FROM judge_cache WHERE key IN ({})", keys)
    return {r[0]: CachedReply(r[1], r[2]) for r in rows}


def _rows_in(db: Store, sql: str, keys: Sequence[str]) -> list[Any]:
    """The rows of ``sql`` (its ``{}`` the placeholders of an IN list) over the distinct ``keys``,
    500 keys a query."""
    rows: list[Any] = []
    unique = list(dict.fromkeys(keys))
    for start in range(0, len(unique), 500):
        part = unique[start : start + 500]
        rows += db.execute(sql.format(",".join("?" * len(part))), part).fetchall()
    return rows


def cache_put(db: Store, key: str, params: dict[str, Any], body: str) -> None:
    db.execute(
        "INSERT OR REPLACE INTO judge_cache (key, model, request, response, created_at) "
        "VALUES (?, ?, ?, ?, ?)",
        [key, params.get("model", ""), json.dumps(params, ensure_ascii=False), body, now_at()],
    )


def cache_drop(db: Store, keys: Iterable[str]) -> None:
    db.conn.executemany("DELETE FROM judge_cache WHERE key = ?", [(k,) for k in keys])


@dataclass(frozen=True)
class VerdictWrite:
    trial_id: str
    judge: str
    verdict: str
    rationale: str
    model: str
    rubric: str
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    raw: str
    source: str
    cache_key: str
    latency_s: float | None
    cache_write_tokens: int | None = None
    cache_read_tokens: int | None = None


def write_verdict(db: Store, v: VerdictWrite) -> None:
    """One judge's verdict on one trial; a new verdict of the same judge replaces the old one."""
    db.execute(
        "INSERT INTO verdicts (trial_id, judge, verdict, rationale, model, rubric, input_tokens, "
        "output_tokens, cost_usd, raw, source, created_at, cache_key, latency_s, "
        "cache_write_tokens, cache_read_tokens) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (trial_id, judge) DO UPDATE SET verdict = excluded.verdict, "
        "rationale = excluded.rationale, model = excluded.model, rubric = excluded.rubric, "
        "input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, "
        "cost_usd = excluded.cost_usd, raw = excluded.raw, source = excluded.source, "
        "created_at = excluded.created_at, cache_key = excluded.cache_key, "
        "latency_s = excluded.latency_s, cache_write_tokens = excluded.cache_write_tokens, "
        "cache_read_tokens = excluded.cache_read_tokens",
        [
            v.trial_id,
            v.judge,
            v.verdict,
            v.rationale,
            v.model,
            v.rubric,
            v.input_tokens,
            v.output_tokens,
            v.cost_usd,
            v.raw,
            v.source,
            now_at(),
            v.cache_key,
            v.latency_s,
            v.cache_write_tokens,
            v.cache_read_tokens,
        ],
    )
    take_in_verdicts(db)  # the latest verdict per trial and its counts (m016)


def judged(db: Store, judge: str, *, errors: bool = False) -> set[str]:
    """Trials this judge has a verdict on (``errors``: only its ``error`` verdicts)."""
    cond = "verdict = 'error'" if errors else "verdict != 'error'"
    rows = db.execute(
        f"SELECT trial_id FROM latest_judge_verdicts WHERE judge = ? AND {cond}", [judge]
    )
    return {r[0] for r in rows.fetchall()}


def error_cache_keys(db: Store, judge: str) -> list[str]:
    rows = db.execute(
        "SELECT cache_key FROM latest_judge_verdicts WHERE judge = ? AND verdict = 'error' "
        "AND cache_key IS NOT NULL",
        [judge],
    )
    return [r[0] for r in rows.fetchall()]


def select_trials(
    db: Store,
    runs: Sequence[str] = (),
    *,
    labeled: bool = False,
    queue: str | None = None,
    trial_ids: Sequence[str] | None = None,
    limit: int | None = None,
) -> list[str]:
    """Trial ids to judge, in a stable order (run, task, trial)."""
    where: list[str] = []
    params: list[Any] = []
    if runs:
        where.append(f"t.run IN ({','.join('?' * len(runs))})")
        params += list(runs)
    if labeled:
        where.append("t.id IN (SELECT trial_id FROM standing_labels)")
    if queue is not None:
        where.append("t.id IN (SELECT trial_id FROM queue_items WHERE queue = ?)")
        params.append(queue)
    if trial_ids is not None:
        ids = list(trial_ids)
        if not ids:
            return []
        where.append(f"t.id IN ({','.join('?' * len(ids))})")
        params += ids
    sql = "SELECT t.id FROM trials t"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY t.run, t.task_id, t.trial, t.seq"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [r[0] for r in db.execute(sql, params).fetchall()]


def queue_names(db: Store) -> list[str]:
    return [r[0] for r in db.execute("SELECT name FROM queues ORDER BY name").fetchall()]


# --- Message Batches ------------------------------------------------------------------------


@dataclass(frozen=True)
class BatchRow:
    id: str
    kind: str
    judge: str
    model: str
    n_requests: int
    status: str
    submitted_at: str


def add_batch(
    db: Store,
    batch_id: str,
    kind: str,
    judge: str,
    model: str,
    items: Sequence[tuple[str, str, dict[str, Any]]],
) -> None:
    """Record a submitted batch and its items (custom id, cache key, job) in one transaction."""
    with db.transaction():
        db.execute(
            "INSERT INTO judge_batches (id, kind, judge, model, n_requests, status, submitted_at) "
            "VALUES (?, ?, ?, ?, ?, 'submitted', ?)",
            [batch_id, kind, judge, model, len(items), now_at()],
        )
        db.conn.executemany(
            "INSERT INTO judge_batch_items (batch_id, custom_id, cache_key, job) VALUES (?, ?, ?, ?)",
            [(batch_id, cid, key, json.dumps(job, ensure_ascii=False)) for cid, key, job in items],
        )


def open_batches(db: Store) -> list[BatchRow]:
    rows = db.execute(
        "SELECT id, kind, judge, model, n_requests, status, submitted_at FROM judge_batches "
        "WHERE collected_at IS NULL ORDER BY submitted_at, id"
    ).fetchall()
    return [BatchRow(*r) for r in rows]


def batch_items(db: Store, batch_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
    rows = db.execute(
        "SELECT custom_id, cache_key, job FROM judge_batch_items WHERE batch_id = ?", [batch_id]
    ).fetchall()
    return {r[0]: (r[1], json.loads(r[2])) for r in rows}


def set_batch_status(db: Store, batch_id: str, status: str, *, collected: bool = False) -> None:
    if collected:
        db.execute(
            "UPDATE judge_batches SET status = ?, collected_at = ? WHERE id = ?",
            [status, now_at(), batch_id],
        )
    else:
        db.execute("UPDATE judge_batches SET status = ? WHERE id = ?", [status, batch_id])


def batch_attempts(db: Store, keys: Sequence[str]) -> dict[str, int]:
    """How many batches each request (cache key) has been submitted in."""
    sql = "SELECT cache_key, COUNT(*) FROM judge_batch_items WHERE cache_key IN ({}) GROUP BY cache_key"
    return {r[0]: r[1] for r in _rows_in(db, sql, keys)}


def pending_batch_keys(db: Store) -> set[str]:
    """Cache keys already submitted in a batch that is not collected yet (not to be sent twice)."""
    rows = db.execute(
        "SELECT i.cache_key FROM judge_batch_items i JOIN judge_batches b ON b.id = i.batch_id "
        "WHERE b.collected_at IS NULL"
    ).fetchall()
    return {r[0] for r in rows}


# --- claims: which process is sending which request ------------------------------------------


def claim_many(
    db: Store,
    keys: Sequence[str],
    owner: str,
    now: float,
    ttl_s: float,
    gone: Callable[[str], bool] = lambda holder: False,
) -> dict[str, str]:
    """Claim the requests ``keys`` for ``owner`` in one transaction. Each key's state:
    ``"cached"`` when its reply is already stored, ``"taken"`` when another owner holds a live
    claim, else ``"claimed"`` (a claim that expired, or whose holder is ``gone``, is taken over)."""
    unique = list(dict.fromkeys(keys))
    if not unique:
        return {}
    marks = ",".join("?" * len(unique))
    with db.transaction():
        cached = {
            r[0]
            for r in db.execute(
                f"SELECT key FROM judge_cache WHERE key IN ({marks})", unique
            ).fetchall()
        }
        holders = {
            r[0]: (r[1], r[2])
            for r in db.execute(
                f"SELECT key, owner, expires_at FROM judge_claims WHERE key IN ({marks})", unique
            ).fetchall()
        }
        states: dict[str, str] = {}
        for key in unique:
            held = holders.get(key)
            if key in cached:
                states[key] = "cached"
            elif held is not None and held[0] != owner and held[1] > now and not gone(held[0]):
                states[key] = "taken"
            else:
                states[key] = "claimed"
        db.conn.executemany(
            "INSERT INTO judge_claims (key, owner, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, "
            "expires_at = excluded.expires_at",
            [(k, owner, now + ttl_s) for k, v in states.items() if v == "claimed"],
        )
    return states


def renew_claims(db: Store, owner: str, until: float) -> None:
    """Keep every claim of ``owner`` alive until ``until`` (the heartbeat)."""
    with db.transaction():
        db.execute("UPDATE judge_claims SET expires_at = ? WHERE owner = ?", [until, owner])


def release_claim(db: Store, key: str, owner: str | None) -> None:
    """Let the request go (stored, given up or cancelled); part of the caller's transaction.
    ``owner`` None lets go of anyone's claim on it (its reply is stored now)."""
    if owner is None:
        db.execute("DELETE FROM judge_claims WHERE key = ?", [key])
    else:
        db.execute("DELETE FROM judge_claims WHERE key = ? AND owner = ?", [key, owner])


def release_keys(db: Store, keys: Sequence[str], owner: str) -> None:
    """Let go of ``owner``'s claims on ``keys`` (claimed, then not sent), in one transaction."""
    with db.transaction():
        db.conn.executemany(
            "DELETE FROM judge_claims WHERE key = ? AND owner = ?", [(k, owner) for k in keys]
        )


def release_claims(db: Store, owner: str) -> None:
    with db.transaction():
        db.execute("DELETE FROM judge_claims WHERE owner = ?", [owner])


def mean_output_tokens(db: Store, judge: str) -> float | None:
    """The mean output tokens of ``judge``'s stored replies (None when it has none)."""
    row = db.execute(
        "SELECT AVG(output_tokens) FROM verdicts WHERE judge = ? AND output_tokens > 0", [judge]
    ).fetchone()
    return None if row is None or row[0] is None else float(row[0])
