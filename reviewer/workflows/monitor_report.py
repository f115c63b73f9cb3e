"""What one pass of the monitor found, and how it reads: the header, the window table, one line per
alert, JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reviewer.metrics.monitor import Alert, Window
from reviewer.workflows.queues import QueueMade


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
    judge_line: str | None = None
    judge_problem: str | None = None
    #: flagged conversation id -> why (checks fired, judge fail, bad signals, alerted metrics)
    flagged: dict[str, list[str]] = field(default_factory=dict)
    window_of: dict[str, str] = field(default_factory=dict)  # flagged id -> its window
    queue: QueueMade | None = None
    queue_note: str | None = None
    imported: str | None = None
    notes: list[str] = field(default_factory=list)  # what was left out or not listed, and why

    @property
    def exit_code(self) -> int:
        return 1 if self.alerts else 0

    def flagged_in(self, window: str) -> list[str]:
        return [t for t, w in self.window_of.items() if w == window]

    def header(self) -> str:
        judged = sum(w.judge_pass.n for w in self.windows)
        runs = ", ".join(self.runs) or "none"
        return (
            f"monitor: {self.conversations} conversations in {len(self.windows)} {self.size} "
            f"windows (run {runs}); judged sample {self.sample:g} (seed {self.seed}): "
            f"{judged} of {len(self.sampled)} judged; {len(self.flagged)} flagged"
        )

    def table_lines(self) -> list[str]:
        from reviewer.metrics.monitor import metric_words

        cols = [*self.metrics, "tool_error_rate"]
        heads = ["window", "convs", *(metric_words(m) for m in cols), "judge pass", "flagged"]
        rows = []
        for w in self.windows:
            cells = [w.start, str(w.conversations)]
            for m in cols:
                r = w.rates[m]
                mark = "!" if m in w.alerts else ""
                cells.append("-" if r.rate is None else f"{100 * r.rate:.1f}%{mark}")
            ci = w.judge_interval
            jp = w.judge_pass
            mark = "!" if "judge_fail" in w.alerts else ""
            judge = (
                "-"
                if ci is None or jp.rate is None
                else f"{jp.rate:.2f}{mark} [{ci[0]:.2f},{ci[1]:.2f}] n={jp.n}"
            )
            cells.append(judge)
            cells.append(str(w.flagged))
            rows.append(cells)
        widths = [max(len(r[i]) for r in [heads, *rows]) for i in range(len(heads))]
        out = []
        for row in [heads, *rows]:
            out.append(
                "  ".join(
                    c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)
                )
            )
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
