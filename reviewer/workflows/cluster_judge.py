"""The opt-in LLM pass over the stored clustering: `reviewer cluster --with-judge` and the Failures
screen's judge window both call these.

The judge (the [judge] settings: model, prices, cost cap, concurrency, endpoint) names each of the
biggest clusters from a few of its trials, then is asked once which clusters describe the same
failure. Names are shown as one undoable edit (the offline names stay stored beside them; a name a
human gave is kept); merges are only proposed: each one the user accepts is an ordinary cluster
merge. Replies are cached by model, prompt and member ids, so a re-run with nothing changed sends
nothing; every run is cost-capped and can be estimated first. Offline clustering never needs this.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from reviewer.judge.cluster_prompt import ClusterBrief, TrialSample
from reviewer.judge.cluster_reply import Proposal
from reviewer.judge.reply import Job, Outcome
from reviewer.judge.runner import Progress, RunStats
from reviewer.judge.settings import JudgeSettings
from reviewer.store.db import Store
from reviewer.workflows.judge import JudgeFailed

#: The biggest clusters the judge names and compares (the rest keep their offline names).
MAX_CLUSTERS = 40
#: Output tokens of a typical name and of a typical list of proposals, for the estimate.
TYPICAL_NAME_TOKENS = 40
TYPICAL_MERGE_TOKENS = 300
#: Messages at the end of a trial shown as its last turns.
LAST_TURNS = 4

Note = Callable[[str], None]


@dataclass(frozen=True)
class ClusterJudgeRequest:
    """``overrides``: [judge] settings for this run (model, max_cost, concurrency, max_wait_s);
    ``merges``: also ask which clusters describe the same failure."""

    overrides: Mapping[str, Any] = field(default_factory=dict)
    merges: bool = True
    top: int = MAX_CLUSTERS


@dataclass
class Named:
    """A cluster the judge named: its id, the name it showed before, the judge's name."""

    id: str
    before: str
    name: str


@dataclass
class ShownProposal:
    """A merge proposal as the user sees it: its id, the clusters (id, name, size) and the reason."""

    id: str
    clusters: list[tuple[str, str, int]]
    reason: str

    @property
    def cluster_ids(self) -> list[str]:
        return [c[0] for c in self.clusters]

    def line(self) -> str:
        parts = "; ".join(f"{cid} {name!r} ({size})" for cid, name, size in self.clusters)
        return f"{self.id}: merge {parts}" + (f" — {self.reason}" if self.reason else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "clusters": [{"id": c, "name": n, "size": s} for c, n, s in self.clusters],
            "reason": self.reason,
        }


@dataclass
class ClusterJudgeResult:
    """What the pass did: names shown, clusters a human named (kept), the proposals, warnings (one
    line each: a malformed reply, a proposal left out), and the runner's counts of both steps."""

    judge: str
    named: list[Named] = field(default_factory=list)
    kept_human: list[str] = field(default_factory=list)
    proposals: list[ShownProposal] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    names_stats: RunStats | None = None
    merge_stats: RunStats | None = None
    cap_note: str = ""

    @property
    def stats(self) -> list[RunStats]:
        return [s for s in (self.names_stats, self.merge_stats) if s is not None]

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.stats)

    @property
    def cost_usd(self) -> float:
        return sum(s.cost_usd for s in self.stats)

    @property
    def incomplete(self) -> bool:
        """Requests were left: the cost cap, requests that failed after retries, a cancel."""
        return any(s.left > 0 for s in self.stats)

    def lines(self) -> list[str]:
        """The end-of-run report (for stderr or a notification)."""
        cached = sum(s.cached for s in self.stats)
        out = [
            f"judge {self.judge}: named {len(self.named)} clusters, "
            f"{len(self.proposals)} merge proposal{'' if len(self.proposals) == 1 else 's'}; "
            f"{self.requests} requests, {cached} from cache, ${self.cost_usd:.4f}"
        ]
        if self.kept_human:
            out.append(f"{len(self.kept_human)} clusters keep the names a human gave them")
        for s in self.stats:
            if s.stopped_at_cap:
                out.append(
                    f"stopped at the cost cap: {s.skipped_for_cost} not sent; {self.cap_note}"
                )
            if s.failed:
                out.append(f"{s.failed} requests failed after retries (run again to retry)")
            if s.cancelled:
                out.append(f"{s.cancelled} cancelled")
        return out + [f"warning: {w}" for w in self.warnings]

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "named": [n.__dict__ for n in self.named],
            "kept_human_names": self.kept_human,
            "proposals": [p.to_dict() for p in self.proposals],
            "warnings": self.warnings,
            "requests": self.requests,
            "cost_usd": round(self.cost_usd, 6),
            "names": self.names_stats.to_dict() if self.names_stats else None,
            "merges": self.merge_stats.to_dict() if self.merge_stats else None,
        }


