"""Word and character n-gram counts, TF-IDF, row normalisation and randomized truncated SVD on numpy
and scipy alone, so ``reviewer cluster`` does not pay scikit-learn's import (1.3 s, most of the run
on 1,000 failures).

Each function does, operation for operation, what the scikit-learn estimator it replaces does
(CountVectorizer and TfidfVectorizer with the options the clustering uses, TfidfTransformer,
``normalize``, TruncatedSVD with ``algorithm="randomized"``), so the clusters, their ids and names are
the same; tests/clustering/test_vectorize.py compares them with scikit-learn where it is installed.
"""

from __future__ import annotations

import importlib.util
import re
from array import array
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

_WHITE_SPACES = re.compile(r"\s\s+")


def word_analyzer(
    token_pattern: str,
    preprocess: Callable[[str], str] = str.lower,
    stop_words: Iterable[str] | None = None,
) -> Callable[[str], list[str]]:
    """CountVectorizer's word analyzer: preprocess, find tokens, drop stop words."""
    find = re.compile(token_pattern).findall
    if stop_words is None:
        return lambda doc: find(preprocess(doc))
    stop = frozenset(stop_words)
    return lambda doc: [w for w in find(preprocess(doc)) if w not in stop]


def char_wb_ngrams(text: str, min_n: int = 3, max_n: int = 5) -> list[str]:
    """CountVectorizer's ``char_wb`` analyzer (lowercased): n-grams inside space-padded words."""
    text = _WHITE_SPACES.sub(" ", text.lower())
    ngrams: list[str] = []
    append = ngrams.append
    for w in text.split():
        w = " " + w + " "
        w_len = len(w)
        for n in range(min_n, max_n + 1):
            offset = 0
            append(w[offset : offset + n])
            while offset + n < w_len:
                offset += 1
                append(w[offset : offset + n])
            if offset == 0:
                break
    return ngrams


def count_matrix(
    docs: Iterable[str],
    analyze: Callable[[str], Iterable[str]],
    dtype: Any,
    max_features: int | None = None,
) -> tuple[Any, list[str]]:
    """CountVectorizer(...).fit_transform(docs) and its feature names (min_df=1, max_df=1.0).

    Raises ValueError on an empty vocabulary, as CountVectorizer does."""
    import numpy as np
    import scipy.sparse as sp

    # the documents' features a chunk at a time: each chunk's new features join the vocabulary
    # (a Python step per distinct feature) and every feature's column is looked up by C loops
    # (``map``, ``array.extend``), not a Python step per token; memory holds one chunk's tokens
    vocabulary: dict[str, int] = {}
    columns = array("i")  # a vocabulary, as the documents, stays far below 2**31
    indptr = [0]
    chunk: list[str] = []
    total = 0
    for doc in docs:
        chunk += analyze(doc)  # any iterable of features
        indptr.append(total + len(chunk))
        if len(chunk) >= _CHUNK:
            total += len(chunk)
            _add_columns(chunk, vocabulary, columns)
            chunk = []
    _add_columns(chunk, vocabulary, columns)
    if not vocabulary:
        raise ValueError("empty vocabulary; perhaps the documents only contain stop words")
    n_doc = len(indptr) - 1
    ends = np.asarray(indptr, dtype=np.int64)
    lengths = ends[1:] - ends[:-1]
    rows = np.repeat(np.arange(n_doc, dtype=np.intc), lengths)
    # a (row, column) pair met n times is one entry of n (COO to CSR sums duplicates), rows in order
    x = sp.coo_array(
        (np.ones(len(columns), dtype=np.intc), (rows, np.frombuffer(columns, np.intc))),
        shape=(n_doc, len(vocabulary)),
    ).tocsr()
    del rows, columns
    index_dtype = np.int64 if x.nnz > np.iinfo(np.int32).max else np.int32
    x = sp.csr_array(
        (x.data, x.indices.astype(index_dtype), x.indptr.astype(index_dtype)),
        shape=x.shape,
        dtype=dtype,
    )
    x.sort_indices()
    x = sp.csr_matrix(x)
    if max_features is not None:
        x = _sort_features(x, vocabulary)
    x = _limit_features(x, vocabulary, 1.0 * n_doc, 1, max_features)
    if max_features is None:
        x = _sort_features(x, vocabulary)
    names = [""] * len(vocabulary)
    for term, i in vocabulary.items():
        names[i] = term
    return x, names


#: Tokens gathered before their columns are looked up (count_matrix's memory for them).
_CHUNK = 65_536


def _add_columns(chunk: list[str], vocabulary: dict[str, int], columns: array[int]) -> None:
    """Give ``chunk``'s new features the next columns, then append each feature's column."""
    for feature in dict.fromkeys(chunk):
        vocabulary.setdefault(feature, len(vocabulary))
    columns.extend(map(vocabulary.__getitem__, chunk))


def _sort_features(x: Any, vocabulary: dict[str, int]) -> Any:
    import numpy as np

    sorted_features = sorted(vocabulary.items())
    map_index = np.empty(len(sorted_features), dtype=x.indices.dtype)
    for new_val, (term, old_val) in enumerate(sorted_features):
        vocabulary[term] = new_val
        map_index[old_val] = new_val
    x.indices = map_index.take(x.indices, mode="clip")
    return x


