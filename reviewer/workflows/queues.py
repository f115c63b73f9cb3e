"""Make a calibration queue: the one path behind `reviewer sample` and the app's `a` form.

Both faces get the same default name, size and run checks, and the same answer when a queue of
that name exists already: it is handed back to resume (unless ``replace``), never sampled again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from reviewer.calibration.active import ActiveChoice, choose_stratum
from reviewer.calibration.agreement import MIN_LABELS
from reviewer.calibration.assurance import Outlook, labels_to_verdict
from reviewer.calibration.kappa import krippendorff_alpha
from reviewer.calibration.report import DEFAULT_THRESHOLD
from reviewer.calibration.sampling import make_queue as sample_queue

# re-exported for the faces (they import workflows only)
from reviewer.calibration.sampling import queue_summary as queue_summary
from reviewer.store.agreement_data import UnknownScope, gather_agreement, judge_mix
from reviewer.store.db import Store
from reviewer.store.labels import current_labels
from reviewer.store.queries import run_names
from reviewer.store.queues import LEASE_S as LEASE_S
from reviewer.store.queues import (
    Lease,
    Queue,
    QueueExists,
    claim_next,
    item_labels,
    judge_ids,
    labeler_counts,
    live_leases,
    peek_next,
    team_done,
)
from reviewer.store.queues import NoSuchQueue as NoSuchQueue
from reviewer.store.queues import QueueItem as QueueItem
from reviewer.store.queues import get_queue as get_queue
from reviewer.store.queues import list_queues as list_queues
from reviewer.store.queues import queue_items as queue_items
from reviewer.store.queues import queue_progress as queue_progress
from reviewer.store.queues import release_leases as release_leases
from reviewer.text import queue_name_problem, unknown_run

#: How many trials a queue holds unless told otherwise (the usual calibration sample).
DEFAULT_SIZE = 50
DEFAULT_SEED = 0


class QueueScopeError(ValueError):
    """A run or judge to sample from that the store does not hold."""


@dataclass(frozen=True)
class QueueMade:
    """The queue asked for: sampled now (``created``) or found stored under that name (to resume)."""

    queue: Queue
    created: bool
    requested: int
    done: int
    total: int

    @property
    def infra_left_out(self) -> int:
        """Trials in scope ended by infrastructure errors: never sampled."""
        return int(self.queue.params.get("infra_left_out", 0) or 0)

    @property
    def short(self) -> bool:
        """Fewer trials were left to sample than were asked for."""
        return self.created and len(self.queue.items) < self.requested

    @property
    def shortfall(self) -> str | None:
        """Why the queue holds fewer than asked: "asked for 50, the run has 48 trials: the queue
        holds 48" (and how many of them the labeler had labeled already); None when it does not."""
        if not self.short:
            return None
        p = self.queue.params
        runs = p.get("runs") or ([p["run"]] if p.get("run") else [])
        scope = (
            "the run has"
            if len(runs) == 1
            else f"the {len(runs)} runs have"
            if runs
            else "the database has"
        )
        in_scope = p.get("in_scope", len(self.queue.items) + p.get("already_labeled", 0))
        labeled = p.get("already_labeled", 0)
        mine = f" ({labeled} labeled by {self.queue.labeler} already)" if labeled else ""
        return (
            f"asked for {self.requested}, {scope} {in_scope} trials{mine}: "
            f"the queue holds {len(self.queue.items)}"
        )


def default_queue_name(
    labeler: str,
    run: str | None = None,
    seed: int = DEFAULT_SEED,
    runs: Sequence[str] = (),
    *,
    active: bool = False,
    shared: bool = False,
) -> str:
    """``LABELER-sSEED``, ``LABELER-RUN-sSEED`` for one run, ``LABELER-RUN1+RUN2-sSEED`` for
    several (``...-active-sSEED`` for an active queue, ``...-shared-sSEED`` for a shared one): the
    same data, labeler and seed give the same name, so asking again finds the queue to resume."""
    scope = sorted({*runs, *([run] if run else [])})
    kind = "active-" if active else "shared-" if shared else ""
    return f"{labeler}-{'+'.join(scope)}-{kind}s{seed}" if scope else f"{labeler}-{kind}s{seed}"