# --- what is asked --------------------------------------------------------------------------------


@dataclass
class _Plan:
    settings: JudgeSettings
    clustering_id: int
    briefs: list[ClusterBrief]  # the clusters asked about, biggest first
    to_name: list[ClusterBrief]  # those without a human name
    kept_human: list[str]
    sizes: dict[str, int]


def _plan(db: Store, request: ClusterJudgeRequest, cfg: Any) -> _Plan:
    from reviewer.config import ConfigError, resolve_config
    from reviewer.judge.settings import JudgeConfigError
    from reviewer.store.cluster_judge import human_named
    from reviewer.store.clusters import cluster_members
    from reviewer.workflows.clusters import current
    from reviewer.workflows.judge import load_settings

    try:
        cfg = resolve_config(cfg)
        settings = load_settings(cfg, **request.overrides)
    except (ConfigError, JudgeConfigError, OSError) as e:
        raise JudgeFailed(str(e)) from e
    stored = current(db)
    if stored is None:
        raise JudgeFailed("no clustering stored yet; run `reviewer cluster` first")
    rows = stored.rows[: max(1, request.top)]
    if not rows:
        raise JudgeFailed("no failure clusters to name: the stored clustering has none")
    clustering_id = rows[0].clustering_id
    members = {r.id: cluster_members(db, r.id, clustering_id) for r in rows}
    include_infra = bool((stored.info.get("params") or {}).get("include_infra"))
    picks = {r.id: _picks(members[r.id], r.representative) for r in rows}
    samples = _samples(db, [t for p in picks.values() for t in p], include_infra)
    briefs = [
        ClusterBrief(
            r.id,
            r.size,
            r.name,
            tuple(members[r.id]),
            tuple(samples[t] for t in picks[r.id] if t in samples),
        )
        for r in rows
    ]
    human = human_named(db, [r.id for r in rows])
    return _Plan(
        settings,
        clustering_id,
        briefs,
        [b for b in briefs if b.id not in human],
        [b.id for b in briefs if b.id in human],
        {r.id: r.size for r in rows},
    )


def _picks(members: Sequence[str], representative: str | None) -> list[str]:
    """The trials shown of a cluster: its representative, then members spread over the cluster."""
    from reviewer.judge.cluster_prompt import NAME_SAMPLES

    out = [representative] if representative in members else []
    n = len(members)
    for i in range(NAME_SAMPLES):
        if len(out) >= NAME_SAMPLES or not n:
            break
        t = members[(i * n) // NAME_SAMPLES]
        if t not in out:
            out.append(t)
    return [t for t in out if t is not None]


def _samples(db: Store, ids: list[str], include_infra: bool) -> dict[str, TrialSample]:
    """Each trial's evidence, facts and last turns, as the prompts show them."""
    from reviewer.clustering.run import failure_docs
    from reviewer.judge.prompt import render_message
    from reviewer.store.trials import iter_trials

    ids = list(dict.fromkeys(ids))
    docs = {d.trial_id: d for d in failure_docs(db, ids=ids, include_infra=include_infra)}
    out: dict[str, TrialSample] = {}
    for tid, trial in iter_trials(db, ids=ids):
        doc = docs.get(tid)
        start = max(0, len(trial.messages) - LAST_TURNS)
        turns = tuple(render_message(i, m) for i, m in enumerate(trial.messages[start:], start + 1))
        evidence = tuple(
            f"{e.kind}{f' ({e.tool})' if e.tool else ''}: {e.text}"
            for e in (doc.evidence if doc else ())
        )
        out[tid] = TrialSample(
            tid, trial.run or "", trial.task_id, evidence, doc.facts if doc else (), turns
        )
    return out


def _merge_briefs(plan: _Plan, names: Mapping[str, str]) -> list[ClusterBrief]:
    return [replace(b, name=names.get(b.id, b.name)) for b in plan.briefs]


# --- estimate -------------------------------------------------------------------------------------


@dataclass
class ClusterJudgeEstimate:
    """What the pass would send and cost before anything is sent."""

    judge: str
    clusters: int
    requests: int
    cached: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    cost_max_usd: float | None
    cap_usd: float | None
    cap_note: str
    kept_human: int
    asks_merges: bool

    @property
    def to_send(self) -> int:
        return self.requests - self.cached

    def lines(self) -> list[str]:
        names = self.requests - (1 if self.asks_merges else 0)
        merges = " and 1 for merges" if self.asks_merges else ""
        out = [
            f"judge {self.judge}: {self.clusters} clusters; {self.requests} requests "
            f"({names} names{merges}), {self.to_send} to send, {self.cached} answered by the cache"
        ]
        if self.kept_human:
            out.append(f"{self.kept_human} clusters keep the names a human gave them (not sent)")
        if self.to_send:
            out.append(
                f"about {self.input_tokens:,} input and {self.output_tokens:,} output tokens"
            )
            if self.cost_usd is None:
                out.append("cost unknown: no price for the model ([judge.prices])")
            else:
                out.append(
                    f"about ${self.cost_usd:.2f}, at most ${self.cost_max_usd or 0:.2f} if every "
                    "reply used all of max_tokens"
                )
            out.append(self.cap_note)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "to_send": self.to_send}


