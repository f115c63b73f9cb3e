"""The clustering scorecard against human failure tags: the scores by hand, the per-tag lines, the
"too few" rule, and `reviewer cluster --score` on a stored clustering with tagged labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from reviewer.clustering.score import MIN_SCORED, score_tags, summary_line, tag_line
from reviewer.workflows.labels import give_label
from tests.conftest import run_cli
from tests.labeling.conftest import build


def _entropy(*counts: int) -> float:
    n = sum(counts)
    return -sum(c / n * math.log(c / n) for c in counts if c)


def test_scores_match_a_hand_computation() -> None:
    # 12 tagged trials: tag a 6 (4 in cluster k1, 2 in k2), tag b 6 (all in k2)
    tags = {f"t{i}": ("a" if i < 6 else "b") for i in range(12)}
    cluster_of = {f"t{i}": ("k1" if i < 4 else "k2") for i in range(12)}
    card = score_tags(tags, cluster_of, {"k1": (2, "one"), "k2": (1, "two")})
    # ARI: sum C(n_ij, 2) = 6 + 1 + 15; rows 15 + 15; columns 6 + 28; C(12, 2) = 66
    expected = 30 * 34 / 66
    assert card.ari == pytest.approx((22 - expected) / ((30 + 34) / 2 - expected))
    # homogeneity 1 - H(tag | cluster) / H(tag); completeness 1 - H(cluster | tag) / H(cluster)
    assert card.homogeneity == pytest.approx(1 - (8 / 12) * _entropy(2, 6) / _entropy(6, 6))
    assert card.completeness == pytest.approx(1 - (6 / 12) * _entropy(4, 2) / _entropy(4, 8))
    assert card.purity == pytest.approx(10 / 12)
    assert (card.tagged, card.scored, card.unclustered, card.tags, card.clusters) == (
        12, 12, 0, 2, 2,
    )  # fmt: skip
    a, b = card.per_tag
    assert tag_line(a) == "a: 4 of 6 in cluster 2 'one' (4 of its 4 tagged); spread over 2 clusters"
    assert tag_line(b) == "b: 6 of 6 in cluster 1 'two' (6 of its 8 tagged)"
    assert summary_line(card).startswith("ARI 0.40 · purity 0.83 · homogeneity 0.46")


def test_a_perfect_match_scores_one_and_unclustered_tags_are_counted() -> None:
    tags = {f"t{i}": "abc"[i % 3] for i in range(15)}
    cluster_of = {t: "k-" + tag for t, tag in tags.items() if t != "t14"}
    card = score_tags(tags, cluster_of)
    assert card.enough and card.ari == pytest.approx(1.0) and card.purity == 1.0
    assert card.homogeneity == pytest.approx(1.0) and card.completeness == pytest.approx(1.0)
    assert (card.scored, card.unclustered) == (14, 1)
    assert summary_line(card).endswith("; 1 tagged in no cluster")


def test_too_few_tags_or_tagged_failures_give_no_score() -> None:
    one_tag = score_tags({f"t{i}": "a" for i in range(20)}, {f"t{i}": "k" for i in range(20)})
    assert not one_tag.enough and one_tag.ari is None
    assert one_tag.why.startswith("1 tag among the clustered failures")
    few = {f"t{i}": "ab"[i % 2] for i in range(MIN_SCORED - 1)}
    card = score_tags(few, {t: "k" + tag for t, tag in few.items()})
    assert not card.enough and card.ari is None and card.purity is None
    assert summary_line(card) == (
        f"no score: {MIN_SCORED - 1} tagged failures in clusters: a score needs {MIN_SCORED} "
        "or more (fewer give chance agreement)"
    )
    assert [b.in_best for b in card.per_tag] == [5, 4]  # the per-tag counts are still given
    assert summary_line(score_tags({}, {})).startswith("no tagged failures")


def test_cluster_score_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # 14 failures in clusters k1 (8) and k2 (6), one more failure outside any cluster, one pass
    specs = [("t", None, "k1")] * 8 + [("t", None, "k2")] * 6 + [("t", None, None)] * 2
    db = build(tmp_path / "x.db", specs)
    ids = [r[0] for r in db.execute("SELECT id FROM trials ORDER BY trial")]
    code, out, err = run_cli("--db", "x.db", "cluster", "--score")
    assert code == 0, err
    assert "no tagged failures" in out
    for i, tid in enumerate(ids[:15]):
        tag = "refund twice" if i < 7 else "wrong tool"  # k1 holds 7 + 1, k2 6
        give_label(db, tid, "ann", "fail", tag=tag)
    give_label(db, ids[15], "ann", "fail")  # no tag: not scored
    db.close()

    code, out, err = run_cli("--db", "x.db", "cluster", "--score", "--json")
    assert code == 0, err
    got = json.loads(out)
    assert (got["scope"], got["tagged"], got["scored"], got["unclustered"]) == ("r1", 15, 14, 1)
    assert got["purity"] == pytest.approx(13 / 14)
    assert got["per_tag"][0]["tag"] == "wrong tool" and got["per_tag"][0]["n"] == 8
    code, out, _ = run_cli("--db", "x.db", "cluster", "--score")
    assert code == 0
    assert "1 tagged in no cluster" in out
    assert "refund twice: 7 of 7 in cluster 1 'k1' (7 of its 8 tagged)" in out
    code, _, err = run_cli("--db", "x.db", "cluster", "--score", "--run", "nope")
    assert code == 2 and "nope" in err
