"""Hybrid retrieval over a chunk bank: dense cosine + word-level BM25, fused per query.

Why both channels: a sentence embedder matches paraphrases but blurs rare exact terms (a drug name,
a gene, an acronym), which a word index matches exactly and weights by rarity. On PubMedQA questions
against the bundled abstracts (train split), recall@10 of the source abstract is 0.91 for the dense
channel alone, 0.97 for BM25 alone and 0.995 fused; on the test split 0.92, 0.985 and 0.985
(``benchmarks/bench_rag_retrieval.py``).

The retriever runs on any :class:`~..stores.vector_store.VectorStore` (a numpy bank, or Milvus by URI), reaching
its rows through :mod:`.store_rows`. A store that keeps its own word index (``store.word_index(text_key)``:
Milvus, see :mod:`..stores.milvus_words`) is asked for a batch's best lexical rows in one call and for each
query's other candidates' BM25, so no retriever reads every row. Otherwise the word index
(:class:`~.word_index.WordIndex`) is built in memory from the rows' metadata ``text`` when the retriever is
made, read with the store's ``scan``.

Fusion: every candidate from either channel's window is scored on both channels exactly (its cosine
from the bank's vectors, its BM25 from the index), and the channel scores stay on the result, so a
ranking can be explained. Two fusions are implemented; see :data:`DEFAULT_FUSION` for the choice.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, repeat
from typing import Any, Literal

import numpy as np

from ..embedding.embedders import Embedder
from ..errors import InvalidValue
from ..stores.cosine_bank import CosineBank
from ..stores.read_on_first_use import ReadOnFirstUse
from ..stores.vector_store import VectorStore
from .store_rows import store_rows
from .top_rows import best_rows
from .word_index import WordIndex

__all__ = ["DEFAULT_DENSE_WEIGHT", "DEFAULT_FUSION", "DEFAULT_LEXICAL_WEIGHT", "HybridRetriever", "ScoredChunk"]

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
_BATCH_SCORES = 1 << 23  # BM25 values (queries x rows) one batch holds at most: 32 MB of float32


@dataclass(frozen=True)
class ScoredChunk:
    """One retrieved chunk: ``score`` ranks it; ``dense`` (cosine) and ``lexical`` (BM25) explain it.

    A channel score is None only in the single-channel modes, for the channel that was not run. A lexical
    search over a numpy bank decodes ``metadata`` when it is first read (equality, repr, pickling and
    ``dataclasses.asdict`` read it too).
    """

    __slots__ = ("id", "score", "dense", "lexical", "_metadata", "_reader")  # _reader: decodes a bank's row
    id: str
    score: float
    dense: float | None
    lexical: float | None
    metadata: dict[str, Any] = ReadOnFirstUse(reader="_reader")  # type: ignore[assignment]

    def __hash__(self) -> int:
        return hash((self.id, self.score, self.dense, self.lexical))

    def __reduce__(self) -> tuple:
        return (type(self), (self.id, self.score, self.dense, self.lexical, self.metadata))

    @property
    def doc_id(self) -> str | None:
        return self.metadata.get("doc_id")


_SLOTS = [ScoredChunk.__dict__[name].__set__ for name in ("id", "score", "dense", "lexical", "_metadata", "_reader")]


def _make_chunks(*fields: Iterable[Any]) -> list[ScoredChunk]:
    """``[ScoredChunk(id, score, dense, lexical, metadata) for ... in zip(*fields)]`` without the frozen
    dataclass's ``__init__`` or a Python call per chunk: the objects made, then each field set through its slot
    by ``map`` (a loop in C), a third of the cost where a batch of lexical hits makes hundreds. A sixth field,
    the reader of a bank's rows, lets ``metadata`` be each chunk's row number, decoded when first read."""
    ids = list(fields[0])
    chunks = list(map(object.__new__, repeat(ScoredChunk, len(ids))))
    for set_slot, values in zip(_SLOTS, (ids, *fields[1:]), strict=False):
        deque(map(set_slot, chunks, values), maxlen=0)
    return chunks


def _top_batch(scores: np.ndarray, m: int) -> np.ndarray:
    """(q, min(m, n)): per row of a (q, n) score matrix, the indices of its ``m`` largest scores, best first,
    ties by index (of equal scores at the cut, the lowest indices): :func:`~.top_rows.best_rows`."""
    return best_rows(scores, m)[0]


def _top(scores: np.ndarray, m: int) -> np.ndarray:
    """Indices of the ``m`` largest scores, best first, ties by index: :func:`_top_batch` of one row."""
    return best_rows(scores[None, :], m)[0][0]


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
            raise InvalidValue(f"unknown fusion {fusion!r}; choose 'rrf' or 'normalized'")
        if lexical_weight < 0 or dense_weight < 0 or lexical_weight + dense_weight == 0:
            raise InvalidValue("channel weights must be non-negative and not both zero")
        self._rows = store_rows(store)
        self.embedder = embedder if embedder is not None else self._rows.embedder
        if self.embedder is not None:
            info = self._rows.store.describe()
            if (self.embedder.id, self.embedder.dim) != (info.embedder_id, info.dim):
                raise InvalidValue(f"{info.uri}: store holds vectors of embedder {info.embedder_id!r} "
                                   f"(dim {info.dim}), not {self.embedder.id!r} (dim {self.embedder.dim})")
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
                lexical, lexical_tops, _ = self._lexical_batch([queries[i] for i in group], window)
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
                batch, tops, values = self._lexical_batch([queries[i] for i in group], first_window)
                if dedupe_by is None:  # each query's best k rows scoring above 0, as they are
                    results.extend(self._lexical_chunks(tops, values))
                    continue
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

    def _lexical_chunks(self, top: np.ndarray, values: np.ndarray) -> list[list[ScoredChunk]]:
        """Each query's rows of ``top`` (queries x k, best first; ``values`` their scores) that score above 0,
        as chunks (their metadata read in one call for the batch, and on a numpy bank decoded when first
        read)."""
        if not top.size:
            return [[] for _ in top]
        if values[:, -1].all():  # every query's k rows score above 0 (the usual case): no mask
            rows, lexical = top.ravel().tolist(), values.ravel().tolist()
            ends = list(range(top.shape[1], top.size + 1, top.shape[1]))
        else:
            kept = values > 0  # best first: the rows above 0 come first
            rows, lexical = top[kept].tolist(), values[kept].tolist()
            ends = list(accumulate(kept.sum(axis=1).tolist()))
        ids = self._ids  # an indexed row's id, on every store; rows added since are the store's to name
        names = map(ids.__getitem__, rows) if max(rows, default=0) < len(ids) else map(self._rows.id_of, rows,
                                                                                         repeat(ids))
        reader = self._rows.metadata_reader(rows)
        if reader is not None:  # a numpy bank: each chunk holds its row, decoded by the reader when first read
            chunks = _make_chunks(names, lexical, repeat(None), lexical, rows, repeat(reader))
        else:
            chunks = _make_chunks(names, lexical, repeat(None), lexical, self._rows.metadata_later(rows, ids))
        return [chunks[a:z] for a, z in zip([0, *ends], ends, strict=False)]

    def _check_rows(self) -> None:
        """Rebuild the index if rows it covers were deleted or moved (a numpy bank's splice)."""
        if self._rows.stale(self._ids):
            self.index = self._build_index()

    def _embed(self, queries: list[str]) -> np.ndarray:
        if self.embedder is None:
            raise InvalidValue(f"{self._rows.where}: no embedder given (pass embedder=, or load the bank with one)")
        return np.asarray(self.embedder.embed(queries), dtype=np.float32)

    def _query_groups(self, n: int) -> list[range]:
        """Consecutive groups of query positions whose BM25 matrix (queries x rows) stays within
        :data:`_BATCH_SCORES` values, so a large batch on a large bank does not hold it all at once."""
        size = max(1, _BATCH_SCORES // max(self._rows.count(), 1))
        return [range(a, min(n, a + size)) for a in range(0, n, size)]

    def _lexical_batch(self, queries: list[str], window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(BM25 of every row per query, each query's best ``window`` rows best first, their BM25; the last
        two (queries x window) matrices): the in-memory index
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
        return (scores, *best_rows(scores, window))

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
