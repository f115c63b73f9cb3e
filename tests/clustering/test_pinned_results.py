"""The clusters of fixed seeded inputs, pinned: ids, names, sizes and every member. Speed work on the
clustering (lazy imports, fewer copies) must leave these byte for byte as they are."""

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
        ("c3bf91fba316c", "code, email, zip, asked", 54),
    ]
    assert _digest(result) == "be8c164b09ea012c6b2e5ef87400674f3ed2d6a8d3f3a5a841330be7dce19725"


def test_large_text_path_keeps_its_clusters() -> None:
    result = cluster_failures(synthetic(2600, seed=11)[0], seed=5, large=300, micro_clusters=200)
    assert "minibatch-kmeans(150)" in result.params["unsigned_method"]
    assert _heads(result)[1:3] == [
        ("c6f249ca85c50", "arrive, calling, date, delivery", 331),
        ("c52991022fa3a", "terminated: max steps", 329),
    ]
    assert _digest(result) == "6b4ffc24a1529dbd30222bbfe3b2ff32b1363bbe94a180151aa704eacdfdcdf0"


def test_large_merge_path_keeps_its_clusters() -> None:
    tailed = [
        dataclasses.replace(d, signature=f"{d.signature} {d.trial_id}x {d.trial_id}y")
        for d in synthetic(400)[0]
    ]
    result = cluster_failures(tailed, seed=0, large=60, micro_clusters=40)
    assert "minibatch-kmeans(30)" in result.params["merge_method"]
    assert _heads(result)[-1] == ("c38685d2b9e4e", "terminated: max steps", 44)
    assert _digest(result) == "e189b71133ecccd57f3553e205ec3484491879ccbe98371b89651bd8c5a0395c"
