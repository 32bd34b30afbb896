"""Each query's best rows of a (queries, rows) score matrix, best first, ties to the lowest row.

The exact selection a sort of every row by (score descending, row ascending) would give, without sorting or
partitioning whole rows of a wide matrix (a large corpus): the maxima of its blocks give each query a floor
that at least ``m`` entries reach (the ``m``-th largest block maximum), and only the few blocks above the floor
are read again. On a narrow matrix the ``m``-th largest score comes from one partition of the batch and the
entries reaching it are ordered in one sort for the whole batch. Kept apart from the word index and the
retriever because both the lexical search and the hybrid fusion rank with it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_rows"]

_WIDE = 8192  # from this many columns on, the blocks' maxima pick the candidates
_MAX_BLOCK = 1024  # columns per block at most; at least 8 blocks per wanted entry


def top_rows(scores: np.ndarray, m: int) -> list[np.ndarray]:
    """Per row of a (q, n) score matrix, the indices of its ``m`` largest scores, best first, ties by index
    (of equal scores at the cut, the lowest indices). Scores must not be NaN."""
    q, n = scores.shape
    m = min(m, n)
    if m <= 0 or q == 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(q)]
    block = min(_MAX_BLOCK, 1 << max(int(n // (8 * m)).bit_length() - 1, 0))
    if n < _WIDE or block < 64:
        return _top_narrow(scores, m)
    full = n // block
    maxima = scores[:, : full * block].reshape(q, full, block).max(axis=2)
    if full * block < n:
        maxima = np.concatenate([maxima, scores[:, full * block :].max(axis=1, keepdims=True)], axis=1)
    # m distinct entries reach the m-th largest block maximum: it is at most the row's m-th largest score
    floors = np.partition(maxima, maxima.shape[1] - m, axis=1)[:, maxima.shape[1] - m]
    return [_top_wide(row, line, floor, block, m)
            for row, line, floor in zip(scores, maxima, floors.tolist(), strict=True)]


def _top_narrow(scores: np.ndarray, m: int) -> list[np.ndarray]:
    """The whole batch at once: each row's m-th largest score from one partition, the entries reaching it
    sorted by (row of the batch, score descending, index), the first ``m`` of each row kept."""
    q, n = scores.shape
    kth = np.partition(scores, n - m, axis=1)[:, n - m]
    batch_row, index = np.nonzero(scores >= kth[:, None])  # at least m per row of the batch
    order = np.lexsort((index, -scores[batch_row, index], batch_row))
    counts = np.bincount(batch_row, minlength=q)
    firsts = (np.cumsum(counts) - counts)[:, None] + np.arange(m)
    return list(index[order][firsts])


def _top_wide(row: np.ndarray, maxima: np.ndarray, floor: float, block: int, m: int) -> np.ndarray:
    """One row's top ``m``: the entries above ``floor`` (in fewer than m blocks, whose maxima exceed it),
    then, if fewer than m, the lowest-indexed entries equal to it (the m-th largest score is then ``floor``)."""
    n = len(row)
    full = n // block
    above = np.flatnonzero(maxima > floor)
    whole = above[above < full]
    at, offset = np.nonzero(row[: full * block].reshape(full, block)[whole] > floor)
    index = whole[at] * block + offset
    if len(whole) < len(above):  # the last, shorter block
        index = np.concatenate([index, full * block + np.flatnonzero(row[full * block :] > floor)])
    if len(index) < m:
        index = np.concatenate([index, np.flatnonzero(row == floor)[: m - len(index)]])
    return index[np.lexsort((index, -row[index]))][:m]
