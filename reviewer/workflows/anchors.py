"""The gate's judge anchors ([gate] anchors): a fixed set of stored transcripts that every judge used
on a baseline or a gated run also grades, so the gate can tell a judge that moved from an agent that
did (``metrics.drift``).

The anchors are graded by the configured judge when a baseline is set and when a run is gated (cached
per judge settings, so a judge that did not change costs nothing; capped by ``[gate]
anchors_max_cost``, default $1). The gate compares the verdicts on the anchors of the judge that graded
the baseline with those of the judge that graded the new run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from reviewer.metrics.drift import AnchorReport
from reviewer.store.db import Store

#: The judge's cost cap for grading the anchors, unless [gate] anchors_max_cost says otherwise.
DEFAULT_MAX_COST = 1.0

Note = Callable[[str], None]


class AnchorError(Exception):
    """An anchor names no stored trial (or no queue / run): one line."""


def anchor_ids(db: Store, spec: Sequence[Any] | Mapping[str, str]) -> list[str]:
    """The stored trial ids of ``[gate] anchors`` (as ``config._anchors`` checked it)."""
    from reviewer.store.judging import queue_names, select_trials
    from reviewer.store.labels import find_trial_id
    from reviewer.store.queries import run_names
    from reviewer.workflows.labels import resolve_trial

    if isinstance(spec, Mapping):
        kind, name = next(iter(spec.items()))
        known = queue_names(db) if kind == "queue" else run_names(db)
        if name not in known:
            raise AnchorError(f"[gate] anchors: no {kind} named {name!r}")
        ids = select_trials(db, queue=name) if kind == "queue" else select_trials(db, [name])
        if not ids:
            raise AnchorError(f"[gate] anchors: the {kind} {name!r} holds no trial")
        return ids
    out: list[str] = []
    for ref in spec:
        if isinstance(ref, str):
            try:
                out.append(resolve_trial(db, ref))
            except ValueError as e:
                raise AnchorError(f"[gate] anchors: {e}") from e
            continue
        found = find_trial_id(db, None, ref["run"], ref["task_id"], ref["trial"])
        if found is None:
            raise AnchorError(
                f"[gate] anchors: no trial {ref['trial']} of task {ref['task_id']!r} "
                f"in run {ref['run']!r}"
            )
        out.append(found)
    return list(dict.fromkeys(out))


def judge_anchors(
    db: Store, cfg: Any, ids: Sequence[str], *, only_for: str | None = None, note: Note
) -> tuple[str | None, int, float]:
    """Grade the anchors not yet graded by the configured judge (cached, capped); (that judge's id,
    anchors graded now, their cost). With ``only_for``, nothing is sent unless the configured judge
    is that one. A judge that cannot run (no key, a bad setting) is a note, not an error."""
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.labeling.rubric import RubricError
    from reviewer.workflows.judge import (
        JudgeFailed,
        JudgeRequest,
        judge_trials,
        load_settings,
        pick_rubric,
    )

    try:
        current = load_settings(cfg).judge_id(pick_rubric(db, cfg.rubric).ref)
    except (JudgeConfigError, RubricError, OSError, ValueError) as e:
        note(f"anchors not graded: {e}")
        return None, 0, 0.0
    if only_for is not None and current != only_for:
        note(
            f"anchors not graded now: the configured judge ({current}) is not the one that "
            f"graded the new run ({only_for})"
        )
        return current, 0, 0.0
    cap = float(cfg.gate.get("anchors_max_cost", DEFAULT_MAX_COST))
    request = JudgeRequest(trial_ids=list(ids), only_unjudged=True, overrides={"max_cost": cap})
    try:
        result = judge_trials(db, request, cfg=cfg, on_note=note)
    except JudgeFailed as e:
        note(f"anchors not graded: {e}")
        return current, 0, 0.0
    stats = result.stats
    if stats is None:
        return current, 0, 0.0
    if stats.stopped_at_cap:
        note(f"anchors: stopped at anchors_max_cost ${cap:g}: {stats.skipped_for_cost} not graded")
    return current, stats.done, stats.cost_usd


def check_anchors(
    db: Store, cfg: Any, baseline: str, new: str, *, spend: bool, note: Note
) -> AnchorReport:
    """The judge's shift on the anchors between the judge that graded ``baseline`` and the one that
    graded ``new`` (grading the anchors with the new run's judge first when ``spend``)."""
    from reviewer.metrics.drift import judge_shift
    from reviewer.store.anchors import judge_verdicts, run_judge

    ids = anchor_ids(db, cfg.gate["anchors"])
    base_judge, _ = run_judge(db, baseline)
    new_judge, _ = run_judge(db, new)
    report = AnchorReport(len(ids), base_judge, new_judge)
    if base_judge is None or new_judge is None:
        which = (
            "neither run was"
            if base_judge is None and new_judge is None
            else ("the baseline was not" if base_judge is None else "the new run was not")
        )
        report.notes.append(f"no shift to measure: {which} judged")
        return report
    if spend:
        _, report.judged_now, report.cost_usd = judge_anchors(
            db, cfg, ids, only_for=new_judge, note=note
        )
    if base_judge == new_judge:
        return report
    base = judge_verdicts(db, base_judge, ids)
    now = judge_verdicts(db, new_judge, ids)
    for got, side in ((base, "baseline"), (now, "new run")):
        if not got:
            report.notes.append(
                f"the {side}'s judge has graded none of the anchors: with it configured, "
                f"`reviewer baseline set` or `reviewer gate` grades them"
            )
    if base and now:
        report.shift = judge_shift(base, now)
        if not report.shift.n:
            report.notes.append("no anchor was graded pass or fail by both judges")
    return report
