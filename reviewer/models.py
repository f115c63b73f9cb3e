"""Plain dataclasses shared by every package: what a run, a trial and its messages are."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

#: tau-bench's rule: a reward this close to 1 counts as a pass.
REWARD_PASS_EPSILON = 1e-6


def threshold_text(x: float) -> str:
    """A pass threshold as the user typed it: 0.7, 0.1234567, 1 (never rounded as ``:g`` would)."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def threshold_problem(x: float) -> str | None:
    """Why X cannot be a pass threshold (a reward at or above X − 1e-6 passes), else None. At 1e-6
    or below a reward of 0 would pass."""
    if x != x or not REWARD_PASS_EPSILON < x <= 1:
        return (
            "a reward above 0 and at most 1 (a reward at or above it passes; at 1e-6 or below "
            "even a reward of 0 would)"
        )
    return None


#: A trial's outcome: the harness scored it ``pass`` or ``fail``; the harness itself crashed (rate
#: limit, context overflow, lost connection: ``infra``, not the agent's failure); or nothing says how it
#: went (``unscored``: production conversations, coding sessions). Only pass and fail are scored: pass@k
#: and pass^k count them alone, and only fail is a failure.
PASS, FAIL, INFRA, UNSCORED = "pass", "fail", "infra", "unscored"
OUTCOMES = (PASS, FAIL, INFRA, UNSCORED)
#: How each outcome reads in words (reports, screens).
OUTCOME_WORDS = {
    PASS: "pass",
    FAIL: "fail",
    INFRA: "infrastructure error",
    UNSCORED: "unscored",
}


def is_success(passed: bool | None, reward: float | None, threshold: float | None = None) -> bool:
    """Success is ``passed`` when given, else ``reward >= threshold`` (default ``1 - 1e-6``)."""
    if passed is not None:
        return bool(passed)
    if reward is None:
        return False
    # the same float tolerance for any threshold: 0.9299999999999999 passes "reward >= 0.93"
    return reward >= (1.0 if threshold is None else threshold) - REWARD_PASS_EPSILON


def outcome_of(passed: bool | None, reward: float | None, infra: bool = False) -> str:
    """The outcome of a trial from its fields: infra first, no passed and no reward is unscored."""
    if infra:
        return INFRA
    if passed is None and reward is None:
        return UNSCORED
    return PASS if is_success(passed, reward) else FAIL


def stored_outcome(outcome: str | None, success: bool) -> str:
    """The outcome a stored trial shows: its outcome column, else (a row older than the column)
    pass or fail by its success flag. The one place a face decides whether a stored trial passed."""
    return outcome if outcome in OUTCOMES else (PASS if success else FAIL)


@dataclass(frozen=True)
class PassRule:
    """How a run's trials were judged pass or fail on import: a reward threshold and/or a field of the
    source record (a dotted path) that says success, and the Inspect scorer whose score decided
    (named when a sample had several). The default is tau-bench's: reward ≥ 1 − 1e-6."""

    threshold: float | None = None
    field: str | None = None
    scorer: str | None = None

    @property
    def is_default(self) -> bool:
        return self.threshold is None and self.field is None and self.scorer is None

    def describe(self) -> str:
        """The rule in words, as a report header shows it."""
        at = "1 − 1e-6" if self.threshold is None else f"{threshold_text(self.threshold)} − 1e-6"
        if self.field:
            return f"pass means {self.field} ≥ {at} (or true)"
        if self.scorer is not None:
            # several names: samples whose first scorers differ, each decided by its first
            who = (
                f"scorer {self.scorer!r}"
                if ", " not in self.scorer
                else f"each sample's first scorer ({self.scorer})"
            )
            return f"pass means the score of {who} ≥ {at} (C = 1, P = 0.5, I = 0)"
        return f"pass means reward ≥ {at}"

    def to_json(self) -> str:
        d: dict[str, Any] = {"threshold": self.threshold, "field": self.field}
        if self.scorer is not None:
            d["scorer"] = self.scorer
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> PassRule:
        try:
            d = json.loads(text) if text else {}
        except (ValueError, RecursionError):  # a stored rule damaged by hand: the default rule
            d = {}
        if not isinstance(d, dict):
            d = {}
        threshold, field_, scorer = d.get("threshold"), d.get("field"), d.get("scorer")
        return cls(
            float(threshold) if isinstance(threshold, int | float) else None,
            field_ if isinstance(field_, str) else None,
            scorer if isinstance(scorer, str) else None,
        )


