"""The alert rule (``metrics.alerts``) applied to the monitor's windows: every rate of every window
and the judged fail rate, the ALERT lines, and what each rate's next window would have to show to
alert (its minimum detectable change)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.alerts import (
    DEFAULT_BASELINE_WINDOWS,
    MIN_BASELINE_WINDOWS,
    Count,
    Detectable,
    Test,
    alert_table,
    baseline_windows_of,
    detectable,
    lag_of,
)
from reviewer.metrics.monitor import Rate, Window, metric_words, window_position


@dataclass(frozen=True)
class Alert:
    window: str
    metric: str
    bad: int
    n: int
    base_bad: int
    base_n: int
    base_windows: int
    p_value: float  # one-sided: the larger of the wobble-adjusted p and Fisher's
    p_holm: float = 1.0  # Holm-adjusted over the rates tested in the window
    tested_together: int = 1
    phi: float | None = None
    wobble: float | None = None
    exact: bool = False  # p_value is Fisher's
    baseline: str = "recent"

    def line(self, size: str) -> str:
        now = _pct(self.bad, self.n)
        before = _pct(self.base_bad, self.base_n)
        what = "judge fail rate" if self.metric == "judge_fail" else metric_words(self.metric)
        if self.exact:
            test = f"Fisher p = {self.p_value:.2g}"
        else:
            test = f"wobble-adjusted p = {self.p_value:.2g}"
            if self.wobble:
                test += f", wobble {100 * self.wobble:.0f}%"
        if self.tested_together > 1:
            test += f"; Holm over {self.tested_together} rates: {self.p_holm:.2g}"
        return (
            f"ALERT {size} {self.window}: {what} {now} ({self.bad} of {self.n}) vs {before} "
            f"({self.base_bad} of {self.base_n}) {where(self.baseline, size, self.base_windows)} "
            f"({test})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "metric": self.metric,
            "bad": self.bad,
            "n": self.n,
            "baseline": {
                "bad": self.base_bad,
                "n": self.base_n,
                "windows": self.base_windows,
                "kind": self.baseline,
                "phi": self.phi,
                "wobble": self.wobble,
            },
            "p_value": self.p_value,
            "test": "fisher" if self.exact else "wobble-adjusted",
            "p_holm": self.p_holm,
            "tested_together": self.tested_together,
        }


def where(kind: str, size: str, k: int) -> str:
    """Which windows the baseline is, in words."""
    plural = "" if k == 1 else "s"
    if kind == "same-weekday" and size == "day":
        return f"on the same weekday of the {k} week{plural} before"
    if kind == "same-weekday":
        return f"at the same hour and weekday of the {k} week{plural} before"
    if kind == "same-hour":
        return f"at the same hour of the {k} day{plural} before"
    return f"in the {k} {size}{plural} before"


def needs(kind: str, size: str) -> str:
    """What a window needs before it can be tested, in words."""
    k = MIN_BASELINE_WINDOWS
    if kind == "same-weekday" and size == "day":
        return f"the same weekday of {k} earlier weeks"
    if kind == "same-weekday":
        return f"the same hour and weekday of {k} earlier weeks"
    if kind == "same-hour":
        return f"the same hour of {k} earlier days"
    return f"{k} earlier {size}s"


def _pct(bad: int, n: int) -> str:
    return f"{100 * bad / n:.1f}%" if n else "n/a"


def _count(r: Rate) -> Count:
    if r.clustered:
        return Count(r.bad, r.n, (r.units, r.bad_sq, r.n_sq, r.cross))
    return Count(r.bad, r.n)


@dataclass
class Alerts:
    """What the rule found in the windows: the alerts, each rate's minimum detectable change for
    the next window (None: not enough baseline windows yet), how many rate-windows were tested and
    how many windows with conversations could not be for want of a baseline."""

    alerts: list[Alert]
    detectable: dict[str, Detectable | None] = field(default_factory=dict)
    tested: int = 0
    untested: list[str] = field(default_factory=list)  # windows no rate could be tested in


def find_alerts(
    windows: Sequence[Window],
    baseline_windows: int = DEFAULT_BASELINE_WINDOWS,
    *,
    size: str = "day",
    baseline: str = "recent",
) -> Alerts:
    """Alerts on every rate of ``windows`` (and the judged fail rate), marked on the windows, and
    each rate's minimum detectable change. ValueError when ``baseline`` does not fit ``size``."""
    lag = lag_of(baseline, size)
    if not windows:
        return Alerts([])
    metrics = list(windows[0].rates)
    series: dict[str, list[Count]] = {m: [_count(w.rates[m]) for w in windows] for m in metrics}
    series["judge_fail"] = [
        Count(w.judge_pass.n - w.judge_pass.bad, w.judge_pass.n) for w in windows
    ]
    positions = [window_position(w.start, size) for w in windows]
    tests = alert_table(series, baseline_windows=baseline_windows, lag=lag, positions=positions)
    alerts = []
    for metric, found in tests.items():
        for t in found:
            if not t.alert:
                continue
            c = series[metric][t.index]
            alerts.append(_alert(windows[t.index].start, metric, c, t, baseline))
            windows[t.index].alerts.append(metric)
    alerts.sort(key=lambda a: (a.window, a.metric))
    tested_at = {t.index for found in tests.values() for t in found}
    untested = [w.start for i, w in enumerate(windows) if w.conversations and i not in tested_at]
    return Alerts(
        alerts,
        _detectable(series, tests, positions, baseline_windows, lag),
        sum(map(len, tests.values())),
        untested,
    )


def _alert(start: str, metric: str, c: Count, t: Test, baseline: str) -> Alert:
    return Alert(
        start,
        metric,
        c.bad,
        c.n,
        t.base_bad,
        t.base_n,
        t.base_windows,
        t.p,
        t.p_holm,
        t.family,
        t.phi,
        t.wobble,
        t.exact,
        baseline,
    )


def _detectable(
    series: dict[str, list[Count]],
    tests: dict[str, list[Test]],
    positions: list[int],
    baseline_windows: int,
    lag: int,
) -> dict[str, Detectable | None]:
    """Each rate's minimum detectable change in the window after the last, with the rates that
    would be tested with it (those with enough baseline windows) as Holm's family."""
    from reviewer.metrics.alerts import ALPHA_TWO

    at = {p: i for i, p in enumerate(positions)}
    nxt = positions[-1] + 1
    ready = []
    for m, counts in series.items():
        excluded = {t.index for t in tests[m] if t.alert or t.p < ALPHA_TWO}
        base, _ = baseline_windows_of(nxt, at, counts, excluded, lag=lag, windows=baseline_windows)
        if len(base) >= MIN_BASELINE_WINDOWS:
            ready.append(m)
    return {
        m: detectable(
            counts,
            tests[m],
            nxt,
            positions,
            family=len(ready),
            baseline_windows=baseline_windows,
            lag=lag,
        )
        if m in ready
        else None
        for m, counts in series.items()
    }
