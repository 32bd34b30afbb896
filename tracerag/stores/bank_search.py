"""Exact cosine scoring and top-k selection for a CosineBank, kept apart from how the bank is stored.

Scoring is where the speed is won or lost: :func:`cosine_scores` scores a whole batch of queries in
one BLAS matrix product (BLAS threads it); :func:`top_rows` picks the best rows of every query without
sorting them all, optionally one per metadata group. It needs a lower bound of each query's k-th best
score: on a small bank the k-th best of a sample of the scores (then one pass over all scores finds the
rows reaching it), on a large one the k-th best block maximum (then only the blocks reaching it are read).

Scores are sane by construction. The cosine of two unit vectors lies in [-1, 1], so a score that is NaN or
outside [-:data:`SCORE_LIMIT`, :data:`SCORE_LIMIT`] can only come from a corrupt row (a flipped exponent
bit made one row score 5.9e35 for half of all queries). Such a row is never returned: given a ``screen``
(the bank's :class:`~.bank_row_guard.RowGuard`), :func:`cosine_scores` masks the rows it already excludes,
finds rows scoring above the limit from the block maxima (or one maximum of a small bank's scores),
reports them (one warning, then they are excluded for good) and masks them before top-k, so they cannot
take a place among the k best; the rescored hits are checked again (:func:`keep_sane`), which catches a
row scoring below -1 where a search reaches that low. On the warm path this is a maximum over the block
maxima and a check of the ~k rescored hits per query.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .read_on_first_use import ReadOnFirstUse

_BLOCK_ROWS = 1024  # at most this many rows per top-k block
_SMALL_ROWS = 32_768  # up to this many rows a bank has no block maxima: a pass over its scores is cheaper
_SAMPLE_STRIDE = 8  # a small bank's threshold is the k-th best of every 8th score
RESCORE_MARGIN = 1e-4  # far above float32 rounding of a unit-vector dot product (~1e-6 at dim 4096)
_PARALLEL_MAX_BYTES = 8 << 20  # scores of a batch from this size on get their block maxima in our threads
_SPARE_MIN_BYTES = 128 << 10  # score buffers from this size (below it malloc reuses its heap) ...
_SPARE_MAX_BYTES = 16 << 20  # ... up to this size are kept for later searches ...
_SPARE_BUFFERS = 4  # ... at most this many (64 MiB held at most)
# The largest |score| a sane row can have: rows are unit within 1e-3 (checked at load), queries are normalised.
SCORE_LIMIT = 1.0 + 2e-3


class Screen(Protocol):
    """What a search asks of the bank about its rows (:class:`~.bank_row_guard.RowGuard` implements it)."""

    @property
    def excluded(self) -> np.ndarray | None:
        """Sorted rows never to return, or None."""

    def report(self, rows: np.ndarray, scores: np.ndarray) -> None:
        """``rows`` scored ``scores``, impossible for a cosine: exclude them from now on (and say so)."""

    def touch(self, rows: np.ndarray | list[int]) -> None:
        """``rows`` are about to be scored: verify them first if they are not yet (see RowGuard)."""


@dataclass
class Hit:
    """One search result; ``metadata`` is a fresh dict decoded for this hit (safe to mutate).

    A plain (not frozen) record: a frozen dataclass costs ~1 us more per hit to build, which is a third
    of a small bank's whole search when a batch returns hundreds of hits. A search decodes ``metadata``
    when it is first read (:class:`~.read_on_first_use.ReadOnFirstUse`; equality, repr, pickling and
    ``dataclasses.asdict`` read it too): one parse for all the hits of the search, as before, but only
    when a caller reads it; a damaged metadata line raises then.
    """

    __slots__ = ("id", "score", "row", "_metadata")
    id: str
    score: float
    row: int
    metadata: dict[str, Any] = ReadOnFirstUse()  # type: ignore[assignment]

    def __init__(self, id: str, score: float, row: int, metadata: dict[str, Any]) -> None:
        # The dataclass' own __init__ would set metadata through its descriptor: a Python call more per hit.
        self.id, self.score, self.row, self._metadata = id, score, row, metadata

    def __reduce__(self) -> tuple:
        return (type(self), (self.id, self.score, self.row, self.metadata))


# ---------------------------------------------------------------------------------------------
# Scoring.

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def worker_count() -> int:
    """Threads the block maxima of a large batch are split across: the CPUs this process may run on, at
    most 8."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        n = os.cpu_count() or 1
    return max(1, min(n, 8))


