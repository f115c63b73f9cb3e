"""Why paraphrases of one failure mode split: agreement with the true modes, and where it is lost.

On the labeled failures with paraphrased reasons (tests/clustering/paraphrases.py; 8 modes, ``dev``
and ``held_out`` wordings), for each embedder that is installed (``tfidf``; ``semantic`` with the
extra), prints:

- ARI: adjusted Rand index of the clusters ``cluster_failures`` gives against the true modes;
- pure: homogeneity (1.0: no cluster mixes two modes), whole: completeness (1.0: no mode split);
- best cut: the best ARI any fixed merge threshold reaches (an oracle, tuned on the answer);
- nn: of the distinct wordings, the share whose nearest other wording (cosine) is of the same
  mode; within / between: mean cosine distance of wordings of one mode / of different modes.

When nn is low and within is close to between, no cut can join the paraphrases without joining
other modes: the embedding, not the cut, is what loses the agreement.

    python bench/paraphrase_ari.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from sklearn.metrics import (  # noqa: E402
    adjusted_rand_score,
    completeness_score,
    homogeneity_score,
)

from reviewer.clustering.cluster import cluster_failures  # noqa: E402
from reviewer.clustering.embed import EmbedderUnavailable, get_embedder  # noqa: E402
from reviewer.clustering.signature import evidence_of  # noqa: E402
from reviewer.models import Trial  # noqa: E402
from tests.clustering.paraphrases import MODES, failures  # noqa: E402

CUTS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
FILL = {"o": "W1234", "n": 12, "d": "2024-05-12", "u": "mia_li_3668"}


def agreement(split: str, embedder: object, **options: object) -> tuple[float, float, float]:
    docs, truth = failures(split)
    result = cluster_failures(docs, seed=0, embedder=embedder, **options)  # type: ignore[arg-type]
    labels = [result.by_trial()[d.trial_id] for d in docs]
    return (
        float(adjusted_rand_score(truth, labels)),
        float(homogeneity_score(truth, labels)),
        float(completeness_score(truth, labels)),
    )


def wording_geometry(split: str, embedder: object) -> tuple[float, float, float]:
    """Nearest-neighbour accuracy, mean within-mode and between-mode cosine distance of wordings."""
    texts: list[str] = []
    modes: list[str] = []
    for mode, (dev, held_out) in MODES.items():
        for wording in dev if split == "dev" else held_out:
            trial = Trial(task_id="t", messages=[], passed=False, reason=wording.format(**FILL))
            texts.append(evidence_of(trial, trial_id="x").text)
            modes.append(mode)
    x = np.asarray(embedder.embed(texts), dtype=np.float64)  # type: ignore[attr-defined]
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    dist = 1.0 - x @ x.T
    m = np.array(modes)
    same = (m[:, None] == m[None, :]) & ~np.eye(len(m), dtype=bool)
    other = m[:, None] != m[None, :]
    nn = np.argmin(dist + np.eye(len(m)) * 9.0, axis=1)
    return float((m[nn] == m).mean()), float(dist[same].mean()), float(dist[other].mean())


def main() -> int:
    print(
        f"{'embedder':9} {'split':8} {'ARI':>5} {'pure':>5} {'whole':>5} {'best cut':>13} "
        f"{'nn':>5} {'within':>6} {'between':>7}"
    )
    for name in ("tfidf", "semantic"):
        try:
            embedder = get_embedder(name, seed=0)
        except EmbedderUnavailable as exc:
            print(f"{name:9} not measured: {exc}")
            continue
        for split in ("dev", "held_out"):
            ari, pure, whole = agreement(split, embedder)
            best = max((agreement(split, embedder, merge_threshold=cut)[0], cut) for cut in CUTS)
            nn, within, between = wording_geometry(split, embedder)
            print(
                f"{name:9} {split:8} {ari:>5.2f} {pure:>5.2f} {whole:>5.2f} "
                f"{best[0]:>6.2f} @ {best[1]:.2f} {nn:>5.2f} {within:>6.2f} {between:>7.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
