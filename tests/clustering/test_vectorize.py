"""reviewer.clustering.vectorize does what the scikit-learn estimators it replaces do, value for
value, and `reviewer cluster` no longer imports scikit-learn on the ordinary path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import (
    ENGLISH_STOP_WORDS,
    CountVectorizer,
    TfidfTransformer,
    TfidfVectorizer,
)
from sklearn.preprocessing import normalize as sk_normalize

from reviewer.clustering.vectorize import (
    char_wb_ngrams,
    count_matrix,
    english_stop_words,
    normalize,
    tfidf,
    truncated_svd_components,
    word_analyzer,
)
from tests.clustering.test_cluster import synthetic

WORDS = r"(?u)<\w+>|\b\w\w+\b"


def _texts(n: int = 300) -> list[str]:
    docs, _ = synthetic(n, seed=4)
    return [d.text for d in docs] + ["", "Zz  AB\tab <id> x_y", "one  word"]


def _same_sparse(a: sp.spmatrix, b: sp.spmatrix) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)


@pytest.mark.parametrize("max_features", [None, 2**17, 40])
def test_word_counts_are_count_vectorizers(max_features: int | None) -> None:
    texts = _texts()
    ours, names = count_matrix(texts, word_analyzer(WORDS), np.float32, max_features)
    theirs = CountVectorizer(token_pattern=WORDS, max_features=max_features, dtype=np.float32)
    _same_sparse(ours, theirs.fit_transform(texts))
    assert names == list(theirs.get_feature_names_out())


def test_word_counts_across_chunks_and_from_any_iterable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens are gathered a chunk at a time: chunks of a few tokens, and an analyzer giving a
    generator, count as CountVectorizer does."""
    import reviewer.clustering.vectorize as vectorize

    monkeypatch.setattr(vectorize, "_CHUNK", 5)
    texts = _texts(60)
    find = word_analyzer(WORDS)
    ours, names = count_matrix(texts, lambda doc: iter(find(doc)), np.float32)
    theirs = CountVectorizer(token_pattern=WORDS, dtype=np.float32)
    _same_sparse(ours, theirs.fit_transform(texts))
    assert names == list(theirs.get_feature_names_out())


def test_stop_words_and_preprocessor_are_count_vectorizers() -> None:
    texts = _texts()
    stop = sorted(ENGLISH_STOP_WORDS | {"agent"})
    pattern = r"(?u)\b[a-z][a-z_]{2,}\b"
    with pytest.raises(ValueError):  # no lower-case word left: an empty vocabulary, as sklearn says
        count_matrix(texts, word_analyzer(pattern, str.upper, stop), np.float64)
    ours, names = count_matrix(
        texts, word_analyzer(pattern, str.lower, stop), np.float64, max_features=2**16
    )
    theirs = CountVectorizer(
        preprocessor=str.lower,
        token_pattern=pattern,
        stop_words=stop,
        max_features=2**16,
        dtype=np.float64,
    )
    _same_sparse(ours, theirs.fit_transform(texts))
    assert names == list(theirs.get_feature_names_out())


def test_stop_words_are_scikit_learns() -> None:
    assert english_stop_words() == ENGLISH_STOP_WORDS


def test_char_tfidf_is_tfidf_vectorizers() -> None:
    words = count_matrix(_texts(), word_analyzer(WORDS), np.float32)[1] + ["a", "ab"]
    ours = tfidf(count_matrix(words, char_wb_ngrams, np.float32)[0])
    theirs = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True, dtype=np.float32
    ).fit_transform(words)
    _same_sparse(ours, theirs)


def test_word_tfidf_is_tfidf_transformers() -> None:
    counts, _ = count_matrix(_texts(), word_analyzer(WORDS), np.float32)
    _same_sparse(tfidf(counts), TfidfTransformer(sublinear_tf=True).fit_transform(counts))


@pytest.mark.parametrize("dims", [8, 40])
def test_randomized_svd_is_truncated_svds(dims: int) -> None:
    counts, _ = count_matrix(_texts(), word_analyzer(WORDS), np.float32)
    x = tfidf(counts)
    for m in (x, x[:30]):  # more rows than columns, and fewer (the transposed path)
        svd = TruncatedSVD(n_components=dims, algorithm="randomized", n_iter=2, random_state=3)
        svd.fit(m)
        assert np.array_equal(truncated_svd_components(m, dims, 3), svd.components_)


def test_dense_normalize_is_scikit_learns() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 7))
    x[3] = 0.0
    x[4] = 1e-300
    assert np.array_equal(normalize(x), sk_normalize(x))
    assert not np.shares_memory(normalize(x), x)


def test_clustering_does_not_import_scikit_learn() -> None:
    code = (
        "import sys\n"
        "from reviewer.clustering.cluster import cluster_failures\n"
        "from reviewer.clustering.signature import FailureDoc\n"
        "docs = [FailureDoc(trial_id=f't{i}', signature=('tool: error ' + 'abc'[i % 3]) if i % 2 "
        "else '', text=f'the agent asked for the {w} again {i % 7}', run='r', task_id='t') "
        "for i, w in enumerate(['email', 'zip', 'order'] * 100)]\n"
        "result = cluster_failures(docs, seed=0)\n"
        "assert result.clusters\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))\n"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_cut_at_is_fclusters_distance_cut() -> None:
    from scipy.cluster.hierarchy import fcluster

    from reviewer.clustering.linkage import canonical, cut_at, upgma

    rng = np.random.default_rng(5)
    means = sk_normalize(rng.normal(size=(120, 6)) + np.repeat(np.eye(6) * 3, 20, axis=0))
    tree = upgma(means, rng.integers(1, 9, size=120).astype(np.float64))
    for t in (0.0, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, *tree[::7, 2].tolist()):
        ours = canonical(cut_at(tree, t))
        assert np.array_equal(ours, canonical(fcluster(tree, t=t, criterion="distance")))
