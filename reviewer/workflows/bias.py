"""Position bias: judge sampled pairs in both orders, and read the report on the stored pair
judgements. `reviewer bias` calls both; the app's position-bias screen reads the report."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviewer.judge.batch import Submitted

# re-exported for the faces (they import workflows only)
from reviewer.judge.bias import CATEGORY_NAMES as CATEGORY_NAMES
from reviewer.judge.bias import BiasReport
from reviewer.judge.bias import classify as classify
from reviewer.judge.bias import is_rating_judge as is_rating_judge
from reviewer.judge.runner import Progress, RunStats
from reviewer.store.db import Store
from reviewer.store.pairs import PairRow as PairRow
from reviewer.store.pairs import get_pair as get_pair
from reviewer.store.pairs import resolve_ref as resolve_ref
from reviewer.text import unknown_run
from reviewer.workflows.judge import JudgeFailed, Note, Start, submitted_lines, summary_line


@dataclass(frozen=True)
class PairsRequest:
    """``n`` pairs sampled under ``seed``: a pass with a fail of one task, or (``runs``) the same
    task in an OLD and a NEW run. ``overrides`` are [judge] settings for this run."""

    n: int
    seed: int = 0
    runs: tuple[str, str] | None = None
    rubric: Path | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)
    batch: bool = False


@dataclass
class PairsResult:
    """What judging the pairs did: run directly (``stats``) or submitted as batches."""

    judge: str
    pairs: int
    stats: RunStats | None = None
    submitted: Submitted | None = None

    @property
    def incomplete(self) -> bool:
        """Some orders were left (cost cap, failed requests, cancel): the report is partial."""
        return self.stats is not None and self.stats.left > 0

    def lines(self) -> list[str]:
        if self.submitted is not None:
            return submitted_lines(self.submitted)
        stats = self.stats or RunStats()
        out = [summary_line(self.judge, stats), *(f"  {f}" for f in stats.failures[:5])]
        if self.incomplete:
            out.append("the report covers only the pairs judged so far")
        return out


def judge_pairs(
    db: Store,
    request: PairsRequest,
    *,
    cfg: Any = None,
    on_note: Note | None = None,
    on_start: Start | None = None,
    on_progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> PairsResult:
    """Sample the pairs and judge each in order AB and BA through the judge runner (cache, cost cap,
    retries, batches); outcomes are stored as pair judgements. Raises JudgeFailed with one line."""
    from reviewer.config import ConfigError, resolve_config
    from reviewer.judge.batch import submit
    from reviewer.judge.pairs import sample_pairs
    from reviewer.judge.pairwise import preference_jobs
    from reviewer.judge.runner import JudgeAbort, Runner
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.labeling.rubric import RubricError
    from reviewer.store.labels import RubricVersionError
    from reviewer.workflows.judge import load_settings, pick_rubric, store_kept_replies

    _check_runs(db, request.runs or ())
    try:
        cfg = resolve_config(cfg)
        settings = load_settings(cfg, **request.overrides)
        rubric = pick_rubric(db, request.rubric or cfg.rubric)
        pairs = sample_pairs(db, request.n, seed=request.seed, runs=request.runs)
    except (ConfigError, JudgeConfigError, RubricError, RubricVersionError, ValueError) as e:
        raise JudgeFailed(str(e)) from e
    if not pairs:
        how = "the same task in both runs" if request.runs else "a pass and a fail of the same task"
        raise JudgeFailed(f"no pairs to judge: no task has {how}")
    judge = settings.judge_id(rubric.ref, kind="pair")
    if on_note is not None:
        on_note(f"judge {judge}: {len(pairs)} pairs, each in order AB and BA")
    result = PairsResult(judge, len(pairs))
    store_kept_replies(db, on_note or (lambda line: None))
    jobs = preference_jobs(db, pairs, rubric, settings)
    try:
        if request.batch:
            result.submitted = submit(db, jobs, settings)
            return result
        if on_start is not None:
            on_start(judge, rubric.ref, 2 * len(pairs))
        runner = Runner(db, settings, on_progress=on_progress, on_note=on_note, cancel=cancel)
        result.stats = runner.run(jobs, 2 * len(pairs))
    except JudgeAbort as e:
        raise JudgeFailed(str(e)) from e
    return result


def _check_runs(db: Store, runs: tuple[str, ...]) -> None:
    from reviewer.store.queries import run_names

    known = run_names(db)
    for r in runs:
        if r not in known:
            raise JudgeFailed(unknown_run(r, known))


@dataclass
class BiasView:
    """The report on the stored pair judgements and the pairs whose winner changed with the order
    (``report.explanation`` says why there is nothing when ``report.judges`` is empty)."""

    report: BiasReport
    inconsistent: list[tuple[PairRow, str]]  # (pair judgement, category)

    @property
    def empty(self) -> bool:
        return not self.report.judges

    @property
    def text(self) -> str:
        from reviewer.judge.bias import render_bias

        return render_bias(self.report)


def position_bias(db: Store, judge: str | None = None) -> BiasView:
    """The MT-Bench report per judge (or of ``judge``) and every inconsistent pair judgement."""
    from reviewer.judge.bias import bias_report, classify, is_rating_judge
    from reviewer.store.pairs import pair_judges, pair_rows

    judges = pair_judges(db)
    rows = pair_rows(db, judge) if judges else []
    report = bias_report(rows, judge)
    if not judges:
        report.explanation = (
            "no pair judgements stored; import a pairs JSONL file or run `reviewer bias --pairs N`"
        )
    elif judge is not None and judge not in judges:
        report.explanation = f"no pair judgements of judge {judge!r}; judges: {', '.join(judges)}"
    # a judge of one order has no inconsistency to open side by side (``JudgeBias.one_order``)
    one_way = {j.judge for j in report.judges if j.one_order is not None}
    inconsistent = [
        (r, cat)
        for r in rows
        if r.judge not in one_way
        and (cat := classify(r.order_ab, r.order_ba, is_rating_judge(r.judge))) != "consistent"
    ]
    return BiasView(report, inconsistent)
