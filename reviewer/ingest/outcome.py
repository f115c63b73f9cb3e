"""How an import decides each trial's outcome beyond what its format says: a pass threshold for graded
rewards, a success field of the source record, the Inspect scorer that decides, a task id for
sessions, outcomes joined from a SWE-bench report. Pure: applied to the parsed trials before they are
checked or written.

- ``--pass-threshold X``: a trial with a reward and no explicit passed passes when reward ≥ X (the
  default is tau-bench's reward ≥ 1 − 1e-6).
- ``--success-field PATH``: a dotted path looked up in the source record (a tau-bench result, a tau2
  simulation, an Inspect sample, a native record), then under its ``info`` and ``metadata``; true,
  "pass", "resolved" or a number ≥ the threshold passes. A record without the field, or whose field
  is an object or says neither, keeps its format's outcome (counted, and said).
- ``--scorer NAME`` (Inspect): that scorer's score decides instead of the first one's; a sample
  without it is unscored (counted, and said). When samples have several scorers, the run's pass rule
  names the one that decided.
- ``--task ID``: every trial's task id (a Claude Code session's default is its folder).
- ``--outcomes FILE``: a SWE-bench report, either the run summary (``resolved_ids``,
  ``unresolved_ids``, ``empty_patch_ids``, ``error_ids``: evaluation errors are infrastructure
  errors) or a per-instance map (``{instance_id: {"resolved": bool}}`` or ``{instance_id: bool}``);
  a SWE-agent or OpenHands trial whose instance id it names gets that outcome, the others stay as
  they were. An id listed with two outcomes is left out (and said); how many trials matched is said.
  Other formats carry their own outcomes: the option is not applied to them, and the import says so.

The rule a run stores is the one actually applied (``Tally.applied_rule``): a success field that
gave no value for any trial is not named in it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reviewer.ingest.base import IngestError, Item, load_document
from reviewer.models import FAIL, INFRA, PASS, REWARD_PASS_EPSILON, PassRule, Trial
from reviewer.record import loads

#: Share of rewards strictly between 0 and 1 above which an import warns that they look graded.
GRADED_SHARE = 0.10
#: How the graded-rewards line starts (an import into a run with a threshold of its own drops it).
GRADED_HEAD = "rewards look graded: "
_TRUE = {"pass", "passed", "true", "yes", "resolved", "c", "correct", "success", "1"}
_FALSE = {"fail", "failed", "false", "no", "unresolved", "i", "incorrect", "failure", "0"}


def graded_line(graded: int, rewards: int, examples: Iterable[float]) -> str | None:
    """ "rewards look graded: …" when more than GRADED_SHARE of the rewards (of trials with no passed
    of their own) lie strictly between 0 and 1, else None: the one rule behind the import's warning
    and every report, compare, gate and screen of a run judged by the default rule
    (``workflows.audit.graded_warning``)."""
    if not rewards or graded <= GRADED_SHARE * rewards:
        return None
    # ten digits: 0.9999989 (a fail) must not read as 0.999999 (a pass)
    eg = ", ".join(f"{r:.10g}" for r in list(examples)[:3])
    return (
        f"{GRADED_HEAD}{graded} of {rewards} lie strictly between 0 and 1 (e.g. {eg}); "
        "pass means reward ≥ 1 − 1e-6"
    )


@dataclass
class ImportOptions:
    """What ``reviewer import`` was told about outcomes and task ids (CLI options or ``[import]``)."""

    pass_threshold: float | None = None
    success_field: str | None = None
    task: str | None = None
    outcomes: dict[str, str] | None = None  # task id -> pass | fail | infra
    outcomes_file: str | None = None
    scorer: str | None = None  # the Inspect scorer that decides (default: each sample's first)
    #: instance ids the outcomes file lists with two outcomes (left out of ``outcomes``)
    outcome_conflicts: list[str] = field(default_factory=list)
    #: reviewer.toml's ``rules`` file: the rules an import applies when no folder it imports holds
    #: a rules.toml (decides no outcome: ``apply_options`` leaves it aside)
    settings_rules: Path | None = None

    @property
    def rule(self) -> PassRule:
        """The rule as asked; what a run stores is ``Tally.applied_rule``."""
        return PassRule(self.pass_threshold, self.success_field, self.scorer)


@dataclass
class Tally:
    """What applying the options saw in one file: rewards and how many look graded, what the success
    field and the scorer gave, outcomes joined, options the file's format does not use."""

    rewards: int = 0
    graded: int = 0
    examples: list[float] = field(default_factory=list)
    no_field: int = 0  # records without the success field
    field_object: int = 0  # records whose success field is an object or a list
    field_keys: list[str] = field(default_factory=list)  # keys of the first such object
    field_unread: int = 0  # records whose success field says neither pass nor fail
    field_example: str = ""
    field_used: int = 0  # records the success field decided
    scorers: set[str] = field(default_factory=set)  # scorers that decided where there were several
    no_scorer: int = 0  # samples without the --scorer
    unread: int = 0  # samples whose deciding score says neither pass nor fail
    unread_example: str = ""
    considered: int = 0  # trials --outcomes could apply to
    joined: int = 0
    unmatched: list[str] = field(default_factory=list)  # the first instance ids not in --outcomes
    not_applied: list[str] = field(default_factory=list)  # options this format does not use
    format_name: str = ""
    negative: int = 0  # trials with a negative token count, cost or latency, read as unknown
    negative_fields: list[str] = field(default_factory=list)
    negative_first: str = ""  # where the first one is (line 7)
    #: fields (dotted paths, as --success-field takes them) that are true/false or 0/1 in every trial
    #: with a reward read so far and named like an outcome (``base_success``); None: none read yet
    success_fields: list[str] | None = None

    def applied_rule(self, options: ImportOptions) -> PassRule:
        """The rule that decided this file's outcomes: the success field only when it gave a value,
        the scorer when it was asked for or chose among several."""
        scorer = options.scorer if "scorer" not in self.not_applied else None
        if scorer is None and self.scorers:
            scorer = ", ".join(sorted(self.scorers))
        return PassRule(
            options.pass_threshold,
            options.success_field if self.field_used else None,
            scorer,
        )

    def warnings(self, file: str, options: ImportOptions) -> list[str]:
        """One line per thing the user should know about this file's outcomes."""
        out = []
        if options.pass_threshold is None and options.success_field is None:
            line = graded_line(self.graded, self.rewards, self.examples)
            if line and self.success_fields:
                named = " or ".join(self.success_fields[:2])
                out.append(
                    f"{file}: {line} unless you set --pass-threshold X or --success-field PATH "
                    f"(every trial with a reward has {named} true/false or 0/1: --success-field "
                    f"{self.success_fields[0]}; for a run already stored: reviewer rescore RUN "
                    "--pass-threshold X)"
                )
            elif line:
                out.append(
                    f"{file}: {line} unless you set --pass-threshold (or --success-field PATH; "
                    "for a run already stored: reviewer rescore RUN --pass-threshold X)"
                )
        name = options.success_field
        if self.field_object:
            keys = ", ".join(self.field_keys[:5]) + (", …" if len(self.field_keys) > 5 else "")
            out.append(
                f"{file}: --success-field {name} is an object, not a number or true/false "
                f"({self.field_object} {_trials(self.field_object)}); name a field inside it"
                + (f" ({keys})" if keys else "")
                + "; their reward decides"
            )
        if self.field_unread:
            out.append(
                f"{file}: {self.field_unread} {_trials(self.field_unread)} whose {name} is neither "
                f"a number nor pass/fail (e.g. {self.field_example}); their reward decides"
            )
        if self.no_field:
            out.append(f"{file}: {self.no_field} {_trials(self.no_field)} without {name}")
            out[-1] += "; their reward decides"
        if self.no_scorer:
            out.append(
                f"{file}: {self.no_scorer} {_trials(self.no_scorer, 'sample')} without a score "
                f"from scorer {options.scorer!r}: unscored"
            )
        if self.unread:
            hint = (
                "; pick a field with --success-field scores.<scorer>.value.<field>"
                if self.unread_example.endswith(
                    "a dict of per-field scores, not pass/fail or a number"
                )
                else ""
            )
            out.append(
                f"{file}: {self.unread} {_trials(self.unread, 'sample')} unscored: "
                f"{self.unread_example}{hint}"
            )
        if self.scorers and options.scorer is None:
            names = ", ".join(sorted(map(repr, self.scorers)))
            out.append(
                f"{file}: samples have several scorers; the first one decided ({names}); "
                "choose another with --scorer NAME"
            )
        if self.negative:
            at = f" (first at {self.negative_first})" if self.negative_first else ""
            out.append(
                f"{file}: {self.negative} {_trials(self.negative)} with a negative "
                f"{', '.join(self.negative_fields)}{at}: read as unknown, not averaged or summed"
            )
        return out  # options not applied: said once for the whole import (not_applied_lines)