def estimate_cluster_judging(
    db: Store, request: ClusterJudgeRequest, *, cfg: Any = None
) -> ClusterJudgeEstimate:
    """The requests, tokens and dollars of the pass (the merge request as it would be asked with
    the names the cache already holds); nothing is sent or written."""
    from reviewer.judge.cluster_prompt import judge_id, merge_job, name_job
    from reviewer.judge.prompt import prompt_chars
    from reviewer.judge.reply import outcome_from_body
    from reviewer.store.judging import cache_get_many
    from reviewer.workflows.judge import cap_words

    plan = _plan(db, request, cfg)
    s = plan.settings
    jobs = [name_job(b, s) for b in plan.to_name]
    hits = cache_get_many(db, [j.key for j in jobs])
    names = {
        j.target: o.rationale
        for j in jobs
        if j.key in hits and (o := outcome_from_body(j, hits[j.key].body, "cache", s)).value == "ok"
    }
    asks_merges = request.merges and len(plan.briefs) > 1
    if asks_merges:
        jobs.append(merge_job(_merge_briefs(plan, names), s))
        hits |= cache_get_many(db, [jobs[-1].key])
    sent = [j for j in jobs if j.key not in hits]
    tokens_in = sum(prompt_chars(j.params) // 3 + 200 for j in sent)
    typical = [
        TYPICAL_NAME_TOKENS if j.kind == "cluster_name" else TYPICAL_MERGE_TOKENS for j in sent
    ]
    tokens_out = sum(
        min(t, int(j.params["max_tokens"])) for t, j in zip(typical, sent, strict=True)
    )
    most_out = sum(int(j.params["max_tokens"]) for j in sent)
    price = s.price()
    cost = cost_max = None
    if price is not None:
        cost = price.cost(tokens_in, tokens_out)
        cost_max = price.cost(tokens_in, most_out)
    return ClusterJudgeEstimate(
        judge_id(s),
        len(plan.briefs),
        len(jobs),
        len(jobs) - len(sent),
        tokens_in,
        tokens_out,
        cost,
        cost_max,
        s.max_cost,
        cap_words(s),
        len(plan.kept_human),
        asks_merges,
    )


# --- the pass -------------------------------------------------------------------------------------


def judge_clusters(
    db: Store,
    request: ClusterJudgeRequest,
    *,
    cfg: Any = None,
    on_note: Note | None = None,
    on_start: Callable[[str, int], None] | None = None,
    on_progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ClusterJudgeResult:
    """Name the biggest clusters and ask for merge proposals; the names are shown at once (one
    undoable edit), the proposals returned, none applied. ``cancel`` stops sending (the replies on
    their way are kept, the names that arrived shown). JudgeFailed with one line when the run
    cannot start or had to stop (what arrived is still cached and shown)."""
    from reviewer.judge.cluster_prompt import judge_id, merge_job, name_job
    from reviewer.judge.runner import JudgeAbort
    from reviewer.workflows.judge import cap_words, store_kept_replies

    note = on_note or (lambda line: None)
    plan = _plan(db, request, cfg)
    s = plan.settings
    result = ClusterJudgeResult(judge_id(s), kept_human=plan.kept_human, cap_note=cap_words(s))
    store_kept_replies(db, note)
    note(
        f"judge {result.judge}: naming {len(plan.to_name)} of {len(plan.briefs)} clusters"
        + (", then asking for merges" if request.merges else "")
        + f"; {cap_words(s)}"
    )
    if on_start is not None:
        on_start(result.judge, len(plan.to_name) + (1 if request.merges else 0))
    got: dict[str, Outcome] = {}

    def arrived(stats: RunStats, outcome: Outcome | None) -> None:
        if outcome is not None:
            got[outcome.job.target] = outcome
        if on_progress is not None:
            on_progress(stats, outcome)

    jobs = [name_job(b, s) for b in plan.to_name]
    try:
        result.names_stats = _run(db, s, jobs, arrived, note, cancel)
    except JudgeAbort as e:
        _show_names(db, plan, got, result)
        raise JudgeFailed(str(e)) from e
    except BaseException:  # ^C: the names that arrived are shown all the same
        _show_names(db, plan, got, result)
        raise
    _show_names(db, plan, got, result)
    stopped = (cancel is not None and cancel.is_set()) or result.names_stats.left > 0
    if not request.merges or len(plan.briefs) < 2 or stopped:
        return result
    spent = result.names_stats.cost_usd
    merge_settings = s if s.max_cost is None else replace(s, max_cost=max(s.max_cost - spent, 0))
    names = {n.id: n.name for n in result.named}
    job = merge_job(_merge_briefs(plan, names), s)
    got.clear()
    try:
        result.merge_stats = _run(db, merge_settings, [job], arrived, note, cancel)
    except JudgeAbort as e:
        raise JudgeFailed(str(e)) from e
    outcome = got.get(job.target)
    if outcome is not None:
        _read_proposals(plan, outcome, names, result)
    return result


def _run(
    db: Store,
    settings: JudgeSettings,
    jobs: list[Job],
    on_progress: Progress,
    note: Note,
    cancel: threading.Event | None,
) -> RunStats:
    from reviewer.judge.runner import Runner

    if settings.max_cost is not None and settings.max_cost <= 0:
        return RunStats(total=len(jobs), skipped_for_cost=len(jobs), stopped_at_cap=True)
    runner = Runner(db, settings, on_progress=on_progress, on_note=note, cancel=cancel)
    return runner.run(jobs, len(jobs))


def _show_names(
    db: Store, plan: _Plan, got: dict[str, Outcome], result: ClusterJudgeResult
) -> None:
    """Put the names that arrived on the clustering (once), as one undoable edit; a reply that
    holds no usable name is a warning and the cluster keeps its name."""
    import sqlite3

    from reviewer.store.cluster_judge import EditConflict, apply_judge_names

    if result.named or not got:
        return
    names: dict[str, str] = {}
    before = {b.id: b.name for b in plan.to_name}
    for cid, o in got.items():
        if cid not in before:
            continue
        if o.value == "ok":
            names[cid] = o.rationale
        else:
            result.warnings.append(f"cluster {cid}: no name used ({o.rationale[:200]})")
    try:
        apply_judge_names(db, names, plan.settings.model, read_from=plan.clustering_id)
    except EditConflict as e:
        result.warnings.append(f"names not shown: {e}")
        return
    except sqlite3.Error as e:
        result.warnings.append(f"names not shown: cannot write them ({e}); run again")
        return
    from reviewer.store.cluster_judge import human_named

    human = human_named(db, list(names))
    result.named = [
        Named(cid, before[cid], name) for cid, name in names.items() if cid not in human
    ]
    got.clear()


def _read_proposals(
    plan: _Plan, outcome: Outcome, names: Mapping[str, str], result: ClusterJudgeResult
) -> None:
    import json

    from reviewer.judge.cluster_reply import check_merges

    if outcome.value != "ok":
        result.warnings.append(f"merge proposals ignored: {outcome.rationale[:200]}")
        return
    checked = check_merges(json.loads(outcome.rationale), {b.id for b in plan.briefs})
    result.warnings += checked.warnings
    shown = {b.id: names.get(b.id, b.name) for b in plan.briefs}
    result.proposals = [_shown(p, shown, plan.sizes) for p in checked.accepted]


def _shown(p: Proposal, names: Mapping[str, str], sizes: Mapping[str, int]) -> ShownProposal:
    return ShownProposal(p.id, [(c, names[c], sizes[c]) for c in p.clusters], p.reason)


# --- accepting proposals --------------------------------------------------------------------------


def accept_merges(
    db: Store, proposals: Sequence[ShownProposal], only: Sequence[str] | None = None
) -> tuple[list[str], list[str]]:
    """Apply the proposals (those with an id in ``only``, when given), each an ordinary cluster merge
    that `reviewer cluster undo` takes back one at a time. Returns (the ids applied, one line per
    proposal that could not be: an unknown id, a cluster gone since)."""
    from reviewer.workflows.clusters import ClusterJobError, merge

    applied: list[str] = []
    problems: list[str] = []
    known = {p.id for p in proposals}
    for pid in only or ():
        if pid not in known:
            problems.append(
                f"no merge proposal {pid!r}; proposals: {', '.join(sorted(known)) or 'none'}"
            )
    for p in proposals:
        if only is not None and p.id not in only:
            continue
        try:
            merge(db, p.cluster_ids)
        except ClusterJobError as e:
            problems.append(f"{p.id}: not merged: {e}")
            continue
        applied.append(p.id)
    return applied, problems
