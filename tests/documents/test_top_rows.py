"""Each query's best rows, best first, ties to the lowest row: what a full sort gives, on narrow and wide
matrices (the wide ones read only the blocks above a floor)."""

import numpy as np
import pytest

from tracerag.documents.top_rows import top_rows


def full_sort(scores, m):
    return [np.lexsort((np.arange(len(row)), -row))[: min(m, len(row))] for row in scores]


def matrix(kind, n, rng):
    if kind == "distinct":
        return rng.random((5, n)).astype(np.float32)
    if kind == "ties":  # a few values: long runs of equal scores at the cut
        return rng.integers(0, 3, (5, n)).astype(np.float32)
    if kind == "zeros":  # no query word occurs anywhere: the lowest rows, in order
        return np.zeros((5, n), dtype=np.float32)
    out = np.zeros((5, n), dtype=np.float32)  # a rare word: fewer rows above 0 than asked for
    out[:, rng.integers(0, n, 4)] = rng.random(4).astype(np.float32)
    return out


@pytest.mark.parametrize("n", [1, 7, 1000, 8191, 8192, 8500, 40_000])
@pytest.mark.parametrize("kind", ["distinct", "ties", "zeros", "sparse"])
@pytest.mark.parametrize("scan", [True, False])  # candidates by a compare of the whole batch, or from its groups
def test_top_rows_are_a_full_sort_by_score_then_row(n, kind, scan, monkeypatch):
    from tracerag.documents import top_rows as module

    monkeypatch.setattr(module, "_SCAN", 1 << 40 if scan else 0)
    monkeypatch.setattr(module, "_GATHER", 16 if scan else 0)
    rng = np.random.default_rng(n)
    scores = matrix(kind, n, rng)
    for m in (1, 10, 50, 400):
        found = top_rows(scores, m)
        assert len(found) == len(scores)
        for got, expected in zip(found, full_sort(scores, m), strict=True):
            assert got.tolist() == expected.tolist()


def test_wide_rows_with_ties_across_block_edges():
    scores = np.zeros((2, 20_000), dtype=np.float32)
    scores[0, [5, 1023, 1024, 2047, 19_999]] = 2.0  # the cut falls inside a run of equal scores
    scores[0, [7, 19_998]] = 3.0
    scores[1, 19_990:] = 1.0  # the best rows only in the last, shorter block
    assert top_rows(scores, 4)[0].tolist() == [7, 19_998, 5, 1023]
    assert top_rows(scores, 3)[1].tolist() == [19_990, 19_991, 19_992]


def test_no_rows_or_nothing_asked():
    assert top_rows(np.zeros((0, 10), dtype=np.float32), 3) == []
    assert [x.tolist() for x in top_rows(np.ones((2, 10), dtype=np.float32), 0)] == [[], []]
    assert [x.tolist() for x in top_rows(np.ones((1, 3), dtype=np.float32), 10)] == [[0, 1, 2]]