@dataclass(slots=True)
class ToolCall:
    """One tool call made by the assistant. ``arguments`` is parsed JSON when it parsed, else the raw text."""

    name: str
    arguments: Any = None
    id: str | None = None


@dataclass(slots=True)
class Message:
    role: str  # system | user | assistant | tool
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None  # tool name on tool results
    is_error: bool = False


@dataclass
class Verdict:
    """A judge's judgement of one trial."""

    verdict: str  # pass | fail | error
    judge: str = ""  # judge id: model + prompt/rubric version
    rationale: str = ""
    model: str | None = None
    rubric: str | None = None
    cost_usd: float | None = None
    raw: str | None = None


@dataclass
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None


@dataclass
class TrialError:
    type: str | None = None
    message: str | None = None


@dataclass
class Trial:
    """One attempt of one task, whatever format it came from.

    ``trial`` is None when the source does not number its trials; the importer then numbers them by order
    of appearance within (run, task). ``fingerprint`` is the canonical bytes the stable id is hashed from.
    """

    task_id: str
    messages: list[Message]
    passed: bool | None = None
    reward: float | None = None
    run: str | None = None
    trial: int | None = None
    reason: str | None = None
    judge: Verdict | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float | None = None
    error: TrialError | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    instruction: str | None = None  # task instruction when the format has one (tau-bench info.task)
    termination: str | None = (
        None  # why the episode ended (max steps, user stop, transfer), if known
    )
    source_line: int | None = None
    fingerprint: bytes = b""
    raw: str | None = None  # the record as native-format JSON text, when it arrived as one
    #: the archive member it came from (an .eval sample), named in its skip lines as it has no line
    source_member: str | None = None
    #: The harness crashed (its own error, not the agent's): the outcome is ``infra`` whatever the
    #: reward says, and ``error`` holds the harness's error text.
    infra_error: bool = False
    #: The record as the source format wrote it (a tau-bench result, a tau2 simulation, an Inspect
    #: sample), for ``--success-field``; never stored.
    source: Any = field(default=None, repr=False, compare=False)

    @property
    def outcome(self) -> str:
        """pass, fail, infra or unscored (see OUTCOMES)."""
        return outcome_of(self.passed, self.reward, self.infra_error)

    @property
    def scored(self) -> bool:
        return self.outcome in (PASS, FAIL)

    @property
    def success(self) -> bool:
        return self.outcome == PASS

    @property
    def tool_call_count(self) -> int:
        return sum(len(m.tool_calls) for m in self.messages)

    @property
    def assistant_turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "assistant")

    @property
    def steps(self) -> int:
        """Steps are assistant turns plus tool calls."""
        return self.assistant_turns + self.tool_call_count

    @property
    def tool_errors(self) -> int:
        return sum(1 for m in self.messages if m.role == "tool" and m.is_error)


@dataclass(frozen=True, slots=True)
class TrialStats:
    """The numbers of one trial that metrics need; ``violations`` holds the ids of rules it broke."""

    task_id: str
    success: bool
    steps: int
    cost_usd: float | None
    latency_s: float | None
    tool_calls: int
    tool_errors: int
    violations: AbstractSet[str] = frozenset()
    outcome: str = ""  # pass | fail | infra | unscored; "" reads as pass or fail by ``success``

    @property
    def scored(self) -> bool:
        """A pass or a fail: infrastructure errors and unscored trials are neither."""
        return self.outcome in ("", PASS, FAIL)

    @classmethod
    def from_trial(cls, trial: Trial, violations: Iterable[str] = ()) -> TrialStats:
        """Stats of ``trial``; pass ``{v.rule_id for v in check_trial(trial, rules)}`` as violations."""
        return cls(
            task_id=trial.task_id,
            success=trial.success,
            steps=trial.steps,
            cost_usd=trial.usage.cost_usd,
            latency_s=trial.latency_s,
            tool_calls=trial.tool_call_count,
            tool_errors=trial.tool_errors,
            violations=frozenset(violations),
            outcome=trial.outcome,
        )