def make_queue(
    db: Store,
    labeler: str,
    *,
    n: int = DEFAULT_SIZE,
    seed: int = DEFAULT_SEED,
    run: str | None = None,
    name: str | None = None,
    judge: str | None = None,
    split: bool = False,
    replace: bool = False,
    trial_ids: Collection[str] | None = None,
    runs: Sequence[str] = (),
    active: bool = False,
    per_trial: int = 0,
) -> QueueMade:
    """Sample ``n`` trials ``labeler`` has not labeled (of ``run``) as a stratified queue (an active
    one with ``active``: see :func:`queue_status`), or hand back the stored queue of that name to
    resume.

    Raises QueueScopeError for an unknown run or judge, NothingToSample when every trial in scope is
    labeled, NoJudgeVerdicts for an active queue with no judged trial, and ValueError for a bad
    ``n``. ``per_trial`` (1 or more) makes a shared queue several labelers split, each trial
    labeled by that many of them (see :func:`queue_status`).
    """
    if n < 1:
        raise ValueError(f"a queue holds 1 trial or more, not {n}")
    if name is not None and (problem := queue_name_problem(name)) is not None:
        raise QueueScopeError(problem)
    wanted = sorted({*runs, *([run] if run is not None else [])})
    known = run_names(db)
    for one in wanted:
        if one not in known:
            raise QueueScopeError(unknown_run(one, known))
    if judge is not None and judge not in (judges := judge_ids(db)):
        raise QueueScopeError(
            f"no verdicts by judge {judge!r}; judges: {', '.join(map(repr, judges)) or 'none'}"
        )
    queue_name = name or default_queue_name(
        labeler, None, seed, wanted, active=active, shared=per_trial > 0
    )
    try:
        queue = sample_queue(
            db,
            queue_name,
            n,
            seed,
            None,
            runs=wanted,
            labeler=labeler,
            split="half" if split else None,
            judge=judge,
            replace=replace,
            trial_ids=trial_ids,
            active=active,
            per_trial=per_trial,
        )
    except QueueExists:
        stored = get_queue(db, queue_name)
        status = queue_status(db, queue_name, outlook=False)
        return QueueMade(stored, created=False, requested=n, done=status.done, total=status.total)
    total = min(n, len(queue.items)) if active else len(queue.items)
    return QueueMade(queue, created=True, requested=n, done=0, total=total)


@dataclass(frozen=True)
class ItemAgreement:
    """How the labelers of one shared-queue trial agree: their pass and fail labels."""

    position: int
    trial_id: str
    labels: dict[str, str]  # labeler -> pass | fail

    @property
    def majority(self) -> str | None:
        """The verdict most labelers gave; None on a tie."""
        passes = sum(1 for v in self.labels.values() if v == "pass")
        fails = len(self.labels) - passes
        return None if passes == fails else "pass" if passes > fails else "fail"

    @property
    def agreement(self) -> float:
        """The share of the trial's labelers who gave its most common verdict (1.0: unanimous)."""
        passes = sum(1 for v in self.labels.values() if v == "pass")
        return max(passes, len(self.labels) - passes) / len(self.labels) if self.labels else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "trial_id": self.trial_id,
            "labels": dict(self.labels),
            "majority": self.majority,
            "agreement": round(self.agreement, 4),
        }


@dataclass(frozen=True)
class TeamProgress:
    """Who labeled what of a queue: each labeler's count, and for a shared queue the trials with
    all their labels, the live leases (who is on which trial now) and, when each trial gets two or
    more labels, the per-trial agreement and Krippendorff's alpha over them."""

    by_labeler: dict[str, int]
    shared: bool = False
    per_trial: int = 1
    #: trials with ``per_trial`` labels or more (a shared queue's progress)
    complete: int = 0
    total: int = 0
    leases: tuple[Lease, ...] = ()
    #: trials two or more labelers gave pass or fail, in queue order (per_trial >= 2)
    items: tuple[ItemAgreement, ...] = ()
    #: nominal Krippendorff's alpha over ``items`` (None: fewer than two, or every label the same)
    alpha: float | None = None

    @property
    def alpha_note(self) -> str | None:
        """Why alpha is not given, when it is not."""
        if self.alpha is not None:
            return None
        if len(self.items) < 2:
            return f"alpha needs 2 or more trials with two labels; {len(self.items)} so far"
        return "alpha is undefined: every label given is the same"

    @property
    def disagreements(self) -> list[ItemAgreement]:
        return [it for it in self.items if it.agreement < 1.0]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"by_labeler": dict(self.by_labeler), "shared": self.shared}
        if self.shared:
            out.update(
                labels_per_trial=self.per_trial,
                complete=self.complete,
                total=self.total,
                leases=[
                    {
                        "position": k.position,
                        "trial_id": k.trial_id,
                        "labeler": k.labeler,
                        "expires": k.expires,  # Unix seconds, by the database's clock
                        "expires_at": _utc(k.expires),  # the same, as created_at is written
                        "seconds_left": round(k.left),
                    }
                    for k in self.leases
                ],
            )
        if self.per_trial >= 2:
            out["agreement"] = {
                "items": len(self.items),
                "unanimous": len(self.items) - len(self.disagreements),
                "alpha": self.alpha,
                "alpha_note": self.alpha_note,
                "disagreements": [it.to_dict() for it in self.disagreements],
            }
        return out


