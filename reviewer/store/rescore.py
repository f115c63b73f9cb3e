"""A stored run judged again by a pass threshold on its rewards (`reviewer rescore`): the trials a
reward decided get the outcome the threshold gives, in their columns, their record and their task's
counts, inside the caller's transaction.

Which trials a reward decided: those with a reward and no passed of their own (the import's default
rule, reward ≥ 1 − 1e-6, decided them), and those an earlier threshold decided (their metadata
names it, ``pass_threshold``, and their outcome is what it gives). A trial whose source said pass or fail keeps it; infrastructure
errors and unscored trials are never scored by a threshold."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_UP, Decimal

from reviewer.models import FAIL, PASS, REWARD_PASS_EPSILON, threshold_text
from reviewer.record import decode, dumps, encode
from reviewer.store.db import Store

#: The metadata key a threshold that decided a trial's outcome is kept under.
THRESHOLD_KEY = "pass_threshold"

_MARKED = f"(CASE WHEN json_valid(metadata) THEN json_extract(metadata, '$.{THRESHOLD_KEY}') END)"
# its JSON type: PostgreSQL's json_extract gives every value as text, SQLite's a number as a number
_MARKED_TYPE = f"(CASE WHEN json_valid(metadata) THEN json_type(metadata, '$.{THRESHOLD_KEY}') END)"
_PAGE = 200


@dataclass
class Rescored:
    """What a threshold does (or did) to a run's trials."""

    decided: int = 0  # trials a reward decides
    to_pass: int = 0  # fails that now pass
    to_fail: int = 0  # passes that now fail
    own: int = 0  # scored trials whose source said pass or fail (kept)
    unreadable: int = 0  # trials that would change but whose stored record no version reads (kept)
    passes: int = 0  # the run's passes after
    scored: int = 0  # the run's pass and fail trials
    clustered: int = 0  # trials that changed and sit in a stored failure cluster
    tasks: set[str] = field(default_factory=set)  # tasks whose pass count changed


def rescore(
    db: Store,
    run: str,
    threshold: float,
    *,
    apply: bool,
    only: AbstractSet[str] | None = None,
) -> Rescored:
    """The run's reward-decided trials (of ``only``, trial ids, when given) judged by
    ``reward ≥ threshold − 1e-6``; written only when ``apply`` (inside the caller's transaction),
    else counted.

    A trial is reward-decided when it has a reward and no passed of its own, or when its metadata
    names the threshold that decided it and its outcome is what that threshold gives (a record
    whose source happened to carry the key keeps its own outcome)."""
    out = Rescored()
    rows = db.execute(
        f"SELECT seq, id, task_id, outcome, reward, passed, {_MARKED}, {_MARKED_TYPE} "
        "FROM trials WHERE run = ? AND outcome IN ('pass', 'fail')",
        [run],
    ).fetchall()
    candidates: list[tuple[int, str, bool, bool]] = []  # (seq, task, passed before, passes now)
    for seq, trial_id, task_id, outcome, reward, passed, extracted, kind in rows:
        marker = _json_value(extracted, kind)
        if only is not None and trial_id not in only:
            continue
        out.scored += 1
        was = outcome == PASS
        if not _by_reward(reward, passed, marker):
            out.own += 1
            out.passes += was
            continue
        out.decided += 1
        now = reward >= threshold - REWARD_PASS_EPSILON
        if now != was or marker != threshold:
            candidates.append((seq, task_id, was, now))
        else:
            out.passes += was
    written = _apply(db, run, threshold, candidates, apply)
    changed: list[int] = []
    for seq, task_id, was, now in candidates:
        if seq not in written:  # no version reads its record: it keeps what it has
            out.unreadable += now != was
            out.passes += was
            continue
        out.passes += now
        if now != was:
            changed.append(seq)
            out.to_pass += now
            out.to_fail += not now
            out.tasks.add(task_id)
    for i in range(0, len(changed), 500):
        chunk = changed[i : i + 500]
        marks = ",".join("?" * len(chunk))
        (n,) = db.execute(
            "SELECT COUNT(DISTINCT m.trial_id) FROM cluster_members m JOIN trials t "
            f"ON t.id = m.trial_id WHERE t.seq IN ({marks})",
            chunk,
        ).fetchone()
        out.clustered += n
    return out


