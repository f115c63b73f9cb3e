"""One labeled failure as one regression task: its input, the expected behaviour, grading hints and
provenance (see schemas/task.schema.json). Pure functions over a loaded trial; no SQL here."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.clustering.signature import evidence_of
from reviewer.export.select import Candidate
from reviewer.ingest.task_schema import FORMAT
from reviewer.models import Rubric, Trial

_SLUG_MAX = 40


@dataclass(frozen=True)
class RuleInfo:
    """What the active rules say about one rule id: its description and its definition."""

    description: str | None
    definition: dict[str, Any]


@dataclass
class TaskContext:
    """Everything about a candidate's trial that the task needs besides the trial itself."""

    violations: Sequence[tuple[str, str, str]] = ()  # (rule id, severity, detail)
    rubric: Rubric | None = None
    rules: dict[str, RuleInfo] = field(default_factory=dict)
    origin: str | None = None  # "production": a conversation the monitor watched


def task_id(
    run: str, task: str, trial: int, trial_id: str, mask: Callable[[str], str] | None = None
) -> str:
    """The stable id of the task made from one trial: a slug of the task id and a hash of the trial.

    With ``mask`` (redaction) the slug is made from the masked task id; the hash, of the original,
    keeps ids unique, and the same trial always gets the same id."""
    digest = hashlib.sha256(f"{run}\0{task}\0{trial}\0{trial_id}".encode()).hexdigest()[:12]
    shown = mask(task) if mask is not None else task
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", shown).strip("_.-")[:_SLUG_MAX] or "task"
    return f"{slug}-{digest}"


def candidate_task_id(c: Candidate, mask: Callable[[str], str] | None = None) -> str:
    k = c.key
    return task_id(k.run, k.task_id, k.trial, k.trial_id, mask)


def prompt_messages(trial: Trial) -> list[dict[str, str]]:
    """The system prompt and the conversation up to and including the first user turn.

    Tool calls and results before that turn are left out: the harness's own tools produce them."""
    out: list[dict[str, str]] = []
    for m in trial.messages:
        if m.role == "tool" or (m.role == "assistant" and not m.content):
            continue
        out.append({"role": m.role, "content": m.content})
        if m.role == "user":
            return out
    return [m for m in out if m["role"] == "system"]


def _failed_criteria(c: Candidate, rubric: Rubric | None) -> list[dict[str, str | None]]:
    if c.label is None:
        return []
    questions = {cr.id: cr.question for cr in rubric.criteria} if rubric else {}
    order = [cr.id for cr in rubric.criteria] if rubric else []
    failed = [cid for cid, answer in c.label.criteria.items() if answer is False]
    failed.sort(key=lambda cid: (order.index(cid) if cid in order else len(order), cid))
    return [{"id": cid, "question": questions.get(cid)} for cid in failed]


def _violated_rules(ctx: TaskContext) -> list[dict[str, Any]]:
    """One entry per broken rule, first occurrence first, with how often it fired."""
    seen: dict[str, dict[str, Any]] = {}
    for rule_id, severity, detail in ctx.violations:
        if rule_id in seen:
            seen[rule_id]["count"] += 1
            continue
        info = ctx.rules.get(rule_id)
        seen[rule_id] = {
            "id": rule_id,
            "severity": severity,
            "description": (info.description or None) if info else None,
            "detail": detail or None,
            "count": 1,
        }
    return list(seen.values())


def expected_text(
    note: str | None,
    criteria: Sequence[dict[str, str | None]],
    rules: Sequence[dict[str, Any]],
    reason: str | None,
    judge_rationale: str | None,
    where: str,
) -> str:
    """The expected behaviour in words, one statement a line, for a human or a model grader."""
    lines = []
    if note:
        lines.append(note.strip())
    for cr in criteria:
        lines.append(f"Must hold: {cr['question'] or cr['id']}")
    for r in rules:
        lines.append(
            f"Must not break rule {r['id']}: {r['description'] or r['detail'] or r['severity']}"
        )
    if reason:
        lines.append(f"The failing trial ended with: {reason.strip()}")
    if judge_rationale:
        lines.append(f"The judge failed it because: {judge_rationale.strip()}")
    lines = [ln for ln in lines if ln]
    return "\n".join(lines) or f"Must not fail the way trial {where} failed."


def _signature(c: Candidate, trial: Trial, ctx: TaskContext) -> str:
    """The stored cluster signature, else the one the clustering would give this trial."""
    if c.cluster is not None and c.cluster.signature:
        return c.cluster.signature
    strong = [v[0] for v in ctx.violations if v[1] == "forbidden"]
    weak = [v[0] for v in ctx.violations if v[1] != "forbidden"]
    return evidence_of(trial, strong, trial_id=c.key.trial_id, weak_violations=weak).signature


def _provenance(c: Candidate, trial: Trial, ctx: TaskContext) -> dict[str, Any]:
    k = c.key
    prov: dict[str, Any] = {
        "run": k.run,
        "task_id": k.task_id,
        "trial": k.trial,
        "trial_id": k.trial_id,
        "source": c.source,
        "cluster": None
        if c.cluster is None
        else {"id": c.cluster.cluster_id, "name": c.cluster.cluster_name},
        "signature": _signature(c, trial, ctx),
        "labeler": c.label.labeler if c.label else None,
        "labeled_at": c.label.at if c.label else None,
        "judge": None
        if c.verdict is None
        else {
            "id": c.verdict.judge,
            "verdict": c.verdict.verdict,
            "rationale": c.verdict.rationale,
        },
    }
    if ctx.origin:
        prov["origin"] = ctx.origin
    if trial.metadata:
        prov["metadata"] = trial.metadata
    return prov


def build_task(c: Candidate, trial: Trial, ctx: TaskContext) -> dict[str, Any]:
    """The native task record for one chosen trial (key order is fixed, so output is byte-stable)."""
    criteria = _failed_criteria(c, ctx.rubric)
    rules = _violated_rules(ctx)
    note = (c.label.note or None) if c.label else None
    rationale = c.verdict.rationale if c.source == "judge" and c.verdict else None
    k = c.key
    where = f"{k.run}/{k.task_id}/{k.trial}"
    return {
        "format": FORMAT,
        "id": candidate_task_id(c),
        "input": {"instruction": trial.instruction or None, "messages": prompt_messages(trial)},
        "expected": {
            "text": expected_text(note, criteria, rules, trial.reason, rationale, where),
            "note": note,
            "failed_criteria": criteria,
            "violated_rules": rules,
            "outcome_reason": trial.reason,
            "judge_rationale": rationale,
        },
        "grading": {
            "rubric": (c.label.rubric if c.label else None)
            or (c.verdict.rubric if c.verdict else None),
            "criteria": [str(cr["id"]) for cr in criteria],
            "rules_must_not_fire": sorted(r["id"] for r in rules),
            "rules": [
                ctx.rules[r["id"]].definition
                for r in sorted(rules, key=lambda r: r["id"])
                if r["id"] in ctx.rules
            ],
        },
        "provenance": _provenance(c, trial, ctx),
    }


def to_inspect(task: dict[str, Any]) -> dict[str, Any]:
    """An Inspect AI dataset sample (``json_dataset`` reads it): the instruction when the source had
    one, else the prompt messages; the expected behaviour as the target; the rest as metadata."""
    inp = task["input"]
    sample_input: str | list[dict[str, str]] = inp["instruction"] or inp["messages"] or task["id"]
    return {
        "id": task["id"],
        "input": sample_input,
        "target": task["expected"]["text"],
        "metadata": {k: task[k] for k in ("format", "input", "expected", "grading", "provenance")},
    }
