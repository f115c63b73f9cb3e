"""The monitor's alerts on realistic production streams: a seeded simulation of false alarms and of
how soon a real change is caught, for the alert rule (``reviewer.metrics.alerts``) and, beside it,
the old rule (one-sided Fisher against the pooled earlier windows, no dispersion, no Holm).

The generator, explicitly:
- wobble: day d's true rate is ``p * (1 + wobble * N(0, 1))`` (kept within [0, 1]); the window's
  count is binomial(n, that rate). ``--wobble 0.15`` is a 15% day-to-day wobble.
- clustered tool errors: each conversation makes ``1 + NegBin(1.2, 0.2)`` tool calls (mean 5.8, sd
  4.9: tau-bench airline, gpt-4o) and has its own error propensity drawn from a beta with the day's
  rate as mean and intra-class correlation ``--icc`` (0.06, measured on the same airline data); its
  errors are binomial(calls, propensity). The tool error rate is errors per call.
- weekly pattern (section d): Saturdays and Sundays run at 1.4 times the weekday rate.
- a change: from day ``--change-day`` on, the rate is multiplied by 2 (it doubles) and stays.

Targets (issue 26), each printed with met / NOT MET:
(a) no change, 30-day streams, 800 conversations a day, 8% rate, 15% wobble: at most 1 in 6
    streams raise any alert (a conversation rate alone; the six rates of a monitor together);
(b) the same for the tool error rate with clustered errors (ICC 0.06);
(c) a doubling at 800 a day is caught in its window or the next in at least 80% of streams;
(d) with a weekly pattern, the same-weekday baseline keeps (a)'s target;
plus the README's figures (14-day streams of five rates, without wobble).

Run: ``python bench/monitor_alarms.py [--streams 600] [--seed 0]`` (about two minutes).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import numpy as np

from reviewer.metrics.alerts import Count, alert_table
from reviewer.metrics.fisher import fisher_one_sided

WARMUP = 3  # the first windows have no baseline yet (3 needed)


# --- the generator ---------------------------------------------------------------------------------


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
    out = []
    for r in rates:
        calls = 1 + rng.negative_binomial(1.2, 0.2, size=n)
        r = min(max(r, 1e-6), 1 - 1e-6)
        scale = 1 / icc - 1
        own = rng.beta(r * scale, (1 - r) * scale, size=n)
        errors = rng.binomial(calls, own)
        out.append(
            Count(
                int(errors.sum()),
                int(calls.sum()),
                (
                    n,
                    float((errors * errors).sum()),
                    float((calls * calls).sum()),
                    float((errors * calls).sum()),
                ),
            )
        )
    return out


# --- the rules -------------------------------------------------------------------------------------


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


def new_rule(series: dict[str, list[Count]], lag: int = 1) -> dict[str, list[int]]:
    tests = alert_table(series, lag=lag)
    return {m: [t.index for t in ts if t.alert] for m, ts in tests.items()}


# --- the scenarios ---------------------------------------------------------------------------------


Maker = Callable[[np.random.Generator], dict[str, list[Count]]]


def no_change(
    maker: Maker, streams: int, seed: int, lag: int = 1, warmup: int = WARMUP
) -> dict[str, tuple[float, float]]:
    """{rule: (share of streams with any alert, share of tested rate-windows that alert)}."""
    hit = {"new": 0, "old": 0}
    windows = {"new": 0, "old": 0}
    tested = 0
    for s in range(streams):
        rng = np.random.default_rng([seed, s])
        series = maker(rng)
        new = new_rule(series, lag)
        old = {m: old_rule(c) for m, c in series.items()}
        tested += sum(len(c) - warmup for c in series.values())
        for name, found in (("new", new), ("old", old)):
            hit[name] += any(found.values())
            windows[name] += sum(map(len, found.values()))
    return {k: (hit[k] / streams, windows[k] / tested) for k in hit}


def caught(
    maker: Maker, metric: str, streams: int, seed: int, change_day: int, within: int = 2
) -> dict[str, tuple[float, float]]:
    """{rule: (share of streams where ``metric`` alerts within ``within`` windows of the change,
    share where it alerts in the change's own window)}."""
    soon = {"new": 0, "old": 0}
    same = {"new": 0, "old": 0}
    for s in range(streams):
        rng = np.random.default_rng([seed, 7919, s])
        series = maker(rng)
        found = {"new": new_rule(series)[metric], "old": old_rule(series[metric])}
        for name, alerts in found.items():
            soon[name] += any(change_day <= i < change_day + within for i in alerts)
            same[name] += change_day in alerts
    return {k: (soon[k] / streams, same[k] / streams) for k in soon}


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
    """The README's 14-day stream of five rates: three checks at 500 a day (2%, 5%, 12%), the
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
    out = []
    for r in rates:
        calls = 1 + rng.poisson(1.0, size=n)
        r = min(max(r, 1e-6), 1 - 1e-6)
        if icc > 0:
            scale = 1 / icc - 1
            own = rng.beta(r * scale, (1 - r) * scale, size=n)
        else:
            own = np.full(n, r)
        errors = rng.binomial(calls, own)
        out.append(
            Count(
                int(errors.sum()),
                int(calls.sum()),
                (
                    n,
                    float((errors * errors).sum()),
                    float((calls * calls).sum()),
                    float((errors * calls).sum()),
                ),
            )
        )
    return out


# --- the report ------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--streams", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--per-day", type=int, default=800)
    ap.add_argument("--rate", type=float, default=0.08)
    ap.add_argument("--wobble", type=float, default=0.15)
    ap.add_argument("--icc", type=float, default=0.06)
    ap.add_argument("--change-day", type=int, default=20)
    args = ap.parse_args()
    started = time.perf_counter()
    s, days, n, p, wob, icc = (
        args.streams,
        args.days,
        args.per_day,
        args.rate,
        args.wobble,
        args.icc,
    )
    print(
        f"{s} streams a figure, seed {args.seed}: {days} days, {n} conversations a day, "
        f"{100 * p:g}% rate, {100 * wob:g}% day-to-day wobble, tool errors ICC {icc:g}"
    )

    def line(label: str, figures: dict[str, tuple[float, float]], target: float) -> None:
        new, old = figures["new"], figures["old"]
        print(
            f"  {label}: {100 * new[0]:.1f}% of streams alert ({100 * new[1]:.3f}% of rate-windows); "
            f"old rule {100 * old[0]:.1f}% ({100 * old[1]:.3f}%); target <= {100 * target:.1f}%: "
            f"{verdict(new[0] <= target)}"
        )

    print("(a) no change")
    line("one conversation rate", no_change(one_rate(days, n, p, wob), s, args.seed), 1 / 6)
    line(
        "six rates tested together",
        no_change(monitor_maker(days, n, p, wob, icc), s, args.seed),
        1 / 6,
    )
    print("(b) no change, clustered tool errors")
    line("tool error rate", no_change(tool_only(days, n, p, wob, icc), s, args.seed), 1 / 6)
    print(f"(c) the rate doubles on day {args.change_day + 1} and stays: caught within 2 windows")
    for label, maker, metric in (
        ("one conversation rate", one_rate(days, n, p, wob, args.change_day), "rate"),
        (
            "one of six rates",
            monitor_maker(days, n, p, wob, icc, "check0", args.change_day),
            "check0",
        ),
        ("tool error rate", tool_only(days, n, p, wob, icc, args.change_day), "tool"),
    ):
        fig = caught(maker, metric, s, args.seed, args.change_day)
        new, old = fig["new"], fig["old"]
        print(
            f"  {label}: {100 * new[0]:.1f}% within 2 windows ({100 * new[1]:.1f}% in its own); "
            f"old rule {100 * old[0]:.1f}% ({100 * old[1]:.1f}%); target >= 80%: "
            f"{verdict(new[0] >= 0.8)}"
        )
    for per_day in (200, 400, 1600):
        fig = caught(one_rate(days, per_day, p, wob, args.change_day), "rate", s, args.seed, 20)
        print(
            f"  at {per_day} a day (no target): {100 * fig['new'][0]:.1f}% within 2 windows, "
            f"old rule {100 * fig['old'][0]:.1f}%"
        )
    print("(d) weekends at 1.4 times the weekday rate, 8 weeks, no change")
    weekly = one_rate(56, n, p, wob, weekend=1.4)
    for label, lag, warmup in (("recent baseline", 1, WARMUP), ("same-weekday baseline", 7, 21)):
        fig = no_change(weekly, s, args.seed, lag=lag, warmup=warmup)
        line(label, fig, 1 / 6)
    print("README: 14-day streams of five rates (3 checks at 500 a day, 25 judged, ~1,000 calls)")
    for wobble, icc_r in ((0.0, 0.0), (wob, icc)):
        fig = no_change(readme_maker(wobble, icc_r), s, args.seed)
        print(
            f"  no change, wobble {100 * wobble:g}%, ICC {icc_r:g}: {100 * fig['new'][0]:.1f}% "
            f"of streams alert ({100 * fig['new'][1]:.3f}% of rate-windows); old rule "
            f"{100 * fig['old'][0]:.1f}% ({100 * fig['old'][1]:.3f}%)"
        )
    judge = caught(readme_maker(0.0, 0.0, "judge"), "judge", s, args.seed, 9)
    check = caught(readme_maker(0.0, 0.0, "check5"), "check5", s, args.seed, 9, within=1)
    print(
        f"  judged fail rate 15% -> 50%: {100 * judge['new'][0]:.1f}% caught within 2 windows "
        f"(old rule {100 * judge['old'][0]:.1f}%); a check tripling (5% -> 15%): "
        f"{100 * check['new'][0]:.1f}% in its own window (old rule {100 * check['old'][0]:.1f}%)"
    )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
