"""Did the judge move? The same fixed transcripts (the gate's anchors) graded by the judge that graded
the baseline and by the judge that graded the new run.

When the judge's settings change (a new model, prompt or rubric version), a judged pass rate can
change with no change in the agent. On the anchors both judges graded, the shift is the difference of
their pass rates, and whether it is beyond noise is McNemar's exact test on the anchors where they
disagree (a paired test: each anchor is its own control). A judge that became stricter explains a
judged pass rate that fell; the gate then does not blame the agent (``gate.attribute_to_judge``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: The judge moved when McNemar's exact two-sided p-value is below this.
DRIFT_ALPHA = 0.05
_Z95 = 1.959963984540054


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value for ``b`` and ``c`` discordant pairs (the binomial test of
    b against b + c at one half); 1 when there is no discordant pair."""
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(min(b, c), b + c, 0.5).pvalue)


@dataclass(frozen=True)
class JudgeShift:
    """Two judges on the anchors both graded pass or fail."""

    n: int
    base_passed: int
    new_passed: int
    pass_to_fail: int  # the baseline's judge said pass, the new run's judge fail
    fail_to_pass: int
    p_value: float

    @property
    def shift(self) -> float:
        """The new judge's pass rate minus the old one's on the same anchors."""
        return (self.new_passed - self.base_passed) / self.n if self.n else 0.0

    @property
    def moved(self) -> bool:
        return self.n > 0 and self.p_value < DRIFT_ALPHA

    def interval(self) -> tuple[float, float]:
        """A 95% interval of the shift: the Wald interval of a paired difference of proportions
        with half a count added to each of the four cells (Agresti & Min 2005), which keeps its
        coverage where the discordant anchors all went one way."""
        if not self.n:
            return 0.0, 0.0
        b, c, n = self.pass_to_fail + 0.5, self.fail_to_pass + 0.5, self.n + 2
        d = (c - b) / n
        se = math.sqrt(max(0.0, (b + c) - (c - b) ** 2 / n)) / n
        return max(-1.0, d - _Z95 * se), min(1.0, d + _Z95 * se)

    def to_dict(self) -> dict[str, Any]:
        low, high = self.interval()
        return {
            "anchors_both_judged": self.n,
            "shift_ci95": [low, high],
            "base_pass_rate": self.base_passed / self.n if self.n else None,
            "new_pass_rate": self.new_passed / self.n if self.n else None,
            "shift": self.shift,
            "pass_to_fail": self.pass_to_fail,
            "fail_to_pass": self.fail_to_pass,
            "mcnemar_p": self.p_value,
            "moved": self.moved,
        }


def judge_shift(base: Mapping[str, str], new: Mapping[str, str]) -> JudgeShift:
    """The shift between two judges' verdicts (trial id -> pass / fail / error) on the anchors both
    graded pass or fail."""
    both = [t for t in base if t in new and {base[t], new[t]} <= {"pass", "fail"}]
    b = sum(1 for t in both if base[t] == "pass" and new[t] == "fail")
    c = sum(1 for t in both if base[t] == "fail" and new[t] == "pass")
    return JudgeShift(
        len(both),
        sum(1 for t in both if base[t] == "pass"),
        sum(1 for t in both if new[t] == "pass"),
        b,
        c,
        mcnemar_exact(b, c),
    )


@dataclass
class AnchorReport:
    """What the gate found on its anchors: which judges graded the runs, the shift between them
    (when both graded the anchors), what was judged now and at what cost, or why there is no shift."""

    anchors: int
    base_judge: str | None = None
    new_judge: str | None = None
    shift: JudgeShift | None = None
    judged_now: int = 0
    cost_usd: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def moved(self) -> bool:
        return self.shift is not None and self.shift.moved

    def lines(self) -> list[str]:
        from reviewer.text import visible

        if self.base_judge is None or self.new_judge is None:
            head = f"judge drift: {self.anchors} anchors"
        elif self.base_judge == self.new_judge:
            head = (
                f"judge drift: none possible: both runs were judged by "
                f"{visible(self.new_judge, single_line=True)}"
            )
        else:
            head = (
                f"judge drift on {self.anchors} anchors: "
                f"{visible(self.base_judge, single_line=True)} (baseline) -> "
                f"{visible(self.new_judge, single_line=True)} (new run)"
            )
        out = [head]
        s = self.shift
        if s is not None and s.n:
            verdict = "the judge moved beyond noise" if s.moved else "within noise: the judge held"
            out.append(
                f"  pass rate {s.base_passed / s.n:.2f} -> {s.new_passed / s.n:.2f} "
                f"({s.shift:+.2f} on {s.n} anchors both judged; {s.pass_to_fail} pass->fail, "
                f"{s.fail_to_pass} fail->pass; exact McNemar p = {s.p_value:.2g}): {verdict}"
            )
        if self.judged_now:
            out.append(f"  judged {self.judged_now} anchors now (${self.cost_usd:.4f})")
        out += [f"  {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "anchors": self.anchors,
            "base_judge": self.base_judge,
            "new_judge": self.new_judge,
            "shift": None if self.shift is None else self.shift.to_dict(),
            "moved": self.moved,
            "judged_now": self.judged_now,
            "cost_usd": self.cost_usd,
            "notes": list(self.notes),
        }