def _limit_features(
    x: Any, vocabulary: dict[str, int], high: float, low: int, limit: int | None
) -> Any:
    import numpy as np

    dfs = np.bincount(x.indices, minlength=x.shape[1])
    mask = np.ones(len(dfs), dtype=bool)
    mask &= dfs <= high
    mask &= dfs >= low
    if limit is not None and mask.sum() > limit:
        tfs = np.asarray(x.sum(axis=0)).ravel()
        mask_inds = (-tfs[mask]).argsort()[:limit]
        new_mask = np.zeros(len(dfs), dtype=bool)
        new_mask[np.where(mask)[0][mask_inds]] = True
        mask = new_mask
    new_indices = np.cumsum(mask) - 1
    for term, old_index in list(vocabulary.items()):
        if mask[old_index]:
            vocabulary[term] = int(new_indices[old_index])
        else:
            del vocabulary[term]
    kept = np.where(mask)[0]
    if len(kept) == 0:
        raise ValueError("After pruning, no terms remain.")
    return x[:, kept]


def tfidf(counts: Any, sublinear_tf: bool = True) -> Any:
    """TfidfTransformer(sublinear_tf=...).fit_transform(counts): smooth idf, l2-normalised rows."""
    import numpy as np
    import scipy.sparse as sp

    dtype = counts.dtype if counts.dtype in (np.float64, np.float32) else np.float64
    n_samples = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(dtype, copy=False)
    df += 1.0
    n_samples += 1
    idf = np.full_like(df, fill_value=n_samples, dtype=dtype)
    idf /= df
    np.log(idf, out=idf)
    idf += 1.0
    x = sp.csr_matrix(counts, dtype=counts.dtype, copy=True)
    if sublinear_tf:
        np.log(x.data, x.data)
        x.data += 1.0
    x.data *= idf[x.indices]
    normalize_sparse_rows(x)
    return x


def normalize_sparse_rows(x: Any) -> None:
    """sklearn's inplace_csr_row_normalize_l2: per row, a double sum of the squares in index order
    (the same order of additions), then each value divided by its square root."""
    import numpy as np

    lengths = np.diff(x.indptr)
    squares = (x.data * x.data).astype(np.float64)
    sums = np.zeros(x.shape[0])
    starts = x.indptr[:-1].astype(np.int64)
    rows = np.arange(x.shape[0])
    for k in range(int(lengths.max()) if len(lengths) else 0):
        live = rows[lengths > k]
        rows, lengths, starts = live, lengths[lengths > k], starts[lengths > k]
        sums[live] += squares[starts + k]
    norms = np.sqrt(sums)
    norms[sums == 0.0] = 1.0
    per_value = np.repeat(norms, np.diff(x.indptr))
    x.data[:] = (x.data.astype(np.float64) / per_value).astype(x.data.dtype)


def normalize(x: Any) -> np.ndarray:
    """sklearn.preprocessing.normalize of a dense array: a float copy, rows divided by their l2 norm
    (norms under 10 machine epsilons left as 1)."""
    import numpy as np

    out = np.array(x, dtype=x.dtype if x.dtype in (np.float32, np.float64) else np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", out, out))
    norms[norms < 10 * np.finfo(norms.dtype).eps] = 1.0
    out /= norms[:, None]
    return out


def truncated_svd_components(x: Any, n_components: int, seed: int, n_iter: int = 2) -> np.ndarray:
    """TruncatedSVD(algorithm="randomized", n_iter <= 2, random_state=seed).fit(x).components_."""
    import numpy as np
    from scipy import linalg

    rng = np.random.RandomState(seed)
    n_random = n_components + 10
    n_samples, n_features = x.shape
    transpose = n_samples < n_features
    m = x.T if transpose else x
    q = rng.normal(size=(m.shape[1], n_random))
    if m.dtype == np.float32:
        q = q.astype(np.float32, copy=False)
    for _ in range(n_iter):  # power_iteration_normalizer "auto" is "none" for n_iter <= 2
        q = m @ q
        q = m.T @ q
    q, _ = linalg.qr(m @ q, mode="economic", check_finite=False)
    b = q.T @ m
    u_hat, _, vt = linalg.svd(b, full_matrices=False, lapack_driver="gesdd")
    u = q @ u_hat
    if transpose:
        u, vt = vt[:n_components, :].T, u[:, :n_components].T
    else:
        u, vt = u[:, :n_components], vt[:n_components, :]
    # svd_flip(u, vt, u_based_decision=False)
    max_abs_rows = np.argmax(np.abs(vt), axis=1)
    shift = np.arange(vt.shape[0])
    signs = np.sign(np.take(np.reshape(vt, (-1,)), max_abs_rows + shift * vt.shape[1], axis=0))
    vt *= signs[:, np.newaxis]
    return vt


@cache
def english_stop_words() -> frozenset[str]:
    """scikit-learn's ENGLISH_STOP_WORDS, read from its file without importing scikit-learn."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("scikit-learn is not installed")
    path = Path(next(iter(spec.submodule_search_locations)), "feature_extraction", "_stop_words.py")
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)
    words: frozenset[str] = scope["ENGLISH_STOP_WORDS"]
    return words


def stack(blocks: Sequence[np.ndarray]) -> np.ndarray:
    import numpy as np

    return np.hstack(list(blocks))
