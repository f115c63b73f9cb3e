"""Seeded production streams for the monitor's alert rule (used by tests/metrics/test_alerts.py and
bench/monitor_alarms.py), and the old rule to compare with.

- wobble: day d's true rate is ``p * (1 + wobble * N(0, 1))`` (kept within [0, 1]); the window's
  count is binomial(n, that rate).
- clustered tool errors: each conversation makes ``1 + NegBin(1.2, 0.2)`` tool calls (mean 5.8, sd
  4.9, as tau-bench airline with gpt-4o) and has its own error propensity drawn from a beta with the
  day's rate as mean and intra-class correlation ``icc`` (0.06 on the same airline data); its errors
  are binomial(calls, propensity). The tool error rate is errors per call.
- weekly pattern: days 5 and 6 of each week (the weekend) run at ``weekend`` times the rate.
- a change: from ``change_day`` on the rate is multiplied by ``factor`` and stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from reviewer.metrics.alerts import Count
from reviewer.metrics.fisher import fisher_one_sided

WARMUP = 3  # the first windows have no baseline yet (3 needed)
Maker = Callable[[np.random.Generator], dict[str, list[Count]]]


def day_rates(
    rng: np.random.Generator,
    days: int,
    p: float,
    wobble: float,
    change_day: int | None = None,
    factor: float = 2.0,
    weekend: float = 1.0,
) -> np.ndarray:
    """Each day's true rate: p times the change (from ``change_day``) times the weekend factor
    (days 5 and 6 of each week), times 1 + wobble * N(0, 1), within [0, 1]."""
    base = np.full(days, p)
    if change_day is not None:
        base[change_day:] *= factor
    base[[d for d in range(days) if d % 7 in (5, 6)]] *= weekend
    return np.clip(base * (1 + wobble * rng.standard_normal(days)), 0.0, 1.0)


def conversation_stream(rng: np.random.Generator, n: int, rates: np.ndarray) -> list[Count]:
    return [Count(int(rng.binomial(n, r)), n) for r in rates]


def tool_error_stream(
    rng: np.random.Generator, n: int, rates: np.ndarray, icc: float
) -> list[Count]:
    """Errors per call of n conversations a day, errors correlated within a conversation."""
    return _tool_counts(rng, rates, icc, lambda: 1 + rng.negative_binomial(1.2, 0.2, size=n))


def _tool_counts(
    rng: np.random.Generator, rates: np.ndarray, icc: float, calls_of_a_day: Any
) -> list[Count]:
    """Each day's tool errors and calls, a conversation's own error rate drawn around the day's
    rate with intra-conversation correlation ``icc`` (independent calls at 0)."""
    out = []
    for r in rates:
        calls = calls_of_a_day()
        r = min(max(r, 1e-6), 1 - 1e-6)
        if icc > 0:
            scale = 1 / icc - 1
            own = rng.beta(r * scale, (1 - r) * scale, size=len(calls))
        else:
            own = np.full(len(calls), r)
        errors = rng.binomial(calls, own)
        out.append(
            Count(
                int(errors.sum()),
                int(calls.sum()),
                (
                    len(calls),
                    float((errors * errors).sum()),
                    float((calls * calls).sum()),
                    float((errors * calls).sum()),
                ),
            )
        )
    return out


def old_rule(counts: Sequence[Count], baseline_windows: int = 7) -> list[int]:
    """The old rule: Fisher against the pooled windows before, p < 0.001 or p < 0.01 twice."""
    alarmed: set[int] = set()
    prev_low = False
    for i, c in enumerate(counts):
        base = [
            j for j in range(max(0, i - baseline_windows), i) if j not in alarmed and counts[j].n
        ]
        if c.n == 0 or len(base) < WARMUP:
            prev_low = False
            continue
        bb, bn = sum(counts[j].bad for j in base), sum(counts[j].n for j in base)
        p = fisher_one_sided(bn - bb, bn, c.n - c.bad, c.n)
        if p < 0.001 or (p < 0.01 and prev_low):
            alarmed.add(i)
        prev_low = p < 0.01
    return sorted(alarmed)


def monitor_maker(
    days: int,
    n: int,
    p: float,
    wobble: float,
    icc: float,
    change: str | None = None,
    change_day: int | None = None,
    weekend: float = 1.0,
) -> Maker:
    """Six rates tested together: five conversation rates (checks, signals) and the tool error
    rate; ``change`` names the one that doubles."""

    def make(rng: np.random.Generator) -> dict[str, list[Count]]:
        out: dict[str, list[Count]] = {}
        for k in range(5):
            name = f"check{k}"
            rates = day_rates(
                rng, days, p, wobble, change_day if change == name else None, weekend=weekend
            )
            out[name] = conversation_stream(rng, n, rates)
        rates = day_rates(
            rng, days, p, wobble, change_day if change == "tool" else None, weekend=weekend
        )
        out["tool"] = tool_error_stream(rng, n, rates, icc)
        return out

    return make


def one_rate(
    days: int, n: int, p: float, wobble: float, change_day: int | None = None, weekend: float = 1.0
) -> Maker:
    def make(rng: np.random.Generator) -> dict[str, list[Count]]:
        rates = day_rates(rng, days, p, wobble, change_day, weekend=weekend)
        return {"rate": conversation_stream(rng, n, rates)}

    return make


def tool_only(
    days: int, n: int, p: float, wobble: float, icc: float, change_day: int | None = None
) -> Maker:
    def make(rng: np.random.Generator) -> dict[str, list[Count]]:
        return {"tool": tool_error_stream(rng, n, day_rates(rng, days, p, wobble, change_day), icc)}

    return make


def readme_maker(wobble: float, icc: float, change: str | None = None) -> Maker:
    """The 14-day stream of five rates of docs/ci-and-monitoring.md: three checks at 500 a day (2%, 5%, 12%), the
    judged fail rate (25 judged a day, 15%) and the tool error rate (500 conversations, ~2 calls
    each, 6%); ``change``: "judge" goes from 15% to 50% on day 9, "check" triples (5% -> 15%)."""

    def make(rng: np.random.Generator) -> dict[str, list[Count]]:
        out: dict[str, list[Count]] = {}
        for name, n, p in (("check2", 500, 0.02), ("check5", 500, 0.05), ("check12", 500, 0.12)):
            rates = day_rates(rng, 14, p, wobble, 9 if change == name else None, factor=3.0)
            out[name] = conversation_stream(rng, n, rates)
        judge = day_rates(rng, 14, 0.15, wobble, 9 if change == "judge" else None, factor=10 / 3)
        out["judge"] = conversation_stream(rng, 25, judge)
        tool = day_rates(rng, 14, 0.06, wobble, None)
        out["tool"] = readme_tool_stream(rng, 500, tool, icc)
        return out

    return make


def readme_tool_stream(
    rng: np.random.Generator, n: int, rates: np.ndarray, icc: float
) -> list[Count]:
    """~1,000 tool calls a day from 500 conversations (1 + Poisson(1) calls each)."""
    return _tool_counts(rng, rates, icc, lambda: 1 + rng.poisson(1.0, size=n))
