"""Embeddings of masked failure text. The default is TF-IDF (word and character n-grams) reduced with
TruncatedSVD and L2-normalised; other backends (sentence-transformers) are optional and never download.

numpy and scipy are imported inside the functions that need them; the TF-IDF and SVD steps are
reviewer.clustering.vectorize's (scikit-learn's algorithms, without its 1.3 s import).
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_EMBEDDER",
    "Embedder",
    "EmbedderUnavailable",
    "SentenceTransformerEmbedder",
    "TfidfSvdEmbedder",
    "WordLlamaEmbedder",
    "get_embedder",
    "semantic_available",
]

DEFAULT_EMBEDDER = "tfidf"
DEFAULT_ST_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class EmbedderUnavailable(RuntimeError):
    """The asked-for backend is not installed or its model is not on disk."""


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to an ``(n, d)`` float array whose rows are L2-normalised (or all zero)."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _reduce(x: Any, dims: int, seed: int, fit_rows: int) -> np.ndarray:
    """Rows of sparse ``x`` in at most ``dims`` dimensions, inner products kept as well as possible.

    No more rows than ``dims``: the exact embedding of the Gram matrix (nothing is lost). Otherwise
    randomized TruncatedSVD, fitted on at most ``fit_rows`` seeded sample rows so time stays linear.
    """
    import numpy as np

    n, d = x.shape
    if n <= dims:
        gram = (x @ x.T).toarray().astype(np.float64)
        values, vectors = np.linalg.eigh(gram)
        keep = values > 1e-9 * max(float(values.max()), 1e-12)
        out = vectors[:, keep] * np.sqrt(values[keep])
        return out if out.shape[1] else np.zeros((n, 1))
    if d <= dims:
        return np.asarray(x.toarray(), dtype=np.float64)
    from reviewer.clustering.vectorize import truncated_svd_components

    fit_on = x
    if n > fit_rows:
        rows = np.sort(np.random.default_rng(seed).choice(n, size=fit_rows, replace=False))
        fit_on = x[rows]
    components = truncated_svd_components(fit_on, min(dims, d - 1), seed, n_iter=2)
    return np.asarray(x @ components.T, dtype=np.float64)


@dataclass
class TfidfSvdEmbedder:
    """TF-IDF over words and char_wb 3-5-grams, reduced with TruncatedSVD, L2-normalised.

    Words: sublinear TF-IDF of the masked text (placeholders such as ``<id>`` count as words), reduced
    to ``dims``. Characters: the char n-gram TF-IDF of each vocabulary word, reduced to ``char_dims``,
    averaged over a text's words by their TF-IDF weight -- the char n-grams of a text are the union of
    its words', so this costs one pass over words, not characters. The two blocks weigh equally.
    Deterministic under ``seed``; an empty text embeds as a zero row.
    """

    seed: int = 0
    dims: int = 96
    char_dims: int = 48
    max_features: int = 2**17
    max_chars: int = 3000
    fit_rows: int = 20000
    name: str = "tfidf-svd"

    def params(self) -> dict[str, Any]:
        return {
            "embedder": self.name,
            "dims": self.dims,
            "char_dims": self.char_dims,
            "seed": self.seed,
            "max_chars": self.max_chars,
        }

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from reviewer.clustering.vectorize import (
            char_wb_ngrams,
            count_matrix,
            normalize,
            tfidf,
            word_analyzer,
        )

        n = len(texts)
        if n == 0:
            return np.zeros((0, 1))
        try:
            counts, words = count_matrix(
                (t[: self.max_chars] for t in texts),
                word_analyzer(r"(?u)<\w+>|\b\w\w+\b"),
                np.float32,
                self.max_features,
            )
        except ValueError:  # empty vocabulary: every text is blank
            return np.zeros((n, 1))
        weights = tfidf(counts)
        word_block = normalize(_reduce(weights, self.dims, self.seed, self.fit_rows))
        grams = tfidf(count_matrix(words, char_wb_ngrams, np.float32)[0])
        char_words = _reduce(grams, self.char_dims, self.seed, self.fit_rows)
        char_block = normalize(np.asarray(weights @ char_words, dtype=np.float64))
        return np.asarray(normalize(np.hstack([word_block, char_block])), dtype=np.float64)


class SentenceTransformerEmbedder:
    """A sentence-transformers model that is already on disk (``local_files_only``; never downloads)."""

    def __init__(
        self, model: str = DEFAULT_ST_MODEL, batch_size: int = 64, device: str | None = None
    ) -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise EmbedderUnavailable("sentence-transformers is not installed")
        try:
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(model, device=device, local_files_only=True)
        except (
            Exception
        ) as exc:  # missing model, old version without local_files_only, broken install
            raise EmbedderUnavailable(f"model {model!r} is not available offline: {exc}") from exc
        self.model = model
        self.batch_size = batch_size
        self.name = f"sentence-transformers:{model}"

    def params(self) -> dict[str, Any]:
        return {"embedder": self.name, "batch_size": self.batch_size}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, 1))
        vectors = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        out = np.asarray(vectors, dtype=np.float64)
        out[[not t.strip() for t in texts]] = 0.0  # blank text carries no evidence
        return out


def semantic_available() -> bool:
    """The ``semantic`` extra is installed (``pip install 'reviewer[semantic]'``)."""
    return importlib.util.find_spec("wordllama") is not None


class WordLlamaEmbedder:
    """WordLlama's static word embeddings (the ``semantic`` extra): the model's weights and
    tokenizer ship inside the PyPI package and are read from there; nothing is ever downloaded.

    Paraphrases of one failure mode ("cancelled an order that had shipped", "order was cancelled
    after shipment") land close, where TF-IDF sees different words. The text's TF-IDF block is kept
    beside it (weight ``tfidf_weight``), so exact wording still counts."""

    name = "wordllama"

    def __init__(self, seed: int = 0, tfidf_weight: float = 0.5) -> None:
        if not semantic_available():
            raise EmbedderUnavailable(
                "the semantic embedder needs the extra: pip install 'reviewer[semantic]'"
            )
        try:
            from pathlib import Path

            import wordllama

            # the wheel keeps its weights in weights/ and tokenizers/ beside the module; naming
            # that folder as the cache finds both and download stays off
            self._model = wordllama.WordLlama.load(
                cache_dir=Path(wordllama.__file__).parent, disable_download=True
            )
        except Exception as exc:  # a broken install or a version that ships no weights
            raise EmbedderUnavailable(f"the semantic embedder cannot load: {exc}") from exc
        self.seed = seed
        self.tfidf_weight = tfidf_weight

    def params(self) -> dict[str, Any]:
        return {"embedder": self.name, "tfidf_weight": self.tfidf_weight, "seed": self.seed}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        from reviewer.clustering.vectorize import normalize

        if not texts:
            return np.zeros((0, 1))
        # placeholders (<id>, <num>) carry no meaning for a word model
        plain = [re.sub(r"<\w+>", " ", t[:3000]).replace("_", " ") for t in texts]
        dense = np.asarray(self._model.embed(plain, norm=False), dtype=np.float64)
        dense[[not t.strip() for t in plain]] = 0.0
        dense = normalize(dense)
        w = min(max(self.tfidf_weight, 0.0), 1.0)
        if w == 0:
            return np.asarray(dense)
        sparse = TfidfSvdEmbedder(seed=self.seed).embed(texts)
        return np.asarray(
            normalize(np.hstack([np.sqrt(1 - w) * dense, np.sqrt(w) * sparse])), dtype=np.float64
        )


def get_embedder(name: str | None = None, *, seed: int = 0, **options: Any) -> Embedder:
    """An embedder by name: ``tfidf`` (default), ``semantic`` (the WordLlama extra),
    ``sentence-transformers`` or ``sentence-transformers:MODEL``.

    Raises ``EmbedderUnavailable`` for an optional backend that cannot run offline, ``ValueError`` for
    an unknown name.
    """
    key = (name or DEFAULT_EMBEDDER).strip()
    if key.lower() in ("tfidf", "tfidf-svd", "default"):
        return TfidfSvdEmbedder(seed=seed, **options)
    if key.lower() in ("semantic", "wordllama"):
        return WordLlamaEmbedder(seed=seed, **options)
    backend, _, model = key.partition(":")
    if backend.lower() in ("sentence-transformers", "sentence_transformers", "st"):
        return SentenceTransformerEmbedder(model or DEFAULT_ST_MODEL, **options)
    raise ValueError(
        f"unknown embedder {name!r}; use 'tfidf', 'semantic' or 'sentence-transformers[:MODEL]'"
    )