def not_applied_lines(files: list[tuple[str, str, list[str]]]) -> list[str]:
    """One line per option some files' format does not use, from (file, format, options) of each
    file: ``--outcomes not applied to 3 files (tau-bench): …``."""
    out = []
    for option, what in (
        ("outcomes", "it joins SWE-agent and OpenHands trials"),
        ("scorer", "it picks an Inspect scorer"),
    ):
        hit = [(f, fmt) for f, fmt, options in files if option in options]
        if not hit:
            continue
        formats = ", ".join(dict.fromkeys(fmt for _, fmt in hit))
        where = hit[0][0] if len(hit) == 1 else f"{len(hit)} files"
        out.append(
            f"--{option} not applied to {where} ({formats}): these formats carry their own "
            f"outcomes; {what}"
        )
    return out


def _trials(n: int, word: str = "trial") -> str:
    return word if n == 1 else word + "s"


def apply_options(
    items: Iterable[Item], options: ImportOptions, tally: Tally, fmt: Any = None
) -> Iterator[Item]:
    """The items with every Trial's task id and outcome set by ``options`` (others pass through).
    ``fmt`` is the file's format: ``--outcomes`` applies to formats with ``JOINS_OUTCOMES`` and
    ``--scorer`` to those with ``HAS_SCORERS`` (without ``fmt``, both apply)."""
    joins = fmt is None or getattr(fmt, "JOINS_OUTCOMES", False)
    scores = fmt is None or getattr(fmt, "HAS_SCORERS", False)
    tally.format_name = getattr(fmt, "NAME", "") if fmt is not None else ""
    if options.outcomes is not None and not joins:
        tally.not_applied.append("outcomes")
    if options.scorer is not None and not scores:
        tally.not_applied.append("scorer")
    plain = replace(options, settings_rules=None) == ImportOptions()
    for item in items:
        if isinstance(item, Trial):
            if scores:
                _note_scores(item, options, tally)
            if not plain:
                _apply(item, options, tally, joins)
            if item.reward is not None and item.passed is None and not item.infra_error:
                tally.rewards += 1
                if plain and (tally.success_fields is None or tally.success_fields):
                    _note_success_fields(item.source, tally)
                if 0.0 < item.reward < 1.0:
                    tally.graded += 1
                    if len(tally.examples) < 3:
                        tally.examples.append(item.reward)
            item.source = None  # read; not kept while the trial waits in a write batch
        yield item


