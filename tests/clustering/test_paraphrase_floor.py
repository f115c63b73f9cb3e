"""Issue 16, item 2: agreement with the true modes on failures with paraphrased reasons, held at the
measured floor (seeded fixtures, deterministic clustering), and where the rest is lost.

Measured (bench/paraphrase_ari.py): TF-IDF and the semantic extra both reach ARI 0.46 on the dev
wordings and 0.64 on the held-out ones. Every cluster is pure (homogeneity 1.0): what keeps ARI below
1 is that the wordings of one mode stay apart, never that two modes are mixed."""

from __future__ import annotations

import pytest
from sklearn.metrics import adjusted_rand_score, homogeneity_score

from reviewer.clustering import embed
from reviewer.clustering.cluster import cluster_failures
from tests.clustering.paraphrases import failures

#: The held-out ARI reached (0.636 with seed 0; 0.630-0.634 with fixture seeds 1-3).
HELD_OUT_FLOOR = 0.62
DEV_FLOOR = 0.45


def labels(split: str, seed: int = 0, embedder: object = None) -> tuple[list[str], list[str]]:
    docs, truth = failures(split, seed=seed)
    by_trial = cluster_failures(docs, seed=0, embedder=embedder).by_trial()  # type: ignore[arg-type]
    return truth, [by_trial[d.trial_id] for d in docs]


def embedders() -> list[object]:
    found: list[object] = [None]
    if embed.semantic_available():
        found.append(embed.get_embedder("semantic"))
    return found


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_held_out_paraphrases_keep_the_measured_agreement(seed: int) -> None:
    for embedder in embedders():
        truth, got = labels("held_out", seed, embedder)
        assert adjusted_rand_score(truth, got) >= HELD_OUT_FLOOR
        truth, got = labels("dev", seed, embedder)
        assert adjusted_rand_score(truth, got) >= DEV_FLOOR


def test_paraphrase_clusters_never_mix_two_modes() -> None:
    for embedder in embedders():
        for split in ("dev", "held_out"):
            truth, got = labels(split, 0, embedder)
            assert homogeneity_score(truth, got) == pytest.approx(1.0)


def test_paraphrase_agreement_is_the_same_on_every_run() -> None:
    docs, truth = failures("held_out")
    first = cluster_failures(docs, seed=0).by_trial()
    again = cluster_failures(list(reversed(docs)), seed=0).by_trial()
    assert adjusted_rand_score(
        [first[d.trial_id] for d in docs], [again[d.trial_id] for d in docs]
    ) == pytest.approx(1.0)
