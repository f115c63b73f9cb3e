"""The clusters of fixed seeded inputs, pinned: ids, names, sizes and every member. Speed work on the
clustering (lazy imports, fewer copies) must leave these byte for byte as they are.

Issue 28 changed names only (every member stayed in its cluster): a cluster whose agents made no
tool call or looped until the step limit is named by what they did ("answered without calling any
tool — code, email, asked" for "code, email, zip, asked"; "reached max steps after calling
search_orders 3+ times in a row" for "terminated: max steps"), and a name from a weak fact (how the
episode ended) also carries the cluster's distinctive terms. The large text path is pinned on the
failures without their behaviour: the text path alone."""

from __future__ import annotations

import dataclasses
import hashlib
import json

from reviewer.clustering.cluster import ClusteringResult, cluster_failures
from tests.clustering.test_cluster import synthetic


def _digest(result: ClusteringResult) -> str:
    clusters = [c.to_dict() for c in result.clusters]
    return hashlib.sha256(json.dumps(clusters, sort_keys=True).encode()).hexdigest()


def _heads(result: ClusteringResult) -> list[tuple[str, str, int]]:
    return [(c.id, c.name, c.size) for c in result.clusters]


def test_small_input_keeps_its_clusters() -> None:
    result = cluster_failures(synthetic(400)[0], seed=3)
    assert result.params["merge_method"] == "agglomerative"
    assert _heads(result)[:3] == [
        (
            "c0e3457f89e6e",
            "book_reservation: payment amount does not add up, total price is <num>, but paid <num>",
            60,
        ),
        ("c892cb03b668d", "HTTPError: 503 server error: service unavailable for url: <url>", 54),
        ("c3bf91fba316c", "answered without calling any tool — code, email, asked", 54),
    ]
    assert _digest(result) == "11140d8d1959fb7fc78f2b05de0935d812a4c0a32257ca38390c27ebdd5f794a"


def test_large_text_path_keeps_its_clusters() -> None:
    # the text path is for failures with no signature and nothing telling in their trajectory
    docs = [
        dataclasses.replace(d, behaviour=(), behaviour_facts=(), behaviour_key="")
        for d in synthetic(2600, seed=11)[0]
    ]
    result = cluster_failures(docs, seed=5, large=300, micro_clusters=200)
    assert "minibatch-kmeans(150)" in result.params["unsigned_method"]
    assert _heads(result)[1:3] == [
        ("c6f249ca85c50", "arrive, calling, date, delivery", 331),
        ("c52991022fa3a", "terminated: max steps — orders, search, search_orders", 329),
    ]
    assert _digest(result) == "8f05dedb636145c8f4e8885d85e8229cb123e7fe8cc2917b6881b2659cf05297"


def test_large_merge_path_keeps_its_clusters() -> None:
    tailed = [
        dataclasses.replace(d, signature=f"{d.signature} {d.trial_id}x {d.trial_id}y")
        for d in synthetic(400)[0]
    ]
    result = cluster_failures(tailed, seed=0, large=60, micro_clusters=40)
    assert "minibatch-kmeans(30)" in result.params["merge_method"]
    assert _heads(result)[-1] == (
        "c38685d2b9e4e",
        "reached max steps after calling search_orders 3+ times in a row",
        44,
    )
    assert _digest(result) == "89a73d5e64659ff7b26554d5ccb68b351e83194de9d3fea23e78de73a4604324"