#: What a field that says whether a trial succeeded is named like (``base_success``, ``resolved``).
_OUTCOME_NAME = re.compile(r"success|succeeded|passed|resolved|solved|correct", re.IGNORECASE)


def _note_success_fields(source: Any, tally: Tally) -> None:
    """Keep in ``tally.success_fields`` the fields of the record's ``info`` or ``metadata`` (where
    ``lookup`` finds a --success-field) named like an outcome and holding true/false or 0/1 in
    every trial with a reward: the first trial proposes them, each later one keeps those it has."""
    if tally.success_fields is None:
        found: list[str] = []
        for root in (_get(source, "info"), _get(source, "metadata")):
            _outcome_fields(root, "", 0, found)
        tally.success_fields = list(dict.fromkeys(found))[:5]
        return
    tally.success_fields = [p for p in tally.success_fields if _zero_one(lookup(source, p))]


def _outcome_fields(value: Any, prefix: str, depth: int, found: list[str]) -> None:
    if not isinstance(value, dict) or depth > 4 or len(found) >= 5:
        return
    for i, (key, inner) in enumerate(value.items()):
        if i >= 100 or not isinstance(key, str) or "." in key or not key:
            continue
        path = f"{prefix}{key}"
        if isinstance(inner, dict):
            _outcome_fields(inner, path + ".", depth + 1, found)
        elif _OUTCOME_NAME.search(key) and _zero_one(inner):
            found.append(path)


def _zero_one(value: Any) -> bool:
    """Whether VALUE reads as pass or fail by itself: true/false, or a number that is 0 or 1."""
    if isinstance(value, bool):
        return True
    return isinstance(value, int | float) and value in (0, 1)


