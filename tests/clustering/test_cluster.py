"""Failure clustering on synthetic failures with known modes, and its edge cases."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from reviewer.clustering.cluster import ClusteringResult, cluster_failures
from reviewer.clustering.embed import (
    EmbedderUnavailable,
    SentenceTransformerEmbedder,
    TfidfSvdEmbedder,
    get_embedder,
)
from reviewer.clustering.naming import match_previous, share_text
from reviewer.clustering.signature import FailureDoc, evidence_of
from reviewer.clustering.templates import templates_of
from reviewer.models import Message, ToolCall, Trial, TrialError, Verdict

NOISE = (
    "please thanks sure okay moment checking looking details account booking flight order item "
    "address payment card refund trip seat bag customer request policy today tomorrow soon right"
).split()
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy"]


def _say(rng: random.Random, text: str, calls: Sequence[str] = ()) -> Message:
    noise = " ".join(rng.choice(NOISE) for _ in range(rng.randint(2, 6)))
    return Message("assistant", f"{text} {noise}", [ToolCall(c, {}, "c1") for c in calls])


def _trial(mode: int, i: int, rng: random.Random) -> Trial:
    """A failed trial of one of 8 known failure modes; modes 6 and 7 have no error evidence at all."""
    n = rng.randint(100, 99999)
    who = rng.choice(NAMES)
    msgs = [Message("user", f"Hi, I am {who}, order #W{n}")]
    error = termination = reason = None
    rationale = ""
    if mode == 0:
        msgs += [
            _say(rng, "Cancelling now.", ["cancel_order"]),
            Message(
                "tool",
                f"Error: order #W{n} has already been shipped",
                tool_call_id="c1",
                name="cancel_order",
            ),
            _say(rng, f"Done, order #W{n} is cancelled."),
        ]
        rationale = "Called cancel_order on a shipped order and claimed success."
    elif mode == 1:
        msgs += [
            _say(rng, "Booking it.", ["book_reservation"]),
            Message(
                "tool",
                f"Error: payment amount does not add up, total price is {n}, but paid {n // 2}",
                tool_call_id="c1",
                name="book_reservation",
            ),
        ]
        rationale = "The payment split did not cover the price."
    elif mode == 2:
        error = TrialError(
            "requests.exceptions.HTTPError",
            f"503 Server Error: Service Unavailable for url: https://api.example/v1/o/{n}",
        )
        msgs += [_say(rng, "Fetching your order.", ["get_order"])]
    elif mode == 3:
        tb = (
            "Traceback (most recent call last):\n"
            f'  File "/srv/tools.py", line {rng.randint(5, 90)}, in run\n    return fn()\n'
            f"  File \"/srv/users.py\", line 12, in get_user\n    return USERS[uid]\nKeyError: '{who}_{n}'\n"
        )
        msgs += [
            _say(rng, "Looking you up.", ["get_user"]),
            Message("tool", tb, tool_call_id="c1", name="get_user"),
        ]
    elif mode == 4:
        termination = "max_steps"
        msgs += [_say(rng, "Let me search the orders again.", ["search_orders"]) for _ in range(3)]
    elif mode == 5:
        msgs += [_say(rng, "Transferring you to a human agent.", ["transfer_to_human_agents"])]
    elif mode == 6:
        msgs += [
            _say(
                rng,
                f"Your parcel will arrive {rng.choice(['tomorrow', 'on friday', 'next week'])}.",
            )
        ]
        rationale = f"The agent invented a delivery date for {who} without calling any tool."
    else:
        msgs += [_say(rng, "Could you give me your email and zip code again?")]
        rationale = "The agent asked again for the email and zip code that the user already gave."
    return Trial(
        task_id=f"task_{mode}_{rng.randint(0, 3)}",
        messages=msgs,
        passed=False,
        run=f"run-{rng.randint(1, 2)}",
        trial=i,
        reason=reason,
        judge=Verdict("fail", rationale=rationale) if rationale else None,
        error=error,
        termination=termination,
    )


def synthetic(
    n: int, modes: Sequence[int] = tuple(range(8)), seed: int = 7
) -> tuple[list[FailureDoc], list[int]]:
    rng = random.Random(seed)
    truth = [rng.choice(modes) for _ in range(n)]
    docs = [evidence_of(_trial(m, i, rng), trial_id=f"t{i:05d}") for i, m in enumerate(truth)]
    return docs, truth


def labels_of(result: ClusteringResult, docs: Sequence[FailureDoc]) -> list[str]:
    by_trial = result.by_trial()
    return [by_trial[d.trial_id] for d in docs]


def doc(
    trial_id: str, signature: str = "", text: str = "", run: str = "r", task: str = "t"
) -> FailureDoc:
    return FailureDoc(trial_id=trial_id, signature=signature, text=text, run=run, task_id=task)


@pytest.fixture(scope="module")
def known_modes() -> tuple[list[FailureDoc], list[int], ClusteringResult]:
    docs, truth = synthetic(400)
    return docs, truth, cluster_failures(docs, seed=0)


def test_known_modes_are_recovered(
    known_modes: tuple[list[FailureDoc], list[int], ClusteringResult],
) -> None:
    docs, truth, result = known_modes
    assert adjusted_rand_score(truth, labels_of(result, docs)) > 0.9
    assert result.total == 400
    assert sum(c.size for c in result.clusters) == 400


def test_modes_without_any_signature_are_recovered_by_text() -> None:
    docs, truth = synthetic(300)
    unsigned = [dataclasses.replace(d, signature="") for d in docs]
    result = cluster_failures(unsigned, seed=0)
    assert adjusted_rand_score(truth, labels_of(result, unsigned)) > 0.9


def test_large_path_recovers_modes_without_a_full_distance_matrix() -> None:
    docs, truth = synthetic(600)
    unsigned = [dataclasses.replace(d, signature="") for d in docs]
    result = cluster_failures(unsigned, seed=0, large=100, micro_clusters=64)
    assert "minibatch-kmeans" in result.params["unsigned_method"]
    assert adjusted_rand_score(truth, labels_of(result, unsigned)) > 0.9


def test_ranked_by_size_then_name(
    known_modes: tuple[list[FailureDoc], list[int], ClusteringResult],
) -> None:
    clusters = known_modes[2].clusters
    keys = [(-c.size, c.name) for c in clusters]
    assert keys == sorted(keys)


def test_name_carries_the_dominant_failure(
    known_modes: tuple[list[FailureDoc], list[int], ClusteringResult],
) -> None:
    docs, truth, result = known_modes
    mode_of = {d.trial_id: m for d, m in zip(docs, truth, strict=True)}
    words = {
        0: ("cancel_order", "shipped"),
        1: ("payment", "add up"),
        2: ("503", "service unavailable"),
        3: ("KeyError", "get_user"),
        4: ("max steps",),
        5: ("transfer to human",),
        6: ("delivery", "arrive", "invented", "parcel"),
        7: ("email", "zip", "code"),
    }
    for cluster in result.clusters:
        mode = max(
            set(map(mode_of.get, cluster.trial_ids)),
            key=[mode_of[t] for t in cluster.trial_ids].count,
        )
        assert any(w in cluster.name for w in words[mode]), (mode, cluster.name)  # type: ignore[index]


def test_cluster_fields(known_modes: tuple[list[FailureDoc], list[int], ClusteringResult]) -> None:
    docs, _, result = known_modes
    by_id = {d.trial_id: d for d in docs}
    top = result.clusters[0]
    assert top.share == f"{top.size} of 400 failures"
    assert top.fraction == pytest.approx(top.size / 400)
    assert top.representative in top.trial_ids
    assert list(top.trial_ids) == sorted(top.trial_ids)
    assert set(top.runs) == {by_id[t].run for t in top.trial_ids}
    assert set(top.tasks) == {by_id[t].task_id for t in top.trial_ids}
    assert top.terms and all(" " not in t and "<" not in t for t in top.terms)
    assert sum(count for _, count in top.signatures) == top.size
    assert len({c.id for c in result.clusters}) == len(result.clusters)
    model = top.to_model()
    assert (
        model.id == top.id and model.size == top.size and model.representative == top.representative
    )
    assert result.to_dict()["clusters"][0]["share"] == top.share
    for key in ("seed", "embedder", "merge_cut", "n_groups", "n_clusters"):
        assert key in result.params


def test_empty_input() -> None:
    result = cluster_failures([])
    assert result.clusters == [] and result.total == 0


def test_one_failure() -> None:
    docs, _ = synthetic(1)
    result = cluster_failures(docs)
    assert len(result.clusters) == 1
    only = result.clusters[0]
    assert only.size == 1 and only.share == "1 of 1 failure"
    assert only.representative == docs[0].trial_id and only.trial_ids == (docs[0].trial_id,)


def test_thousand_identical_failures() -> None:
    one, _ = synthetic(1, modes=[0])
    docs = [dataclasses.replace(one[0], trial_id=f"t{i:04d}") for i in range(1000)]
    result = cluster_failures(docs)
    assert [c.size for c in result.clusters] == [1000]
    assert result.clusters[0].share == "1000 of 1000 failures"
    assert "cancel_order" in result.clusters[0].name


def test_blank_texts_give_zero_vectors_and_still_cluster() -> None:
    blank = [doc(f"b{i}") for i in range(5)]
    result = cluster_failures(blank)
    assert [c.size for c in result.clusters] == [5]
    assert result.clusters[0].name == "no error evidence"
    signed = [doc(f"s{i}", signature="timeout" if i % 2 else "refused") for i in range(6)]
    result = cluster_failures(signed + blank)
    assert sorted(c.size for c in result.clusters) == [3, 3, 5]
    zeros = cluster_failures(blank, vectors=np.zeros((5, 8)))
    assert [c.size for c in zeros.clusters] == [5]


def test_precomputed_vectors_must_match() -> None:
    with pytest.raises(ValueError, match="one row per doc"):
        cluster_failures([doc("a"), doc("b")], vectors=np.zeros((3, 2)))


def test_deterministic_under_seed_and_input_order(
    known_modes: tuple[list[FailureDoc], list[int], ClusteringResult],
) -> None:
    docs, _, result = known_modes
    again = cluster_failures(docs, seed=0)
    assert again.to_dict() == result.to_dict()
    shuffled = list(docs)
    random.Random(3).shuffle(shuffled)
    assert cluster_failures(shuffled, seed=0).to_dict() == result.to_dict()


def test_ids_stay_when_failures_are_added(
    known_modes: tuple[list[FailureDoc], list[int], ClusteringResult],
) -> None:
    docs, _, result = known_modes
    more, _ = synthetic(40, seed=99)
    more = [dataclasses.replace(d, trial_id=f"z{d.trial_id}") for d in more]
    grown = cluster_failures(docs + more, seed=0)
    signed_ids = {c.id for c in result.clusters if c.signature}
    assert signed_ids <= {c.id for c in grown.clusters}
    previous = {c.id: c.trial_ids for c in result.clusters}
    mapping = match_previous(previous, grown.clusters)
    assert len(mapping) == len(result.clusters)
    assert len(set(mapping.values())) == len(mapping)


def test_same_kind_through_two_tools_merges() -> None:
    rng = random.Random(1)
    docs = []
    for i in range(40):
        tool = "book_reservation" if i % 2 else "update_reservation_flights"
        text = f"Checking seats on that flight. Error: not enough seats on flight <id> {rng.choice(NOISE)}"
        docs.append(doc(f"t{i}", f"{tool}: not enough seats on flight <id>", text))
    for i in range(40):
        docs.append(
            doc(
                f"u{i}",
                "get_user: KeyError in get_user: <str>",
                f"Looking you up. KeyError {rng.choice(NOISE)}",
            )
        )
    result = cluster_failures(docs)
    assert sorted(c.size for c in result.clusters) == [40, 40]


def test_one_signature_with_two_separate_texts_splits() -> None:
    rng = random.Random(2)
    docs = []
    for i in range(30):
        docs.append(
            doc(
                f"a{i}",
                "terminated: max steps",
                f"search orders again looping search_orders {rng.choice(NOISE)}",
            )
        )
        docs.append(
            doc(
                f"b{i}",
                "terminated: max steps",
                f"poem about the ocean waves sunset {rng.choice(NAMES)}",
            )
        )
    result = cluster_failures(docs)
    assert result.params["splits"] == 1
    assert sorted(c.size for c in result.clusters) == [30, 30]
    assert all(c.signature == "terminated: max steps" for c in result.clusters)
    assert len({c.id for c in result.clusters}) == 2


def test_long_tail_of_signatures_becomes_one_template() -> None:
    words = [f"{a}{b}" for a in ("ka", "lo", "mi", "re") for b in ("su", "ta", "ne", "vo")]
    docs = [
        doc(
            f"t{i}",
            f"update_profile: validation failed for field {w}: value is required",
            f"Saving profile. field {w}",
        )
        for i, w in enumerate(words)
    ]
    result = cluster_failures(docs)
    assert [c.size for c in result.clusters] == [16]
    assert (
        result.clusters[0].signature
        == "update_profile: validation failed for field <*>: value is required"
    )


def test_templates_keep_few_frequent_values_apart() -> None:
    tail = {f"user u{i}x not found": 1 for i in range(10)}
    kinds = {
        f"actions did not match (expected writes: {t})": 9
        for t in ("a", "b", "c", "d", "e", "f", "g", "h")
    }
    mapping = templates_of({**tail, **kinds})
    assert set(mapping) == set(tail)
    assert set(mapping.values()) == {"user <*> not found"}


def test_share_text() -> None:
    assert share_text(12, 19) == "12 of 19 failures"
    assert share_text(1, 1) == "1 of 1 failure"


def test_match_previous_by_overlap() -> None:
    docs = [doc(f"t{i}", "a" if i < 6 else "b", f"text {'x' if i < 6 else 'y'}") for i in range(10)]
    result = cluster_failures(docs)
    previous = {
        "old-a": [f"t{i}" for i in range(5)],
        "old-b": ["t6", "t7", "t8", "t9"],
        "old-c": ["zz"],
    }
    mapping = match_previous(previous, result.clusters)
    assert sorted(mapping.values()) == ["old-a", "old-b"]


def test_tfidf_embedder_rows_are_unit_or_zero() -> None:
    emb = TfidfSvdEmbedder(seed=0, dims=8, char_dims=4)
    texts = ["order shipped error", "", "payment failed", "order shipped error again"] * 5
    x = emb.embed(texts)
    norms = np.linalg.norm(x, axis=1)
    assert np.allclose(norms[[i for i, t in enumerate(texts) if t]], 1.0)
    assert np.allclose(norms[[i for i, t in enumerate(texts) if not t]], 0.0)
    assert np.array_equal(x, emb.embed(texts))
    assert emb.embed([]).shape == (0, 1)
    assert not emb.embed(["", " "]).any()
    small = TfidfSvdEmbedder().embed(["alpha beta", "gimmick zoo"])  # fewer texts than dims: exact
    assert float(small[0] @ small[1]) == pytest.approx(0.0, abs=1e-9)


def test_custom_embedder_backend() -> None:
    class Fixed:
        name = "fixed"

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            return np.array([[1.0, 0.0] if "a" in t else [0.0, 1.0] for t in texts])

    docs = [doc(f"t{i}", text="aaa" if i < 4 else "bbb") for i in range(8)]
    result = cluster_failures(docs, embedder=Fixed())
    assert sorted(c.size for c in result.clusters) == [4, 4]
    assert result.params["embedder"] == "fixed"


def test_get_embedder() -> None:
    assert isinstance(get_embedder(), TfidfSvdEmbedder)
    assert isinstance(get_embedder("tfidf", seed=3, dims=16), TfidfSvdEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("word2vec")


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None, reason="installed here"
)
def test_sentence_transformers_is_optional_and_never_downloads() -> None:
    with pytest.raises(EmbedderUnavailable):
        get_embedder("sentence-transformers")
    with pytest.raises(EmbedderUnavailable):
        SentenceTransformerEmbedder("some/model")


def test_many_signatures_take_the_large_merge_path() -> None:
    docs, _ = synthetic(400)
    # every failure gets its own signature, with a tail word the templates cannot see as a variable
    tailed = [
        dataclasses.replace(d, signature=f"{d.signature} {d.trial_id}x {d.trial_id}y") for d in docs
    ]
    result = cluster_failures(tailed, seed=0, large=60, micro_clusters=40)
    assert "minibatch-kmeans" in result.params["merge_method"]
    assert sum(c.size for c in result.clusters) == 400
    assert (
        result.to_dict() == cluster_failures(tailed, seed=0, large=60, micro_clusters=40).to_dict()
    )


def test_same_result_whatever_the_hash_seed() -> None:
    code = (
        "import hashlib, json, sys; sys.path.insert(0, 'tests/clustering');"
        "from test_cluster import synthetic; from reviewer.clustering.cluster import cluster_failures;"
        "r = cluster_failures(synthetic(120)[0], seed=1);"
        "print(hashlib.sha1(json.dumps(r.to_dict(), sort_keys=True).encode()).hexdigest())"
    )
    repo = Path(__file__).resolve().parents[2]
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=repo,
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outs) == 1
