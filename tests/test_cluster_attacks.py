"""Regression test: `cluster split ID --into N` with N above half the members cut off single trials,
which docs/clusters.md says a split never does."""

from __future__ import annotations

from tests.test_cluster_cli import clusters_of, invoke, sample_db  # noqa: F401 (a fixture)


def test_cluster_split_into_more_than_half_the_members_is_refused(sample_db: str) -> None:  # noqa: F811
    invoke("--db", sample_db, "cluster")
    big = max(clusters_of(sample_db), key=lambda c: int(str(c["size"])))
    size = int(str(big["size"]))
    before = len(clusters_of(sample_db))
    assert size >= 4
    code, out, err = invoke("--db", sample_db, "cluster", "split", str(big["id"]), "--into", "50")
    assert code == 1 and out == ""
    assert err == (
        f"reviewer: cannot split cluster {big['id']} of {size} trials into 50 pieces: at most "
        f"{size // 2} keep every piece at 2 trials or more\n"
    )
    assert len(clusters_of(sample_db)) == before  # nothing was split
