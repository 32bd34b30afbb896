"""BM25 weights on a fixed grid, so that a query's score does not depend on the order its words are summed in.

A score is a sum of per-word weights. Summed in float32 it depends, in its last bit, on the order of the
additions, so a batch and a lone query (or two word indexes) agree bit for bit only if they add in the same
order: one numpy call per (query, word). Here every float32 weight is put on a grid of multiples of
:data:`GRID` (2**-30: only weights below 2**-7, those of words found in nearly every text, move, by at most
2**-31) and a query's weights are summed in float64. Every partial sum is then a multiple of 2**-30 below
2**23, which float64's 53 bits hold exactly: the sum is exact in any order, and its float32 is the score. So a
batch may be summed with a matrix product and scattered adds, in whatever order is fastest, and still give
bitwise the scores of one query at a time and of the other word indexes that use this module.

The bound: a query's weights must sum below 2**23; a weight is at most ``idf * (k1 + 1)``, about 45 for a
billion texts at the usual k1, so a query of fewer than about 180,000 words.

Exact sums pay where a batch is many small vectors (a numpy call's overhead against little work in it); on
an index of more than :data:`EXACT_ROWS` texts a float64 sum costs twice a float32 one in memory traffic, and
there the weights (still on the grid) are summed in float32, word by word in the query's order, one numpy call
per (query, word), which is also bitwise the same in a batch and alone. :func:`exact_sums` says which.
"""

from __future__ import annotations

import numpy as np

__all__ = ["EXACT_ROWS", "GRID", "exact_sums", "on_grid"]

GRID = 2.0**-30
EXACT_ROWS = 1 << 14  # up to this many texts, sums are exact (float64); above, float32 in the query's word order


def exact_sums(count: int) -> bool:
    """Whether an index of ``count`` texts sums a query's weights exactly (float64) rather than in float32."""
    return count <= EXACT_ROWS


def on_grid(weights: np.ndarray) -> np.ndarray:
    """float32 weights rounded to the nearest multiple of :data:`GRID` (unchanged from 2**-7 up, where float32
    steps are that size or coarser; below it, at most 23 bits, so still exactly a float32)."""
    return (np.round(np.asarray(weights, dtype=np.float64) / GRID) * GRID).astype(np.float32)
