"""The whole agreement report: judge vs human, the human ceiling, per-criterion agreement and the
disagreements, as plain text (CLI and TUI alike) and as JSON-ready data (never NaN).

The numbers come from :mod:`reviewer.calibration.agreement`; this module decides what is compared
(from the data :func:`reviewer.store.agreement_data.gather_agreement` collected) and says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from reviewer.calibration.agreement import (
    Agreement,
    CriterionAgreement,
    HumanAgreement,
    Pair,
    criteria_agreement,
    human_agreement,
    judge_agreement,
    render_agreement,
)
from reviewer.store.agreement_data import NO_RUBRIC, AgreementData
from reviewer.text import visible

__all__ = [
    "DEFAULT_THRESHOLD",
    "AgreementReport",
    "CriteriaBlock",
    "Disagreement",
    "build_report",
    "trust_threshold",
]

#: The kappa lower bound a judge must reach to be trusted, unless configured otherwise.
DEFAULT_THRESHOLD = 0.6
_RATIONALE_WIDTH = 90


def trust_threshold(judge_config: Mapping[str, Any], override: float | None = None) -> float:
    """``override`` (``--threshold``), else ``[judge] trust_threshold``, else 0.6.

    Raises ValueError (one line) for a configured value that is not a number in [-1, 1].
    """
    if override is not None:
        return override
    value = judge_config.get("trust_threshold", DEFAULT_THRESHOLD)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"[judge] trust_threshold must be a number, got {value!r}")
    if not -1 <= value <= 1:
        raise ValueError(f"[judge] trust_threshold must be between -1 and 1, got {value}")
    return float(value)


@dataclass(frozen=True)
class Disagreement:
    """A trial where the human and the judge differ, with what is needed to find and open it."""

    trial_id: str
    run: str
    task_id: str
    trial: int
    human: str
    judge: str
    rationale: str  # the first line of the judge's rationale


@dataclass
class CriteriaBlock:
    """Per-criterion agreement of two labelers (the judge answers no criteria)."""

    first: str
    second: str
    rows: list[CriterionAgreement]

    def to_dict(self) -> dict[str, Any]:
        return {
            "first": self.first,
            "second": self.second,
            "rows": [r.to_dict() for r in self.rows],
        }


@dataclass
class AgreementReport:
    """The agreement report: what was compared, the statistics, and what was left out and why."""

    data: AgreementData
    agreement: Agreement
    human: HumanAgreement | None
    criteria: list[CriteriaBlock]
    disagreements: list[Disagreement]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: plain types only, undefined figures as ``None``."""
        d = self.data
        agreement = self.agreement.to_dict()
        agreement.pop("disagreements", None)
        return {
            "judge": d.judge,
            "judge_default": d.judge_default,
            "judges": d.judges,
            "labeler": d.labeler,
            "labeler_default": d.labeler_default,
            "labelers": d.labelers,
            "rubric": d.rubric,
            "rubric_default": d.rubric_default,
            "left_out": {
                "judge_errors": d.judge_errors,
                "skip_labels": d.skip_labels,
                "not_graded": d.ungraded,
                "other_rubric_labels": sum(d.other_rubrics.values()),
                "other_rubrics": d.other_rubrics,
            },
            "agreement": agreement,
            "human": None if self.human is None else self.human.to_dict(),
            "criteria": [b.to_dict() for b in self.criteria],
            "disagreements": [asdict(x) for x in self.disagreements],
            "notes": list(self.notes),
        }

    def render(self, *, disagreements: bool = True, keys: bool = False) -> str:
        """The report as plain text; every stored string is shown literally on one line. ``keys``:
        for the app's screen, which names its keys (j, l, g) where the command names its options."""
        lines = [*_scope_lines(self.data, keys), ""]
        lines.append(visible(render_agreement(self.agreement, self.human)))
        ceiling = self.human.ceiling if self.human is not None else None
        if self.agreement.kappa is not None and ceiling is not None:
            lines.append(
                f"  the judge's kappa {self.agreement.kappa:.3f} against a human ceiling of"
                f" {ceiling:.3f}"
            )
        for block in self.criteria:
            lines += ["", *_criteria_lines(block)]
        if self.notes:
            lines += ["", *(f"note: {n}" for n in self.notes)]
        if disagreements and self.disagreements:
            lines += ["", *_disagreement_lines(self.disagreements)]
        return "\n".join(lines)


def build_report(
    data: AgreementData,
    threshold: float = DEFAULT_THRESHOLD,
    seed: int = 0,
    n_boot: int = 2000,
) -> AgreementReport:
    """Compute every part of the report from the collected data."""
    pairs = [Pair(t, h, j) for t, (h, j) in data.pairs.items()]
    who = visible(data.labeler, single_line=True) if data.labeler else "the human"
    agreement = judge_agreement(
        pairs,
        seed=seed,
        n_boot=n_boot,
        trust_threshold=threshold,
        labeler=who,
        judge_mix=data.judge_mix,
    )
    human = human_agreement(data.human) if len(data.human) >= 2 else None
    return AgreementReport(
        data=data,
        agreement=agreement,
        human=human,
        criteria=_criteria_blocks(data),
        disagreements=_disagreements(data, agreement),
        notes=_notes(data),
    )


def _criteria_blocks(data: AgreementData) -> list[CriteriaBlock]:
    """Every pair of labelers who both answered criteria, criterion by criterion."""
    seen = [c for by_trial in data.criteria.values() for ans in by_trial.values() for c in ans]
    order = list(dict.fromkeys([*data.criteria_order, *seen]))
    blocks = []
    for a, b in combinations(sorted(data.criteria), 2):
        rows = criteria_agreement(data.criteria[a], data.criteria[b], order, names=(a, b))
        rows = [r for r in rows if r.n or r.criterion in data.criteria_order]
        if rows:
            blocks.append(CriteriaBlock(a, b, rows))
    return blocks


