"""What one pass of the monitor found, and how it reads: the header, the window table, one line per
alert, JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.alerts import Detectable
from reviewer.metrics.monitor import Window
from reviewer.metrics.monitor_alerts import Alert
from reviewer.text import one_line
from reviewer.workflows.queues import QueueMade

#: The table's judge column: the judged fail rate, the rate the judge's alerts are on.
JUDGE_COLUMN = "judge fail rate"


@dataclass
class MonitorReport:
    size: str
    runs: list[str]
    metrics: list[str]
    windows: list[Window]
    alerts: list[Alert]
    sample: float
    seed: int
    conversations: int = 0
    analysed: int = 0  # conversations analysed by this pass (the rest were stored before)
    no_time: int = 0  # conversations of the watched runs without a time: left out
    sampled: list[str] = field(default_factory=list)
    judge_cap: float | None = None  # --max-cost / [monitor] max_cost: the judge's cap per pass
    judge_line: str | None = None
    judge_problem: str | None = None
    #: flagged conversation id -> why (checks fired, judge fail, bad signals, alerted metrics)
    flagged: dict[str, list[str]] = field(default_factory=dict)
    window_of: dict[str, str] = field(default_factory=dict)  # flagged id -> its window
    queue: QueueMade | None = None
    queue_note: str | None = None
    imported: str | None = None
    notes: list[str] = field(default_factory=list)  # what was left out or not listed, and why
    baseline: str = "recent"  # which earlier windows a window is compared with
    baseline_windows: int = 7
    #: each rate's minimum detectable change in the next window (None: no baseline yet)
    detectable: dict[str, Detectable | None] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        return 1 if self.alerts else 0

    def flagged_in(self, window: str) -> list[str]:
        return [t for t, w in self.window_of.items() if w == window]

    def header(self) -> str:
        judged = sum(w.judge_pass.n for w in self.windows)
        runs = (
            f"{'run' if len(self.runs) == 1 else 'runs'} {', '.join(one_line(r) for r in self.runs)}"
            if self.runs
            else "no run holds a timed conversation"
        )
        return (
            f"monitor: {self.conversations} conversations in {len(self.windows)} {self.size} "
            f"windows ({runs}); judged sample {self.sample:g} (seed {self.seed}): "
            f"{judged} of {len(self.sampled)} judged; {len(self.flagged)} flagged"
        )

    def table_lines(self, width: int | None = None) -> list[str]:
        """The window table: one row per window and one column per rate (``!`` marks an alert).
        Within ``width`` columns (the terminal's): the full names when they fit, else letters with a
        legend, else one block per window."""
        from reviewer.metrics.monitor import metric_words

        cols = [*self.metrics, "tool_error_rate"]
        names = [metric_words(m) for m in cols] + [JUDGE_COLUMN]
        rows = []
        for w in self.windows:
            cells = [w.start, str(w.conversations)]
            for m in cols:
                r = w.rates[m]
                mark = "!" if m in w.alerts else ""
                cells.append("-" if r.rate is None else f"{100 * r.rate:.1f}%{mark}")
            cells.append(judge_cell(w))
            cells.append(str(w.flagged))
            rows.append(cells)
        full = _grid(["window", "convs", *names, "flagged"], rows)
        if width is None or max(map(len, full)) <= width:
            return full
        letters = [_letter(i) for i in range(len(names))]
        short = _grid(["window", "convs", *letters, "flagged"], rows)
        legend = _wrap([f"{a} {n}" for a, n in zip(letters, names, strict=True)], width)
        if max(map(len, short)) <= width:
            return short + [""] + legend
        out: list[str] = []
        for cells in rows:
            out.append(f"{cells[0]}  {cells[1]} conversations, {cells[-1]} flagged")
            out += _wrap([f"{n} {c}" for n, c in zip(names, cells[2:-1], strict=True)], width, "  ")
        return out

    def detect_lines(self, width: int | None = None) -> list[str]:
        """How a window is tested, then each rate's minimum detectable change in the next window:
        from its baseline rate, the rate at which a window of the usual size alerts alone, and two
        in a row."""
        from reviewer.metrics.monitor_alerts import where

        family = max((d.family for d in self.detectable.values() if d), default=0)
        base = where(self.baseline, self.size, self.baseline_windows).split(" ", 1)[1]
        head = f"alerts: each rate vs {base}, allowing for how it wobbles; Holm over the rates tested together"
        out = _wrap(head.split(" "), width or len(head), joiner=" ")
        # the family of the next window, which may be smaller than an alert's of the past
        together = f"; Holm over {family} rates" if family > 1 else ""
        out.append(f"the next {self.size} alerts at (alone; twice in a row{together}):")
        names = {m: _words(m) for m in self.detectable}
        pad = max(map(len, names.values()), default=0)
        for m, d in self.detectable.items():
            if d is None:
                what = ["no baseline yet"]
            else:
                alone = f"{100 * d.alone:.1f}%" if d.alone is not None else "never"
                twice = f"{100 * d.twice:.1f}%" if d.twice is not None else "never"
                wob = f", wobble {100 * d.wobble:.0f}%" if d.wobble is not None else ""
                what = [f"{100 * d.base_rate:.1f}% -> {alone}; {twice}", f"(n {d.n}{wob})"]
            line = f"  {names[m]:<{pad}}  " + " ".join(what)
            if width is None or len(line) <= width:
                out.append(line)
            else:
                out += _wrap([f"{names[m]}:", *what], width, "  ", joiner=" ")
        return out

    def alert_lines(self) -> list[str]:
        """One line per alert; a rate that keeps alerting in the windows right after is one line
        that says until when (``--json`` lists every alerting window)."""
        index = {w.start: i for i, w in enumerate(self.windows)}
        episodes: list[list[Alert]] = []
        current: dict[str, list[Alert]] = {}
        for a in sorted(self.alerts, key=lambda a: (index.get(a.window, -1), a.metric)):
            run = current.get(a.metric)
            if run is not None and index.get(run[-1].window, -2) == index.get(a.window, -1) - 1:
                run.append(a)
            else:
                current[a.metric] = [a]
                episodes.append(current[a.metric])
        out = []
        for run in episodes:
            line = run[0].line(self.size)
            if len(run) > 1:
                line += f"; still alerting through {run[-1].window} ({len(run)} {self.size}s)"
            out.append(line)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.size,
            "runs": self.runs,
            "metrics": [*self.metrics, "tool_error_rate", "judge_fail"],
            "conversations": self.conversations,
            "analysed": self.analysed,
            "no_time": self.no_time,
            "notes": list(self.notes),
            "sample": {"share": self.sample, "seed": self.seed, "conversations": len(self.sampled)},
            "judge": {"summary": self.judge_line, "problem": self.judge_problem},
            "windows": [w.to_dict() for w in self.windows],
            "alerts": [a.to_dict() for a in self.alerts],
            "alert_rule": {
                "baseline": self.baseline,
                "baseline_windows": self.baseline_windows,
                "test": "wobble-adjusted (over-dispersion from the baseline windows), "
                "no less than Fisher's exact p; Holm over the rates tested together",
            },
            "detectable": {m: (d.to_dict() if d else None) for m, d in self.detectable.items()},
            "alert_lines": self.alert_lines(),
            "flagged": [
                {"trial_id": t, "window": self.window_of.get(t), "why": why}
                for t, why in self.flagged.items()
            ],
            "queue": None
            if self.queue is None
            else {
                "name": self.queue.queue.name,
                "created": self.queue.created,
                "items": len(self.queue.queue.items),
            },
            "queue_note": self.queue_note,
            "exit_code": self.exit_code,
        }


def _words(metric: str) -> str:
    from reviewer.metrics.monitor import metric_words

    return JUDGE_COLUMN if metric == "judge_fail" else metric_words(metric)


def judge_cell(w: Window, interval: bool = True) -> str:
    """The judged fail rate (the rate that alerts) with its 95% Wilson interval (unless not
    ``interval``: the app's narrower column) and n, ``!`` when it alerted."""
    ci, jp = w.judge_interval, w.judge_pass
    if jp.rate is None or (interval and ci is None):
        return "-"
    mark = "!" if "judge_fail" in w.alerts else ""
    if not interval or ci is None:
        return f"{100 * (1 - jp.rate):.1f}%{mark} n={jp.n}"
    return f"{100 * (1 - jp.rate):.1f}%{mark} [{100 * (1 - ci[1]):.0f}-{100 * (1 - ci[0]):.0f}%] n={jp.n}"


def _grid(heads: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
    return [
        "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))
        for row in [heads, *rows]
    ]


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else f"Z{i - 25}"


def _wrap(items: list[str], width: int, indent: str = "", joiner: str = "  ") -> list[str]:
    """``items`` joined by ``joiner``, in lines of at most ``width`` (an item longer stays whole)."""
    out: list[str] = []
    line = ""
    for item in items:
        if line and len(indent) + len(line) + len(joiner) + len(item) > width:
            out.append(indent + line)
            line = item
        else:
            line = f"{line}{joiner}{item}" if line else item
    if line:
        out.append(indent + line)
    return out
