"""Fisher's exact test, one-sided: did a pass (or good) rate fall? Used by the gate per task and by
the monitor's alerts."""

from __future__ import annotations

import math


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
