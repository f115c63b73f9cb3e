"""Active labeling: which trial to label next so the kappa estimate tightens fastest.

With a 2x2 table (human label x judge verdict) what one more label does depends only on the judge's
verdict of the trial, so the choice is between judge-pass and judge-fail trials (an adaptive
stratified allocation), at random (seeded) within the chosen one.

The gain is measured on kappa over the judge's verdict mix (``calibration.mix``, what the trust
verdict is decided on): its standard error adds, per judge verdict, a term that shrinks as 1 / the
labels of that verdict, and the next label goes where the error shrinks most (Neyman's allocation,
one label at a time). Choosing by the width of the trust interval of the labels as they stand
(each label weighed alike) instead "narrows" it by changing what it measures: in
bench/active_labeling.py that rule moved the kappa of the labels 0.17-0.23 below the truth at
kappa 0.4-0.6 and trusted a judge wrongly up to 40% of the time.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from reviewer.calibration.mix import mix_se

__all__ = ["BLIND_REASON", "STRATA", "ActiveChoice", "choose_stratum", "se_after"]

#: Judge verdicts a trial of an active queue is drawn by, in the order of the table's columns.
STRATA = ("pass", "fail")
#: What the label screen says of an active queue's choice: the judge's verdict of the trial stays
#: hidden until it is labeled, so the stratum is never named there.
BLIND_REASON = "picked to tighten the kappa estimate most"


def se_after(
    confusion: Sequence[Sequence[int]], mix: Mapping[str, int], extra: str | None = None
) -> float | None:
    """The standard error of kappa over the judge's verdict ``mix`` (``mix.mix_se``), as it would
    be after one more label of judge verdict ``extra`` (its human share held where it is)."""
    if extra is None:
        return mix_se(confusion, mix)
    j = STRATA.index(extra)
    column = confusion[0][j] + confusion[1][j]
    share = (confusion[0][j] + 0.5) / (column + 1)
    table = [[float(x) for x in row] for row in confusion]
    # one more label split by the smoothed share keeps the estimate and adds one to the count
    table[0][j] = share * (column + 2) - 0.5
    table[1][j] = (column + 1) - table[0][j]
    return mix_se(table, mix)


@dataclass(frozen=True)
class ActiveChoice:
    """The judge verdict to label next, and the standard errors that decided it."""

    stratum: str  # pass | fail: the judge's verdict of the next trial
    se_now: float | None  # None: a stratum has no label yet
    se_next: float | None  # after one label of that stratum
    #: after one label of the other stratum (None: none of it is left, or it still has no label)
    se_other: float | None
    other_left: bool
    first: bool  # no trial of this stratum is labeled yet

    def reason(self) -> str:
        """The full reason, naming the judge's verdict (never shown on the labeling screen)."""
        other = STRATA[1 - STRATA.index(self.stratum)]
        if not self.other_left:
            why = f"only judge-{self.stratum} trials are left"
        elif self.first:
            why = f"no judge-{self.stratum} trial is labeled yet"
        elif self.se_other is not None:
            why = f"its label tightens kappa most (a judge-{other} one: SE {self.se_other:.3f})"
        else:
            why = "its label tightens kappa most"
        return f"next: a judge-{self.stratum} trial: {why}{self._se_text()}"

    def neutral(self) -> str:
        """How it was chosen without naming the judge's verdict."""
        return f"{BLIND_REASON}{self._se_text()}"

    def _se_text(self) -> str:
        if self.se_now is None or self.se_next is None:
            return ""
        return f" (expected SE of kappa {self.se_now:.3f} -> {self.se_next:.3f})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def choose_stratum(
    confusion: Sequence[Sequence[int]], mix: Mapping[str, int], available: Mapping[str, int]
) -> ActiveChoice | None:
    """The judge verdict whose next label shrinks the standard error of kappa over the judge's
    verdict ``mix`` most, among those with trials left (``available``: verdict -> trials). A
    verdict with no label yet comes first; ties go to the one with fewer labels, then to fail.
    ``None`` when no trial is left."""
    open_strata = [s for s in STRATA if available.get(s, 0) > 0]
    if not open_strata:
        return None
    labeled = {s: confusion[0][j] + confusion[1][j] for j, s in enumerate(STRATA)}
    after = {s: se_after(confusion, mix, s) for s in open_strata}

    # an unlabeled stratum (se None before and maybe after) first; a smaller se after next;
    # 1e-12 tolerance so float noise never decides a tie
    def rank(s: str) -> tuple[bool, float, int, bool]:
        se = after[s]
        return labeled[s] > 0, math.inf if se is None else round(se, 12), labeled[s], s != "fail"

    best = min(open_strata, key=rank)
    others = [s for s in open_strata if s != best]
    return ActiveChoice(
        stratum=best,
        se_now=se_after(confusion, mix),
        se_next=after[best],
        se_other=after[others[0]] if others else None,
        other_left=bool(others),
        first=labeled[best] == 0,
    )
