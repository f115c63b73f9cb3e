"""A stored run judged again by a pass threshold on its rewards (`reviewer rescore`): the trials a
reward decided get the outcome the threshold gives, in their columns, their record and their task's
counts, inside the caller's transaction.

Which trials a reward decided: those with a reward and no passed of their own (the import's default
rule, reward ≥ 1 − 1e-6, decided them), and those an earlier threshold decided (their metadata
names it: ``pass_threshold``). A trial whose source said pass or fail keeps it; infrastructure
errors and unscored trials are never scored by a threshold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from reviewer.models import FAIL, PASS, REWARD_PASS_EPSILON
from reviewer.record import decode, encode
from reviewer.store.db import Store
from reviewer.store.writer import _METADATA_JSON

#: The metadata key a threshold that decided a trial's outcome is kept under.
THRESHOLD_KEY = "pass_threshold"

_MARKED = f"(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.{THRESHOLD_KEY}') END)"
_PAGE = 200


@dataclass
class Rescored:
    """What a threshold does (or did) to a run's trials."""

    decided: int = 0  # trials a reward decides
    to_pass: int = 0  # fails that now pass
    to_fail: int = 0  # passes that now fail
    own: int = 0  # scored trials whose source said pass or fail (kept)
    passes: int = 0  # the run's passes after
    scored: int = 0  # the run's pass and fail trials
    clustered: int = 0  # trials that changed and sit in a stored failure cluster
    tasks: set[str] = field(default_factory=set)  # tasks whose pass count changed


def rescore(db: Store, run: str, threshold: float, *, apply: bool) -> Rescored:
    """The run's reward-decided trials judged by ``reward ≥ threshold − 1e-6``; written only when
    ``apply`` (inside the caller's transaction), else counted."""
    out = Rescored()
    rows = db.execute(
        f"SELECT seq, task_id, outcome, reward, passed IS NULL OR {_MARKED} IS NOT NULL "
        "FROM trials WHERE run = ? AND outcome IN ('pass', 'fail')",
        [run],
    ).fetchall()
    changes: list[tuple[int, str, bool]] = []  # (seq, task, passes now)
    marked: list[int] = []
    for seq, task_id, outcome, reward, by_reward in rows:
        out.scored += 1
        if reward is None or not by_reward:
            out.own += 1
            out.passes += outcome == PASS
            continue
        out.decided += 1
        passes = reward >= threshold - REWARD_PASS_EPSILON
        out.passes += passes
        if passes != (outcome == PASS):
            changes.append((seq, task_id, passes))
            out.to_pass += passes
            out.to_fail += not passes
            out.tasks.add(task_id)
        else:
            marked.append(seq)
    changed = [seq for seq, _, _ in changes]
    for i in range(0, len(changed), 500):
        chunk = changed[i : i + 500]
        marks = ",".join("?" * len(chunk))
        (n,) = db.execute(
            "SELECT COUNT(DISTINCT m.trial_id) FROM cluster_members m JOIN trials t "
            f"ON t.id = m.trial_id WHERE t.seq IN ({marks})",
            chunk,
        ).fetchone()
        out.clustered += n
    if apply:
        _write(db, run, threshold, changes, marked)
    return out


def _write(
    db: Store, run: str, threshold: float, changes: list[tuple[int, str, bool]], same: list[int]
) -> None:
    """Each changed trial's outcome, and every reward-decided trial's record and metadata naming
    the threshold (so that it reads back as stored, and a later threshold finds it)."""
    now = {seq: (task_id, passes) for seq, task_id, passes in changes}
    seqs = [*now, *same]
    delta: dict[str, int] = {}
    for i in range(0, len(seqs), _PAGE):
        chunk = seqs[i : i + _PAGE]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT seq, run, task_id, trial, record, outcome FROM trials WHERE seq IN ({marks})",
            chunk,
        ).fetchall()
        for seq, run_, task_id, trial_no, record, outcome in rows:
            try:
                trial = decode(record, run=run_, task_id=task_id, trial=trial_no)
            except ValueError:
                continue  # a record no version could read keeps what it has, counts included
            passes = now[seq][1] if seq in now else outcome == PASS
            trial.passed = passes
            trial.metadata[THRESHOLD_KEY] = threshold
            trial.raw = None
            db.conn.execute(
                "UPDATE trials SET passed = ?, success = ?, outcome = ?, metadata = ?, record = ? "
                "WHERE seq = ?",
                [
                    int(passes),
                    int(passes),
                    PASS if passes else FAIL,
                    _METADATA_JSON.encode(trial.metadata),
                    encode(trial),
                    seq,
                ],
            )
            if passes != (outcome == PASS):
                delta[task_id] = delta.get(task_id, 0) + (1 if passes else -1)
    db.conn.executemany(
        "UPDATE task_stats SET c = c + ? WHERE run = ? AND task_id = ?",
        [(d, run, task_id) for task_id, d in delta.items() if d],
    )


@dataclass(frozen=True)
class PartialCredit:
    """Failures among some trials that got part of the reward and failed only by the default rule
    (reward ≥ 1 − 1e-6): the graded "failures" an export or a threshold should know about."""

    n: int = 0
    low: float | None = None
    high: float | None = None
    runs: tuple[str, ...] = ()

    def rewards(self) -> str:
        if self.low is None or self.high is None:
            return ""
        return f"{self.low:.2g}" if self.low == self.high else f"{self.low:.2g}–{self.high:.2g}"


def partial_credit(db: Store, trial_ids: Sequence[str]) -> PartialCredit:
    """Of ``trial_ids``, the failures with a reward strictly between 0 and 1 and no pass or fail of
    their own nor a chosen threshold (the default rule failed them)."""
    n, low, high, runs = 0, None, None, set()
    ids = list(trial_ids)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for run, count, lo, hi in db.execute(
            f"SELECT run, COUNT(*), MIN(reward), MAX(reward) FROM trials WHERE id IN ({marks}) "
            "AND outcome = 'fail' AND passed IS NULL AND reward > 0 AND reward < 1 GROUP BY run",
            chunk,
        ):
            n += count
            low = lo if low is None else min(low, lo)
            high = hi if high is None else max(high, hi)
            runs.add(run)
    return PartialCredit(n, low, high, tuple(sorted(runs)))