@dataclass(frozen=True)
class Violation:
    """One breach of a rule in one trial. ``message_index`` indexes ``trial.messages``; None is trial-level."""

    rule_id: str
    severity: str
    message_index: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "severity": self.severity,
            "message_index": self.message_index,
            "detail": self.detail,
        }


@dataclass
class Skip:
    """A record an importer could not use, with the place and the reason."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"


@dataclass
class Run:
    name: str
    tasks: int = 0
    trials: int = 0
    source: str | None = None
    imported_at: str | None = None


@dataclass
class Label:
    """A human's judgement of one trial. Append-only; the latest per (trial, labeler) counts."""

    trial_id: str
    labeler: str
    verdict: str  # pass | fail | skip
    criteria: dict[str, bool | None] = field(default_factory=dict)
    note: str = ""
    rubric: str | None = None
    at: str = ""
    retracted: bool = False
    queue: str | None = None  # the calibration queue it was given in, if any
    #: the verdict goes against the rubric's pass rule and the labeler confirmed it
    override: bool = False
    #: a fail's category: one of the rubric's ``categories`` or the labeler's own words
    tag: str | None = None


@dataclass
class Criterion:
    id: str
    question: str
    help: str = ""
    key: str = ""


@dataclass
class Rubric:
    name: str
    version: str
    criteria: list[Criterion] = field(default_factory=list)
    pass_rule: str = "all"  # all criteria yes, or "overall" (an explicit verdict)
    #: the failure categories a labeler tags a fail with (one key each on the label screen)
    categories: list[str] = field(default_factory=list)

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def digest(self) -> str:
        """What the labels mean: criterion ids and questions and the pass rule (not help or keys).

        Two rubrics with one name@version and different digests must not be mixed.
        """
        body = json.dumps(
            {"pass_rule": self.pass_rule, "criteria": [[c.id, c.question] for c in self.criteria]},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(body.encode()).hexdigest()[:16]


@dataclass
class Cluster:
    id: str
    name: str
    size: int
    signature: str = ""
    terms: list[str] = field(default_factory=list)
    trial_ids: list[str] = field(default_factory=list)
    representative: str | None = None


#: A reference to a trial: ``{"run", "task_id", "trial"}`` or a stored trial id string.
TrialRef = str | dict[str, Any]


@dataclass
class PairRecord:
    """One line of a pair-judgement file: a judge's verdicts on a pair, references not yet resolved."""

    pair_id: str
    judge: str
    a: TrialRef
    b: TrialRef
    order_ab: str | None
    order_ba: str | None
    human: str | None = None
    task_id: str | None = None
    rationale_ab: str | None = None
    rationale_ba: str | None = None
    source_line: int | None = None


@dataclass(frozen=True)
class TaskEntry:
    """One valid task of a regression task list (``reviewer export``): its id and where it came from."""

    id: str
    run: str
    task_id: str
    trial: int
    source: str
    cluster: str | None
    line: int


#: The longest labeler name (the app's who-is-labeling prompt, the CLI's --labeler, the config).
MAX_LABELER = 60


def clean_labeler(text: str) -> str | None:
    """A labeler's name as typed, its spaces collapsed and trimmed ("ann " and "ann" are one
    labeler), or None when it cannot be one: empty, longer than MAX_LABELER, or holding control
    characters or lone surrogates."""
    name = " ".join(text.split())
    if not name or len(name) > MAX_LABELER or not name.isprintable():
        return None
    return name


#: The longest labeler name a labels file may carry: before names were checked the store took a
#: login name as it was (two spaces, a tab, up to 256 characters: LOGIN_NAME_MAX), and a name
#: stored reads back from ``reviewer labels export`` unchanged.
MAX_STORED_LABELER = 256


def stored_labeler(text: str) -> str | None:
    """A labeler's name as a labels file gives it, trimmed but otherwise as stored ("bo  b" stays
    the labeler it was), or None when no face could have stored it: empty, longer than
    MAX_STORED_LABELER, or holding control characters (a tab aside: login names) or lone
    surrogates. A name ``clean_labeler`` takes passes here too."""
    name = text.strip()
    if not name or len(name) > MAX_STORED_LABELER or not name.replace("\t", " ").isprintable():
        return None
    return name
