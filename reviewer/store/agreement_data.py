"""What the agreement report needs from the store: standing human labels under one rubric version
and the latest verdict of one judge on the same trials.

Which label stands and which verdict is latest are the views of migration m006 (through
:mod:`reviewer.store.labels` for labels); this module only chooses the scope (rubric, judge,
labeler) and reads verdicts and trial headers.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from reviewer.models import Label
from reviewer.store.db import Store
from reviewer.store.labels import current_labels, labelers
from reviewer.store.queues import judge_ids

__all__ = [
    "NO_RUBRIC",
    "AgreementData",
    "TrialInfo",
    "UnknownScope",
    "gather_agreement",
    "judge_mix",
]

#: How a label given without a rubric is named when choosing a rubric version.
NO_RUBRIC = "(no rubric)"
_VERDICTS = ("pass", "fail")


class UnknownScope(ValueError):
    """A judge, labeler or rubric named on the command line that the store does not hold."""


@dataclass(frozen=True)
class TrialInfo:
    """Where a trial comes from, and the chosen judge's verdict and rationale on it."""

    run: str
    task_id: str
    trial: int
    verdict: str | None = None
    rationale: str | None = None


@dataclass
class AgreementData:
    """Everything the agreement report is computed from, with the choices made and what was left out."""

    judge: str | None
    judge_default: bool
    #: judge id -> verdicts (not errors) on trials the human side labeled pass/fail
    judges: dict[str, int]
    labeler: str | None
    labeler_default: bool
    #: labeler -> pass/fail labels under the rubric on trials the judge graded
    labelers: dict[str, int]
    rubric: str | None
    rubric_default: bool
    #: rubric ref -> current labels given under it that were left out (another version)
    other_rubrics: dict[str, int] = field(default_factory=dict)
    #: trial id -> (human, judge) for the compared labeler, pass/fail on both sides
    pairs: dict[str, tuple[str, str]] = field(default_factory=dict)
    judge_errors: int = 0
    skip_labels: int = 0
    ungraded: int = 0
    #: labeler -> trial id -> pass/fail, every labeler, under the rubric (the human ceiling)
    human: dict[str, dict[str, str]] = field(default_factory=dict)
    #: labeler -> trial id -> {criterion: answer}, from pass/fail labels under the rubric
    criteria: dict[str, dict[str, dict[str, bool | None]]] = field(default_factory=dict)
    #: the rubric's criterion ids in its own order, when the rubric version is recorded
    criteria_order: list[str] = field(default_factory=list)
    trials: dict[str, TrialInfo] = field(default_factory=dict)
    #: current labels of every labeler under any rubric (0: nobody has labeled yet)
    labels_total: int = 0
    #: the chosen judge's latest pass and fail verdicts over every trial it graded
    judge_mix: dict[str, int] = field(default_factory=dict)


def gather_agreement(
    db: Store,
    judge: str | None = None,
    labeler: str | None = None,
    rubric: str | None = None,
) -> AgreementData:
    """Collect labels and verdicts for the agreement report.

    Defaults: the rubric of the most recent standing label; the judge with the most verdicts on
    trials labeled under it; the labeler with the most labels on trials that judge graded.
    Raises :class:`UnknownScope` for a judge, labeler or rubric the store does not hold.
    """
    _check_labeler(db, labeler)
    standing = current_labels(db)
    ref, under = _rubric_scope(db, standing, rubric)
    other = Counter(_ref_name(lab.rubric) for key, lab in standing.items() if key not in under)
    usable = [lab for lab in under.values() if lab.verdict in _VERDICTS]
    scoped = [lab for lab in usable if labeler is None or lab.labeler == labeler]
    counts = judge_counts(db, {lab.trial_id for lab in scoped})
    chosen_judge = _choose_judge(db, judge, counts)
    verdicts = verdicts_of_judge(db, chosen_judge, {lab.trial_id for lab in under.values()})
    graded = {t for t, (v, _) in verdicts.items() if v in _VERDICTS}
    per_labeler = Counter(lab.labeler for lab in usable if lab.trial_id in graded)
    chosen_labeler = labeler if labeler is not None else _most(per_labeler, usable)
    mine = [lab for lab in under.values() if lab.labeler == chosen_labeler]
    data = AgreementData(
        judge=chosen_judge,
        judge_default=judge is None,
        judges=counts,
        labeler=chosen_labeler,
        labeler_default=labeler is None,
        labelers=_labeler_counts(per_labeler, usable),
        rubric=ref,
        rubric_default=rubric is None,
        other_rubrics=dict(sorted(other.items())),
        human={who: {} for who in sorted({lab.labeler for lab in usable})},
        criteria_order=rubric_criteria(db, ref),
        labels_total=len(standing),
        judge_mix=judge_mix(db, chosen_judge),
    )
    _pair_up(data, mine, verdicts)
    for lab in usable:
        data.human[lab.labeler][lab.trial_id] = lab.verdict
        if lab.criteria:
            data.criteria.setdefault(lab.labeler, {})[lab.trial_id] = dict(lab.criteria)
    disagreeing = [t for t, (h, j) in data.pairs.items() if h != j]
    data.trials = trial_infos(db, disagreeing, verdicts)
    return data