def _disagreements(data: AgreementData, agreement: Agreement) -> list[Disagreement]:
    out = []
    for p in agreement.disagreements:
        info = data.trials.get(p.trial_id)
        if info is None:
            continue
        out.append(
            Disagreement(
                trial_id=p.trial_id,
                run=info.run,
                task_id=info.task_id,
                trial=info.trial,
                human=p.human,
                judge=p.judge,
                rationale=first_line(info.rationale),
            )
        )
    return sorted(out, key=lambda x: (x.run, x.task_id, x.trial, x.trial_id))


def first_line(text: str | None) -> str:
    """The first non-blank line of ``text``, stripped; "" for none."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def _notes(data: AgreementData) -> list[str]:
    """Why parts of the report are empty, and how to fill them."""
    notes = []
    if not data.human:
        notes.append(
            "no pass/fail labels yet: label a calibration queue in the app (L on the runs screen)"
            " or merge labels with `reviewer labels import FILE`"
        )
    if data.judge is None:
        notes.append(
            "no judge verdicts are stored: import them with the trials or run `reviewer judge`"
        )
    if len(data.human) == 1:
        notes.append(
            "one labeler only: the human-vs-human ceiling and per-criterion agreement need two"
            " labelers on the same trials (the judge answers no criteria)"
        )
    elif len(data.human) >= 2 and not data.criteria:
        notes.append("no labeler answered rubric criteria, so there is no per-criterion agreement")
    return notes


def _p(s: object) -> str:
    return visible(s, single_line=True)


def _scope_lines(d: AgreementData, keys: bool = False) -> list[str]:
    """What was compared with what, how it was chosen, and what was left out; how to choose another
    judge, labeler or rubric version: the command's option, or with ``keys`` the app's key."""
    lines = []
    judge_hint, labeler_hint, rubric_hint = (
        ("j: another", "l: another", "g: another")
        if keys
        else ("--judge ID", "--labeler NAME", "--rubric REF")
    )
    judge = _p(d.judge) if d.judge is not None else "none"
    others = [f"{_p(j)} ({n})" for j, n in d.judges.items() if j != d.judge]
    why = (
        f"  (the judge with the most verdicts on labeled trials; {judge_hint})"
        if d.judge_default
        else ""
    )
    lines.append(f"judge    {judge}{why}")
    if others:
        lines.append(f"         other judges: {', '.join(others)}")
    who = _p(d.labeler) if d.labeler is not None else "none"
    why = f"  (the labeler with the most labels the judge graded; {labeler_hint})"
    lines.append(f"human    {who}{why if d.labeler_default else ''}")
    also = [f"{_p(w)} ({n})" for w, n in d.labelers.items() if w != d.labeler]
    if also:
        lines.append(f"         other labelers (labels the judge graded): {', '.join(also)}")
    ref = _p(d.rubric) if d.rubric is not None else NO_RUBRIC if d.labels_total else "none"
    why = f"  (the latest used; {rubric_hint})" if d.rubric_default and d.labels_total else ""
    lines.append(f"rubric   {ref}{why}")
    if d.other_rubrics:
        n = sum(d.other_rubrics.values())
        versions = ", ".join(f"{_p(r)} ({k})" for r, k in d.other_rubrics.items())
        lines.append(f"         {n} label{_s(n)} under other rubric versions left out: {versions}")
    left = _left_out(d)
    if left:
        lines.append(f"left out {', '.join(left)}")
    return lines


def _left_out(d: AgreementData) -> list[str]:
    parts = []
    if d.judge_errors:
        parts.append(f"{d.judge_errors} judge error{_s(d.judge_errors)}")
    if d.skip_labels:
        parts.append(f"{d.skip_labels} skip label{_s(d.skip_labels)}")
    if d.ungraded:
        parts.append(f"{d.ungraded} labeled trial{_s(d.ungraded)} the judge has not graded")
    return parts


def _criteria_lines(block: CriteriaBlock) -> list[str]:
    lines = [
        f"Agreement per criterion, {_p(block.first)} ~ {_p(block.second)}"
        " (human vs human: the judge answers no criteria)"
    ]
    for r in block.rows:
        text = f"  {_p(r.criterion):<24} n {r.n:>5}  observed {_f(r.observed)}  kappa {_f(r.kappa)}"
        lines.append(f"{text}  ({_p(r.explanation)})" if r.explanation else text)
    return lines


def _disagreement_lines(rows: Sequence[Disagreement]) -> list[str]:
    run_w = max(3, *(len(_p(r.run)) for r in rows))
    task_w = max(4, *(len(_p(r.task_id)) for r in rows))
    id_w = max(5, *(len(_p(r.trial_id)) for r in rows))
    lines = [
        f"Disagreements ({len(rows)})",
        f"  {'trial':<{id_w}}  {'run':<{run_w}}  {'task':<{task_w}}  {'#':>3}  human  judge"
        "  judge rationale",
    ]
    for r in rows:
        why = _p(r.rationale)
        if len(why) > _RATIONALE_WIDTH:
            why = why[: _RATIONALE_WIDTH - 1] + "…"
        lines.append(
            f"  {_p(r.trial_id):<{id_w}}  {_p(r.run):<{run_w}}  {_p(r.task_id):<{task_w}}"
            f"  {r.trial:>3}  {r.human:<5}  {r.judge:<5}  {why}"
        )
    return lines


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _s(n: int) -> str:
    return "" if n == 1 else "s"
