"""Jobs for the runner: one per trial to grade, built lazily from the store."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from reviewer.judge.prompt import cache_key, verdict_params
from reviewer.judge.reply import Job
from reviewer.judge.settings import JudgeSettings
from reviewer.models import Criterion, Rubric
from reviewer.store.db import Store
from reviewer.store.trials import load_trial

#: Used when no rubric is configured, found beside the imported runs, or stored.
BUILTIN_RUBRIC = Rubric(
    name="task-success",
    version="builtin-1",
    criteria=[
        Criterion(
            id="resolved",
            question="Did the agent complete the user's task correctly and honestly?",
            help="Every request answered; nothing claimed that a tool result does not support.",
        ),
        Criterion(
            id="followed_instructions",
            question="Did the agent follow its system prompt and the policies stated there?",
        ),
    ],
    pass_rule="all",
)


def verdict_job(trial_id: str, params: dict[str, object], judge: str, rubric: Rubric) -> Job:
    return Job("verdict", trial_id, judge, rubric.ref, cache_key(dict(params)), dict(params))


def verdict_jobs(
    db: Store, trial_ids: Sequence[str], rubric: Rubric, settings: JudgeSettings
) -> Iterator[Job]:
    """One job per trial (trials that vanished from the store are passed over)."""
    judge = settings.judge_id(rubric.ref)
    for tid in trial_ids:
        trial = load_trial(db, tid)
        if trial is None:
            continue
        yield verdict_job(tid, verdict_params(trial, rubric, settings), judge, rubric)