def _get_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=worker_count(), thread_name_prefix="cosine-bank")
        return _pool


@dataclass(frozen=True, slots=True)
class Scores:
    """Cosine scores of a batch of queries, plus (on a large bank) each query's maximum per block of rows.

    The block maxima make top-k cheap on large banks: the m-th largest block maximum is a lower bound of
    the m-th largest score, so only the few blocks reaching it need to be looked at row by row. A small
    bank has none (``block_max`` is None): computing them would cost more than the pass they save.
    """

    values: np.ndarray  # (q, count) float32
    block_max: np.ndarray | None  # (q, ceil(count / block_rows)) float32, None up to _SMALL_ROWS rows
    block_rows: int
    matrix: np.ndarray  # what was scored, to rescore the few rows top-k returns
    queries: np.ndarray
    screen: Screen | None = None  # the rows to leave out, and where to report impossible scores


def _row_blocks(count: int, block_rows: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous row ranges that start on block boundaries (empty ranges dropped)."""
    blocks = -(-count // block_rows)
    cuts = [min(count, b * block_rows) for b in np.linspace(0, blocks, parts + 1).astype(int).tolist()]
    return [(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True) if hi > lo]


def _fill_block_max(values: np.ndarray, block_max: np.ndarray, lo: int, hi: int, block_rows: int) -> None:
    """Block maxima of the rows ``lo:hi`` (``lo`` on a block boundary) from the scores already computed."""
    whole = (hi - lo) // block_rows * block_rows
    first = lo // block_rows
    if whole:
        nq = values.shape[0]
        blocks = values[:, lo : lo + whole].reshape(nq, -1, block_rows)
        block_max[:, first : first + whole // block_rows] = blocks.max(axis=2)
    if lo + whole < hi:
        block_max[:, first + whole // block_rows] = values[:, lo + whole : hi].max(axis=1)


_spare_buffers: list[np.ndarray] = []
_spare_lock = threading.Lock()


@contextmanager
def score_buffer(queries: int, rows: int) -> Iterator[np.ndarray]:
    """A (queries, rows) float32 array for one search's scores, reused from an earlier search when one is
    spare.

    Fresh memory of this size comes from the OS a page at a time, one fault per 4 KiB written: ~4 ms
    for 128 queries x 10k rows, more than top-k itself. A buffer in use is nobody else's, so concurrent
    searches never share one.
    """
    size = queries * rows
    if not _SPARE_MIN_BYTES <= size * 4 <= _SPARE_MAX_BYTES:
        yield np.empty((queries, rows), dtype=np.float32)
        return
    with _spare_lock:  # the smallest spare that fits (arrays compare elementwise: pick by index)
        fits = [i for i, b in enumerate(_spare_buffers) if b.size >= size]
        best = min(fits, key=lambda i: _spare_buffers[i].size) if fits else None
        buffer = _spare_buffers.pop(best) if best is not None else np.empty(size, dtype=np.float32)
    try:
        yield buffer[:size].reshape(queries, rows)
    finally:
        with _spare_lock:
            _spare_buffers.append(buffer)
            _spare_buffers.sort(key=lambda b: -b.size)
            del _spare_buffers[_SPARE_BUFFERS:]  # keep the largest


def cosine_scores(matrix: np.ndarray, queries: np.ndarray, out: np.ndarray | None = None,
                  screen: Screen | None = None) -> Scores:
    """Scores of every row for every (unit) query: one BLAS call (GEMM for a batch, GEMV for one query),
    threaded by BLAS, i.e. exactly what ``queries @ matrix.T`` costs: OpenBLAS streams the matrix once
    for the whole batch. (Splitting the rows over our own threads with BLAS held at one thread measured
    1.6-2x slower than BLAS' own threaded GEMV for one query on 2 CPUs, and up to 1.8x slower for a batch
    when BLAS threads from other calls still spin.) Block maxima for top-k follow in one pass, split over
    our threads for large batches. With a ``screen``, rows it excludes and rows scoring above
    :data:`SCORE_LIMIT` are masked (see the module docstring).
    """
    nq, count = queries.shape[0], matrix.shape[0]
    values = np.empty((nq, count), dtype=np.float32) if out is None else out
    if nq == 1:
        np.matmul(matrix, queries[0], out=values[0])
    else:
        np.matmul(queries, matrix.T, out=values)
    if count <= _SMALL_ROWS:
        scores = Scores(values, None, 0, matrix, queries, screen)
        if screen is not None:
            _screen_scores(scores)
        return scores
    # The top-k block: small enough that a query's candidate blocks hold few rows, large enough that
    # the block maxima stay a small array and their pass is not a reduction over tiny runs.
    block_rows = min(_BLOCK_ROWS, max(64, count // 1024))
    block_max = np.empty((nq, -(-count // block_rows)), dtype=np.float32)
    ranges = _row_blocks(count, block_rows, worker_count()) if values.nbytes >= _PARALLEL_MAX_BYTES else []
    if len(ranges) < 2:
        _fill_block_max(values, block_max, 0, count, block_rows)
    else:
        pool = _get_pool()
        for fut in [pool.submit(_fill_block_max, values, block_max, lo, hi, block_rows) for lo, hi in ranges]:
            fut.result()
    scores = Scores(values, block_max, block_rows, matrix, queries, screen)
    if screen is not None:
        _screen_scores(scores)
    return scores


def _screen_scores(scores: Scores) -> None:
    """Mask (score -inf) the rows the screen excludes, then find rows scoring above :data:`SCORE_LIMIT` or
    NaN, report and mask them: top-k never sees them. Costs one maximum over the block maxima (over the
    scores of a small bank) when nothing is wrong."""
    screen, values, block_max = scores.screen, scores.values, scores.block_max
    excluded = screen.excluded  # type: ignore[union-attr]
    if excluded is not None and len(excluded):
        _mask_rows(scores, excluded)
    peak = block_max.max() if block_max is not None else values.max()
    if peak <= SCORE_LIMIT:  # False for NaN too
        return
    count = values.shape[1]
    if block_max is not None:
        blocks = np.flatnonzero(~(block_max <= SCORE_LIMIT).all(axis=0))
        rows = (blocks[:, None] * scores.block_rows + np.arange(scores.block_rows)).ravel()
        rows = rows[rows < count]
    else:
        rows = np.arange(count)
    seen = values[:, rows]
    insane = ~(seen <= SCORE_LIMIT)
    bad = np.flatnonzero(insane.any(axis=0))
    if not len(bad):
        return
    # One impossible score per row for the report: NaN when a query gave NaN, else its largest.
    seen = seen[:, bad]
    nan = np.isnan(seen)
    worst = np.where(nan.any(axis=0), np.nan, np.where(nan, -np.inf, seen).max(axis=0))
    screen.report(rows[bad], worst)  # type: ignore[union-attr]
    _mask_rows(scores, rows[bad])


def _mask_rows(scores: Scores, rows: np.ndarray) -> None:
    """Score ``rows`` -inf for every query (and recompute the block maxima they belong to)."""
    values = scores.values
    values[:, rows] = -np.inf
    if scores.block_max is not None:
        count, step = values.shape[1], scores.block_rows
        for b in np.unique(rows // step).tolist():
            scores.block_max[:, b] = values[:, b * step : min(count, (b + 1) * step)].max(axis=1)


def keep_sane(screen: Screen | None, rows: np.ndarray, exact: np.ndarray) -> np.ndarray | None:
    """Which of the rescored hits (``rows`` scoring ``exact``) may be returned: None when all may (the warm
    path), else a mask leaving out excluded rows and scores outside [-SCORE_LIMIT, SCORE_LIMIT] or NaN
    (whose rows are reported to the screen)."""
    ok = np.abs(exact) <= SCORE_LIMIT
    excluded = screen.excluded if screen is not None else None
    if excluded is not None and len(excluded):
        ok &= ~np.isin(rows, excluded)
    if ok.all():
        return None
    insane = ~(np.abs(exact) <= SCORE_LIMIT)
    if screen is not None and insane.any():
        found, first = np.unique(rows[insane], return_index=True)
        screen.report(found, exact[insane][first])
    return ok


# ---------------------------------------------------------------------------------------------
# Top-k.

_MISSING = object()


def _group_key(metadata: Callable[[int], dict[str, Any]], row: int, key: str) -> Any:
    value = metadata(row).get(key, _MISSING)
    if value is _MISSING:
        return (_MISSING, row)  # rows without the key are never merged
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return ("json", json.dumps(value, sort_keys=True, ensure_ascii=False))


def _thresholds(scores: Scores, m: int) -> np.ndarray:
    """Per query, a value at most its ``m``-th largest score (-inf when ``m`` covers every row).

    With block maxima and more blocks than ``m``: the ``m``-th largest block maximum (``m`` blocks reach
    it, so ``m`` rows do). Without them, on a bank large enough for the sample to hold ``4 m`` scores: the
    ``m``-th largest of every :data:`_SAMPLE_STRIDE`-th score (``m`` rows reach it). Otherwise the exact
    ``m``-th largest score. Each is one partition of a (q, n) array.
    """
    nq, count = scores.values.shape
    if m >= count:
        return np.full(nq, -np.inf, dtype=np.float32)
    if scores.block_max is not None:
        blocks = scores.block_max.shape[1]
        if m < blocks:
            return np.partition(scores.block_max, blocks - m, axis=1)[:, blocks - m]
    elif count >= 4 * m * _SAMPLE_STRIDE:
        sample = scores.values[:, ::_SAMPLE_STRIDE]
        width = sample.shape[1]
        return np.partition(sample, width - m, axis=1)[:, width - m]
    return np.partition(scores.values, count - m, axis=1)[:, count - m]


def _rows_from(scores: Scores, query: int, threshold: float, floor: float,
               best: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of ``query`` for the rows scoring >= ``threshold`` (and >= ``floor``), best first,
    ties by row; only the blocks reaching the threshold are read. With ``best``, at least the ``best``
    best of them (all when fewer): the candidates' own ``best``-th score tightens the threshold first.

    The returned scores are recomputed row by row (the same arithmetic for every row, whatever the batch
    or its position in a BLAS kernel), so equal rows tie exactly and a batch scores as its queries do
    alone. Candidates are taken :data:`RESCORE_MARGIN` below the threshold so that rounding differences
    between the matrix product and the rescoring cannot drop a row.
    """
    values = scores.values[query]
    low = threshold - RESCORE_MARGIN
    if low == -np.inf:
        rows = np.arange(values.shape[0])
    elif scores.block_max is None:
        rows = np.flatnonzero(values >= low)
    else:
        blocks = np.flatnonzero(scores.block_max[query] >= low)
        if len(blocks) * 4 >= scores.block_max.shape[1]:  # most blocks: one pass over all rows is cheaper
            rows = np.flatnonzero(values >= low)
        else:
            rows = (blocks[:, None] * scores.block_rows + np.arange(scores.block_rows)).ravel()
            rows = rows[rows < values.shape[0]]
            rows = rows[values[rows] >= low]
    if best is not None and len(rows) > best:  # rescore about ``best`` rows, not every candidate
        found = values[rows]
        rows = rows[found >= np.partition(found, len(found) - best)[len(found) - best] - RESCORE_MARGIN]
    exact = rescore_one(scores.matrix, scores.queries[query], rows)
    sane = keep_sane(scores.screen, rows, exact)
    if sane is not None:
        rows, exact = rows[sane], exact[sane]
    if floor > -np.inf:
        keep = exact >= floor
        rows, exact = rows[keep], exact[keep]
    order = np.lexsort((rows, -exact))
    return rows[order], exact[order]


def _rescore(scores: Scores, query_of: np.ndarray, rows: np.ndarray) -> np.ndarray:
    return rescore(scores.matrix, scores.queries, query_of, rows)


def rescore(matrix: np.ndarray, queries: np.ndarray, query_of: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Score of each (query, row) pair, computed the same way for every pair (a contiguous dot product):
    the exact and the approximate search both score their hits with it, so a row gets the same score."""
    return np.einsum("ij,ij->i", matrix[rows], queries[query_of])


def rescore_one(matrix: np.ndarray, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """:func:`rescore` of one query's ``rows``: the same dot product (einsum's loop over the dim, bit for bit,
    checked by a test) without copying the query once per row first."""
    return np.einsum("ij,j->i", matrix[rows], query)


def _candidates(scores: Scores, low: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(query, row) pairs whose score reaches the query's ``low``, ordered by query; None when block
    maxima leave too many candidate blocks for a batch to pay."""
    values = scores.values
    nq, count = values.shape
    if scores.block_max is None:  # one pass; flat indices (2-D nonzero costs ~5x more)
        flat = np.flatnonzero(values >= low.astype(np.float32)[:, None])
        query_of = flat // count
        return query_of, flat - query_of * count
    block_rows = scores.block_rows
    query_of, block = np.nonzero(scores.block_max >= low[:, None])
    if len(block) * block_rows > 2 * count + 64 * nq * block_rows:
        return None
    rows = (block[:, None] * block_rows + np.arange(block_rows)).ravel()
    query_of = np.repeat(query_of, block_rows)
    inside = rows < count
    rows, query_of = rows[inside], query_of[inside]
    reach = values[query_of, rows] >= low[query_of]
    return query_of[reach], rows[reach]


def _top_rows_of_batch(scores: Scores, k: int, floor: float, thresholds: np.ndarray) -> list | None:
    """:func:`top_rows` without dedupe for the whole batch at once (a handful of numpy calls, no loop per
    query); None when the thresholds leave too many candidate blocks for that to pay.

    The candidates' own k-th best score then tightens each query's threshold, so that only about k rows
    per query are rescored however loose the first bound was.
    """
    nq = scores.values.shape[0]
    low = np.maximum(thresholds.astype(np.float64), floor) - RESCORE_MARGIN
    found = _candidates(scores, low)
    if found is None:
        return None
    query_of, rows = found
    value = scores.values[query_of, rows]
    if len(rows) > k * nq:
        order = np.argsort(query_of * 4.0 - value)  # by query, best first (scores lie in [-1, 1])
        query_of, rows, value = query_of[order], rows[order], value[order]
        starts = np.searchsorted(query_of, np.arange(nq + 1))
        kth = starts[:-1] + k - 1
        tight = np.where(kth < starts[1:], value[np.minimum(kth, len(value) - 1)], -np.inf) - RESCORE_MARGIN
        keep = value >= tight[query_of]
        query_of, rows = query_of[keep], rows[keep]
    exact = _rescore(scores, query_of, rows)
    sane = keep_sane(scores.screen, rows, exact)
    if sane is not None:
        rows, query_of, exact = rows[sane], query_of[sane], exact[sane]
    if floor > -np.inf:
        keep = exact >= floor
        rows, query_of, exact = rows[keep], query_of[keep], exact[keep]
    order = np.lexsort((rows, -exact, query_of))
    rows, exact = rows[order].tolist(), exact[order].tolist()
    bounds = np.searchsorted(query_of[order], np.arange(nq + 1)).tolist()
    return [(rows[a : min(b, a + k)], exact[a : min(b, a + k)]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def top_rows(
    scores: Scores,
    k: int,
    min_score: float | None,
    dedupe_by: str | None,
    metadata: Callable[[int], dict[str, Any]],
) -> list[tuple[list[int], list[float]]]:
    """Per query, (rows, scores) of the best ``k`` scores (>= min_score), best first, ties by row.

    With ``dedupe_by``, only the best row per value of that key in ``metadata(row)`` is kept. The
    thresholds of the whole batch come from one vectorised partition; each query then sorts only the
    rows reaching its threshold.
    """
    floor = -np.inf if min_score is None else float(min_score)
    # With dedupe, look at a window of the best m rows and widen it until k distinct groups are found:
    # the first row of each group inside the window is that group's best row overall.
    m = k if dedupe_by is None else 4 * k
    thresholds = _thresholds(scores, m)
    if dedupe_by is None and len(thresholds) > 1:  # one query: the loop below is fewer numpy calls
        batch = _top_rows_of_batch(scores, k, floor, thresholds)
        if batch is not None:
            return batch
    results = []
    for query in range(scores.values.shape[0]):
        window = m
        threshold = max(float(thresholds[query]), floor)
        while True:
            rows, exact = _rows_from(scores, query, threshold, floor, k if dedupe_by is None else None)
            if dedupe_by is None:
                results.append((rows[:k].tolist(), exact[:k].tolist()))
                break
            kept = dedupe_rows(rows.tolist(), k, dedupe_by, metadata)
            if len(kept) == k or threshold <= floor:  # k groups found, or every eligible row looked at
                score_of = dict(zip(rows.tolist(), exact.tolist(), strict=True))
                results.append((kept, [score_of[r] for r in kept]))
                break
            window *= 4
            block_max = None if scores.block_max is None else scores.block_max[query : query + 1]
            one = Scores(scores.values[query : query + 1], block_max, scores.block_rows,
                         scores.matrix, scores.queries[query : query + 1], scores.screen)
            threshold = max(float(_thresholds(one, window)[0]), floor)
    return results


def dedupe_rows(rows: list[int], k: int, key: str, metadata: Callable[[int], dict[str, Any]]) -> list[int]:
    """The first ``k`` rows of ``rows`` with distinct values of ``key``, in order."""
    kept: list[int] = []
    seen: set[Any] = set()
    for r in rows:
        g = _group_key(metadata, r, key)
        if g not in seen:
            seen.add(g)
            kept.append(r)
            if len(kept) == k:
                break
    return kept
