"""Exact cosine scoring and top-k selection for a CosineBank, kept apart from how the bank is stored.

Scoring is where the speed is won or lost: :func:`cosine_scores` decides who threads the matrix
product (us or BLAS) by matrix size and query count; :func:`top_rows` picks the best rows without
sorting them all, optionally one per metadata group.
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

_BLOCK_ROWS = 1024  # rows per GEMM block for batched queries: a 2 MiB slab OpenBLAS packs cheaply
_PARALLEL_MIN_BYTES = 64 << 20  # below this the matrix is cache-resident and per-query GEMV wins
_GEMM_MIN_QUERIES = 64  # from here on one plain GEMM amortises OpenBLAS' packing of the matrix


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


def cosine_scores(matrix: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """(q, count) float32 cosine scores, streaming the matrix from memory once wherever possible.

    Matrices larger than the cache (the bandwidth-bound case), fewer than ``_GEMM_MIN_QUERIES`` queries:
    our own thread per core over a contiguous row range, with BLAS limited to one thread. One query is
    then a GEMV per range (memory bandwidth, like OpenBLAS' threaded GEMV); a few queries are GEMMs over
    2 MiB row blocks, ~2x one query for 4 (one threaded GEMM re-packs the whole matrix for a handful of
    columns: ~3x). Keeping all threading ours also avoids OpenBLAS workers that spin for ~0.1 s after
    each threaded call and then compete with our threads. Cache-resident matrices: BLAS-threaded GEMV
    per query. Many queries: one plain GEMM, where packing is amortised.
    """
    nq, count = queries.shape[0], matrix.shape[0]
    out = np.empty((nq, count), dtype=np.float32)
    workers = worker_count()
    if nq >= _GEMM_MIN_QUERIES:
        np.matmul(queries, matrix.T, out=out)
    elif matrix.nbytes < _PARALLEL_MIN_BYTES or workers == 1:
        for j in range(nq):
            np.matmul(matrix, queries[j], out=out[j])
    else:
        pool = _get_pool()
        bounds = np.linspace(0, count, workers + 1).astype(int).tolist()

        def part(lo: int, hi: int) -> None:
            if nq == 1:
                np.matmul(matrix[lo:hi], queries[0], out=out[0, lo:hi])
                return
            for i in range(lo, hi, _BLOCK_ROWS):
                e = min(i + _BLOCK_ROWS, hi)
                np.matmul(queries, matrix[i:e].T, out=out[:, i:e])

        with _single_threaded_blas():
            for fut in [pool.submit(part, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)]:
                fut.result()
    return out


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


def top_rows(
    scores: np.ndarray,
    k: int,
    min_score: float | None,
    dedupe_by: str | None,
    metadata: Callable[[int], dict[str, Any]],
) -> list[int]:
    """Rows of the best ``k`` scores (>= min_score), best first, ties by row.

    With ``dedupe_by``, only the best row per value of that key in ``metadata(row)`` is kept.
    """
    if min_score is not None:
        cand = np.flatnonzero(scores >= min_score)
        cand_scores = scores[cand]
    else:
        cand, cand_scores = None, scores
    n = cand_scores.shape[0]
    if n == 0:
        return []
    # With dedupe, look at a window of the best m rows and widen it until k distinct groups are found:
    # the first row of each group inside the window is that group's best row overall.
    m = min(n, k if dedupe_by is None else 4 * k)
    while True:
        part = np.argpartition(cand_scores, n - m)[n - m :] if m < n else np.arange(n)  # the m largest
        order = part[np.lexsort((part, -cand_scores[part]))]
        rows = order if cand is None else cand[order]
        if dedupe_by is None:
            return [int(r) for r in rows[:k]]
        kept: list[int] = []
        seen: set[Any] = set()
        for r in rows.tolist():
            g = _group_key(metadata, r, dedupe_by)
            if g not in seen:
                seen.add(g)
                kept.append(r)
                if len(kept) == k:
                    return kept
        if m == n:
            return kept
        m = min(n, m * 4)
