"""The numpy bank (:class:`~.cosine_bank.CosineBank`) behind the :class:`~.vector_store.VectorStore` protocol.

The bank stays the embedded default: exact search, no server, files users can read. This adapter uses only
the bank's public API. What it costs where the bank has no native operation:

- ``filter``: the bank cannot filter while scoring, so a filtered search takes a window of the best
  ``max(4k, 64)`` rows, keeps the matching ones and, for queries that found fewer than ``k``, widens the
  window fourfold and scores again. Each round is one full scan plus one metadata decode per row in the
  window; a filter that matches a fraction ``p`` of the rows needs a window of about ``k / p`` rows, so a
  rare value ends up decoding every row's metadata (Milvus filters inside the engine instead).
- ``upsert`` and ``delete``: inside the bank (:meth:`CosineBank.upsert_vectors` / :meth:`CosineBank.delete`).
  New ids only: the bank's append. Replacing or deleting rows: one new version in which the kept rows'
  vector and metadata bytes are copied unchanged (``copy_file_range``, no decoding, no re-embedding), the
  changed rows are written in place and new ones at the end: O(n) bytes copied per call whatever the
  number of rows changed (1M x 512: ~2 GB), so batch changes into few calls. Atomic (renames; open readers
  keep their version) and serialised across processes by the bank's writer lock (a writer that finds a
  newer version applies its change on top of it). Rows identical to the stored ones are skipped first.

Other handles on the same directory see a new version on their next call (a ``stat`` of the manifest).

Search is exact unless the bank carries an approximate index (:meth:`CosineBank.build_ann`, the ``ann``
extra): ``search="auto"`` (default) uses it on banks of ``ANN_MIN_ROWS`` rows or more, ``"ann"`` always
(building it at open when the bank has none), ``"exact"`` never; ``ef`` is its search breadth. As a URI:
``path/to/bank?search=ann&ef=256``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .cosine_bank import BankError, CosineBank, ExperienceBank
from .vector_store import (
    Filter,
    ScanBatch,
    StoreError,
    StoreHit,
    StoreInfo,
    StoreRow,
    UpsertReport,
    canonical_json,
    check_filter,
    check_queries,
    check_recorded,
    check_rows,
)

__all__ = ["SEARCH_MODES", "NumpyStore"]

_MANIFEST = "manifest.json"  # the bank's documented manifest file: its stat tells a new version apart
_MIN_WINDOW = 64
SEARCH_MODES = {"auto": None, "ann": False, "exact": True}  # a store's search mode -> CosineBank.exact


class NumpyStore:
    """A :class:`~.vector_store.VectorStore` over one CosineBank directory; see the module docstring."""

    def __init__(self, bank: CosineBank, *, ef: int | None = None) -> None:
        self._bank = bank
        self._ef = ef
        self._directory = Path(bank.directory)
        self._seen = self._manifest_stamp()
        self._lock = threading.RLock()

    @classmethod
    def open(
        cls,
        directory: str | Path,
        *,
        embedder_id: str | None = None,
        dim: int | None = None,
        create: bool = False,
        bank_class: type[CosineBank] | None = None,
        search: str = "auto",
        ef: int | None = None,
    ) -> NumpyStore:
        """Open the bank at ``directory`` (``create=True``: an empty one is written when there is none).

        ``search``: "auto", "ann" or "exact" and ``ef`` (see the module docstring).

        ``bank_class`` is the CosineBank subclass whose extra view files every version must keep; by
        default an experience bank (its ``task_ids.json`` / ``captions.json`` present) opens as
        :class:`~.cosine_bank.ExperienceBank` and anything else as a plain CosineBank.
        """
        target = Path(directory)
        bank_class = bank_class or _bank_class_of(target)
        if not (target / _MANIFEST).exists():
            if not create:
                raise StoreError(f"{target}: no bank here (no {_MANIFEST}); open it with create=True to make one")
            if not embedder_id or not dim:
                raise StoreError(f"{target}: creating a store needs embedder_id and dim")
            try:
                bank = bank_class.from_vectors(target, np.zeros((0, dim), np.float32), [], [], embedder_id=embedder_id)
            except BankError as e:
                raise StoreError(str(e)) from None
        else:
            try:
                bank = bank_class.load(target)
            except BankError as e:
                raise StoreError(str(e)) from None
        check_recorded(str(target), bank.embedder_id, bank.dim, embedder_id, dim)
        if search not in SEARCH_MODES:
            raise StoreError(f"{target}: search {search!r} must be one of {', '.join(SEARCH_MODES)}")
        if search == "ann" and not bank.has_ann:
            try:
                bank.build_ann()
            except (BankError, ImportError) as e:
                raise StoreError(f"{target}: cannot build the approximate index: {e}") from None
        bank.exact = SEARCH_MODES[search]
        return cls(bank, ef=ef)

    # -- reading ---------------------------------------------------------------------------------

    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self._directory / _MANIFEST)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _current(self) -> CosineBank:
        """The bank, moved to the newest version if another handle or process wrote one since."""
        stamp = self._manifest_stamp()
        if stamp != self._seen:
            with self._lock:
                self._bank.refresh()
                self._seen = stamp
        return self._bank

    def search(
        self, query_vectors: np.ndarray, k: int = 10, min_score: float | None = None, filter: Filter | None = None
    ) -> list[list[StoreHit]]:
        bank = self._current()
        q = check_queries(query_vectors, bank.dim)
        wanted = check_filter(filter)
        if k <= 0 or len(bank) == 0 or len(q) == 0:
            return [[] for _ in range(len(q))]
        if wanted is None:
            return [[StoreHit(h.id, h.score, h.metadata) for h in hits]
                    for hits in bank.search(q, k, min_score, ef=self._ef)]
        return self._filtered_search(bank, q, k, min_score, wanted, self._ef)

    @staticmethod
    def _filtered_search(
        bank: CosineBank, q: np.ndarray, k: int, min_score: float | None, wanted: dict[str, tuple[Any, ...]],
        ef: int | None = None,
    ) -> list[list[StoreHit]]:
        """Widen a window of best rows until ``k`` matching rows are found (module docstring: the cost)."""
        results: list[list[StoreHit]] = [[] for _ in range(len(q))]
        pending = list(range(len(q)))
        window = max(4 * k, _MIN_WINDOW)
        while pending:
            window = min(window, len(bank))
            unfinished = []
            for query, hits in zip(pending, bank.search(q[pending], window, min_score, ef=ef), strict=True):
                kept = [StoreHit(h.id, h.score, h.metadata) for h in hits if matches(h.metadata, wanted)][:k]
                results[query] = kept
                # Fewer hits than the window means min_score or the bank's end was reached: nothing more.
                if len(kept) < k and len(hits) == window and window < len(bank):
                    unfinished.append(query)
            pending = unfinished
            window *= 4
        return results

    def get(self, ids: Sequence[str]) -> list[StoreRow]:
        bank = self._current()
        rows = []
        for x in ids:
            try:
                row = bank.row_of(x)
            except KeyError:
                continue
            rows.append(StoreRow(x, np.array(bank.vectors[row]), bank.metadata(row)))
        return rows

    def count(self) -> int:
        return len(self._current())

    def describe(self) -> StoreInfo:
        bank = self._current()
        mode = next(name for name, exact in SEARCH_MODES.items() if exact is bank.exact)
        given = ([f"search={mode}"] if mode != "auto" else []) + ([f"ef={self._ef}"] if self._ef else [])
        uri = str(self._directory) + ("?" + "&".join(given) if given else "")
        index = "HNSW" if bank.uses_ann else "exact"
        return StoreInfo("numpy", uri, bank.embedder_id, bank.dim, None, index)

    # -- writing ---------------------------------------------------------------------------------

    def upsert(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> UpsertReport:
        with self._lock:
            bank = self._current()
            ids, vectors, meta = check_rows(ids, vectors, metadata, bank.dim)
            todo = [i for i, x in enumerate(ids)
                    if x not in bank or not _same_row(bank, bank.row_of(x), vectors[i], meta[i])]
            if len(todo) == len(ids) and not any(x in bank for x in ids):
                bank.append_vectors(ids, vectors, meta)  # new ids only: the plain append
            elif todo:
                bank.upsert_vectors([ids[i] for i in todo], vectors[todo], [meta[i] for i in todo])
            self._seen = self._manifest_stamp()
            return UpsertReport(len(todo), len(ids) - len(todo))

    def delete(self, ids: Sequence[str]) -> int:
        with self._lock:
            bank = self._current()
            removed = bank.delete([x for x in ids if isinstance(x, str)])
            self._seen = self._manifest_stamp()
            return removed

    def scan(self, batch_size: int = 1000, *, with_vectors: bool = False) -> Iterator[ScanBatch]:
        bank = self._current()
        for ids, metadata, vectors in bank.iter_rows(batch_size, with_vectors=with_vectors):
            yield ScanBatch(ids, metadata, vectors)

    @property
    def bank(self) -> CosineBank:
        """The bank this store reads (moved to the newest version first); for code inside the library."""
        return self._current()

    def close(self) -> None:
        """Nothing to release: the bank's memory map goes with the object."""

    def __enter__(self) -> NumpyStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __deepcopy__(self, memo: dict) -> NumpyStore:
        return self

    def __repr__(self) -> str:
        return f"NumpyStore({str(self._directory)!r})"


