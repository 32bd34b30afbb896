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
_MIN_GROUPS = 128  # numpy's maximum across a batch's groups runs at vector speed from about this many on ...
_MAX_DEPTH = 64  # ... and faster still with more groups, each shallower (memory speed at 1,000 and more)
_SCAN = 1 << 18  # up to this many scores a batch finds its candidates by one compare of the whole batch, ...
_GATHER = 16  # ... and above, unless reading its groups at the floor costs more: an entry gathered as 16 compared


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
    groups = max(1 << round(math.log2(n) / 2), 4 * m, _MIN_GROUPS, n // _MAX_DEPTH)  # about sqrt(n) groups
    if 2 * groups > n:  # too few columns for groups to pay: sort them all
        batch_row, index = np.divmod(np.arange(q * n), n)
        return _first(batch_row, index, scores.reshape(-1), q, m)
    depth = n // groups
    # the last n - depth * groups columns (fewer than depth) are in no group: the floor, the m-th largest
    # maximum of the others, is still one that m entries reach, and those columns are read whole
    maxima = scores[:, : depth * groups].reshape(q, depth, groups).max(axis=1)
    floors = np.partition(maxima, groups - m, axis=1)[:, groups - m]
    if q * n <= _SCAN:  # a small batch: one compare of it, unless a row has too many candidates (below)
        found = np.flatnonzero(scores >= floors[:, None])  # by row of the batch, then index
        batch_row, index = np.divmod(found, n)
        counts = np.bincount(batch_row, minlength=q)
        if counts.max() <= _CROWD * m * depth:  # no row with more than 8m groups' worth at its floor
            return _first(batch_row, index, scores.reshape(-1)[found], q, m, counts)
    above = maxima >= floors[:, None]
    reached = np.count_nonzero(above, axis=1)
    crowded = reached > _CROWD * m
    if not crowded.any():
        if _GATHER * depth * int(reached.sum()) > q * n:  # one compare of the batch costs less
            found = np.flatnonzero(scores >= floors[:, None])
            batch_row, index = np.divmod(found, n)
            return _first(batch_row, index, scores.reshape(-1)[found], q, m, np.bincount(batch_row, minlength=q))
        return _first(*_in_groups(scores, above, floors, depth), q, m)
    reach = np.where(crowded, np.inf, floors)  # a crowded row is read on its own below
    found = np.flatnonzero(scores >= reach[:, None])
    batch_row, index = np.divmod(found, n)
    parts = [(batch_row, index, scores.reshape(-1)[found])]
    for row, floor in zip(np.flatnonzero(crowded).tolist(), floors[crowded].tolist(), strict=True):
        found = np.flatnonzero(scores[row] > floor)
        found = np.concatenate([found, np.flatnonzero(scores[row] == floor)[: m - len(found)]])
        parts.append((np.full(len(found), row), found, scores[row, found]))
    batch_row, index, values = (np.concatenate(x) for x in zip(*parts, strict=True))
    return _first(batch_row, index, values, q, m)


def _in_groups(scores: np.ndarray, above: np.ndarray, floors: np.ndarray,
               depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row of the batch, index, score) of the entries at or above their row's floor, read from the groups
    whose maximum reaches it (``above``; a few per row) and the columns in no group, not from the whole
    batch: on a wide batch the compare and the scan of its mask cost more than the groups' maxima."""
    groups, n = above.shape[1], scores.shape[1]
    batch_row, group = np.nonzero(above)
    found = (batch_row * n + group)[:, None] + groups * np.arange(depth)  # (groups read, depth), flat indices
    values = scores.reshape(-1)[found]
    kept = values >= floors[batch_row, None]
    found, values = found[kept], values[kept]
    batch_row, columns = np.divmod(found, n)
    tail = scores[:, depth * groups :]
    if tail.shape[1]:
        rest_row, rest = np.nonzero(tail >= floors[:, None])
        batch_row = np.concatenate([batch_row, rest_row])
        columns = np.concatenate([columns, rest + depth * groups])
        values = np.concatenate([values, tail[rest_row, rest]])
    return batch_row, columns, values


def _first(batch_row: np.ndarray, index: np.ndarray, values: np.ndarray, q: int, m: int,
           counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Candidates (each row of the batch has at least m) sorted by (row of the batch, score descending,
    index), the first ``m`` of each row; ``counts`` (candidates per row) given: they come sorted by (row of
    the batch, index) already, which the stable sort keeps among equal scores."""
    order = np.lexsort((-values, batch_row) if counts is not None else (index, -values, batch_row))
    if counts is None:
        counts = np.bincount(batch_row, minlength=q)
    firsts = order[np.add.outer(np.cumsum(counts) - counts, np.arange(m))]
    return index[firsts], values[firsts]
