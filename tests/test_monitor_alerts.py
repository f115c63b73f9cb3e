"""The monitor's alert rule, by seeded simulation: how often it alarms on streams that did not
change (the false-alarm rate the README states), and how soon it catches a planted change."""

from __future__ import annotations

import numpy as np

from reviewer.metrics.monitor import alert_series

DAYS = 14
#: (conversations per window, bad rate) of five rates: three checks, the judged sample's fail rate
#: (25 judged a day: 5% of 500) and the tool error rate (errors of ~1,000 calls)
STABLE = [(500, 0.02), (500, 0.05), (500, 0.12), (25, 0.15), (1000, 0.06)]


def _stream(
    rng: np.random.Generator, n: int, p: float, shift_at: int | None = None, to: float = 0.0
):
    return [
        (int(rng.binomial(n, to if shift_at is not None and d >= shift_at else p)), n)
        for d in range(DAYS)
    ]


def false_alarm_rate(seeds: int) -> tuple[float, float]:
    """(share of 14-day streams with any alert on any of the five rates, share of rate-windows)."""
    streams = windows = tested = 0
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        any_alert = False
        for n, p in STABLE:
            alerts = alert_series(_stream(rng, n, p))
            windows += len(alerts)
            tested += DAYS - 3  # the first three windows have no baseline yet
            any_alert |= bool(alerts)
        streams += any_alert
    return streams / seeds, windows / tested


def test_no_alert_on_stable_streams_over_many_seeds() -> None:
    per_stream, per_window = false_alarm_rate(500)
    # measured: 4.2% of streams, 0.08% of rate-windows (the README states these figures)
    assert per_stream <= 0.05, per_stream
    assert per_window <= 0.002, per_window


def test_planted_drop_is_alerted_within_one_window() -> None:
    """A check tripling at window 10 alerts in that window; the judged sample's fail rate going
    from 15% to 50% (25 judged a window) alerts in that window or the next."""
    check_same = judge_within = 0
    seeds = 300
    for seed in range(seeds):
        rng = np.random.default_rng(10_000 + seed)
        check = alert_series(_stream(rng, 500, 0.05, shift_at=9, to=0.15))
        judge = alert_series(_stream(rng, 25, 0.15, shift_at=9, to=0.5))
        check_same += any(i == 9 for i, *_ in check)
        judge_within += any(i in (9, 10) for i, *_ in judge)
    assert check_same / seeds == 1.0
    assert judge_within / seeds >= 0.85, judge_within / seeds  # measured: 85.7%


def test_an_incident_does_not_become_the_new_normal() -> None:
    """Windows that alerted stay out of the baseline: a lasting rise keeps alerting."""
    counts = [(25, 500)] * 9 + [(75, 500)] * 5
    alerted = [i for i, *_ in alert_series(counts)]
    assert alerted == [9, 10, 11, 12, 13]
