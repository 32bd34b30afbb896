"""Row access for the hybrid retriever: a store's rows by number, whichever store holds them.

The retriever ranks rows by number (BM25 scores live in arrays indexed by row), so it needs the rows of its
store numbered, their vectors for exact cosines, and their metadata. :class:`StoreRows` is that access, with
two implementations picked by :func:`store_rows`: :class:`NumpyBankRows` reads a numpy bank's memory-mapped
matrix directly, :class:`VectorStoreRows` reaches any :class:`~..stores.vector_store.VectorStore` (Milvus, ...)
through ``search`` and ``get``. Kept apart from :mod:`.hybrid` so the fusion there reads the same on every store.

Rows are numbered in the order the word index was built (the bank's row order; the store's scan order), and
rows the dense channel finds that the index does not cover get the next numbers. Every method that takes
``ids`` gets the retriever's list of indexed ids, in row order.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np

from ..embedding.embedders import Embedder
from ..errors import InvalidType
from ..stores.cosine_bank import CosineBank
from ..stores.vector_store import StoreError, VectorStore

__all__ = ["NumpyBankRows", "StoreRows", "VectorStoreRows", "store_rows"]

logger = logging.getLogger(__name__)


class StoreRows(Protocol):
    """A store's rows by number, as the hybrid retriever reads them."""

    embedder: Embedder | None  # the store's own embedder when it has one (a bank loaded with it), else None
    where: Any  # the store's place, for messages (a bank's directory, a store's URI)

    @property
    def store(self) -> VectorStore:
        """The vector store behind the rows."""

    def label(self) -> str:
        """The store as the retriever's repr shows it."""

    def scan(self) -> Iterable[tuple[list[str], list[dict[str, Any]]]]:
        """Every row's (ids, metadata), in batches: what an in-memory word index is built from."""

    def indexed(self, ids: list[str], store_words: bool = False) -> None:
        """The word index was (re)built over ``ids``; ``store_words``: it is the store's own index."""

    def word_index(self, text_key: str) -> Any:
        """The word index the store keeps over metadata ``text_key`` (Milvus), or None to build one in memory."""

    def count(self) -> int:
        """How many rows there are to rank."""

    def stale(self, ids: list[str]) -> bool:
        """Whether rows the index covers were deleted or moved since it was built."""

    def row(self, id: str, ids: list[str]) -> int:
        """The row number of ``id``, numbered next (and added to ``ids``) when the index does not cover it."""

    def dense_windows(self, vectors: np.ndarray, window: int, ids: list[str]) -> list[list[int]]:
        """Per query vector, the rows of its best ``window`` cosines, best first."""

    def dense(self, rows: np.ndarray, unit: np.ndarray, ids: list[str]) -> np.ndarray:
        """The cosine of each of ``rows`` with the unit query vector ``unit``."""

    def dense_hits(self, vectors: np.ndarray, k: int, dedupe_by: str | None) -> list[list[tuple[str, float, dict]]]:
        """Per query vector, its best ``k`` (id, cosine, metadata), best per ``dedupe_by`` value."""

    def prefetch(self, rows: Sequence[int], ids: list[str]) -> None:
        """Fetch the metadata of ``rows`` in one call, before they are read one by one."""

    def forget(self) -> None:
        """Drop what was fetched for one retriever call."""

    def metadata(self, row: int, ids: list[str]) -> dict[str, Any]:
        """The metadata of a row."""

    def metadata_later(self, rows: Sequence[int], ids: list[str]) -> list[dict[str, Any] | partial]:
        """The metadata of rows, each a dict or a call that decodes it when made (what ScoredChunk takes)."""

    def metadata_reader(self, rows: Sequence[int]) -> Callable[[int], dict[str, Any]] | None:
        """A call decoding any of ``rows``' metadata from its row number when a chunk's is first read, or
        None where the store's rows are fetched now (:meth:`metadata_later`)."""

    def id_of(self, row: int, ids: list[str]) -> str:
        """The id of a row."""


def store_rows(store: Any) -> StoreRows:
    """The row access of ``store``: a numpy bank (or a NumpyStore over one) directly, another store through
    its protocol. TypeError for anything else."""
    from ..stores.numpy_store import NumpyStore

    if isinstance(store, CosineBank):
        return NumpyBankRows(store, None)
    if isinstance(store, NumpyStore):
        return NumpyBankRows(store.bank, store)
    if isinstance(store, VectorStore):
        return VectorStoreRows(store)
    raise InvalidType(f"HybridRetriever needs a VectorStore or a CosineBank, got {type(store).__name__}")


class NumpyBankRows:
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

    def row(self, id: str, ids: list[str]) -> int:
        return self.bank.row_of(id)

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

    def metadata_later(self, rows: Sequence[int], ids: list[str]) -> list[dict[str, Any] | partial]:
        return self.bank.metadata_readers(rows)  # the bank's lines, decoded when a chunk's metadata is read

    def metadata_reader(self, rows: Sequence[int]) -> Callable[[int], dict[str, Any]] | None:
        return self.bank.metadata_reader(rows)

    def id_of(self, row: int, ids: list[str]) -> str:
        return ids[row] if row < len(ids) else self.bank.id_at(row)


class VectorStoreRows:
    """Any VectorStore: windows from ``search``, candidates' vectors and metadata from ``get`` (one call per
    query, cached for the duration of one retriever call)."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
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

    def metadata_later(self, rows: Sequence[int], ids: list[str]) -> list[dict[str, Any] | partial]:
        self.prefetch(rows, ids)  # fetched in one call now: the store may not be reachable later
        return [self._meta.get(r, {}) for r in rows]

    def metadata_reader(self, rows: Sequence[int]) -> Callable[[int], dict[str, Any]] | None:
        return None

    def id_of(self, row: int, ids: list[str]) -> str:
        return ids[row]