def _note_scores(trial: Trial, options: ImportOptions, tally: Tally) -> None:
    """An Inspect sample: ``--scorer`` picks its deciding score; which scorer decided (when there
    were several) and scores that say neither pass nor fail are counted."""
    scores = _get(trial.source, "scores")
    if not isinstance(scores, dict) or not scores:
        return
    if options.scorer is not None:
        from reviewer.ingest.inspect_scores import score_outcome

        if options.scorer not in scores:
            tally.no_scorer += 1
            if not trial.infra_error:
                trial.passed, trial.reward, trial.reason = None, None, None
            trial.metadata["scorer"] = None
            trial.raw = None
            return
        passed, reward, reason, unread = score_outcome(options.scorer, scores[options.scorer])
        if not trial.infra_error:
            trial.passed, trial.reward, trial.reason = passed, reward, reason
        trial.metadata["scorer"] = options.scorer
        trial.metadata["score_unread"] = unread
        trial.raw = None
    elif len(scores) > 1 and isinstance(trial.metadata.get("scorer"), str):
        tally.scorers.add(trial.metadata["scorer"])
    unread = trial.metadata.get("score_unread")
    if isinstance(unread, str) and not trial.infra_error:
        tally.unread += 1
        tally.unread_example = tally.unread_example or unread
    if trial.metadata.get("score_unread") is None:
        trial.metadata.pop("score_unread", None)


def _apply(trial: Trial, options: ImportOptions, tally: Tally, joins: bool = True) -> None:
    before = (trial.passed, trial.infra_error)
    instance = trial.task_id  # the join key: the format's instance id, before --task
    if options.task:
        trial.task_id = options.task
    if options.outcomes is not None and joins:
        tally.considered += 1
        joined = options.outcomes.get(instance)
        if joined is None and len(tally.unmatched) < 2:
            tally.unmatched.append(instance[:80])
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
        verdict = None if isinstance(value, dict | list) else truth(value, options.pass_threshold)
        if value is _MISSING:
            tally.no_field += 1
        elif isinstance(value, dict | list):
            tally.field_object += 1
            if not tally.field_keys and isinstance(value, dict):
                tally.field_keys = [str(k)[:40] for k in value][:6]
        elif verdict is None:
            tally.field_unread += 1
            tally.field_example = tally.field_example or repr(value)[:40]
        else:
            tally.field_used += 1
            trial.passed = verdict
        if verdict is None and options.pass_threshold is not None:
            _by_threshold(trial, options.pass_threshold)
    elif options.pass_threshold is not None:
        _by_threshold(trial, options.pass_threshold)
    if (trial.passed, trial.infra_error) != before or options.task:
        trial.raw = None  # the stored record says what was decided, not what the file said


def _by_threshold(trial: Trial, threshold: float) -> None:
    """A reward with no passed of its own passes at or above THRESHOLD; the trial's metadata keeps
    the threshold that decided it (``pass_threshold``: what `reviewer rescore` judges again)."""
    if trial.passed is None and trial.reward is not None:
        trial.passed = trial.reward >= threshold - REWARD_PASS_EPSILON
        trial.metadata["pass_threshold"] = threshold


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
    if isinstance(value, int):
        return value >= at
    if isinstance(value, float):
        return value >= at if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        if text in ("p", "partial"):  # Inspect's PARTIAL: half credit
            return 0.5 >= at
        try:
            number = float(text)
        except ValueError:
            return None
        return number >= at if math.isfinite(number) else None
    return None


#: The longest ``--success-field`` path, in characters and in parts.
MAX_FIELD_CHARS, MAX_FIELD_PARTS = 500, 32


def check_field(path: str) -> str | None:
    """What is wrong with a ``--success-field`` path, or None."""
    if not path or any(not part for part in path.split(".")):
        return (
            f"--success-field {path[:80]!r}: a dotted path like reward_info.components.base_success"
        )
    if len(path) > MAX_FIELD_CHARS or path.count(".") >= MAX_FIELD_PARTS:
        return (
            f"--success-field: a path of at most {MAX_FIELD_PARTS} parts and {MAX_FIELD_CHARS} "
            f"characters (got {path.count('.') + 1} parts, {len(path)} characters)"
        )
    return None


def load_outcomes(path: Path) -> tuple[dict[str, str], list[str]]:
    """A SWE-bench report as instance id -> pass | fail | infra, and the ids it lists with two
    outcomes (resolved and unresolved, say), which are left out; IngestError naming the file."""
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
        conflicts: dict[str, None] = {}
        for key, outcome in lists.items():
            ids = data.get(key) or []
            if not isinstance(ids, list):
                raise IngestError(file, f"{key} is not a list of instance ids")
            for i in ids:
                if out.setdefault(str(i), outcome) != outcome:
                    conflicts[str(i)] = None
        for i in conflicts:
            del out[i]
        return out, list(conflicts)
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
    return out, []
