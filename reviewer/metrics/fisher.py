"""Fisher's exact test, one-sided: did a pass (or good) rate fall? Used by the gate per task and by
the monitor's alerts."""

from __future__ import annotations

import math
from collections.abc import Sequence


def fisher_one_sided(old_c: int, old_n: int, new_c: int, new_n: int) -> float:
    """P(old passes >= old_c) under no difference: the one-sided Fisher exact p-value that the
    new run's pass rate is lower (the hypergeometric upper tail, summed term by term from its first
    term in logs, so large counts cost a few terms, not big-integer binomials)."""
    total, passes = old_n + new_n, old_c + new_c
    hi = min(passes, old_n)
    if old_c > hi:
        return 0.0
    if old_c <= max(0, passes - new_n):
        return 1.0  # the whole distribution

    def log_comb(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    log_first = (
        log_comb(passes, old_c) + log_comb(total - passes, old_n - old_c) - log_comb(total, old_n)
    )
    term, tail, x = 1.0, 0.0, old_c
    while x <= hi:
        tail += term
        if x == hi:
            break
        term *= (passes - x) * (old_n - x) / ((x + 1) * (total - passes - old_n + x + 1))
        x += 1
        if term < tail * 1e-17:
            break
    return min(1.0, math.exp(log_first) * tail)


def stratified_rise(strata: Sequence[tuple[int, int, int, int]]) -> float:
    """The one-sided exact p-value that a bad event (a forbidden rule broken) became more common,
    stratified by task: each stratum is (old bad, old n, new bad, new n) of one task.

    Under no change a task's trials of both runs are exchangeable, so given how many of them were
    bad, the new run's bad count is hypergeometric; the p-value is the chance that the sum of those
    counts over tasks reaches the one observed (the exact conditional test of a common odds ratio of
    1, Mantel-Haenszel's exact form). Tasks with different rates, and events that come in a few
    tasks, are compared within their task, never pooled. With one stratum it is Fisher's
    one-sided exact test."""
    import numpy as np

    # distribution of the new run's bad count summed over the strata seen so far: dist[i] is the
    # chance of offset + i; values below _NEGLIGIBLE are cut from both ends as they appear, so the
    # array spans the few hundred counts that carry the mass, not every count the sum could take
    # (a cost quadratic in the tasks: 5,000 tasks breaking a rule often took minutes)
    dist = np.ones(1)
    offset = 0
    observed = 0
    for old_bad, old_n, new_bad, new_n in strata:
        bad = old_bad + new_bad
        if bad == 0 or new_n == 0 or old_n == 0:
            continue  # nothing can move between the runs in this task
        observed += new_bad
        lo, hi = max(0, bad - old_n), min(bad, new_n)
        total = old_n + new_n
        log_den = _log_comb(total, new_n)
        pmf = np.array(
            [
                math.exp(_log_comb(bad, x) + _log_comb(total - bad, new_n - x) - log_den)
                for x in range(lo, hi + 1)
            ]
        )
        dist = np.convolve(dist, pmf)
        offset += lo
        kept = np.flatnonzero(dist > _NEGLIGIBLE)
        if kept.size:
            dist = dist[kept[0] : kept[-1] + 1]
            offset += int(kept[0])
    start = observed - offset
    if start >= len(dist):
        return 0.0
    tail = math.fsum(dist[max(0, start) :].tolist())
    return min(1.0, max(0.0, tail))


# a chance this small is no chance: the p-value it could change is printed as 0
_NEGLIGIBLE = 1e-300


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
