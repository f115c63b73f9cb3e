"""One job, `reviewer rescore RUN --pass-threshold X` and the app's `P` on the Runs screen: a stored
run's graded rewards judged again by a pass threshold, without importing it again. The reward-decided
trials (no passed of their own) get the outcome ``reward ≥ X − 1e-6`` gives, the run records X as
its pass rule, and every report, compare, gate, the trials list and the screens follow (their
summaries are kept by the store). ``apply=False`` says what it would do and writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reviewer.models import PassRule, threshold_problem, threshold_text
from reviewer.store.db import Store
from reviewer.text import elide_middle, unknown_run


class RescoreError(ValueError):
    """A run or threshold the job refuses, in one line."""


@dataclass(frozen=True)
class RescoreResult:
    run: str
    threshold: float
    before: str  # the pass rule in words, before
    after: str
    decided: int  # trials the reward decides (no passed of their own)
    own: int  # scored trials whose source said pass or fail: kept
    to_pass: int
    to_fail: int
    unreadable: int  # would change, but no version reads their stored record: kept
    passes: int  # the run's passes after
    scored: int
    tasks: int  # tasks whose pass count changes
    clustered: int  # changed trials that sit in a stored failure cluster
    applied: bool

    @property
    def changed(self) -> int:
        return self.to_pass + self.to_fail

    def lines(self, run_width: int | None = None) -> list[str]:
        """What it did (or would do) in lines; the run's name cut in the middle to ``run_width``."""
        verb = "turned" if self.applied else "would turn"
        name = repr(self.run) if run_width is None else repr(elide_middle(self.run, run_width))
        head = (
            f"run {name}: {self.after} (was: {self.before}); "
            f"{self.decided} of {self.scored} scored trials are decided by their reward"
        )
        out = [head]
        if self.changed:
            out.append(
                f"{verb} {_turned(self.to_pass, 'fail', 'pass')} and "
                f"{_turned(self.to_fail, 'pass', 'fail')}, in {self.tasks} "
                f"task{'s' * (self.tasks != 1)}: {self.passes} of {self.scored} pass"
            )
        else:
            out.append(f"no outcome changes: {self.passes} of {self.scored} pass")
        if self.own:
            out.append(
                f"{self.own} trial{'s' * (self.own != 1)} whose source said pass or fail "
                f"{_keep(self.own)}"
            )
        if self.unreadable:
            out.append(
                f"{self.unreadable} trial{'s' * (self.unreadable != 1)} whose stored record no "
                f"version of reviewer reads {_keep(self.unreadable)} (import the file again to "
                f"fix {'it' if self.unreadable == 1 else 'them'})"
            )
        if self.clustered:
            out.append(
                f"{self.clustered} changed trial{'s' * (self.clustered != 1)} "
                f"{'sits' if self.clustered == 1 else 'sit'} in failure "
                "clusters made before: run `reviewer cluster` again"
            )
        if not self.applied and self.changed:
            out.append("nothing written (a dry run)")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "pass_threshold": self.threshold,
            "pass_rule_before": self.before,
            "pass_rule": self.after,
            "decided_by_reward": self.decided,
            "own_outcome": self.own,
            "to_pass": self.to_pass,
            "to_fail": self.to_fail,
            "unreadable": self.unreadable,
            "passes": self.passes,
            "scored": self.scored,
            "tasks_changed": self.tasks,
            "clustered_changed": self.clustered,
            "applied": self.applied,
        }


def _turned(n: int, was: str, now: str) -> str:
    """ "1 fail into a pass", "3 passes into fails"."""
    plural = {"pass": "passes", "fail": "fails"}
    if n == 1:
        return f"1 {was} into a {now}"
    return f"{n} {plural[was]} into {plural[now]}"


def check_threshold(value: float | str, what: str = "--pass-threshold") -> float:
    """The threshold as a number above 1e-6 and at most 1, else RescoreError in one line."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise RescoreError(f"{what} {str(value)[:40]!r}: not a number") from None
    if problem := threshold_problem(x):
        shown = value.strip()[:40] if isinstance(value, str) else threshold_text(x)
        raise RescoreError(f"{what} {shown}: {problem}")
    return x


def rescore_run(db: Store, run: str, threshold: float, *, apply: bool = True) -> RescoreResult:
    """Judge RUN's reward-decided trials by THRESHOLD (written in one transaction when APPLY)."""
    from reviewer.store.queries import run_names
    from reviewer.store.rescore import rescore
    from reviewer.store.writer import pass_rule_of, set_pass_rule

    threshold = check_threshold(threshold)
    with db.transaction():
        known = run_names(db)
        if run not in known:
            raise RescoreError(unknown_run(run, known))
        rule = PassRule.from_json(pass_rule_of(db, run))
        if rule.field is not None or rule.scorer is not None:
            raise RescoreError(
                f"run {run!r}: {rule.describe()}; a threshold on the reward cannot redo that "
                "(import the files again into a new run with --run NAME --pass-threshold X)"
            )
        after = PassRule(threshold)
        got = rescore(db, run, threshold, apply=apply)
        if not got.decided:  # a threshold would only relabel the run's rule
            raise RescoreError(
                f"run {run!r}: no trial's outcome is decided by a reward ({got.own} of "
                f"{got.scored} scored trials carry a pass or fail of their own); "
                "a threshold changes nothing"
            )
        if apply:
            set_pass_rule(db, run, after.to_json())
            if got.to_pass or got.to_fail:
                from reviewer.workflows.audit import audit_run

                # the stored audit (pass^k with copies counted once, hollow passes) was of the
                # outcomes before: audited again with the new ones, in the same transaction
                audit_run(db, run)
    return RescoreResult(
        run=run,
        threshold=threshold,
        before=rule.describe(),
        after=after.describe(),
        decided=got.decided,
        own=got.own,
        to_pass=got.to_pass,
        to_fail=got.to_fail,
        unreadable=got.unreadable,
        passes=got.passes,
        scored=got.scored,
        tasks=len(got.tasks),
        clustered=got.clustered,
        applied=apply,
    )


def _keep(n: int) -> str:
    """The verb of "N trials ... keep their outcome", agreeing with ``n``."""
    return "keeps its outcome" if n == 1 else "keep their outcome"
