"""What `reviewer judge` and the app's "judge" action share: settings, the rubric, the selection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reviewer.judge.jobs import BUILTIN_RUBRIC
from reviewer.judge.runner import RunStats
from reviewer.judge.settings import JudgeSettings, settings_from_config
from reviewer.models import Rubric
from reviewer.store.db import Store
from reviewer.store.judging import cache_drop, error_cache_keys, judged, select_trials


def load_settings(cfg: Any, **overrides: Any) -> JudgeSettings:
    """[judge] of the config with the command-line overrides; JudgeConfigError on bad values."""
    from reviewer.judge.settings import JudgeConfigError, validate

    sources = list(getattr(cfg, "sources", None) or [])
    base = sources[-1].parent if sources else None
    try:
        settings = settings_from_config(cfg.judge, base)
    except JudgeConfigError as e:
        raise JudgeConfigError(f"{_where(sources, str(e))}: {e}") from e
    settings = settings.with_overrides(**overrides)
    validate(settings)
    return settings


def _where(sources: Sequence[Path], message: str) -> str:
    """``file:line`` of the [judge] setting a message names, in the config file that sets it."""
    import re

    from reviewer.judge.settings import KNOWN_SETTINGS

    named = [k for k in KNOWN_SETTINGS if re.search(rf"\b{k}\b", message)]
    for path in reversed(sources):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        in_judge = False
        for n, line in enumerate(lines, 1):
            head = line.strip()
            if head.startswith("["):
                in_judge = head.startswith("[judge")
            elif in_judge and any(re.match(rf'"?{k}"?\s*=', head) for k in named):
                return f"{path}:{n}"
        if any(ln.strip().startswith("[judge") for ln in lines):
            return str(path)
    return str(sources[-1]) if sources else "config"


def pick_rubric(db: Store, configured: Path | None) -> Rubric:
    """The configured rubric, else the one stored last (labels were given under it), else built in."""
    from reviewer.labeling.rubric import load_rubric
    from reviewer.store.labels import ensure_rubric_version
    from reviewer.store.queries import latest_rubric

    if configured is not None:
        rubric = load_rubric(configured)
        ensure_rubric_version(db, rubric)
        return rubric
    return latest_rubric(db) or BUILTIN_RUBRIC


@dataclass
class Selection:
    runs: Sequence[str] = ()
    labeled: bool = False
    queue: str | None = None
    trial_ids: Sequence[str] | None = None
    only_unjudged: bool = False
    retry_errors: bool = False
    limit: int | None = None


def plan(db: Store, judge: str, sel: Selection) -> list[str]:
    """The trial ids to send, in a stable order.

    ``only_unjudged`` leaves out trials this judge already gave pass or fail. ``retry_errors`` keeps
    only the trials it gave ``error`` and forgets their cached replies, so they are asked again.
    """
    ids = select_trials(db, sel.runs, labeled=sel.labeled, queue=sel.queue, trial_ids=sel.trial_ids)
    if sel.retry_errors:
        errored = judged(db, judge, errors=True)
        ids = [t for t in ids if t in errored]
        with db.transaction():
            cache_drop(db, error_cache_keys(db, judge))
    elif sel.only_unjudged:
        done = judged(db, judge)
        ids = [t for t in ids if t not in done]
    return ids[: sel.limit] if sel.limit is not None else ids


def summary_line(judge: str, stats: RunStats) -> str:
    """One plain line for the end of a run (CLI) or a notification (app)."""
    keys = ["pass", "fail"] if not set(stats.counts) - {"pass", "fail", "error"} else []
    keys += sorted(k for k in stats.counts if k not in keys and k != "error") + ["error"]
    counts = ", ".join(f"{k} {stats.counts.get(k, 0)}" for k in keys)
    cost = f"${stats.cost_usd:.4f}" if stats.cost_known else "cost unknown (no price for model)"
    parts = [
        f"judged {stats.done} of {stats.total} with {judge}: {counts}",
        f"{stats.cached} from cache, {stats.requests} requests, {cost}",
    ]
    if stats.failed:
        parts.append(f"{stats.failed} failed after retries (run again to retry)")
    if stats.stopped_at_cap:
        parts.append(f"stopped at the cost cap: {stats.skipped_for_cost} not sent")
    if stats.cancelled:
        parts.append(f"{stats.cancelled} cancelled")
    return "; ".join(parts)
