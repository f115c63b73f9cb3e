"""How an import decides each trial's outcome beyond what its format says: a pass threshold for graded
rewards, a success field of the source record, a task id for sessions, outcomes joined from a SWE-bench
report. Pure: applied to the parsed trials before they are checked or written.

- ``--pass-threshold X``: a trial with a reward and no explicit passed passes when reward ≥ X (the
  default is tau-bench's reward ≥ 1 − 1e-6).
- ``--success-field PATH``: a dotted path looked up in the source record (a tau-bench result, a tau2
  simulation, an Inspect sample, a native record), then under its ``info`` and ``metadata``; true,
  "pass", "resolved" or a number ≥ the threshold passes. A record without the field keeps its format's
  outcome (counted, and said).
- ``--task ID``: every trial's task id (a Claude Code session's default is its folder).
- ``--outcomes FILE``: a SWE-bench report, either the run summary (``resolved_ids``,
  ``unresolved_ids``, ``empty_patch_ids``, ``error_ids``: evaluation errors are infrastructure
  errors) or a per-instance map (``{instance_id: {"resolved": bool}}`` or ``{instance_id: bool}``);
  a trial whose task id it names gets that outcome, the others stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.ingest.base import IngestError, Item, load_document
from reviewer.models import FAIL, INFRA, PASS, REWARD_PASS_EPSILON, PassRule, Trial
from reviewer.record import loads

#: Share of rewards strictly between 0 and 1 above which an import warns that they look graded.
GRADED_SHARE = 0.10
_TRUE = {"pass", "passed", "true", "yes", "resolved", "c", "correct", "success", "1"}
_FALSE = {"fail", "failed", "false", "no", "unresolved", "i", "incorrect", "failure", "0"}


@dataclass
class ImportOptions:
    """What ``reviewer import`` was told about outcomes and task ids (CLI options or ``[import]``)."""

    pass_threshold: float | None = None
    success_field: str | None = None
    task: str | None = None
    outcomes: dict[str, str] | None = None  # task id -> pass | fail | infra
    outcomes_file: str | None = None

    @property
    def rule(self) -> PassRule:
        return PassRule(self.pass_threshold, self.success_field)


@dataclass
class Tally:
    """What applying the options saw in one file: rewards and how many look graded, records without
    the success field, outcomes joined."""

    rewards: int = 0
    graded: int = 0
    examples: list[float] = field(default_factory=list)
    no_field: int = 0
    joined: int = 0

    def warnings(self, file: str, options: ImportOptions) -> list[str]:
        """One line per thing the user should know about this file's outcomes."""
        out = []
        if (
            options.pass_threshold is None
            and options.success_field is None
            and self.rewards
            and self.graded > GRADED_SHARE * self.rewards
        ):
            eg = ", ".join(f"{r:g}" for r in self.examples[:3])
            out.append(
                f"{file}: rewards look graded: {self.graded} of {self.rewards} lie strictly between "
                f"0 and 1 (e.g. {eg}); pass means reward ≥ 1 − 1e-6 unless you set --pass-threshold "
                "(or --success-field PATH)"
            )
        if self.no_field:
            out.append(
                f"{file}: {self.no_field} trial{'' if self.no_field == 1 else 's'} without "
                f"{options.success_field}; their reward decides"
            )
        return out


def apply_options(items: Iterable[Item], options: ImportOptions, tally: Tally) -> Iterator[Item]:
    """The items with every Trial's task id and outcome set by ``options`` (others pass through)."""
    plain = options == ImportOptions()
    for item in items:
        if isinstance(item, Trial):
            if not plain:
                _apply(item, options, tally)
            if item.reward is not None and item.passed is None and not item.infra_error:
                tally.rewards += 1
                if 0.0 < item.reward < 1.0:
                    tally.graded += 1
                    if len(tally.examples) < 3:
                        tally.examples.append(item.reward)
            item.source = None  # read; not kept while the trial waits in a write batch
        yield item


def _apply(trial: Trial, options: ImportOptions, tally: Tally) -> None:
    before = (trial.passed, trial.infra_error)
    if options.task:
        trial.task_id = options.task
    if options.outcomes is not None:
        joined = options.outcomes.get(trial.task_id)
        if joined is not None:
            tally.joined += 1
            trial.infra_error = joined == INFRA
            trial.passed = None if joined == INFRA else joined == PASS
            if joined == FAIL and trial.reason is None:
                trial.reason = f"not resolved ({options.outcomes_file or 'outcomes file'})"
    if trial.infra_error:
        pass
    elif options.success_field:
        value = lookup(trial.source, options.success_field)
        verdict = None if value is _MISSING else truth(value, options.pass_threshold)
        if verdict is None:
            tally.no_field += 1
        else:
            trial.passed = verdict
    elif options.pass_threshold is not None and trial.passed is None and trial.reward is not None:
        trial.passed = trial.reward >= options.pass_threshold - REWARD_PASS_EPSILON
    if (trial.passed, trial.infra_error) != before or options.task:
        trial.raw = None  # the stored record says what was decided, not what the file said


_MISSING = object()


def lookup(source: Any, path: str) -> Any:
    """The value at the dotted ``path`` of ``source``, else of its ``info`` or ``metadata`` (where
    tau-bench and native records keep what the harness graded); ``_MISSING`` when none has it."""
    for root in (source, _get(source, "info"), _get(source, "metadata")):
        value = root
        for part in path.split("."):
            value = _get(value, part)
            if value is _MISSING:
                break
        if value is not _MISSING:
            return value
    return _MISSING


def _get(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return value.get(key, _MISSING)
    if isinstance(value, list) and key.lstrip("-").isdigit():
        i = int(key)
        return value[i] if -len(value) <= i < len(value) else _MISSING
    return _MISSING


def truth(value: Any, threshold: float | None) -> bool | None:
    """A success field's value as pass (True) / fail (False), None when it says neither."""
    at = (1.0 if threshold is None else threshold) - REWARD_PASS_EPSILON
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value >= at
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        try:
            return float(text) >= at
        except ValueError:
            return None
    return None


def check_field(path: str) -> str | None:
    """What is wrong with a ``--success-field`` path, or None."""
    if not path or any(not part for part in path.split(".")):
        return f"--success-field {path!r}: a dotted path like reward_info.components.base_success"
    return None


def load_outcomes(path: Path) -> dict[str, str]:
    """A SWE-bench report as instance id -> pass | fail | infra; IngestError naming the file."""
    file = str(path)
    data = load_document(path, loads)
    if not isinstance(data, dict):
        raise IngestError(file, "not a SWE-bench report (expected a JSON object)")
    out: dict[str, str] = {}
    lists = {
        "resolved_ids": PASS,
        "unresolved_ids": FAIL,
        "empty_patch_ids": FAIL,
        "error_ids": INFRA,
    }
    if any(k in data for k in lists):
        for key, outcome in lists.items():
            ids = data.get(key) or []
            if not isinstance(ids, list):
                raise IngestError(file, f"{key} is not a list of instance ids")
            for i in ids:
                out.setdefault(str(i), outcome)
        return out
    for instance, value in data.items():
        if isinstance(value, dict):
            value = value.get("resolved")
        if isinstance(value, bool):
            out[str(instance)] = PASS if value else FAIL
    if not out:
        keys = ", ".join(list(map(str, data))[:5])
        raise IngestError(
            file,
            "not a SWE-bench report: no resolved_ids / unresolved_ids lists and no "
            f"instance id -> resolved map (top-level keys: {keys or 'none'})",
        )
    return out
