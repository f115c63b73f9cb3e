"""Are the trials of a run independent? The audit behind `reviewer audit` and the Audit view.

pass^k means something only when the k trials of a task ran in fresh environments. Four checks, fed
one task at a time (:class:`RunAuditor`), so a run of any size is read once and never held whole:

* **leak**: an identifier first returned by a write-like tool call in trial A shows up in what a read
  returned to trial B before B wrote anything, while another trial of B's task made the same read
  and did not get it. Ids in B's instruction or system prompt never count, nor do ids every trial
  of the task reads alike (seeded data that a write happened to echo).
* **copy**: two trials of a task with byte-identical assistant turns, or identical tool results,
  latency and token counts: cached or replayed. pass^k is recomputed with each copy group once.
* **hollow**: a pass with no assistant turn, an empty final assistant turn, or no tool call where
  most passes of the task call tools.
* **order**: the pass rate of a run's tasks depends on trial order (:mod:`reviewer.metrics.trend`).

Each finding names its trials, the evidence, and the run's pass^k with the finding taken into
account beside the reported figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from reviewer.metrics.audit_trial import TrialDigest
from reviewer.metrics.audit_types import (
    KIND_WORDS,
    KINDS,
    Finding,
    RunAudit,
    TrialRef,
    fmt_rate,
    kind_count,
    plural,
)
from reviewer.metrics.passk import default_ks, pass_hat_k_exact
from reviewer.metrics.trend import ALPHA, trend_test
from reviewer.models import FAIL, PASS

__all__ = ["KIND_WORDS", "KINDS", "Finding", "RunAudit", "RunAuditor", "TrialRef", "kind_count"]

#: Caps that keep memory flat on runs whose reads vary a lot (a search tool, a clock): the
#: creators kept per value, and the values read that no trial has created (yet) kept for later tasks.
MAX_CREATORS = 4
MAX_SIGHTINGS = 200_000


@dataclass
class _Task:
    task_id: str
    n: int
    c: int
    order: list[bool]  # scored outcomes in trial order


@dataclass
class _Sighting:
    viewer: TrialRef
    value: str
    tool: str
    message: int
    without: TrialRef  # a trial of the same task whose same read did not return it
    outcome: str  # the viewer's
    local: _Creator | None = None  # a trial of the viewer's own task that created it


@dataclass
class _Creator:
    ref: TrialRef
    tool: str
    message: int


class RunAuditor:
    """Feed every task of one run (:meth:`add_task`, its trials' digests), then :meth:`finish`."""

    def __init__(self, run: str) -> None:
        self.run = run
        self.tasks: dict[str, _Task] = {}
        self.findings: list[Finding] = []
        self.adjust: list[dict[str, tuple[int, int]]] = []  # per finding: task -> (n, c)
        self.creators: dict[str, list[_Creator]] = {}  # the first few, across the run
        self.created_by: dict[str, int] = {}  # how many trials created each value
        self.sightings: list[_Sighting] = []  # of values some trial created
        # of values no trial has created yet: kept (up to MAX_SIGHTINGS) for the tasks to come
        self.pending: dict[str, list[_Sighting]] = {}
        self.pending_n = 0
        self.dropped = 0  # sightings past that cap, not checked
        self.distinct_counts: dict[str, tuple[int, int]] = {}
        self.trials = 0

    # --- one task -----------------------------------------------------------------------------

    def add_task(self, digests: Sequence[TrialDigest]) -> None:
        if not digests:
            return
        trials = sorted(digests, key=lambda d: d.trial)
        task_id = trials[0].task_id
        self.trials += len(trials)
        scored = [d for d in trials if d.outcome in (PASS, FAIL)]
        n, c = len(scored), sum(1 for d in scored if d.passed)
        self.tasks[task_id] = _Task(task_id, n, c, [d.passed for d in scored])
        self._copies(task_id, trials, scored)
        self._hollow(task_id, scored, n, c)
        local: dict[str, list[_Creator]] = {}
        for d in trials:
            for value, where in d.created.items():
                creator = _Creator(TrialRef.of(d), where.tool, where.message)
                local.setdefault(value, []).append(creator)
                self.created_by[value] = self.created_by.get(value, 0) + 1
                known = self.creators.setdefault(value, [])
                if len(known) < MAX_CREATORS:
                    known.append(creator)
        self._varying_reads(trials, local)

    def _add(self, finding: Finding, adjust: dict[str, tuple[int, int]]) -> None:
        self.findings.append(finding)
        self.adjust.append(adjust)

    def _copies(self, task_id: str, trials: list[TrialDigest], scored: list[TrialDigest]) -> None:
        parent = list(range(len(trials)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        why: dict[tuple[int, int], set[str]] = {}
        for attr, reason in (
            ("copy_key", "assistant turns identical to the byte"),
            ("replay_key", "tool results, latency and token counts identical"),
        ):
            first: dict[str, int] = {}
            for i, d in enumerate(trials):
                key = getattr(d, attr)
                if key is None:
                    continue
                if key in first:
                    a, b = root(first[key]), root(i)
                    if a != b:
                        parent[b] = a
                    why.setdefault((first[key], i), set()).add(reason)
                else:
                    first[key] = i
        groups: dict[int, list[int]] = {}
        for i in range(len(trials)):
            groups.setdefault(root(i), []).append(i)
        index = {d.id: i for i, d in enumerate(trials)}
        # each group once: its first scored member's outcome
        seen: set[int] = set()
        n2 = c2 = 0
        for d in scored:
            g = root(index[d.id])
            if g in seen:
                continue
            seen.add(g)
            n2 += 1
            c2 += d.passed
        self.distinct_counts[task_id] = (n2, c2)
        for members in groups.values():
            # copies with fewer than two scored trials (production traffic, crashes) change no
            # figure: counting them once leaves every pass rate as it was
            if sum(trials[i].outcome in (PASS, FAIL) for i in members) < 2:
                continue
            refs = [TrialRef.of(trials[i]) for i in members]
            reasons = sorted({r for (a, _b), rs in why.items() if a in members for r in rs})
            numbers = ", ".join(str(r.trial) for r in refs)
            outcomes = [trials[i].outcome for i in members]
            evidence = [
                f"trials {numbers} of task {task_id}: {' and '.join(reasons)}",
                f"outcomes: {', '.join(outcomes)}; likely served from a cache or replayed "
                "(or a fully deterministic agent and environment)",
            ]
            self._add(
                Finding(
                    "copy",
                    task_id,
                    refs,
                    f"task {task_id}: {len(refs)} trials are copies of one another",
                    evidence,
                    detail={"reasons": reasons, "outcomes": outcomes},
                ),
                {task_id: (n2, c2)},
            )

    def _hollow(self, task_id: str, scored: list[TrialDigest], n: int, c: int) -> None:
        passes = [d for d in scored if d.passed]
        tooled = sum(1 for d in passes if d.tool_calls)
        for d in passes:
            if d.assistant_turns == 0:
                short, why = "no assistant turn", "no assistant turn at all"
            elif d.final_empty:
                short = "an empty final answer"
                why = "an empty final assistant turn (no text, no tool call)"
            elif d.tool_calls == 0 and tooled >= 2 and 2 * tooled > len(passes):
                short = "no tool call"
                why = f"no tool call, while {tooled} of the task's {len(passes)} passes call tools"
            else:
                continue
            self._add(
                Finding(
                    "hollow",
                    task_id,
                    [TrialRef.of(d)],
                    f"task {task_id} trial {d.trial}: a pass with {short}",
                    [f"trial {d.trial} of task {task_id} passed with {why}"],
                    detail={"reason": why},
                ),
                {task_id: (n, c - 1)},
            )

    def _varying_reads(self, trials: list[TrialDigest], local: dict[str, list[_Creator]]) -> None:
        """Values one trial's pre-write read returned that the same read of another trial of the
        task did not: kept as sightings until the run's created identifiers are all known."""
        by_query: dict[str, list[tuple[TrialDigest, frozenset[str], str, int]]] = {}
        for d in trials:
            for r in d.reads:
                by_query.setdefault(r.query, []).append((d, r.values, r.tool, r.message))
        for results in by_query.values():
            if len({d.id for d, *_ in results}) < 2:
                continue
            common = frozenset.intersection(*(v for _d, v, *_ in results))
            for d, values, tool, message in results:
                for value in values - common - d.given:
                    mine = [c for c in local.get(value, ()) if c.ref.id != d.id]
                    known = mine or value in self.creators
                    if not known and self.pending_n >= MAX_SIGHTINGS:
                        self.dropped += 1
                        continue
                    without = next(
                        (o for o, ov, *_ in results if o.id != d.id and value not in ov), None
                    )
                    if without is None:
                        continue
                    earlier = [c for c in mine if c.ref.trial < d.trial]
                    sighting = _Sighting(
                        TrialRef.of(d),
                        value,
                        tool,
                        message,
                        TrialRef.of(without),
                        d.outcome,
                        (earlier or mine)[0] if mine else None,
                    )
                    if known:
                        self.sightings.append(sighting)
                    else:  # created, if at all, by a task still to come
                        self.pending.setdefault(value, []).append(sighting)
                        self.pending_n += 1

    # --- the run ------------------------------------------------------------------------------

    def finish(self) -> RunAudit:
        self._leaks()
        tasks = list(self.tasks.values())
        k = default_ks(t.n for t in tasks)[-1]
        base = {t.task_id: (t.n, t.c) for t in tasks}
        reported, _ = _average(base.values(), k)
        distinct, left = _average([self.distinct_counts.get(t, nc) for t, nc in base.items()], k)
        trend = trend_test([t.order for t in tasks])
        if trend.significant:
            direction = "falls" if trend.z < 0 else "rises"
            self._add(
                Finding(
                    "order",
                    None,
                    [],
                    f"the pass rate {direction} with trial order (p = {trend.p:.2g})",
                    [
                        f"pass rate in the first half of each task's trials "
                        f"{fmt_rate(trend.early_rate)}, in the second half {fmt_rate(trend.late_rate)}",
                        f"trend test over {trend.tasks} tasks: z = {trend.z:.2f}, p = {trend.p:.2g} "
                        f"(flagged below {ALPHA:g}); trials that are not independent make pass^k "
                        "meaningless",
                    ],
                    detail={"z": trend.z, "p": trend.p},
                ),
                {},
            )
        mean = _Mean(base, k)
        for f, adjust in zip(self.findings, self.adjust, strict=True):
            f.adjusted = mean.with_changes(adjust) if adjust else reported
        order = {kind: i for i, kind in enumerate(KINDS)}
        self.findings.sort(key=lambda f: order[f.kind])
        return RunAudit(
            self.run, self.trials, k, reported, distinct, left, trend, self.findings, self.dropped
        )

    def _leaks(self) -> None:
        for value, seen in self.pending.items():
            if value in self.creators:
                self.sightings += seen
        self.pending.clear()
        pairs: dict[tuple[str, str], list[tuple[_Sighting, _Creator]]] = {}
        others: dict[tuple[str, str], int] = {}
        for s in self.sightings:
            creators = [c for c in self.creators.get(s.value, ()) if c.ref.id != s.viewer.id]
            creator = s.local or (creators[0] if creators else None)
            if creator is None:
                continue
            pairs.setdefault((s.viewer.id, creator.ref.id), []).append((s, creator))
            # every trial that created it, but the viewer and the one named
            viewer_made = any(c.ref.id == s.viewer.id for c in self.creators.get(s.value, ()))
            others[(s.viewer.id, creator.ref.id)] = self.created_by[s.value] - 1 - viewer_made
        for key, found in pairs.items():
            s, a = found[0]
            b = s.viewer
            values = sorted({x.value for x, _ in found})
            shown = ", ".join(values[:5]) + (
                f" and {len(values) - 5} more" if len(values) > 5 else ""
            )
            t = self.tasks.get(b.task_id)
            evidence = [
                f"task {a.ref.task_id} trial {a.ref.trial} created {values[0]} with {a.tool} "
                f"(message {a.message})",
                f"task {b.task_id} trial {b.trial} saw it in what {s.tool} returned (message "
                f"{s.message}), before it wrote anything",
                f"the same {s.tool} in task {s.without.task_id} trial {s.without.trial} did not "
                "return it",
            ]
            if len(values) > 1:
                evidence.append(f"values seen: {shown}")
            if others[key] > 0:
                evidence.append(
                    f"{values[0]} was also created by {others[key]} other trial"
                    f"{plural(others[key])} (an id the environment hands out the same each time); "
                    "the one named is the likeliest"
                )
            adjust: dict[str, tuple[int, int]] = {}
            if t is not None and s.outcome in (PASS, FAIL):
                adjust[b.task_id] = (t.n - 1, t.c - (s.outcome == PASS))
            self._add(
                Finding(
                    "leak",
                    b.task_id,
                    [b, a.ref],
                    f"task {b.task_id} trial {b.trial} saw {values[0]}, created by task "
                    f"{a.ref.task_id} trial {a.ref.trial}",
                    evidence,
                    detail={
                        "values": values,
                        "viewer": {**b.to_dict(), "tool": s.tool, "message": s.message},
                        "creator": {**a.ref.to_dict(), "tool": a.tool, "message": a.message},
                        "without": s.without.to_dict(),
                    },
                ),
                adjust,
            )


class _Mean:
    """Mean pass^k over tasks, the sum kept so that the mean with a few tasks' counts changed (a
    finding's adjusted pass^k) costs those tasks, not every task again: exact fractions, so the value
    is the one :func:`_average` gives for the changed counts."""

    def __init__(self, base: dict[str, tuple[int, int]], k: int) -> None:
        self.k = k
        self.values = {t: pass_hat_k_exact(n, c, k) for t, (n, c) in base.items()}
        self.total = sum((v for v in self.values.values() if v is not None), Fraction(0))
        self.kept = sum(v is not None for v in self.values.values())

    def with_changes(self, changed: dict[str, tuple[int, int]]) -> float | None:
        total, kept = self.total, self.kept
        for task, (n, c) in changed.items():
            before = self.values.get(task)
            if before is not None:
                total -= before
                kept -= 1
            v = pass_hat_k_exact(n, c, self.k)
            if v is not None:
                total += v
                kept += 1
        return float(total / kept) if kept else None


def _average(counts: Iterable[tuple[int, int]], k: int) -> tuple[float | None, int]:
    """Mean pass^k over the tasks with at least k scored trials, and how many were left out."""
    total, kept, left = Fraction(0), 0, 0
    for n, c in counts:
        v = pass_hat_k_exact(n, c, k)
        if v is None:
            left += n > 0
            continue
        total += v
        kept += 1
    return (float(total / kept) if kept else None), left
