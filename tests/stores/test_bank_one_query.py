"""One query's shorter path through the bank gives the numbers the general path gives: the query normalised
bit for bit as l2_normalize does it, rows rescored bit for bit as the batch rescoring does, the approximate
search's single query answered as the same query in a batch, and hits whose metadata is decoded when read."""

import pickle

import numpy as np
import pytest

from tracerag.embedding.embedders import l2_normalize
from tracerag.errors import InvalidValue
from tracerag.stores.bank_queries import unit_queries
from tracerag.stores.bank_search import rescore, rescore_one
from tracerag.stores.cosine_bank import CosineBank


def bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")  # 1e18 squared: as the batch way warns
@pytest.mark.parametrize("dim", [1, 2, 3, 7, 31, 32, 33, 127, 128, 384, 768, 1536, 4096])
def test_one_query_is_normalised_bit_for_bit_as_a_batch(dim):
    rng = np.random.default_rng(dim)
    for scale in (1e-6, 1e-2, 1.0, 3.0, 1e6, 1e18):
        q = rng.standard_normal(dim) * scale
        for given in (q, q.astype(np.float32), q[None, :], np.repeat(q, 2)[::2]):  # float64, float32, 2-D, strided
            mine = unit_queries(given, dim)
            assert mine.shape == (1, dim) and mine.dtype == np.float32 and mine.flags.c_contiguous
            assert np.array_equal(bits(mine), bits(l2_normalize(np.asarray(given, dtype=np.float32).reshape(1, -1))))
    unit = l2_normalize(rng.standard_normal((1, dim)))
    assert np.array_equal(bits(unit_queries(unit[0], dim)), bits(l2_normalize(unit)))  # norm 1.0 or not


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_one_query_of_zeros_or_huge_values_comes_out_as_the_batch_way_makes_it():
    for q in (np.zeros(16), np.full(16, 3e19), np.full(16, 1e38)):  # the last two overflow the sum of squares
        assert np.array_equal(bits(unit_queries(q, 16)), bits(l2_normalize(np.asarray(q, np.float32)[None])))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_query_that_is_not_finite_still_fails_clearly(bad):
    for n in (1, 3):
        q = np.ones((n, 8))
        q[-1, 2] = bad
        with pytest.raises(InvalidValue, match="NaN or infinity"):
            unit_queries(q, 8)


def test_a_query_of_the_wrong_dim_still_fails_clearly():
    for q in (np.ones(7), np.ones((1, 9)), np.ones((1, 2, 8))):
        with pytest.raises(InvalidValue, match=r"must have shape \(q, 8\) or \(8,\)"):
            unit_queries(q, 8)


@pytest.mark.parametrize("dim", [3, 32, 128, 384, 1000])
def test_one_query_is_rescored_bit_for_bit_as_in_a_batch(dim):
    rng = np.random.default_rng(dim)
    matrix = l2_normalize(rng.standard_normal((6000, dim)))
    queries = l2_normalize(rng.standard_normal((3, dim)))
    for n in (1, 11, 500, 6000):
        rows = rng.choice(len(matrix), n, replace=False)
        for i in range(3):
            assert np.array_equal(bits(rescore_one(matrix, queries[i], rows)),
                                  bits(rescore(matrix, queries, np.full(n, i), rows)))


def test_an_approximate_search_of_one_query_answers_as_that_query_in_a_batch(tmp_path):
    pytest.importorskip("faiss")
    rng = np.random.default_rng(3)
    vectors = l2_normalize(rng.standard_normal((3000, 24)))
    bank = CosineBank.from_vectors(tmp_path / "b", vectors, [f"r{i}" for i in range(3000)],
                                   [{"n": i} for i in range(3000)], embedder_id="test")
    bank.build_ann(m=8, ef_construction=40)
    queries = rng.standard_normal((40, 24)).astype(np.float32)
    units = l2_normalize(queries)  # many of norm 1.0 exactly: used as they are
    assert (np.sqrt(np.add.reduce(units * units, axis=1)) == 1.0).sum() >= 10
    for given in (queries, units):
        for min_score in (None, 0.3):
            batch = bank.search_rows(given, k=10, min_score=min_score, exact=False, ef=64)
            assert [bank.search_rows(q, k=10, min_score=min_score, exact=False, ef=64)[0] for q in given] == batch


def test_hits_decode_their_metadata_when_read_each_a_fresh_dict(tmp_path):
    rng = np.random.default_rng(4)
    vectors = l2_normalize(rng.standard_normal((200, 8)))
    bank = CosineBank.from_vectors(tmp_path / "b", vectors, [f"r{i}" for i in range(200)],
                                   [{"n": i} for i in range(200)], embedder_id="test")
    for query in (vectors[5], vectors[[5, 5]]):
        found = bank.search(query, k=3, min_score=None)
        hits = [h for per in found for h in per]
        assert [h.metadata for h in hits] == [bank.metadata(h.row) for h in hits]
        hits[0].metadata["n"] = -1  # safe to mutate: no other hit shares it
        assert all(h.metadata == {"n": h.row} for h in hits[1:])
        again = bank.search(query, k=3, min_score=None)
        assert pickle.loads(pickle.dumps(again)) == again and again[0][0].metadata == {"n": 5}
