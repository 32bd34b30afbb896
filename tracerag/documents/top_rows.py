"""Each query's best rows of a (queries, rows) score matrix, best first, ties to the lowest row.

The exact selection a sort of every row by (score descending, row ascending) would give, without sorting or
partitioning whole rows (numpy's partition slows down on the long runs of equal scores BM25 leaves: every row
without a query word scores 0). The columns are dealt into interleaved groups (column c into group c mod G);
the groups' maxima come from one elementwise pass, and the m-th largest group maximum of a row is a floor that
at least m of its entries reach, and few more. The entries at or above their row's floor are found in one
compare of the batch and sorted together. A row whose floor is shared by a crowd of groups (long runs of ties
at the cut: a query that matches fewer than m rows) takes the entries above it and the lowest-indexed ties.
Kept apart from the word index and the retriever: the lexical search and the hybrid fusion both rank with it.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["best_rows", "top_rows"]

_CROWD = 8  # a row with more than this many times m groups at its floor is read whole
_MIN_GROUPS = 128  # numpy's maximum across a batch's groups runs at vector speed from about this many on


def top_rows(scores: np.ndarray, m: int) -> list[np.ndarray]:
    """Per row of a (q, n) score matrix, the indices of its ``m`` largest scores, best first, ties by index
    (of equal scores at the cut, the lowest indices). Scores must not be NaN."""
    return list(best_rows(scores, m)[0])


def best_rows(scores: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores), each (q, min(m, n)): :func:`top_rows` as two matrices, for a caller that reads the
    batch's hits in a few calls rather than row by row."""
    q, n = scores.shape
    m = max(min(m, n), 0)
    if m == 0 or q == 0:
        return np.zeros((q, m), dtype=np.int64), np.zeros((q, m), dtype=scores.dtype)
    groups = max(1 << round(math.log2(n) / 2), 4 * m, _MIN_GROUPS)  # about sqrt(n) groups of sqrt(n) columns
    if 2 * groups > n:  # too few columns for groups to pay: sort them all
        batch_row, index = np.divmod(np.arange(q * n), n)
        return _first(batch_row, index, scores.reshape(-1), q, m)
    depth = n // groups
    # the last n - depth * groups columns (fewer than depth) are in no group: the floor, the m-th largest
    # maximum of the others, is still one that m entries reach, and the compare below reads every column
    maxima = scores[:, : depth * groups].reshape(q, depth, groups).max(axis=1)
    floors = np.partition(maxima, maxima.shape[1] - m, axis=1)[:, maxima.shape[1] - m]
    crowded = (maxima >= floors[:, None]).sum(axis=1) > _CROWD * m
    reach = floors.copy()
    reach[crowded] = np.inf  # a crowded row is read on its own below
    found = np.flatnonzero(scores >= reach[:, None])  # by row of the batch, then index
    batch_row, index = np.divmod(found, n)
    if not crowded.any():
        return _first(batch_row, index, scores.reshape(-1)[found], q, m, by_index=True)
    parts = [(batch_row, index, scores.reshape(-1)[found])]
    for row, floor in zip(np.flatnonzero(crowded).tolist(), floors[crowded].tolist(), strict=True):
        found = np.flatnonzero(scores[row] > floor)
        found = np.concatenate([found, np.flatnonzero(scores[row] == floor)[: m - len(found)]])
        parts.append((np.full(len(found), row), found, scores[row, found]))
    batch_row, index, values = (np.concatenate(x) for x in zip(*parts, strict=True))
    return _first(batch_row, index, values, q, m)


def _first(batch_row: np.ndarray, index: np.ndarray, values: np.ndarray, q: int, m: int,
           by_index: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Candidates (each row of the batch has at least m) sorted by (row of the batch, score descending,
    index), the first ``m`` of each row; ``by_index``: they come sorted by (row of the batch, index) already,
    which the stable sort keeps among equal scores."""
    order = np.lexsort((-values, batch_row) if by_index else (index, -values, batch_row))
    counts = np.bincount(batch_row, minlength=q)
    firsts = order[(np.cumsum(counts) - counts)[:, None] + np.arange(m)]
    return index[firsts], values[firsts]
