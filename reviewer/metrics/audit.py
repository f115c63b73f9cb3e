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
account beside the reported figure. A trial that saw the state of several others is one leak (the
first creator named, the others counted), and only the first :data:`MAX_KEPT` findings of each kind
are kept; the rest are counted (``RunAudit.not_kept``), so a run whose trials all share one
environment gives a count, not a million findings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from sys import intern

from reviewer.metrics.audit_trial import TrialDigest
from reviewer.metrics.audit_types import (
    KIND_WORDS,
    KINDS,
    MAX_KEPT,
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

#: The creators kept per value (the first few, across the run).
MAX_CREATORS = 4
#: Values a leak finding lists in its detail; past it they are counted (``values_total``).
MAX_VALUES = 20


@dataclass(slots=True)
class _Task:
    task_id: str
    n: int
    c: int
    order: list[bool]  # scored outcomes in trial order


@dataclass(slots=True)
class _Creator:
    ref: TrialRef
    tool: str
    message: int


@dataclass
class _Seen:
    """What one trial saw of state other trials created, for its one leak finding: the first
    creator's values with the first read that returned one, and the other creators counted."""

    viewer: TrialRef
    outcome: str
    creator: _Creator
    tool: str
    message: int
    without: TrialRef  # a trial of the same task whose same read did not return it
    values: set[str] = field(default_factory=set)  # created by ``creator``
    others: dict[str, _Creator] = field(default_factory=dict)  # other creators, by trial id
    other_values: set[str] = field(default_factory=set)


class RunAuditor:
    """Audit one run in two passes over its tasks: first :meth:`add_created` for every trial (what
    its writes created: a read is a leak only once every creator in the run is known), then
    :meth:`add_task` for every task (its trials' digests), then :meth:`finish`. Memory holds the
    values created and a few numbers per task, never the sightings."""

    def __init__(self, run: str) -> None:
        self.run = run
        self.tasks: dict[str, _Task] = {}
        self.findings: list[Finding] = []
        self.adjust: list[dict[str, tuple[int, int]]] = []  # per finding: task -> (n, c)
        self.not_kept: dict[str, int] = dict.fromkeys(KINDS, 0)  # findings past MAX_KEPT
        self.kept: dict[str, int] = dict.fromkeys(KINDS, 0)
        # the first creator of each value, or the first few (memory: one entry per value created)
        self.creators: dict[str, _Creator | list[_Creator]] = {}
        self.created_by: dict[str, int] = {}  # how many trials created a value, when over one
        self.distinct_counts: dict[str, tuple[int, int]] = {}
        self.trials = 0

    # --- the first pass: what every trial created -----------------------------------------------

    def add_created(self, ref: TrialRef, created: Mapping[str, tuple[int, str]]) -> None:
        """Trial ``ref`` created ``created`` (value -> (message, tool)); call in task order, the
        trials of a task in trial order, for every trial before the first :meth:`add_task`."""
        for value, (message, tool) in created.items():
            creator = _Creator(ref, intern(tool), message)
            known = self.creators.get(value)
            if known is None:
                self.creators[value] = creator
                continue
            self.created_by[value] = self.created_by.get(value, 1) + 1
            if isinstance(known, _Creator):
                self.creators[value] = [known, creator]
            elif len(known) < MAX_CREATORS:
                known.append(creator)

    def _creators_of(self, value: str) -> Sequence[_Creator]:
        known = self.creators.get(value, ())
        return (known,) if isinstance(known, _Creator) else known

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
                local.setdefault(value, []).append(
                    _Creator(TrialRef.of(d), where.tool, where.message)
                )
        for seen in self._varying_reads(trials, local):
            self._leak(seen)

    def _full(self, kind: str) -> bool:
        """Whether ``kind`` has its MAX_KEPT findings (one more is then only counted)."""
        if self.kept[kind] < MAX_KEPT:
            return False
        self.not_kept[kind] += 1
        return True

    def _add(self, finding: Finding, adjust: dict[str, tuple[int, int]]) -> None:
        self.kept[finding.kind] += 1
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
            if sum(trials[i].outcome in (PASS, FAIL) for i in members) < 2 or self._full("copy"):
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
            if self._full("hollow"):
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

    def _varying_reads(
        self, trials: list[TrialDigest], local: dict[str, list[_Creator]]
    ) -> list[_Seen]:
        """Each trial of the task whose pre-write read returned a value another trial created,
        where the same read of another trial of the task did not: one ``_Seen`` per such trial,
        in the order first found."""
        by_query: dict[str, list[tuple[TrialDigest, frozenset[str], str, int]]] = {}
        for d in trials:
            for r in d.reads:
                by_query.setdefault(r.query, []).append((d, r.values, r.tool, r.message))
        found: dict[str, _Seen] = {}
        # past the kept leaks, a trial's first leaked value is enough: it is only counted
        detailed = self.kept["leak"] < MAX_KEPT
        for results in by_query.values():
            if len({d.id for d, *_ in results}) < 2:
                continue
            common = frozenset.intersection(*(v for _d, v, *_ in results))
            for d, values, tool, message in results:
                if not detailed and d.id in found:
                    continue
                fresh = values - common - d.given
                for value in sorted(fresh) if detailed else fresh:
                    mine = [c for c in local.get(value, ()) if c.ref.id != d.id]
                    if mine:  # the viewer's own task made it: the earliest trial before it
                        creator: _Creator | None = (
                            [c for c in mine if c.ref.trial < d.trial] or mine
                        )[0]
                    else:
                        creator = next(
                            (c for c in self._creators_of(value) if c.ref.id != d.id), None
                        )
                    if creator is None:
                        continue
                    # a trial of the same task whose same read did not return it
                    without = next(
                        (o for o, ov, *_ in results if o.id != d.id and value not in ov), None
                    )
                    if without is None:
                        continue
                    seen = found.get(d.id)
                    if seen is None:
                        seen = found[d.id] = _Seen(
                            TrialRef.of(d), d.outcome, creator, tool, message, TrialRef.of(without)
                        )
                        if not detailed:
                            break
                    if creator.ref.id == seen.creator.ref.id:
                        seen.values.add(value)
                    else:
                        seen.others.setdefault(creator.ref.id, creator)
                        seen.other_values.add(value)
        return list(found.values())

    # --- the run ------------------------------------------------------------------------------

    def finish(self) -> RunAudit:
        tasks = list(self.tasks.values())
        k = default_ks(t.n for t in tasks)[-1]
        base = {t.task_id: (t.n, t.c) for t in tasks}
        reported, _ = _average(base.values(), k)
        distinct, left = _average([self.distinct_counts.get(t, nc) for t, nc in base.items()], k)
        trend = trend_test([t.order for t in tasks])
        if trend.significant and not self._full("order"):
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
            self.run,
            self.trials,
            k,
            reported,
            distinct,
            left,
            trend,
            self.findings,
            not_kept={kind: n for kind, n in self.not_kept.items() if n},
        )

    def _leak(self, seen: _Seen) -> None:
        """One leak finding: the trial that saw state, the first trial that created it."""
        if self._full("leak"):
            return
        a, b = seen.creator, seen.viewer
        values = sorted(seen.values)
        shown = ", ".join(values[:5]) + (f" and {len(values) - 5} more" if len(values) > 5 else "")
        # every trial that created it, but the one named (the viewer never created what it read)
        others = self.created_by.get(values[0], 1) - 1
        evidence = [
            f"task {a.ref.task_id} trial {a.ref.trial} created {values[0]} with {a.tool} "
            f"(message {a.message})",
            f"task {b.task_id} trial {b.trial} saw it in what {seen.tool} returned (message "
            f"{seen.message}), before it wrote anything",
            f"the same {seen.tool} in task {seen.without.task_id} trial {seen.without.trial} did "
            "not return it",
        ]
        if len(values) > 1:
            evidence.append(f"values seen: {shown}")
        if others > 0:
            evidence.append(
                f"{values[0]} was also created by {others} other trial{plural(others)} (an id the "
                "environment hands out the same each time); the one named is the likeliest"
            )
        detail: dict[str, object] = {
            "values": values[:MAX_VALUES],
            "viewer": {**b.to_dict(), "tool": seen.tool, "message": seen.message},
            "creator": {**a.ref.to_dict(), "tool": a.tool, "message": a.message},
            "without": seen.without.to_dict(),
        }
        if len(values) > MAX_VALUES:
            detail["values_total"] = len(values)
        if seen.others:
            n, m = len(seen.others), len(seen.other_values)
            named = [f"task {c.ref.task_id} trial {c.ref.trial}" for c in seen.others.values()]
            evidence.append(
                f"it also saw {m} value{plural(m)} created by {n} other trial{plural(n)} ("
                + ", ".join(named[:3])
                + (f" and {n - 3} more" if n > 3 else "")
                + ")"
            )
            detail["other_creators"] = {
                "trials": n,
                "values": m,
                "first": [c.ref.to_dict() for c in list(seen.others.values())[:3]],
            }
        adjust: dict[str, tuple[int, int]] = {}
        t = self.tasks.get(b.task_id)
        if t is not None and seen.outcome in (PASS, FAIL):
            adjust[b.task_id] = (t.n - 1, t.c - (seen.outcome == PASS))
        self._add(
            Finding(
                "leak",
                b.task_id,
                [b, a.ref],
                f"task {b.task_id} trial {b.trial} saw {values[0]}, created by task "
                f"{a.ref.task_id} trial {a.ref.trial}",
                evidence,
                detail=detail,
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
