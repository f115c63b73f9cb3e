"""Tests made together: p-values adjusted for how many were tested at once.

The gate tests every shared task and the monitor every rate of a window; each test alone keeps its
5% (or 0.1%) false-alarm rate, so fifty of them together call something worse almost every time.
Holm's step-down adjustment keeps the chance of *any* false call at the level (the family-wise error
rate) and is never less powerful than Bonferroni; Benjamini-Hochberg keeps the expected share of false
calls among the calls (the false discovery rate), from scipy.
"""

from __future__ import annotations

from collections.abc import Sequence


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input's order: a test is called at level alpha when its
    adjusted p-value is below alpha, and then the chance that any call is false is at most alpha."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        out[i] = running
    return out


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (scipy's ``false_discovery_control``), input order."""
    if not pvalues:
        return []
    from scipy.stats import false_discovery_control

    return [float(p) for p in false_discovery_control(list(pvalues), method="bh")]