def _json_value(extracted: object, kind: str | None) -> object:
    """A value json_extract gave, as SQLite gives it whatever the database: a JSON number as a
    number, true and false as 1 and 0 (PostgreSQL's json_extract gives them as text)."""
    if not isinstance(extracted, str):
        return extracted
    if kind == "integer":
        return int(extracted)
    if kind == "real":
        return float(extracted)
    if kind in ("true", "false"):
        return int(kind == "true")
    return extracted


def _by_reward(reward: float | None, passed: int | None, marker: object) -> bool:
    """Whether a reward decided this trial: no passed of its own, or a threshold that decided it
    (a number in its metadata that gives the outcome it has)."""
    if reward is None:
        return False
    if passed is None:
        return True
    if isinstance(marker, bool) or not isinstance(marker, int | float) or marker != marker:
        return False
    return bool(passed) == (reward >= marker - REWARD_PASS_EPSILON)


def _apply(
    db: Store,
    run: str,
    threshold: float,
    candidates: list[tuple[int, str, bool, bool]],
    apply: bool,
) -> set[int]:
    """The candidates whose record reads (``seq``s). When ``apply``, each one's outcome and its
    record and metadata naming the threshold (so that it reads back as stored, and a later
    threshold finds it) are written, and its task's pass count follows. A dry run reads only the
    records of trials whose outcome would change (the others change no count)."""
    now = {seq: (was, passes) for seq, _, was, passes in candidates}
    seqs = [seq for seq, _, was, passes in candidates if apply or was != passes]
    readable = {seq for seq, _, was, passes in candidates if not apply and was == passes}
    delta: dict[str, int] = {}
    for i in range(0, len(seqs), _PAGE):
        chunk = seqs[i : i + _PAGE]
        marks = ",".join("?" * len(chunk))
        rows = db.execute(
            f"SELECT seq, task_id, trial, record FROM trials WHERE seq IN ({marks})",
            chunk,
        ).fetchall()
        for seq, task_id, trial_no, record in rows:
            try:
                trial = decode(record, run=run, task_id=task_id, trial=trial_no)
            except ValueError:
                continue  # a record no version could read keeps what it has, counts included
            readable.add(seq)
            if not apply:
                continue
            was, passes = now[seq]
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
                    dumps(trial.metadata),
                    encode(trial),
                    seq,
                ],
            )
            if passes != was:
                delta[task_id] = delta.get(task_id, 0) + (1 if passes else -1)
    db.conn.executemany(
        "UPDATE task_stats SET c = c + ? WHERE run = ? AND task_id = ?",
        [(d, run, task_id) for task_id, d in delta.items() if d],
    )
    return readable


@dataclass(frozen=True)
class PartialCredit:
    """Failures among some trials that got part of the reward and failed only by the default rule
    (reward ≥ 1 − 1e-6): the graded "failures" an export or a threshold should know about."""

    n: int = 0
    low: float | None = None
    high: float | None = None
    runs: tuple[str, ...] = ()

    def rewards(self) -> str:
        """The range of their rewards to 4 decimals, rounded inward so that neither end reads as 0
        or 1 (those are not partial credit)."""
        if self.low is None or self.high is None:
            return ""
        low, high = _inward(self.low, ROUND_UP), _inward(self.high, ROUND_DOWN)
        return low if low == high else f"{low}–{high}"


def _inward(x: float, rounding: str) -> str:
    step = Decimal("0.0001")
    shown = Decimal(repr(x)).quantize(step, rounding=rounding)
    shown = min(max(shown, step), 1 - step)
    return threshold_text(float(shown))


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