def _per_trial(queue: Queue) -> int:
    """A shared queue's labels per trial (1 unless it asked for more)."""
    return max(1, int(queue.params.get("per_trial") or 1))


def _labeled_in_order(db: Store, queue: Queue, who: str) -> tuple[QueueItem, ...]:
    """The queue's trials ``who`` labeled, oldest label first."""
    times = {t: lab.at for (t, _), lab in current_labels(db, labeler=who).items()}
    return tuple(
        sorted(
            (it for it in queue.items if it.trial_id in times), key=lambda it: times[it.trial_id]
        )
    )


def team_progress(db: Store, queue: Queue) -> TeamProgress:
    """Each labeler's progress on ``queue`` (any queue), and a shared queue's team state."""
    counts = labeler_counts(db, queue.name)
    if not queue.params.get("shared"):
        return TeamProgress(counts)
    per_trial = _per_trial(queue)
    total = len(queue.items) if queue.items else len(queue_items(db, queue.name))
    items: tuple[ItemAgreement, ...] = ()
    alpha = None
    if per_trial >= 2:
        positions = {it.trial_id: it.position for it in queue.items or queue_items(db, queue.name)}
        by_trial = item_labels(db, queue.name)
        items = tuple(
            ItemAgreement(positions.get(t, 0), t, labels)
            for t, labels in by_trial.items()
            if len(labels) >= 2
        )
        if len(items) >= 2:  # units of any number of labels: alpha needs no fixed raters
            alpha = krippendorff_alpha([list(it.labels.values()) for it in items])
    return TeamProgress(
        counts,
        shared=True,
        per_trial=per_trial,
        complete=team_done(db, queue.name, per_trial),
        total=total,
        leases=tuple(live_leases(db, queue.name)),
        items=items,
        alpha=alpha,
    )


@dataclass(frozen=True)
class QueueStatus:
    """Where a queue stands for a labeler: progress, the next trial, and the labels to a verdict.

    An active queue holds a reserve of judge-pass and judge-fail trials and labels up to ``total``
    of them; its next trial is decided afresh from the labels so far (``choice``), so it resumes
    wherever the labels left it, whoever gave them and from wherever.
    """

    name: str
    labeler: str
    active: bool
    done: int
    total: int
    #: the next trial to label (None: the queue is done)
    next_item: QueueItem | None
    #: why the next trial of an active queue is that one (None for a stratified queue)
    choice: ActiveChoice | None
    #: further labels the judge's trust verdict needs (None when not asked for)
    outlook: Outlook | None
    judge: str | None
    #: an active or shared queue's trials this labeler labeled, oldest label first
    labeled: tuple[QueueItem, ...] = ()
    #: who labeled what (every queue); a shared queue's leases and agreement
    team: TeamProgress | None = None

    @property
    def shared(self) -> bool:
        return self.team is not None and self.team.shared

    @property
    def next_position(self) -> int | None:
        return None if self.next_item is None else self.next_item.position

    @property
    def why(self) -> str | None:
        """How the next trial was chosen, without the judge's verdict of it (safe while labeling)."""
        if self.next_item is None:
            return None
        if self.shared:
            return "shared queue: the first trial still short of labels that others do not hold"
        if self.choice is None:
            return "the queue's order (stratified sample)"
        return self.choice.neutral()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "labeler": self.labeler,
            "active": self.active,
            "done": self.done,
            "total": self.total,
            "next_position": self.next_position,
            "next_trial": None if self.next_item is None else self.next_item.trial_id,
            "why": self.why,
            "judge": self.judge,
            "labels_to_verdict": None if self.outlook is None else self.outlook.labels,
            "outlook": None if self.outlook is None else self.outlook.to_dict(),
            "shared": self.shared,
            "team": None if self.team is None else self.team.to_dict(),
        }


