"""Does a task's pass rate depend on the order of its trials? A Cochran–Armitage trend test over the
trial position, stratified by task (the Mantel extension) so tasks of any difficulty pool into one
test per run.

Under independence the trials of one task are exchangeable: given how many passed, every order is
equally likely. The statistic sums, over tasks, the passes weighted by their centred position; its
variance is the exact permutation variance within each task, so tasks that all pass or all fail add
nothing. One two-sided test per run (never one per task) keeps the false-alarm rate at ``ALPHA``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: A run is flagged when the pooled trend test gives p below this: one test per run, so auditing a
#: thousand independent runs is expected to flag about one.
ALPHA = 0.001


@dataclass(frozen=True)
class Trend:
    """The pooled test of one run: z (negative when later trials pass less), its two-sided p, and
    the pass rates of the first and second half of each task's trials, pooled."""

    z: float
    p: float
    tasks: int  # tasks that inform the test (some passes and some fails, two trials or more)
    early_rate: float | None
    late_rate: float | None

    @property
    def significant(self) -> bool:
        return self.p < ALPHA


def trend_test(tasks: Sequence[Sequence[bool]]) -> Trend:
    """The stratified trend test over ``tasks``: each a list of outcomes (True is a pass) in trial
    order. Tasks with one trial, or that all pass or all fail, carry no information."""
    u = var = 0.0
    informative = 0
    early = [0, 0]  # passes, trials
    late = [0, 0]
    for outcomes in tasks:
        n = len(outcomes)
        if n < 2:
            continue
        half = n // 2
        for i, x in enumerate(outcomes):
            if i < half:
                early[0] += x
                early[1] += 1
            elif i >= n - half:
                late[0] += x
                late[1] += 1
        c = sum(1 for x in outcomes if x)
        if c in (0, n):
            continue
        informative += 1
        mean_pos = (n - 1) / 2
        u += sum(i - mean_pos for i, x in enumerate(outcomes) if x)
        spread = n * (n * n - 1) / 12  # sum of squared centred positions 0..n-1
        var += c * (n - c) / (n * (n - 1)) * spread
    if var <= 0:
        z, p = 0.0, 1.0
    else:
        z = u / math.sqrt(var)
        p = math.erfc(abs(z) / math.sqrt(2))
    return Trend(
        z,
        p,
        informative,
        early[0] / early[1] if early[1] else None,
        late[0] / late[1] if late[1] else None,
    )
