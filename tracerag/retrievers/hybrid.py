"""Hybrid retrieval over a chunk bank: dense cosine + word-level BM25, fused per query.

Why both channels: a sentence embedder matches paraphrases but blurs rare exact terms (a drug name,
a gene, an acronym), which a word index matches exactly and weights by rarity. On PubMedQA questions
against the bundled abstracts (train split), recall@10 of the source abstract is 0.91 for the dense
channel alone, 0.97 for BM25 alone and 0.995 fused; on the test split 0.92, 0.985 and 0.985
(``benchmarks/bench_rag_retrieval.py``).

The word index is built in memory from the bank's metadata ``text`` when the retriever is made: a
compressed-sparse layout in numpy arrays (per term, the rows it occurs in and their BM25 weight), so
a query costs one vector add per distinct query term. Tokens are NFKC-lower-cased words with English
plurals folded, plus single characters and bigrams inside CJK runs (no word segmenter needed).

Fusion: every candidate from either channel's window is scored on both channels exactly (its cosine
from the bank's vectors, its BM25 from the index), and the channel scores stay on the result, so a
ranking can be explained. Two fusions are implemented; see :data:`DEFAULT_FUSION` for the choice.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .cosine_bank import CosineBank

__all__ = ["DEFAULT_DENSE_WEIGHT", "DEFAULT_FUSION", "DEFAULT_LEXICAL_WEIGHT", "HybridRetriever", "ScoredChunk",
           "WordIndex", "word_tokens"]

logger = logging.getLogger(__name__)

Fusion = Literal["rrf", "normalized"]

# Normalised-score fusion (dense 1 : lexical 2) won on the PubMedQA dev split (99 questions). Nearly
# every fusion ties at recall@10 0.990 there, so the choice rests on the rank of the source abstract:
# MRR@10 0.968 and recall@1 0.949, against 0.933 / 0.889 for the best reciprocal-rank fusion (1 : 3) and
# 0.915 / 0.879 for plain RRF (1 : 1); the train split agrees (MRR 0.963 vs 0.927 for RRF 1 : 2). Why:
# RRF keeps only ranks, and on these questions the dense channel's top ranks are a crowd of near-equal
# cosines while BM25's margin over the runner-up is informative. ``fusion="rrf"`` stays available: it
# needs no score scaling, which may suit embedders or corpora unlike these.
DEFAULT_FUSION: Fusion = "normalized"
DEFAULT_DENSE_WEIGHT = 1.0
DEFAULT_LEXICAL_WEIGHT = 2.0
RRF_K = 60  # the usual reciprocal-rank constant: ranks 1 and 10 weigh 1/61 vs 1/70, a smooth blend

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")
_HAS_CJK_RE = re.compile(rf"[{_CJK}]")
_WORD_RE = re.compile(r"[^\W_]+")


def _fold_plural(word: str) -> str:
    """English plural to singular, crudely (studies -> study, boxes -> box, weekends -> weekend).

    Applied to documents and queries alike, so a wrong fold ("bias" -> "bia") still matches itself; on
    the PubMedQA dev split it lifts BM25 recall@10 from 0.980 to 0.990 (e.g. "weekends" vs "weekend").
    """
    if len(word) <= 3 or word[-1] != "s" or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    return word[:-1]


def word_tokens(text: str) -> list[str]:
    """Lower-cased words (plurals folded) and, inside CJK runs, characters and character bigrams."""
    text = unicodedata.normalize("NFKC", text).lower()
    if not _HAS_CJK_RE.search(text):  # the common case, a third faster
        return [_fold_plural(w) for w in _WORD_RE.findall(text)]
    tokens: list[str] = []
    for cjk, word in _TOKEN_RE.findall(text):
        if word:
            tokens.append(_fold_plural(word))
        else:
            tokens.extend(cjk)
            tokens.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
    return tokens


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """One retrieved chunk: ``score`` ranks it; ``dense`` (cosine) and ``lexical`` (BM25) explain it.

    A channel score is None only in the single-channel modes, for the channel that was not run.
    """

    id: str
    score: float
    dense: float | None
    lexical: float | None
    metadata: dict[str, Any] = field(hash=False)

    @property
    def doc_id(self) -> str | None:
        return self.metadata.get("doc_id")


class WordIndex:
    """BM25 over a fixed list of texts, held as per-term postings in numpy arrays (no scipy)."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        token_counts: list[int] = []
        for text in texts:
            tokens = word_tokens(text)
            token_counts.append(len(tokens))
            term_ids.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
        n = max(len(texts), 1)
        lengths = np.asarray(token_counts, dtype=np.float32)
        terms = np.asarray(term_ids, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths.astype(np.int64))
        keys, tf = np.unique(terms * n + rows, return_counts=True)  # sorted by term, then row
        terms, rows = keys // n, keys % n
        df = np.bincount(terms, minlength=len(vocab))
        idf = np.log1p((len(texts) - df + 0.5) / (df + 0.5))
        avg_length = float(lengths.mean()) if len(texts) and lengths.mean() > 0 else 1.0
        norm = k1 * (1 - b + b * lengths[rows] / avg_length)
        self.vocab = vocab
        self.indptr = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        self.rows = rows.astype(np.int32)
        self.weights = (idf[terms] * tf * (k1 + 1) / (tf + norm)).astype(np.float32)
        self.count = len(texts)

    def scores(self, query: str) -> np.ndarray:
        """(count,) float32 BM25 scores of every text for ``query`` (0 where no query word occurs)."""
        out = np.zeros(self.count, dtype=np.float32)
        for token, times in Counter(word_tokens(query)).items():
            term = self.vocab.get(token)
            if term is None:
                continue
            lo, hi = self.indptr[term], self.indptr[term + 1]
            out[self.rows[lo:hi]] += times * self.weights[lo:hi]  # a term lists each row once
        return out

    def __len__(self) -> int:
        return self.count


