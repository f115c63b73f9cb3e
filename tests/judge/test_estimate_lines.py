"""`reviewer judge --estimate` on more trials than it builds prompts for: the counts are scaled
from the sample, and say so."""

from __future__ import annotations

from reviewer.workflows.judge import ESTIMATE_SAMPLE, JudgeEstimate


def estimate(trials: int, sampled: int) -> JudgeEstimate:
    return JudgeEstimate(
        "j", "r@1", trials, 327, trials - 327, 1000, 100, 1.0, 2.0, 10.0, "cost cap $10", sampled
    )


def test_scaled_counts_are_about_and_counted_ones_are_not() -> None:
    """7,693 trials said `7366 to send, 327 answered by the cache` although the cache was asked
    about 400 of them and 329 were in it."""
    head = estimate(7693, ESTIMATE_SAMPLE).lines()[0]
    assert head == "judge j: 7693 trials: about 7366 to send, about 327 answered by the cache"
    head = estimate(400, 400).lines()[0]
    assert head == "judge j: 400 trials: 73 to send, 327 answered by the cache"