def _check_labeler(db: Store, labeler: str | None) -> None:
    if labeler is not None and labeler not in (known := labelers(db)):
        raise UnknownScope(
            f"no labels by {labeler!r}; labelers: {', '.join(map(repr, known)) or 'none'}"
        )


def _ref_name(ref: str | None) -> str:
    return NO_RUBRIC if ref is None else ref


def _rubric_scope(
    db: Store, standing: dict[tuple[str, str], Label], rubric: str | None
) -> tuple[str | None, dict[tuple[str, str], Label]]:
    """The rubric version to compute on and the current labels under it (versions never mixed)."""
    refs = Counter(_ref_name(lab.rubric) for lab in standing.values())
    if rubric is not None and rubric not in refs:
        known = ", ".join(sorted(refs)) or "none"
        raise UnknownScope(f"no current labels under rubric {rubric!r}; rubrics: {known}")
    if rubric is None:
        if not standing:
            return None, {}
        latest = max(standing.values(), key=lambda lab: lab.at)
        rubric = _ref_name(latest.rubric)
    if rubric == NO_RUBRIC:
        return None, {k: lab for k, lab in standing.items() if lab.rubric is None}
    return rubric, current_labels(db, rubric=rubric)


def _choose_judge(db: Store, judge: str | None, counts: dict[str, int]) -> str | None:
    if judge is not None:
        known = judge_ids(db)
        if judge not in known:
            raise UnknownScope(
                f"no verdicts by judge {judge!r}; judges: {', '.join(map(repr, known)) or 'none'}"
            )
        return judge
    if counts:
        return next(iter(counts))
    known = judge_ids(db)
    return known[0] if known else None


def _most(counts: Counter[str], usable: list[Label]) -> str | None:
    """The labeler with the most compared labels; ties and no overlap fall back to most labels."""
    fallback = Counter(lab.labeler for lab in usable)
    ranked = sorted(fallback, key=lambda who: (-counts.get(who, 0), -fallback[who], who))
    return ranked[0] if ranked else None


def _labeler_counts(compared: Counter[str], usable: list[Label]) -> dict[str, int]:
    """Every labeler with a pass/fail label under the rubric -> labels the judge also graded."""
    everyone = {lab.labeler for lab in usable}
    return dict(sorted(((w, compared.get(w, 0)) for w in everyone), key=lambda kv: (-kv[1], kv[0])))


def _pair_up(
    data: AgreementData, mine: list[Label], verdicts: dict[str, tuple[str, str | None]]
) -> None:
    """Pairs of the compared labeler with the judge, and counts of what could not be paired."""
    for lab in sorted(mine, key=lambda lab: lab.trial_id):
        if lab.verdict not in _VERDICTS:
            data.skip_labels += 1
            continue
        verdict = verdicts.get(lab.trial_id, (None, None))[0]
        if verdict is None:
            data.ungraded += 1
        elif verdict not in _VERDICTS:
            data.judge_errors += 1
        else:
            data.pairs[lab.trial_id] = (lab.verdict, verdict)


