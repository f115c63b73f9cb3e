"""Clustering the failures stored in a database: gather evidence, cluster, keep ids stable, store."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reviewer.clustering.signature import FailureDoc, evidence_of
from reviewer.store.db import Store

if TYPE_CHECKING:
    from reviewer.clustering.cluster import ClusteringResult

Progress = Callable[[str, int, int | None], None]  # (stage, done, total)


def failure_docs(
    db: Store,
    run: str | None = None,
    ids: list[str] | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    include_infra: bool = False,
) -> list[FailureDoc]:
    """Every failure (of ``run``, or ``ids``) as a FailureDoc with its rule violations as evidence:
    harness fails and unscored trials labeled or judged fail; infrastructure errors only with
    ``include_infra`` (a crashed harness is not an agent failure)."""
    from reviewer.store.clusters import count_failures, failure_violations, runs_calling_tools
    from reviewer.store.trials import iter_trials

    total = count_failures(db, run, include_infra)
    # forbidden rules say what went wrong; policy and budget rules are weaker evidence than the reason
    broken: dict[str, list[str]] = {}
    weak: dict[str, list[str]] = {}
    for tid, rule_id, severity in failure_violations(db, include_infra):
        bucket = broken if severity == "forbidden" else weak
        if rule_id not in bucket.setdefault(tid, []):
            bucket[tid].append(rule_id)
    docs: list[FailureDoc] = []
    tooled = runs_calling_tools(db)  # "answered without calling any tool" only where one is
    source = (
        iter_trials(db, ids=ids)
        if ids is not None
        else iter_trials(db, run=run, failed_only=True, include_infra=include_infra)
    )
    for i, (tid, trial) in enumerate(source, 1):
        if cancelled and cancelled():
            raise InterruptedError("clustering cancelled")
        docs.append(
            evidence_of(
                trial,
                broken.get(tid, ()),
                trial_id=tid,
                weak_violations=weak.get(tid, ()),
                tools_called=(trial.run or "") in tooled,
            )
        )
        if progress and i % 200 == 0:
            progress("reading failures", i, total)
    return docs


def recluster(
    db: Store,
    run: str | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    include_infra: bool = False,
    embedder: str | None = None,
) -> ClusteringResult:
    """Cluster the failures of ``run`` (or of every run) and replace that scope's stored clustering;
    infrastructure errors are left out unless ``include_infra``; ``embedder`` names the text
    embedding (``tfidf``, the default, or ``semantic``; see ``embed.get_embedder``)."""
    from reviewer.clustering.cluster import cluster_failures
    from reviewer.clustering.embed import get_embedder
    from reviewer.clustering.naming import match_previous
    from reviewer.store.clusters import previous_members, save_clustering

    chosen = get_embedder(embedder, seed=seed)  # an unavailable one fails before any work
    docs = failure_docs(
        db, run, progress=progress, cancelled=cancelled, include_infra=include_infra
    )
    if progress:
        progress("clustering", 0, len(docs))
    result = cluster_failures(docs, seed=seed, embedder=chosen)
    if cancelled and cancelled():
        raise InterruptedError("clustering cancelled")
    scope = run or "*"
    result.params["scope"] = scope
    result.params["include_infra"] = include_infra
    result.clusters = name_rule_clusters(db, result.clusters)
    id_map = match_previous(previous_members(db, scope), result.clusters)
    save_clustering(db, scope, result, id_map, {d.trial_id: d.signature for d in docs})
    if progress:
        progress("done", len(docs), len(docs))
    return result


def name_rule_clusters(db: Store, clusters: list[Any]) -> list[Any]:
    """A cluster named after a broken rule says what the rule forbids, in the rule's own words."""
    import dataclasses

    from reviewer.metrics.active_rules import active_rules
    from reviewer.metrics.rules import RuleError

    try:
        active = active_rules(db)
    except RuleError:
        return clusters
    described = {r.id: r.description for r in active.rules if r.description} if active else {}
    out = []
    for c in clusters:
        for rule_id, description in described.items():
            shown = f"broke {rule_id}"
            if c.name == shown or c.name.startswith(shown + " ("):
                said = f"{shown}: {description.rstrip('.')}"
                c = dataclasses.replace(c, name=said + c.name[len(shown) :])
                break
        out.append(c)
    return out
