"""How a CosineBank answers a query: exactly, over every row, or through its optional approximate index.

The approximate index (``ann.faiss``, ``ann.json``: :mod:`.bank_ann`) sits beside the rows of a version:
:meth:`~BankQueries.build_ann` writes it, appends extend it, a replace or delete rebuilds it, and searches
use it on banks of :data:`~.bank_ann.ANN_MIN_ROWS` rows or more (or when asked: ``exact=False``). A bank
reads the index of the version it holds on first use and keeps it for that version; an index that cannot
be read makes the searches that chose it by size exact (one warning), and one asked for an error. Either
way only rows the version's guard lets through are returned (:mod:`.bank_row_guard`); scoring and top-k
selection are :mod:`.bank_search`'s.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Self

import numpy as np

from ..embedding.embedders import l2_normalize
from ..errors import InvalidValue
from .bank_ann import (
    ANN_FILE,
    ANN_INFO,
    ANN_MIN_ROWS,
    DEFAULT_EF,
    DEFAULT_EF_CONSTRUCTION,
    DEFAULT_M,
    AnnIndex,
    AnnUnavailable,
    ann_top_rows,
)
from .bank_errors import BankError
from .bank_input import Progress, progress_callback
from .bank_layout import real_path
from .bank_reading import Snapshot, load_snapshot, read_manifest
from .bank_search import Hit, cosine_scores, dedupe_rows, score_buffer, top_rows
from .bank_swap import write_version, writer_lock
from .bank_writing import link_version_files, write_manifest_adding

logger = logging.getLogger(__name__)


def unit_queries(query_vectors: np.ndarray, dim: int) -> np.ndarray:
    """The queries as C-contiguous unit float32 rows, shape (q, dim): :func:`l2_normalize` of them; a wrong
    shape, NaN or infinity raises.

    One query (a search through the approximate index spends microseconds here beside faiss' own) takes a
    shorter way to the same numbers: its sum of squares, summed as l2_normalize sums it, also says whether every
    value is finite (a NaN or an infinity makes it NaN or infinite), and a query already of norm 1.0 is used
    as it is (dividing by 1.0 changes no value).
    """
    q = np.asarray(query_vectors, dtype=np.float32)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != dim:
        raise InvalidValue(f"query vectors must have shape (q, {dim}) or ({dim},), got {q.shape}")
    if q.shape[0] == 1:
        row = q[0]
        squares = np.add.reduce(row * row)
        if squares < np.inf:  # else NaN, infinity, or an overflow of finite values: the general way below
            norm = np.sqrt(squares)
            if norm == 1.0 or not norm > 0:  # unit already, or all zeros (which stay zeros)
                return np.ascontiguousarray(q)
            return (row / norm)[None, :]
    if not np.isfinite(q).all():
        raise InvalidValue("query vectors contain NaN or infinity")
    return np.ascontiguousarray(l2_normalize(q))


class BankQueries:
    """The searches of a :class:`~.cosine_bank.CosineBank` and its approximate index (see the module
    docstring), which CosineBank inherits; the state they use is set by ``CosineBank.__init__``."""

    # -- the approximate index ----------------------------------------------------------------------

    @property
    def has_ann(self) -> bool:
        """Whether this version carries an approximate index (:meth:`build_ann`)."""
        return self._has_ann(self._snap)

    @staticmethod
    def _has_ann(snap: Snapshot) -> bool:
        return ANN_INFO in (snap.manifest.get("checksums") or {})

    def build_ann(self, m: int = DEFAULT_M, ef_construction: int = DEFAULT_EF_CONSTRUCTION, *,
                  progress: Progress = None) -> Self:
        """Build the approximate (HNSW) index over every row and write it as a new version of the bank.

        Needs the ``ann`` extra (faiss-cpu). The other files of the version are hard-linked, not copied
        (a version never changes); the build itself takes all CPUs for minutes at 1M rows (see
        BENCHMARKS.md). Afterwards appends extend the index and replaces or deletes rebuild it.
        """
        target = real_path(self._directory)
        with self._write_lock, writer_lock(target):
            if read_manifest(target) != self._snap.manifest:
                self.refresh()
            snap = self._snap
            advance, close = progress_callback(progress, snap.count, unit="row", desc="ANN index")
            try:
                ann = AnnIndex.build(snap.matrix, m, ef_construction, lambda done, _total: advance(done))
            finally:
                close()

            def write(tmp: Path) -> None:
                link_version_files(target, tmp, skip=(ANN_FILE, ANN_INFO))
                ann.write(tmp)
                write_manifest_adding(tmp, snap.manifest, (ANN_FILE, ANN_INFO))

            write_version(target, write)
            self._snap = load_snapshot(target)
            ann.share(self._snap.matrix)  # the mapping exact search reads: the rows' pages are held once
            self._ann = (self._snap, ann)
        logger.info("%s: approximate index over %d rows (M=%d, efConstruction=%d)", target, snap.count, m,
                    ef_construction)
        return self

    def _ann_index(self, snap: Snapshot) -> AnnIndex | None:
        """The index of version ``snap``, read on first use and kept for that version; None when a writer
        replaced that version on disk before its index was read (searches are then exact: see search)."""
        if self._ann_failed is snap:  # could not be read: not read again for this version
            raise BankError(f"{snap.path / ANN_FILE}: could not be read (see the earlier warning); rebuild it with "
                            "CosineBank.build_ann()")
        kept = self._ann  # read once: the pair is replaced whole, so no lock is needed to look at it
        if kept is not None and kept[0] is snap:
            return kept[1]
        with self._ann_lock:
            if self._ann is not None and self._ann[0] is snap:
                return self._ann[1]
            if read_manifest(self._directory) != snap.manifest:
                return None
            try:
                ann = AnnIndex.read(snap.path, snap.matrix)
            except ValueError as exc:
                if read_manifest(self._directory) != snap.manifest:
                    return None
                raise BankError(str(exc)) from None
            if ann is None or read_manifest(self._directory) != snap.manifest:
                return None
            self._ann = (snap, ann)
            return ann

    def _ann_of_version(self, snap: Snapshot) -> AnnIndex:
        """The index of the version a writer holds the lock on (so it is the one on disk)."""
        ann = self._ann_index(snap)
        if ann is None:
            raise BankError(f"{self._directory}: its approximate index could not be read")
        return ann

    def _ann_to_extend(self, snap: Snapshot) -> AnnIndex:
        """A private copy of the index of the version a writer holds the lock on, read from disk for an
        append to grow: searches still running on the index this bank keeps are not disturbed."""
        self._ann_of_version(snap)  # the kept one reads (or an earlier failure is reported as such)
        try:
            ann = AnnIndex.read(snap.path, snap.matrix)
        except ValueError as exc:
            raise BankError(str(exc)) from None
        if ann is None:
            raise BankError(f"{self._directory}: its approximate index could not be read")
        return ann

    @property
    def uses_ann(self) -> bool:
        """Whether a search that does not pass ``exact`` uses the approximate index."""
        return self._use_ann(self._snap, None)

    def _use_ann(self, snap: Snapshot, exact: bool | None) -> bool:
        choice = self.exact if exact is None else exact
        if choice is None:
            return self._has_ann(snap) and snap.count >= ANN_MIN_ROWS
        if choice is False and not self._has_ann(snap):
            raise BankError(f"{self._directory}: has no approximate index; build one with CosineBank.build_ann() "
                            "or search with exact=True")
        return not choice

    # -- search ----------------------------------------------------------------------------------

    def search(
        self,
        query_vectors: np.ndarray,
        k: int = 10,
        min_score: float | None = 0.1,
        dedupe_by: str | None = None,
        *,
        exact: bool | None = None,
        ef: int | None = None,
    ) -> list[list[Hit]]:
        """Top-``k`` rows per query by cosine, best first (one list per query, also for a 1-D query).

        Rows scoring below ``min_score`` are dropped (None keeps all). ``dedupe_by`` names a metadata
        key: only the best row per value is kept (rows lacking the key are never merged); the default
        dedupes by id, which is a no-op because ids are unique. A batch is scored in one matrix product.
        A hit's ``metadata`` is decoded when first read (see :class:`~.bank_search.Hit`).

        ``exact``: True scans every row; False asks the approximate index for candidates (``ef``: its
        search breadth, default :data:`~.bank_ann.DEFAULT_EF`) and rescores them exactly; None follows
        :attr:`exact` of this instance (by default: the index on banks of ANN_MIN_ROWS rows or more).
        """
        snap = self._snap
        found = self.search_rows(query_vectors, k, min_score, dedupe_by, exact=exact, ef=ef)
        if len(found) == 1:  # one query: the same, with less bookkeeping
            rows, scores = found[0]
            return [list(map(Hit, snap.ids.take(rows), scores, rows, snap.lines.decode_later(rows)))]
        every = [r for rows, _ in found for r in rows]  # all ids in one parse (metadata too, when first read)
        scores = [s for _, of_query in found for s in of_query]
        hits = list(map(Hit, snap.ids.take(every), scores, every, snap.lines.decode_later(every)))
        bounds = list(itertools.accumulate((len(rows) for rows, _ in found), initial=0))
        return [hits[a:b] for a, b in itertools.pairwise(bounds)]

    def search_rows(
        self,
        query_vectors: np.ndarray,
        k: int = 10,
        min_score: float | None = 0.1,
        dedupe_by: str | None = None,
        *,
        exact: bool | None = None,
        ef: int | None = None,
    ) -> list[tuple[list[int], list[float]]]:
        """:meth:`search` as (rows, scores) per query, without decoding ids or metadata of the hits."""
        snap = self._snap
        unit = unit_queries(query_vectors, snap.dim)
        if k <= 0 or snap.count == 0 or unit.shape[0] == 0:
            return [([], []) for _ in range(unit.shape[0])]
        if ef is not None and ef < 1:
            raise InvalidValue(f"ef must be a positive whole number, got {ef}")
        key = None if dedupe_by in (None, "id") else dedupe_by
        guard = snap.guard  # only rows known intact are returned (see bank_row_guard.RowGuard, bank_search)

        def exact_rows(queries: np.ndarray) -> list[tuple[list[int], list[float]]]:
            if guard is not None:
                guard.verify_all()  # first touch of every block (once per process; an int compare afterwards)
            with score_buffer(queries.shape[0], snap.count) as out:  # top_rows returns lists: nothing refers to it
                return top_rows(cosine_scores(snap.matrix, queries, out, guard), k, min_score, key, snap.metadata)

        if not self._use_ann(snap, exact):
            return exact_rows(unit)
        try:
            ann = self._ann_index(snap)
        except (BankError, AnnUnavailable) as exc:
            if (self.exact if exact is None else exact) is False:  # asked for: say why it cannot be used
                raise BankError(str(exc)) from None
            if self._ann_failed is not snap:  # chosen by size only: an index that cannot be read costs speed
                self._ann_failed = snap
                logger.warning("%s; searching exactly meanwhile", exc)
            return exact_rows(unit)
        if ann is None:  # this instance's version was replaced on disk before its index was read
            logger.warning("%s: a newer version replaced the one this bank reads before its approximate index "
                           "was loaded; searching exactly (refresh() to use the new version's index)", self._directory)
            return exact_rows(unit)
        dedupe = None if key is None else (lambda rows, n: dedupe_rows(rows, n, key, snap.metadata))
        return ann_top_rows(ann, snap.matrix, unit, k, min_score, ef or DEFAULT_EF, dedupe, exact_rows, guard)

    def search_texts(
        self, texts: Sequence[str], k: int = 10, min_score: float | None = 0.1, dedupe_by: str | None = None
    ) -> list[list[Hit]]:
        """Embed ``texts`` in one call with the bank's embedder, then :meth:`search`."""
        texts = list(texts)
        if not texts:
            return []
        return self.search(self._require_embedder().embed(texts), k=k, min_score=min_score, dedupe_by=dedupe_by)