def judge_counts(db: Store, trial_ids: Iterable[str]) -> dict[str, int]:
    """judge id -> latest verdicts that are not errors on ``trial_ids``, most first (then by id)."""
    sql = (
        f"SELECT judge, SUM(verdict != 'error') AS ok, COUNT(*) AS n FROM ({_LATEST}) "
        "GROUP BY judge ORDER BY ok DESC, n DESC, judge"
    )
    rows = db.conn.execute(sql, [_ids_json(trial_ids)]).fetchall()
    return {str(r[0]): int(r[1]) for r in rows}


def verdicts_of_judge(
    db: Store, judge: str | None, trial_ids: Iterable[str]
) -> dict[str, tuple[str, str | None]]:
    """trial id -> (verdict, rationale) of the judge's latest verdict on each of ``trial_ids``."""
    if judge is None:
        return {}
    sql = f"SELECT trial_id, verdict, rationale FROM ({_LATEST}) WHERE judge = ?"
    rows = db.conn.execute(sql, [_ids_json(trial_ids), judge]).fetchall()
    return {str(r[0]): (str(r[1]), r[2]) for r in rows}


def judge_mix(db: Store, judge: str | None) -> dict[str, int]:
    """{"pass": n, "fail": n}: the judge's latest verdicts over every trial it graded (errors left
    out); empty for no judge. Kept per database, judge and verdicts written (the label screen asks
    after every label; a million verdicts take seconds to count)."""
    if judge is None:
        return {}
    key = _verdicts_version(db, judge)
    with _mix_lock:
        if key is not None and key in _mix_cache:
            return dict(_mix_cache[key])
    rows = db.conn.execute(
        "SELECT verdict, COUNT(*) FROM latest_judge_verdicts WHERE judge = ? "
        "AND verdict IN ('pass', 'fail') GROUP BY verdict",
        [judge],
    ).fetchall()
    counts = {str(v): int(n) for v, n in rows}
    mix = {v: counts.get(v, 0) for v in _VERDICTS}
    if key is not None:
        with _mix_lock:
            _mix_cache[key] = mix
            while len(_mix_cache) > 64:
                _mix_cache.pop(next(iter(_mix_cache)))
    return dict(mix)


_mix_cache: dict[tuple[object, ...], dict[str, int]] = {}
_mix_lock = threading.Lock()


def _verdicts_version(db: Store, judge: str) -> tuple[object, ...] | None:
    """What a judge's verdict counts depend on: the file, the top verdict id (inserts) and the
    counter every in-place update or delete bumps (m007); None for an in-memory database."""
    where = db.identity()
    if where is None:
        return None
    row = db.conn.execute(
        "SELECT (SELECT MAX(id) FROM verdicts), (SELECT n FROM data_edits WHERE id = 1)"
    ).fetchone()
    return (where, judge, *row)


def trial_infos(
    db: Store,
    trial_ids: Iterable[str],
    verdicts: dict[str, tuple[str, str | None]],
) -> dict[str, TrialInfo]:
    """trial id -> run, task, trial number and the judge's verdict and rationale."""
    rows = db.conn.execute(
        "SELECT id, run, task_id, trial FROM trials WHERE id IN (SELECT value FROM json_each(?)) "
        "ORDER BY run, task_id, trial",
        [_ids_json(trial_ids)],
    ).fetchall()
    out = {}
    for tid, run, task, number in rows:
        verdict, rationale = verdicts.get(tid, (None, None))
        out[str(tid)] = TrialInfo(str(run), str(task), int(number), verdict, rationale)
    return out


def rubric_criteria(db: Store, ref: str | None) -> list[str]:
    """The criterion ids of a recorded rubric version, in the rubric's order; [] when unknown."""
    if ref is None:
        return []
    row = db.conn.execute("SELECT definition FROM rubrics WHERE ref = ?", [ref]).fetchone()
    if row is None:
        return []
    try:
        definition = json.loads(row[0])
        return [str(c["id"]) for c in definition.get("criteria", [])]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


# The latest verdict per (trial, judge) (the view of migration m006) on the trials of a JSON array.
_LATEST = (
    "SELECT trial_id, judge, verdict, rationale FROM latest_judge_verdicts "
    "WHERE trial_id IN (SELECT value FROM json_each(?))"
)


def _ids_json(trial_ids: Iterable[str]) -> str:
    """Trial ids as one JSON array parameter, so any number of them fits in one query."""
    return json.dumps(sorted(set(trial_ids)))