def agreement_table(
    db: Store, labeler: str, judge: str | None = None
) -> tuple[list[list[int]], dict[str, int], str | None]:
    """(confusion, judge's verdict mix, judge) of ``labeler`` against ``judge`` (by default the
    judge the agreement report picks) as `reviewer agreement` computes them; an empty table when
    the labeler has no labels yet."""
    try:
        data = gather_agreement(db, judge=judge, labeler=labeler)
    except UnknownScope:  # no labels by this labeler yet
        data = None
    if data is None:
        chosen = judge if judge is not None else next(iter(judge_ids(db)), None)
        return [[0, 0], [0, 0]], judge_mix(db, chosen), chosen
    table = [[0, 0], [0, 0]]
    for human, verdict in data.pairs.values():
        table[0 if human == "pass" else 1][0 if verdict == "pass" else 1] += 1
    return table, dict(data.judge_mix), data.judge


def progress_of(queue: Queue, you: str, asked: str | None = None) -> str:
    """Whose progress a listing of queues shows for a queue (`reviewer queues`, the app's queue
    list, the same rule): the labeler ``asked`` for; else on a shared queue yours (its next trial
    and progress are the asker's), on another the queue's own labeler (it is theirs to label)."""
    return asked or (you if queue.params.get("shared") else queue.labeler)


def queue_status(
    db: Store,
    name: str,
    labeler: str | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    outlook: bool = True,
    seed: int = 0,
    claim: bool = False,
    lease_s: float | None = None,
) -> QueueStatus:
    """Progress, next trial and labels to a verdict of the queue ``name`` for ``labeler`` (the
    queue's own by default): the one answer behind `reviewer queues`, `reviewer sample` and the
    app's queue list and label screen. Raises NoSuchQueue.

    A shared queue's next trial is the one no other labeler holds: with ``claim`` (the label
    screen, `reviewer queues --next`) it is leased to ``labeler`` for ``lease_s`` seconds (default
    ``store.queues.LEASE_S``); without, it is only looked up. Its ``done`` / ``total`` are the
    team's: trials with all their labels, of all the queue's trials."""
    queue = get_queue(db, name)
    who = labeler or queue.labeler
    taken = None
    if claim and queue.params.get("shared"):  # leased first: the team's state then shows it
        more = {} if lease_s is None else {"lease_s": lease_s}
        taken = claim_next(db, name, who, _per_trial(queue), **more)
    team = team_progress(db, queue)
    active = bool(queue.params.get("active"))
    judge = queue.params.get("judge")
    need_table = outlook or active
    table, mix, judge = (
        agreement_table(db, who, judge) if need_table else ([[0, 0], [0, 0]], {}, judge)
    )
    verdict = (
        labels_to_verdict(table, threshold, MIN_LABELS, mix=mix or None, seed=seed)
        if outlook
        else None
    )
    if team.shared:
        item = taken if claim else peek_next(db, name, who, team.per_trial)
        return QueueStatus(
            name,
            who,
            False,
            team.complete,
            team.total,
            item,
            None,
            verdict,
            judge,
            _labeled_in_order(db, queue, who),
            team,
        )
    if not active:
        done, total, nxt = queue_progress(db, name, who)
        item = next((it for it in queue.items if it.position == nxt), None)
        return QueueStatus(name, who, False, done, total, item, None, verdict, judge, team=team)
    mine = _labeled_in_order(db, queue, who)
    done = len(mine)
    total = min(int(queue.params.get("n") or len(queue.items)), len(queue.items))
    labeled = {it.trial_id for it in mine}
    left = [it for it in queue.items if it.trial_id not in labeled]
    choice = None
    item = None
    if done < total and left:
        available = {v: sum(1 for it in left if it.verdict == v) for v in ("pass", "fail")}
        choice = choose_stratum(table, mix, available)
        if choice is not None:
            item = next(it for it in left if it.verdict == choice.stratum)
    return QueueStatus(name, who, True, done, total, item, choice, verdict, judge, mine, team)


def _utc(seconds: float) -> str:
    """Unix SECONDS as an ISO-8601 time in UTC, to the second."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")