def _top(scores: np.ndarray, m: int) -> np.ndarray:
    """Indices of the ``m`` largest scores, best first, ties by index."""
    m = min(m, scores.shape[0])
    if m <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, m - 1)[:m] if m < scores.shape[0] else np.arange(scores.shape[0])
    return part[np.lexsort((part, -scores[part]))]


class HybridRetriever:
    """Dense + BM25 retrieval over a chunk bank (metadata ``text`` per row), fused by score or rank.

    ``fusion="normalized"`` (default): per query, each channel's scores over the candidates are scaled
    to [0, 1] (cosine min-max, BM25 divided by its maximum) and summed with the weights.
    ``fusion="rrf"``: ``dense_weight / (60 + dense rank) + lexical_weight / (60 + lexical rank)``, a
    channel contributing only where the chunk is in its window. The window per channel is
    ``max(5 * k, window)`` chunks, widened when ``dedupe_by`` leaves fewer than ``k``.

    The word index covers the rows present when the retriever was made; after appending to the bank
    call :meth:`refresh` (rows it does not cover score 0 on the lexical channel until then).
    """

    def __init__(
        self,
        bank: CosineBank,
        *,
        lexical_weight: float = DEFAULT_LEXICAL_WEIGHT,
        dense_weight: float = DEFAULT_DENSE_WEIGHT,
        fusion: Fusion = DEFAULT_FUSION,
        window: int = 50,
        text_key: str = "text",
    ) -> None:
        if fusion not in ("rrf", "normalized"):
            raise ValueError(f"unknown fusion {fusion!r}; choose 'rrf' or 'normalized'")
        if lexical_weight < 0 or dense_weight < 0 or lexical_weight + dense_weight == 0:
            raise ValueError("channel weights must be non-negative and not both zero")
        self.bank = bank
        self.lexical_weight = lexical_weight
        self.dense_weight = dense_weight
        self.fusion: Fusion = fusion
        self.window = window
        self.text_key = text_key
        self.index = self._build_index()

    def _build_index(self) -> WordIndex:
        self._ids = self.bank.ids
        texts = [str(self.bank.metadata(row).get(self.text_key) or "") for row in range(len(self._ids))]
        index = WordIndex(texts)
        logger.info("word index over %d chunks of %s: %d terms", len(texts), self.bank.directory, len(index.vocab))
        return index

    def refresh(self) -> HybridRetriever:
        """Re-index when the bank grew since the index was built (rows are append-only)."""
        if len(self.bank) != len(self.index):
            self.index = self._build_index()
        return self

    # -- search ----------------------------------------------------------------------------------

    def search(self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None) -> list[list[ScoredChunk]]:
        """Top-``k`` fused chunks per query, best first; ``dedupe_by`` (e.g. "doc_id") keeps the best per value.

        The dense windows of all queries come from one batched bank search (one pass over the matrix);
        a query whose window dedupe leaves short is widened on its own, so each result is the same as
        searching that query alone.
        """
        queries = list(queries)
        if not queries or k <= 0:
            return [[] for _ in queries]
        vectors = self._embed(queries)
        window = max(5 * k, self.window)
        dense_windows = self.bank.search_rows(vectors, k=window, min_score=None)
        return [self._search_one(query, vector, dense_rows, window, k, dedupe_by)
                for query, vector, (dense_rows, _) in zip(queries, vectors, dense_windows, strict=True)]

    def _search_one(self, query: str, vector: np.ndarray, dense_rows: list[int], window: int, k: int,
                    dedupe_by: str | None) -> list[ScoredChunk]:
        """Fuse one query's windows, widening both (deeper dense search) while dedupe leaves fewer than ``k``."""
        lexical_all = self._lexical_scores(query)
        while True:
            kept = self._chunks(self._fuse(vector, dense_rows, lexical_all, window), dedupe_by, k)
            if len(kept) >= k or window >= len(self.bank):
                return kept
            window *= 4  # deduplication left fewer than k: look deeper
            dense_rows = self.bank.search_rows(vector, k=window, min_score=None)[0][0]

    def search_dense(
        self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None
    ) -> list[list[ScoredChunk]]:
        """Baseline: the dense channel alone (``lexical`` is None)."""
        queries = list(queries)
        if not queries:
            return []
        hits = self.bank.search(self._embed(queries), k=k, min_score=None, dedupe_by=dedupe_by)
        return [[ScoredChunk(h.id, h.score, h.score, None, h.metadata) for h in row] for row in hits]

    def search_lexical(
        self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None
    ) -> list[list[ScoredChunk]]:
        """Baseline: BM25 alone, no embedding (``dense`` is None); chunks without a query word are left out."""
        results = []
        for query in queries:
            scores = self._lexical_scores(query)
            window = max(5 * k, self.window) if dedupe_by else k
            while True:
                rows = [int(r) for r in _top(scores, window) if scores[r] > 0]
                ranked = [(r, float(scores[r]), None, float(scores[r])) for r in rows]
                kept = self._chunks(ranked, dedupe_by, k)
                if len(kept) >= k or len(rows) < window:
                    break
                window *= 4
            results.append(kept)
        return results

    # -- internals -------------------------------------------------------------------------------

    def _embed(self, queries: list[str]) -> np.ndarray:
        embedder = self.bank.embedder
        if embedder is None:
            raise ValueError(f"bank {self.bank.directory} was loaded without an embedder; pass one to CosineBank.load")
        return np.asarray(embedder.embed(queries), dtype=np.float32)

    def _lexical_scores(self, query: str) -> np.ndarray:
        scores = self.index.scores(query)
        missing = len(self.bank) - len(scores)
        return np.concatenate([scores, np.zeros(missing, dtype=np.float32)]) if missing > 0 else scores

    def _fuse(
        self, vector: np.ndarray, dense_rows: list[int], lexical_all: np.ndarray, window: int
    ) -> list[tuple[int, float, float, float]]:
        """(row, fused, dense, lexical) for the union of both windows (dense: the bank's best ``window``
        rows, best first), best fused first."""
        lexical_rows = [int(r) for r in _top(lexical_all, window) if lexical_all[r] > 0]
        rows = np.asarray(list(dict.fromkeys(dense_rows + lexical_rows)), dtype=np.int64)
        if rows.size == 0:
            return []
        dense = self.bank.vectors[rows] @ (vector / max(float(np.linalg.norm(vector)), 1e-12))
        lexical = lexical_all[rows]
        if self.fusion == "rrf":
            dense_rank = {r: i for i, r in enumerate(dense_rows, start=1)}
            lexical_rank = {r: i for i, r in enumerate(lexical_rows, start=1)}
            fused = [
                (self.dense_weight / (RRF_K + dense_rank[r]) if r in dense_rank else 0.0)
                + (self.lexical_weight / (RRF_K + lexical_rank[r]) if r in lexical_rank else 0.0)
                for r in rows.tolist()
            ]
        else:
            spread = float(dense.max() - dense.min())
            dense_norm = (dense - dense.min()) / spread if spread > 0 else np.ones_like(dense)
            top_lexical = float(lexical.max())
            lexical_norm = lexical / top_lexical if top_lexical > 0 else np.zeros_like(lexical)
            fused = (self.dense_weight * dense_norm + self.lexical_weight * lexical_norm).tolist()
        order = sorted(range(len(rows)), key=lambda i: (-fused[i], rows[i]))
        return [(int(rows[i]), float(fused[i]), float(dense[i]), float(lexical[i])) for i in order]

    def _chunks(
        self, ranked: list[tuple[int, float, float | None, float | None]], dedupe_by: str | None, k: int
    ) -> list[ScoredChunk]:
        """The first ``k`` of ``ranked`` (row, score, dense, lexical) as ScoredChunks, best per ``dedupe_by``."""
        out: list[ScoredChunk] = []
        seen: set[Any] = set()
        for row, score, dense, lexical in ranked:
            metadata = self.bank.metadata(row)
            if dedupe_by is not None:
                group = metadata.get(dedupe_by, ("row", row))  # rows lacking the key are never merged
                group = group if isinstance(group, str | int | float | tuple) else repr(group)
                if group in seen:
                    continue
                seen.add(group)
            if row >= len(self._ids):  # the bank grew since the ids were read
                self._ids = self.bank.ids
            out.append(ScoredChunk(self._ids[row], score, dense, lexical, metadata))
            if len(out) == k:
                break
        return out

    def __deepcopy__(self, memo: dict) -> HybridRetriever:
        return self

    def __repr__(self) -> str:
        return (f"HybridRetriever({self.bank!r}, fusion={self.fusion!r}, dense_weight={self.dense_weight}, "
                f"lexical_weight={self.lexical_weight})")

