"""Hybrid retrieval over a chunk bank: dense cosine + word-level BM25, fused per query.

Why both channels: a sentence embedder matches paraphrases but blurs rare exact terms (a drug name,
a gene, an acronym), which a word index matches exactly and weights by rarity. On PubMedQA questions
against the bundled abstracts (train split), recall@10 of the source abstract is 0.91 for the dense
channel alone, 0.97 for BM25 alone and 0.995 fused; on the test split 0.92, 0.985 and 0.985
(``benchmarks/bench_rag_retrieval.py``).

The retriever runs on any :class:`~..stores.vector_store.VectorStore` (a numpy bank, or Milvus by URI). A store
that keeps its own word index (``store.word_index(text_key)``: Milvus, see :mod:`..stores.milvus_words`) is
asked for a batch's best lexical rows in one call and for each query's other candidates' BM25, so no
retriever reads every row.
Otherwise the word index is built in memory from the rows' metadata ``text`` when the retriever is made,
read with the store's ``scan``: a compressed-sparse layout in numpy
arrays (per term, the rows it occurs in and their BM25 weight), so a query costs one vector add per
distinct query term. Tokens are NFKC-lower-cased words with English plurals folded, plus single
characters and bigrams inside CJK runs (no word segmenter needed).

Fusion: every candidate from either channel's window is scored on both channels exactly (its cosine
from the bank's vectors, its BM25 from the index), and the channel scores stay on the result, so a
ranking can be explained. Two fusions are implemented; see :data:`DEFAULT_FUSION` for the choice.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..embedding.embedders import Embedder
from ..stores.cosine_bank import CosineBank
from ..stores.vector_store import StoreError, VectorStore
from ..stores.word_tokens import word_tokens

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
_DENSE_SHARE = 8  # a term in at least 1/8 of the rows keeps a dense row of weights (WordIndex._dense_rows) ...
_DENSE_BYTES = 64 << 20  # ... within 64 MB for all of them (16 terms at 1M rows, 160 at 100k)
_BATCH_SCORES = 1 << 23  # BM25 values (queries x rows) one batch holds at most: 32 MB of float32

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
        self._dense = self._dense_rows(df)

    def _dense_rows(self, df: np.ndarray) -> dict[int, np.ndarray]:
        """Every row's weight (0 where absent) of the terms in at least 1/:data:`_DENSE_SHARE` of the rows,
        most frequent first, within :data:`_DENSE_BYTES`.

        Adding such a row is one contiguous vector add, against a scattered add per posting: these few
        words ("the", "of", ...) hold most of the postings a query touches. Adding 0.0 leaves a score as it
        was, so the scores are bitwise those of the postings."""
        dense: dict[int, np.ndarray] = {}
        if not self.count:
            return dense
        common = np.flatnonzero(df * _DENSE_SHARE >= self.count)
        for term in common[np.argsort(-df[common], kind="stable")][: _DENSE_BYTES // (4 * self.count)].tolist():
            row = np.zeros(self.count, dtype=np.float32)
            lo, hi = self.indptr[term], self.indptr[term + 1]
            row[self.rows[lo:hi]] = self.weights[lo:hi]
            dense[term] = row
        return dense

    def _add_term(self, out: np.ndarray, term: int, times: int) -> None:
        """Add ``times`` x the term's weights into one query's scores (each row at most once per term)."""
        dense = self._dense.get(term)
        if dense is not None:
            out += dense if times == 1 else times * dense
            return
        lo, hi = self.indptr[term], self.indptr[term + 1]
        np.add.at(out, self.rows[lo:hi], self.weights[lo:hi] if times == 1 else times * self.weights[lo:hi])

    def scores(self, query: str) -> np.ndarray:
        """(count,) float32 BM25 scores of every text for ``query`` (0 where no query word occurs)."""
        out = np.zeros(self.count, dtype=np.float32)
        for token, times in Counter(word_tokens(query)).items():
            term = self.vocab.get(token)
            if term is not None:
                self._add_term(out, term, times)
        return out

    def scores_batch(self, queries: Sequence[str]) -> np.ndarray:
        """(len(queries), count) float32 BM25 scores of a batch: the sparse product of the queries' term counts
        and the term x row weights, accumulated into one matrix, each query's row as :meth:`scores` fills it
        (so bitwise the same scores, and the batch's memory is one allocation).

        A (query, term) pair adds a common term's dense row (one vector add) or its postings (one
        ``np.add.at`` over the stored arrays: no copy, one pass where ``out[rows] += w`` is a gather and a
        scatter).
        """
        out = np.zeros((len(queries), self.count), dtype=np.float32)
        for i, query in enumerate(queries):
            row = out[i]
            for token, times in Counter(word_tokens(query)).items():
                term = self.vocab.get(token)
                if term is not None:
                    self._add_term(row, term, times)
        return out

    def __len__(self) -> int:
        return self.count


def _top_batch(scores: np.ndarray, m: int) -> list[np.ndarray]:
    """Per row of a (q, n) score matrix, the indices of its ``m`` largest scores, best first, ties by index
    (of equal scores at the cut, the lowest indices): one partition of the batch finds each row's ``m``-th
    largest score, then each row sorts only the entries reaching it."""
    q, n = scores.shape
    m = min(m, n)
    if m <= 0 or q == 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(q)]
    kth = np.partition(scores, n - m, axis=1)[:, n - m]
    out = []
    for row, low in zip(scores, kth.tolist(), strict=True):
        found = np.flatnonzero(row >= low)
        out.append(found[np.lexsort((found, -row[found]))][:m])
    return out


def _top(scores: np.ndarray, m: int) -> np.ndarray:
    """Indices of the ``m`` largest scores, best first, ties by index: :func:`_top_batch` of one row."""
    return _top_batch(scores[None, :], m)[0]


class HybridRetriever:
    """Dense + BM25 retrieval over a chunk store (metadata ``text`` per row), fused by score or rank.

    ``store`` is a :class:`~..stores.vector_store.VectorStore` (then pass ``embedder``, which must be the one the
    store was built with) or a :class:`~..stores.cosine_bank.CosineBank` loaded with its embedder. On the numpy
    bank the dense channel reads the memory-mapped matrix directly; on another store it is one batched
    ``search`` per call plus one ``get`` per query for the candidates' vectors and metadata, and the
    candidates are scored from those vectors exactly as on the bank (so rankings agree up to ties).

    ``fusion="normalized"`` (default): per query, each channel's scores over the candidates are scaled
    to [0, 1] (cosine min-max, BM25 divided by its maximum) and summed with the weights.
    ``fusion="rrf"``: ``dense_weight / (60 + dense rank) + lexical_weight / (60 + lexical rank)``, a
    channel contributing only where the chunk is in its window. The window per channel is
    ``max(5 * k, window)`` chunks, widened when ``dedupe_by`` leaves fewer than ``k``.

    A store's own word index (Milvus) is always current. An in-memory one covers the rows present when the
    retriever was made; after adding rows call :meth:`refresh` (rows it does not cover score 0 on the
    lexical channel until then). After rows of a numpy bank were deleted it is rebuilt on the next search;
    on other stores call :meth:`refresh` after replacing or deleting rows.
    """

    def __init__(
        self,
        store: VectorStore | CosineBank,
        *,
        embedder: Embedder | None = None,
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
        self._rows = _rows_of(store)
        self.embedder = embedder if embedder is not None else self._rows.embedder
        if self.embedder is not None:
            info = self._rows.store.describe()
            if (self.embedder.id, self.embedder.dim) != (info.embedder_id, info.dim):
                raise ValueError(f"{info.uri}: store holds vectors of embedder {info.embedder_id!r} (dim {info.dim}), "
                                 f"not {self.embedder.id!r} (dim {self.embedder.dim})")
        self.lexical_weight = lexical_weight
        self.dense_weight = dense_weight
        self.fusion: Fusion = fusion
        self.window = window
        self.text_key = text_key
        self.index = self._build_index()

    # -- what it runs on -------------------------------------------------------------------------

    @property
    def store(self) -> VectorStore:
        """The vector store the dense channel searches."""
        return self._rows.store

    def describe(self) -> Any:
        """The store's :class:`~..stores.vector_store.StoreInfo` (backend, secret-free URI, embedder id, dim)."""
        return self._rows.store.describe()

    @property
    def ids(self) -> list[str]:
        """The ids of the indexed rows, in index order (the rows ``index`` refers to). On a store that keeps
        its own word index this reads every id once (a scan), so ask only when all are needed."""
        if not isinstance(self.index, WordIndex) and len(self._ids) < self._rows.count():
            for batch in self._rows.store.scan(4096):
                for x in batch.ids:
                    self._rows.row(x, self._ids)
        return list(self._ids)

    def row_metadata(self, rows: Sequence[int]) -> list[dict[str, Any]]:
        """Metadata of rows in index order (as in :attr:`ids`)."""
        rows = [int(r) for r in rows]
        self._rows.prefetch(rows, self._ids)
        return [self._rows.metadata(r, self._ids) for r in rows]

    def _build_index(self) -> Any:
        words = self._rows.word_index(self.text_key)
        if words is not None:  # the store keeps it next to its rows: rows get numbers as they are found
            self._ids = []
            self._rows.indexed(self._ids, store_words=True)
            logger.info("word index of %s: the store's own (%s)", self._rows.where, getattr(words, "kind", "?"))
            return words
        ids: list[str] = []
        texts: list[str] = []
        for batch_ids, batch_meta in self._rows.scan():
            ids.extend(batch_ids)
            texts.extend(str(m.get(self.text_key) or "") for m in batch_meta)
        self._ids = ids
        self._rows.indexed(ids)
        index = WordIndex(texts)
        logger.info("word index over %d chunks of %s: %d terms", len(texts), self._rows.where, len(index.vocab))
        return index

    def refresh(self) -> HybridRetriever:
        """Re-index when the store's rows changed since the index was built (count, or a numpy bank's rows);
        a store's own word index is always current."""
        if isinstance(self.index, WordIndex) and (self._rows.count() != len(self.index) or self._rows.stale(self._ids)):
            self.index = self._build_index()
        return self

    # -- search ----------------------------------------------------------------------------------

    def search(self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None) -> list[list[ScoredChunk]]:
        """Top-``k`` fused chunks per query, best first; ``dedupe_by`` (e.g. "doc_id") keeps the best per value.

        The dense windows of all queries come from one batched store search (one pass over the matrix on
        the numpy bank); a query whose window dedupe leaves short is widened on its own, so each result is
        the same as searching that query alone.
        """
        queries = list(queries)
        if not queries or k <= 0:
            return [[] for _ in queries]
        self._check_rows()
        vectors = self._embed(queries)
        window = max(5 * k, self.window)
        dense_windows = self._rows.dense_windows(vectors, window, self._ids)
        results: list[list[ScoredChunk]] = []
        try:
            for group in self._query_groups(len(queries)):
                lexical, lexical_tops = self._lexical_batch([queries[i] for i in group], window)
                if not isinstance(self.index, WordIndex):
                    self._score_candidates([queries[i] for i in group], [dense_windows[i] for i in group], lexical)
                results.extend(self._search_one(queries[i], vectors[i], dense_windows[i], window, k, dedupe_by,
                                                lexical_all, top)
                               for i, lexical_all, top in zip(group, lexical, lexical_tops, strict=True))
            return results
        finally:
            self._rows.forget()

    def _search_one(self, query: str, vector: np.ndarray, dense_rows: list[int], window: int, k: int,
                    dedupe_by: str | None, lexical_all: np.ndarray, lexical_top: np.ndarray) -> list[ScoredChunk]:
        """Fuse one query's windows, widening both (deeper dense search) while dedupe leaves fewer than ``k``."""
        while True:
            fused = self._fuse(vector, dense_rows, lexical_all, lexical_top)
            kept = self._chunks(fused, dedupe_by, k)
            if len(kept) >= k or window >= self._rows.count():
                return kept
            window *= 4  # deduplication left fewer than k: look deeper
            dense_rows = self._rows.dense_windows(vector[None, :], window, self._ids)[0]
            if not isinstance(self.index, WordIndex):
                lexical = self._lexical_batch([query], window)[0]
                self._score_candidates([query], [dense_rows], lexical)
                lexical_all = lexical[0]
            lexical_top = _top(lexical_all, window)

    def search_dense(
        self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None
    ) -> list[list[ScoredChunk]]:
        """Baseline: the dense channel alone (``lexical`` is None)."""
        queries = list(queries)
        if not queries:
            return []
        hits = self._rows.dense_hits(self._embed(queries), k, dedupe_by)
        return [[ScoredChunk(x, score, score, None, meta) for x, score, meta in row] for row in hits]

    def search_lexical(
        self, queries: Sequence[str], k: int = 10, *, dedupe_by: str | None = None
    ) -> list[list[ScoredChunk]]:
        """Baseline: BM25 alone, no embedding (``dense`` is None); chunks without a query word are left out."""
        self._check_rows()
        queries = list(queries)
        results = []
        first_window = max(5 * k, self.window) if dedupe_by else k
        try:
            for group in self._query_groups(len(queries)):
                batch, tops = self._lexical_batch([queries[i] for i in group], first_window)
                for i, scores, top in zip(group, batch, tops, strict=True):
                    window = first_window
                    while True:
                        rows = [int(r) for r in top if scores[r] > 0]
                        ranked = [(r, float(scores[r]), None, float(scores[r])) for r in rows]
                        self._rows.prefetch(rows, self._ids)
                        kept = self._chunks(ranked, dedupe_by, k)
                        if len(kept) >= k or len(rows) < window:
                            break
                        window *= 4
                        if not isinstance(self.index, WordIndex):  # a store's index: asked per width
                            scores = self._lexical_batch([queries[i]], window)[0][0]
                        top = _top(scores, window)
                    results.append(kept)
        finally:
            self._rows.forget()
        return results

    # -- internals -------------------------------------------------------------------------------

    def _check_rows(self) -> None:
        """Rebuild the index if rows it covers were deleted or moved (a numpy bank's splice)."""
        if self._rows.stale(self._ids):
            self.index = self._build_index()

    def _embed(self, queries: list[str]) -> np.ndarray:
        if self.embedder is None:
            raise ValueError(f"{self._rows.where}: no embedder given (pass embedder=, or load the bank with one)")
        return np.asarray(self.embedder.embed(queries), dtype=np.float32)

    def _query_groups(self, n: int) -> list[range]:
        """Consecutive groups of query positions whose BM25 matrix (queries x rows) stays within
        :data:`_BATCH_SCORES` values, so a large batch on a large bank does not hold it all at once."""
        size = max(1, _BATCH_SCORES // max(self._rows.count(), 1))
        return [range(a, min(n, a + size)) for a in range(0, n, size)]

    def _lexical_batch(self, queries: list[str], window: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """(BM25 of every row per query, each query's best ``window`` rows best first): the in-memory index
        scores the whole batch in one sparse product; a store's own index returns each query's best
        ``window`` rows in one call (the other rows 0 here; :meth:`_score_candidates` fills in the ones fused)."""
        if isinstance(self.index, WordIndex):
            scores = self.index.scores_batch(queries)
            missing = self._rows.count() - scores.shape[1]
            if missing > 0:  # rows added since the index was built score 0 until refresh()
                scores = np.concatenate([scores, np.zeros((len(queries), missing), dtype=np.float32)], axis=1)
        else:
            tops = self.index.top_batch(queries, window)
            rows = [[self._rows.row(x, self._ids) for x, _ in hits] for hits in tops]  # may number new rows
            scores = np.zeros((len(queries), len(self._ids)), dtype=np.float32)
            for line, hits, at in zip(scores, tops, rows, strict=True):
                line[at] = [score for _, score in hits]
        return scores, _top_batch(scores, window)

    def _score_candidates(self, queries: list[str], dense_rows: list[list[int]], lexical: np.ndarray) -> None:
        """A store's own index: the BM25 of each query's dense candidates outside its lexical window, written
        into ``lexical`` (one call for the batch), so fusion scores every candidate on both channels."""
        asked = [[r for r in dict.fromkeys(dense) if line[r] == 0]  # the lexical window's are scored already
                 for line, dense in zip(lexical, dense_rows, strict=True)]
        found = self.index.scores_batch(queries, [[self._ids[r] for r in rows] for rows in asked])
        for line, rows, held in zip(lexical, asked, found, strict=True):
            for r in rows:
                line[r] = held.get(self._ids[r], 0.0)

    def _fuse(
        self, vector: np.ndarray, dense_rows: list[int], lexical_all: np.ndarray, lexical_top: np.ndarray,
    ) -> list[tuple[int, float, float, float]]:
        """(row, fused, dense, lexical) for the union of both windows (dense: the store's best ``window``
        rows, best first; lexical: ``lexical_top``, the best ``window`` rows of ``lexical_all``), best fused
        first."""
        lexical_rows = [int(r) for r in lexical_top if lexical_all[r] > 0]
        rows = np.asarray(list(dict.fromkeys(dense_rows + lexical_rows)), dtype=np.int64)
        if rows.size == 0:
            return []
        dense = self._rows.dense(rows, vector / max(float(np.linalg.norm(vector)), 1e-12), self._ids)
        if int(rows.max()) < len(lexical_all):
            lexical = lexical_all[rows]
        else:  # rows the store added after the lexical scores were taken: BM25 0
            missing = np.zeros(int(rows.max()) + 1 - len(lexical_all), dtype=np.float32)
            lexical = np.concatenate([lexical_all, missing])[rows]
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
        row_list, dense_list, lexical_list = rows.tolist(), dense.tolist(), lexical.tolist()  # Python floats: fast
        order = sorted(range(len(row_list)), key=lambda i: (-fused[i], row_list[i]))
        return [(row_list[i], float(fused[i]), dense_list[i], lexical_list[i]) for i in order]

    def _chunks(
        self, ranked: list[tuple[int, float, float | None, float | None]], dedupe_by: str | None, k: int
    ) -> list[ScoredChunk]:
        """The first ``k`` of ``ranked`` (row, score, dense, lexical) as ScoredChunks, best per ``dedupe_by``."""
        out: list[ScoredChunk] = []
        seen: set[Any] = set()
        for row, score, dense, lexical in ranked:
            metadata = self._rows.metadata(row, self._ids)
            if dedupe_by is not None:
                group = metadata.get(dedupe_by, ("row", row))  # rows lacking the key are never merged
                group = group if isinstance(group, str | int | float | tuple) else repr(group)
                if group in seen:
                    continue
                seen.add(group)
            out.append(ScoredChunk(self._rows.id_of(row, self._ids), score, dense, lexical, metadata))
            if len(out) == k:
                break
        return out

    def __deepcopy__(self, memo: dict) -> HybridRetriever:
        return self

    def __repr__(self) -> str:
        return (f"HybridRetriever({self._rows.label()}, fusion={self.fusion!r}, dense_weight={self.dense_weight}, "
                f"lexical_weight={self.lexical_weight})")


# ---------------------------------------------------------------------------------------------
# Where the rows come from: a numpy bank read directly, or any store through the protocol. Rows are
# numbered in the order the word index was built (the bank's row order; the store's scan order), and
# rows the dense channel finds that the index does not cover get the next numbers.


def _rows_of(store: Any) -> _BankRows | _StoreRows:
    from ..stores.numpy_store import NumpyStore

    if isinstance(store, CosineBank):
        return _BankRows(store, None)
    if isinstance(store, NumpyStore):
        return _BankRows(store.bank, store)
    if isinstance(store, VectorStore):
        return _StoreRows(store)
    raise TypeError(f"HybridRetriever needs a VectorStore or a CosineBank, got {type(store).__name__}")


class _BankRows:
    """The numpy bank: windows from one matrix product, candidates scored from the memory-mapped rows."""

    def __init__(self, bank: CosineBank, store: Any) -> None:
        self.bank = bank
        self._store = store
        self.embedder = bank.embedder
        self.where = bank.directory

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            from ..stores.numpy_store import NumpyStore

            self._store = NumpyStore(self.bank)
        return self._store

    def label(self) -> str:
        return repr(self.bank)

    def scan(self) -> Any:
        return ((b.ids, b.metadata) for b in self.bank.iter_rows(4096))

    def indexed(self, ids: list[str], store_words: bool = False) -> None:
        pass

    def word_index(self, text_key: str) -> Any:
        return None  # the bank's rows are read directly: the in-memory index is the fast one

    def count(self) -> int:
        return len(self.bank)

    def stale(self, ids: list[str]) -> bool:
        """Rows the index covers were deleted or moved: the bank is shorter, or its last indexed id moved."""
        n = len(ids)
        return len(self.bank) < n or (n > 0 and self.bank.id_at(n - 1) != ids[n - 1])

    def dense_windows(self, vectors: np.ndarray, window: int, ids: list[str]) -> list[list[int]]:
        return [rows for rows, _ in self.bank.search_rows(vectors, k=window, min_score=None)]

    def dense(self, rows: np.ndarray, unit: np.ndarray, ids: list[str]) -> np.ndarray:
        return self.bank.vectors[rows] @ unit

    def dense_hits(self, vectors: np.ndarray, k: int, dedupe_by: str | None) -> list[list[tuple[str, float, dict]]]:
        return [[(h.id, h.score, h.metadata) for h in row]
                for row in self.bank.search(vectors, k=k, min_score=None, dedupe_by=dedupe_by)]

    def prefetch(self, rows: Sequence[int], ids: list[str]) -> None:
        pass

    def forget(self) -> None:
        pass

    def metadata(self, row: int, ids: list[str]) -> dict[str, Any]:
        return self.bank.metadata(row)

    def id_of(self, row: int, ids: list[str]) -> str:
        return ids[row] if row < len(ids) else self.bank.id_at(row)


class _StoreRows:
    """Any VectorStore: windows from ``search``, candidates' vectors and metadata from ``get`` (one call per
    query, cached for the duration of one retriever call)."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self.bank = store
        self.embedder = None
        self.where = store.describe().uri
        self._row_of: dict[str, int] = {}
        self._store_words = False
        self._vectors: dict[int, np.ndarray] = {}
        self._meta: dict[int, dict[str, Any]] = {}

    def label(self) -> str:
        return repr(self.store)

    def scan(self) -> Any:
        return iter(self.store.scan(1000))

    def indexed(self, ids: list[str], store_words: bool = False) -> None:
        self._row_of = {x: r for r, x in enumerate(ids)}
        self._store_words = store_words
        self.forget()

    def word_index(self, text_key: str) -> Any:
        keeper = getattr(self.store, "word_index", None)
        if not callable(keeper):
            return None
        try:
            return keeper(text_key)
        except StoreError as e:  # e.g. a token that may read but not create collections: index in memory
            logger.warning("%s: no word index kept by the store (%s); building one in memory", self.where, e)
            return None

    def count(self) -> int:
        """Rows to rank: the store's count when it keeps the word index, else the rows indexed here."""
        return self.store.count() if self._store_words else len(self._row_of)

    def stale(self, ids: list[str]) -> bool:
        return False

    def row(self, id: str, ids: list[str]) -> int:
        row = self._row_of.get(id)
        if row is None:  # added to the store after the index was built
            row = self._row_of[id] = len(ids)
            ids.append(id)
        return row

    def dense_windows(self, vectors: np.ndarray, window: int, ids: list[str]) -> list[list[int]]:
        out = []
        for hits in self.store.search(vectors, k=window):
            rows = []
            for hit in hits:
                row = self.row(hit.id, ids)
                self._meta[row] = hit.metadata
                rows.append(row)
            out.append(rows)
        return out

    def prefetch(self, rows: Sequence[int], ids: list[str], vectors: bool = False) -> None:
        missing = [r for r in rows if r not in self._meta or (vectors and r not in self._vectors)]
        if missing:
            for got in self.store.get([ids[r] for r in missing]):
                row = self._row_of[got.id]
                self._vectors[row] = got.vector
                self._meta[row] = got.metadata

    def dense(self, rows: np.ndarray, unit: np.ndarray, ids: list[str]) -> np.ndarray:
        self.prefetch(rows.tolist(), ids, vectors=True)
        dim = len(unit)
        matrix = np.stack([self._vectors.get(int(r), np.zeros(dim, np.float32)) for r in rows.tolist()])
        return matrix.astype(np.float32, copy=False) @ unit  # a row deleted since the index: cosine 0

    def dense_hits(self, vectors: np.ndarray, k: int, dedupe_by: str | None) -> list[list[tuple[str, float, dict]]]:
        out = []
        for q in vectors:
            window = k if dedupe_by in (None, "id") else max(4 * k, 64)
            while True:
                hits = self.store.search(q, k=window)[0]
                kept, seen = [], set()
                for hit in hits:
                    if dedupe_by not in (None, "id"):
                        group = hit.metadata.get(dedupe_by, ("id", hit.id))
                        group = group if isinstance(group, str | int | float | tuple) else repr(group)
                        if group in seen:
                            continue
                        seen.add(group)
                    kept.append((hit.id, hit.score, hit.metadata))
                    if len(kept) == k:
                        break
                if len(kept) >= k or len(hits) < window:
                    break
                window *= 4
            out.append(kept)
        return out

    def forget(self) -> None:
        self._vectors.clear()
        self._meta.clear()

    def metadata(self, row: int, ids: list[str]) -> dict[str, Any]:
        if row not in self._meta:
            self.prefetch([row], ids)
        return self._meta.get(row, {})

    def id_of(self, row: int, ids: list[str]) -> str:
        return ids[row]
