"""Which trials become regression tasks: human fails, optionally uncontradicted judge fails, one per
cluster when asked, always in one stable order (run, task, trial)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reviewer.models import Label
from reviewer.store.db import Store
from reviewer.store.export_select import (
    JudgeVerdict,
    Membership,
    TrialKey,
    cluster_ids,
    harness_fails,
    human_labels,
    human_passes,
    latest_trial_verdicts,
    memberships,
    trial_keys,
)
from reviewer.store.queries import run_names
from reviewer.text import unknown_cluster, unknown_run


class SelectionError(ValueError):
    """A selection that names something the database does not hold (a run, a cluster)."""


@dataclass(frozen=True)
class Selection:
    """What to export. Empty ``runs`` means every run; ``trial_ids`` narrows to a trial or a list."""

    runs: tuple[str, ...] = ()
    cluster: str | None = None
    labeler: str | None = None
    include_judge: bool = False
    one_per_cluster: bool = False
    trial_ids: tuple[str, ...] | None = None
    include_harness: bool = False  # also the harness's failures no human labeled pass


@dataclass(frozen=True)
class Candidate:
    """A trial chosen for export and why: a human's fail label, or a judge's fail verdict."""

    key: TrialKey
    source: str  # human | judge
    label: Label | None
    verdict: JudgeVerdict | None
    cluster: Membership | None

    @property
    def sort_key(self) -> tuple[str, str, int, str]:
        return (self.key.run, self.key.task_id, self.key.trial, self.key.trial_id)


def resolve_cluster(db: Store, ref: str) -> str:
    """A cluster id from an id, a unique id prefix, or a rank as `reviewer cluster` prints it."""
    ids = cluster_ids(db)
    if not ids:
        raise SelectionError("no clustering stored yet; run `reviewer cluster` first")
    if ref in ids:
        return ref
    if not ref.strip():  # a prefix of every id: "matches several clusters" said nothing useful
        raise SelectionError("--cluster must not be empty: give a cluster's id, prefix or rank")
    if ref.isdigit() and 1 <= int(ref) <= len(ids):
        return ids[int(ref) - 1]
    matches = [c for c in ids if c.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    why = "matches several clusters" if matches else "is not a cluster id, prefix or rank"
    raise SelectionError(unknown_cluster(ref, why, matches or ids))


def _check_runs(db: Store, runs: Sequence[str]) -> None:
    known = run_names(db)
    for r in runs:
        if r not in known:
            raise SelectionError(unknown_run(r, known))


def _sources(
    db: Store, sel: Selection, labels: dict[str, Label], verdicts: dict[str, JudgeVerdict]
) -> dict[str, str]:
    """trial id -> why it is a candidate (human, judge, harness), before the run, cluster and list
    narrow the selection: the one rule both ``select`` and ``skipped_reasons`` follow."""
    sources = {tid: "human" for tid, label in labels.items() if label.verdict == "fail"}
    passed = human_passes(db) if sel.include_judge or sel.include_harness else set()
    if sel.include_judge:
        for tid, v in verdicts.items():
            if v.verdict == "fail" and tid not in sources and tid not in passed:
                sources[tid] = "judge"
    if sel.include_harness:
        for tid in harness_fails(db):
            if tid not in sources and tid not in passed:
                sources[tid] = "harness"
    return sources


def select(db: Store, sel: Selection) -> list[Candidate]:
    """The trials to export, in (run, task, trial) order. Raises SelectionError for unknown names."""
    _check_runs(db, sel.runs)
    cluster = resolve_cluster(db, sel.cluster) if sel.cluster is not None else None
    labels = human_labels(db, sel.labeler)
    verdicts = latest_trial_verdicts(db)
    sources = _sources(db, sel, labels, verdicts)
    if sel.trial_ids is not None:
        wanted = set(sel.trial_ids)
        sources = {tid: s for tid, s in sources.items() if tid in wanted}
    keys = trial_keys(db, sources, sel.runs or None)
    members = memberships(db)
    chosen = [
        Candidate(
            key=key,
            source=sources[tid],
            label=labels.get(tid) if sources[tid] == "human" else None,
            verdict=verdicts.get(tid),
            cluster=members.get(tid),
        )
        for tid, key in keys.items()
    ]
    if cluster is not None:
        chosen = [c for c in chosen if c.cluster is not None and c.cluster.cluster_id == cluster]
    chosen.sort(key=lambda c: c.sort_key)
    return one_per_cluster(chosen) if sel.one_per_cluster else chosen


def one_per_cluster(candidates: Sequence[Candidate]) -> list[Candidate]:
    """One task per cluster: its representative when chosen, else its first; unclustered all stay."""
    picked: dict[str, Candidate] = {}
    for c in candidates:
        if c.cluster is None:
            continue
        cid = c.cluster.cluster_id
        if cid not in picked or c.key.trial_id == c.cluster.representative:
            picked[cid] = c
    keep = {id(c) for c in picked.values()}
    return [c for c in candidates if c.cluster is None or id(c) in keep]


def skipped_reasons(db: Store, sel: Selection, chosen: Sequence[Candidate]) -> str:
    """Why the trials of the chosen scope that were not chosen were left out, in one line: the scope
    is the listed trials (``sel.trial_ids``: a trial, a trials list), else the cluster's members
    (of ``sel.runs`` when given). "" when none was left out or the scope is neither."""
    from reviewer.store.export_select import label_verdicts, trial_outcomes

    members = memberships(db)
    cluster = resolve_cluster(db, sel.cluster) if sel.cluster is not None else None
    if sel.trial_ids is not None:
        scope = list(dict.fromkeys(sel.trial_ids))
    elif cluster is not None:
        scope = [t for t, m in members.items() if m.cluster_id == cluster]
        if sel.runs:
            in_runs = trial_keys(db, scope, sel.runs)
            scope = [t for t in scope if t in in_runs]
    else:
        return ""
    taken = {c.key.trial_id for c in chosen}
    left = [t for t in scope if t not in taken]
    if not left:
        return ""
    labels = human_labels(db, sel.labeler)
    verdicts = latest_trial_verdicts(db)
    sources = _sources(db, sel, labels, verdicts)
    anyones = label_verdicts(db) if sel.labeler is not None else {}
    outcomes = trial_outcomes(db, left)
    keys = trial_keys(db, left)
    reasons: dict[str, int] = {}
    for tid in left:
        label = labels.get(tid)
        judged = verdicts.get(tid)
        verdict = judged.verdict if judged is not None else None
        outcome = outcomes.get(tid, "")
        key = keys.get(tid)
        if key is None:
            why = "not stored"
        elif sel.runs and key.run not in sel.runs:
            why = "not in run " + ", ".join(sel.runs)
        elif cluster is not None and (tid not in members or members[tid].cluster_id != cluster):
            why = f"not in cluster {cluster}"
        elif tid in sources:  # chosen, then left out for another trial of its cluster
            why = "more of a cluster with one task exported (one per cluster)"
        elif label is not None and label.verdict == "pass":
            why = "labeled pass by a human"
        elif label is not None and label.verdict == "skip":
            why = "labeled skip"
        elif "pass" in anyones.get(tid, ()) and (verdict == "fail" or outcome == "fail"):
            why = "labeled pass by a human"
        elif "fail" in anyones.get(tid, ()):
            why = f"labeled fail by others, not {sel.labeler}"
        elif verdict == "fail":
            why = "judge fails" if not sel.include_judge else "judge fails a human labeled pass"
        elif outcome == "pass":
            why = "passed"
        elif outcome == "infra":
            why = "infrastructure errors"
        elif outcome == "unscored":
            why = "unscored, no fail label"
        elif outcome == "fail" and sel.include_harness:
            why = "harness failures a human labeled pass"
        elif outcome == "fail" and verdict == "pass":
            why = "harness failures the judge passed"
        elif outcome == "fail" and verdict == "error":
            why = "harness failures the judge could not grade"
        elif outcome == "fail":
            why = "harness failures nobody labeled or judged"
        else:
            why = "not a failure a human or judge named"
        reasons[why] = reasons.get(why, 0) + 1
    parts = [f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))]
    n = len(left)
    return f"skipped {n} trial{'' if n == 1 else 's'}: " + ", ".join(parts)
