"""Inspect AI scores: which pass / fail / reward a scorer's value means (Inspect's own
``value_to_float``: C = 1, P = 0.5, I = 0), and why a value that says neither leaves a sample
unscored. ``inspect_log`` reads the first scorer with it; ``import --scorer NAME`` another."""

from __future__ import annotations

import math
from typing import Any

from reviewer.ingest.base import as_dict
from reviewer.models import is_success

_PASS = {"c", "correct", "true", "yes", "1", "1.0"}
_FAIL = {"i", "incorrect", "n", "noanswer", "false", "no"}
#: Inspect's value_to_float: PARTIAL is half credit, decided by the pass threshold like any reward.
_PARTIAL = {"p", "partial"}
_REASON_MAX = 300


def score_outcome(
    scorer: str, score: Any
) -> tuple[bool | None, float | None, str | None, str | None]:
    """``(passed, reward, reason, unread)`` of one scorer's score. Letters and booleans set
    ``passed`` (C / I), numbers and PARTIAL (0.5, Inspect's value_to_float) set ``reward``, which
    the pass threshold decides. A value that says neither (a dict of per-field scores, a list, null,
    NaN, a word) leaves the trial unscored and ``unread`` says why; a dict's fields are picked with
    ``--success-field scores.SCORER.value.FIELD``."""
    value = as_dict(score).get("value")
    verdict = _verdict(value)
    if verdict is None:
        return None, None, None, _unread(scorer, value)
    passed, reward = verdict
    reason = None
    if not is_success(passed, reward):
        explanation = as_dict(score).get("explanation")
        reason = short(explanation) if isinstance(explanation, str) and explanation else None
    return passed, reward, reason, None


def _unread(scorer: str, value: Any) -> str:
    if isinstance(value, dict):
        what = "a dict of per-field scores"
    elif isinstance(value, list):
        what = "a list"
    elif value is None:
        what = "null"
    elif isinstance(value, float):
        what = f"{value}"  # nan, inf
    else:
        what = f"{short(str(value))[:40]!r}"
    return f"score of scorer {short(str(scorer))[:60]!r} is {what}, not pass/fail or a number"


def _verdict(value: Any) -> tuple[bool | None, float | None] | None:
    """``(passed, reward)``: letters and booleans set ``passed``, numbers and PARTIAL set
    ``reward``; None for a value that says neither (or a number that is not finite)."""
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int | float):
        return _finite(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _PASS:
            return True, None
        if text in _FAIL:
            return False, None
        if text in _PARTIAL:
            return None, 0.5
        try:
            return _finite(float(text))
        except ValueError:
            return None
    return None


def _finite(value: float) -> tuple[None, float] | None:
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return (None, number) if math.isfinite(number) else None


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_MAX else text[: _REASON_MAX - 1] + "…"


def scores_kept(scores: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every scorer's score as Inspect wrote it: value, answer, explanation (for the transcript)."""
    out: dict[str, dict[str, Any]] = {}
    for name, score in scores.items():
        score = as_dict(score)
        kept = {k: score[k] for k in ("value", "answer", "explanation") if score.get(k) is not None}
        if kept:
            out[str(name)] = kept
    return out
