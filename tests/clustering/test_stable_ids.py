"""Cluster ids across re-runs: a new cluster takes the id of the old one it matches, and no two clusters
of one clustering ever share an id (a merge followed by a re-cluster used to store a duplicate)."""

from __future__ import annotations

from reviewer.clustering.naming import FailureCluster, match_previous


def cl(cid: str, *trials: str) -> FailureCluster:
    return FailureCluster(
        id=cid,
        name=cid,
        size=len(trials),
        share="",
        fraction=0.0,
        signature="",
        terms=(),
        runs=(),
        tasks=(),
        representative=trials[0],
        trial_ids=tuple(trials),
    )


def final_ids(mapping: dict[str, str], clusters: list[FailureCluster]) -> list[str]:
    return [mapping.get(c.id, c.id) for c in clusters]


def test_unchanged_clusters_keep_their_ids() -> None:
    new = [cl("a", "1", "2", "3"), cl("b", "4", "5")]
    previous = {"a": ["1", "2", "3"], "b": ["4", "5"]}
    assert final_ids(match_previous(previous, new), new) == ["a", "b"]


def test_after_an_even_merge_each_cluster_keeps_its_own_id() -> None:
    # "b" was merged into "m" (equal halves): both match "m" equally well, and "m" keeps "m"
    for new in ([cl("m", "1", "2"), cl("b", "3", "4")], [cl("b", "1", "2"), cl("m", "3", "4")]):
        ids = final_ids(match_previous({"m": ["1", "2", "3", "4"]}, new), new)
        assert ids == [c.id for c in new]


def test_a_cluster_whose_id_went_to_another_gets_a_fresh_one() -> None:
    # a big "b" was merged into a small "a": the re-run's "b" matches the merged "a" and takes its id,
    # so the re-run's own "a" cannot keep it
    new = [cl("b", "3", "4", "5", "6"), cl("a", "1", "2"), cl("a-2", "7")]
    ids = final_ids(match_previous({"a": ["1", "2", "3", "4", "5", "6"]}, new), new)
    assert ids[0] == "a"
    assert len(set(ids)) == 3 and ids[1] not in {"a", "a-2", "b"}
