"""Exact cosine scoring and top-k selection for a CosineBank, kept apart from how the bank is stored.

Scoring is where the speed is won or lost: :func:`cosine_scores` scores a whole batch of queries in
one pass over the matrix and decides who threads it (us or BLAS) by matrix size; :func:`top_rows`
picks the best rows of every query without sorting them all (block maxima bound the k-th score),
optionally one per metadata group.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_BLOCK_ROWS = 1024  # rows per GEMM block and per top-k block maximum: a 2 MiB slab OpenBLAS packs cheaply
_RESCORE_MARGIN = 1e-4  # far above float32 rounding of a unit-vector dot product (~1e-6 at dim 4096)
_PARALLEL_MIN_BYTES = 64 << 20  # below this the matrix is cache-resident and BLAS threads it best


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result; ``metadata`` is a fresh dict decoded for this hit (safe to mutate)."""

    id: str
    score: float
    row: int
    metadata: dict[str, Any] = field(hash=False)


# ---------------------------------------------------------------------------------------------
# Scoring.

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_blas_limiter: Any = None  # threadpoolctl limiter while any search holds BLAS at one thread
_blas_holders = 0


def worker_count() -> int:
    """Threads a large search is split across: the CPUs this process may run on, at most 8."""
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


@functools.cache
def _blas_controller() -> Any:
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # scanning the loaded libraries costs ~0.3 ms: do it once


@contextlib.contextmanager
def _single_threaded_blas() -> Iterator[None]:
    """Hold BLAS at one thread; reference-counted so overlapping searches restore the original limit once.

    (Nesting plain threadpoolctl limits from several threads would restore in the wrong order and could
    leave the process stuck at one BLAS thread.) The limit is process-wide while held.
    """
    global _blas_limiter, _blas_holders
    with _pool_lock:
        if _blas_holders == 0:
            _blas_limiter = _blas_controller().limit(limits=1, user_api="blas")
        _blas_holders += 1
    try:
        yield
    finally:
        with _pool_lock:
            _blas_holders -= 1
            if _blas_holders == 0:
                _blas_limiter.restore_original_limits()
                _blas_limiter = None


@dataclass(frozen=True, slots=True)
class Scores:
    """Cosine scores of a batch of queries, plus each query's maximum per block of rows.

    The block maxima make top-k cheap on large banks: the m-th largest block maximum is a lower bound of
    the m-th largest score, so only the few blocks reaching it need to be looked at row by row.
    """

    values: np.ndarray  # (q, count) float32
    block_max: np.ndarray  # (q, ceil(count / block_rows)) float32
    block_rows: int
    matrix: np.ndarray  # what was scored, to rescore the few rows top-k returns
    queries: np.ndarray


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