def _bank_class_of(directory: Path) -> type[CosineBank]:
    """ExperienceBank when the directory holds its views (so rewrites keep them), else CosineBank."""
    if all((directory / name).exists() for name in ExperienceBank.views):
        return ExperienceBank
    return CosineBank


def matches(metadata: dict[str, Any], wanted: dict[str, tuple[Any, ...]]) -> bool:
    """The numpy translation of the filter language: every key present and equal to one of its values."""
    for key, values in wanted.items():
        if key not in metadata:
            return False
        value = metadata[key]
        if isinstance(value, dict | list) or value is None:
            return False
        if not any(_equal(value, v) for v in values):
            return False
    return True


def _equal(stored: Any, wanted: Any) -> bool:
    if isinstance(stored, str) or isinstance(wanted, str):
        return isinstance(stored, str) and isinstance(wanted, str) and stored == wanted
    return stored == wanted  # numbers by value; see check_filter on bools


def _same_row(bank: CosineBank, row: int, vector: np.ndarray, metadata: dict[str, Any]) -> bool:
    """Whether the stored row already holds this unit vector and metadata (an upsert would change nothing).

    Vectors are compared within 1e-6 rather than by bytes: a bank built from an embedder may hold a unit
    vector rounded a hair differently from our normalisation of the same input.
    """
    stored = np.asarray(bank.vectors[row], dtype=np.float32)
    if np.max(np.abs(stored - vector)) > 1e-6:
        return False
    return canonical_json(bank.metadata(row)) == canonical_json(metadata)
