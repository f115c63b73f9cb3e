"""Wilson score interval of a proportion: the interval on the judge's TPR and TNR.

Wilson (1927), as in Newcombe (1998, method 3): unlike the plain Wald interval it never leaves
[0, 1] and is not [p, p] at 0 or n successes, so it stays honest on calibration-sized sets.
"""

from __future__ import annotations

import math

__all__ = ["Z95", "wilson_interval"]

Z95 = 1.959963984540054


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of ``k`` successes in ``n`` trials; ``None`` when ``n`` is 0."""
    if n < 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k = {k}, n = {n}")
    if n == 0:
        return None
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # at k = 0 or k = n the bound is exactly 0 or 1; float rounding may land a hair off it
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high