def cosine_scores(matrix: np.ndarray, queries: np.ndarray) -> Scores:
    """Scores of every row for every (unit) query: one matrix product per batch, whatever its size.

    Cache-resident matrices, or one usable CPU: one BLAS call (GEMV for one query, GEMM for a batch),
    threaded by BLAS, exactly what ``queries @ matrix.T`` costs. Larger matrices on several CPUs (the
    bandwidth-bound case): our own thread per core over a contiguous range of row blocks, with BLAS
    limited to one thread. One query is then a GEMV per range (memory bandwidth, like OpenBLAS'
    threaded GEMV); a batch is a GEMM per block of ``_BLOCK_ROWS`` rows (a 2 MiB slab OpenBLAS packs
    cheaply), which streams the matrix once for the whole batch and matches or beats one threaded GEMM.
    Keeping all threading ours also avoids OpenBLAS workers that spin for ~0.1 s after each threaded
    call and then compete with our threads. Block maxima are taken right after each block is scored,
    while it is still in cache.
    """
    nq, count = queries.shape[0], matrix.shape[0]
    block_rows = _BLOCK_ROWS
    values = np.empty((nq, count), dtype=np.float32)
    block_max = np.empty((nq, -(-count // block_rows)), dtype=np.float32)
    workers = worker_count()
    if matrix.nbytes < _PARALLEL_MIN_BYTES or workers == 1:
        if nq == 1:
            np.matmul(matrix, queries[0], out=values[0])
        else:
            np.matmul(queries, matrix.T, out=values)
        _fill_block_max(values, block_max, 0, count, block_rows)
        return Scores(values, block_max, block_rows, matrix, queries)

    def part(lo: int, hi: int) -> None:
        if nq == 1:
            np.matmul(matrix[lo:hi], queries[0], out=values[0, lo:hi])
            _fill_block_max(values, block_max, lo, hi, block_rows)
            return
        for i in range(lo, hi, block_rows):
            e = min(i + block_rows, hi)
            np.matmul(queries, matrix[i:e].T, out=values[:, i:e])
            np.max(values[:, i:e], axis=1, out=block_max[:, i // block_rows])

    pool = _get_pool()
    with _single_threaded_blas():
        for fut in [pool.submit(part, lo, hi) for lo, hi in _row_blocks(count, block_rows, workers)]:
            fut.result()
    return Scores(values, block_max, block_rows, matrix, queries)


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

    With more blocks than ``m``: the ``m``-th largest block maximum (``m`` blocks reach it, so ``m``
    rows do), found by one partition of the small (q, blocks) array. Otherwise the exact ``m``-th
    largest score, by one partition of the (q, count) scores.
    """
    nq, count = scores.values.shape
    blocks = scores.block_max.shape[1]
    if m >= count:
        return np.full(nq, -np.inf, dtype=np.float32)
    if m < blocks:
        return np.partition(scores.block_max, blocks - m, axis=1)[:, blocks - m]
    return np.partition(scores.values, count - m, axis=1)[:, count - m]


def _rows_from(scores: Scores, query: int, threshold: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """(rows, scores) of ``query`` for the rows scoring >= ``threshold`` (and >= ``floor``), best first,
    ties by row; only the blocks reaching the threshold are read.

    The returned scores are recomputed row by row (the same arithmetic for every row, whatever the batch
    or its position in a BLAS kernel), so equal rows tie exactly and a batch scores as its queries do
    alone. Candidates are taken :data:`_RESCORE_MARGIN` below the threshold so that rounding differences
    between the matrix product and the rescoring cannot drop a row.
    """
    values = scores.values[query]
    low = threshold - _RESCORE_MARGIN
    if low == -np.inf:
        rows = np.arange(values.shape[0])
    else:
        blocks = np.flatnonzero(scores.block_max[query] >= low)
        if len(blocks) * 4 >= scores.block_max.shape[1]:  # most blocks: one pass over all rows is cheaper
            rows = np.flatnonzero(values >= low)
        else:
            rows = (blocks[:, None] * scores.block_rows + np.arange(scores.block_rows)).ravel()
            rows = rows[rows < values.shape[0]]
            rows = rows[values[rows] >= low]
    exact = np.einsum("ij,j->i", scores.matrix[rows], scores.queries[query])
    if floor > -np.inf:
        keep = exact >= floor
        rows, exact = rows[keep], exact[keep]
    order = np.lexsort((rows, -exact))
    return rows[order], exact[order]


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
    results = []
    for query in range(scores.values.shape[0]):
        window = m
        threshold = max(float(thresholds[query]), floor)
        while True:
            rows, exact = _rows_from(scores, query, threshold, floor)
            if dedupe_by is None:
                results.append((rows[:k].tolist(), exact[:k].tolist()))
                break
            kept = _dedupe(rows.tolist(), k, dedupe_by, metadata)
            if len(kept) == k or threshold <= floor:  # k groups found, or every eligible row looked at
                score_of = dict(zip(rows.tolist(), exact.tolist(), strict=True))
                results.append((kept, [score_of[r] for r in kept]))
                break
            window *= 4
            one = Scores(scores.values[query : query + 1], scores.block_max[query : query + 1], scores.block_rows,
                         scores.matrix, scores.queries[query : query + 1])
            threshold = max(float(_thresholds(one, window)[0]), floor)
    return results


def _dedupe(rows: list[int], k: int, key: str, metadata: Callable[[int], dict[str, Any]]) -> list[int]:
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
