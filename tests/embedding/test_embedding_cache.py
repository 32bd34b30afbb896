import copy
import hashlib
import threading
import time

import numpy as np
import pytest

from tracerag.embedding.embedders import l2_normalize
from tracerag.embedding.embedding_cache import CachedEmbedder, default_cache_path


class CountingEmbedder:
    """Deterministic fake: records every batch it is asked to embed."""

    def __init__(self, id="fake-v1", dim=16):
        self.id, self.dim = id, dim
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        seed = self.id.encode()
        rows = [
            np.frombuffer(hashlib.shake_256(seed + t.encode()).digest(self.dim), dtype=np.uint8)
            for t in texts
        ]
        return l2_normalize(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim) - 127.5)


def test_second_call_hits_cache(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "sub" / "dir" / "cache.sqlite")
    texts = ["打开客厅的灯", "turn on the TV", "打开客厅的灯", ""]
    first = cached.embed(texts)
    assert inner.calls == [["打开客厅的灯", "turn on the TV", ""]]  # deduplicated, one call
    second = cached.embed(texts)
    assert len(inner.calls) == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, inner.embed(texts), rtol=1e-6)
    assert first.dtype == np.float32 and first.shape == (4, 16)
    assert cached.id == inner.id and cached.dim == inner.dim


def test_only_misses_are_embedded_and_order_kept(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "c.sqlite")
    cached.embed(["a", "b"])
    texts = ["c", "b", "a", "d", "c", "a"]
    out = cached.embed(texts)
    assert inner.calls[-1] == ["c", "d"]
    np.testing.assert_allclose(out, CountingEmbedder().embed(texts), rtol=1e-6)


def test_inner_ids_do_not_share_entries(tmp_path):
    path = tmp_path / "c.sqlite"
    a, b = CountingEmbedder("model-a"), CountingEmbedder("model-b")
    va = CachedEmbedder(a, path).embed(["same text"])
    vb = CachedEmbedder(b, path).embed(["same text"])
    assert len(a.calls) == len(b.calls) == 1
    assert not np.allclose(va, vb)


def test_persists_across_instances(tmp_path):
    path = tmp_path / "c.sqlite"
    first = CachedEmbedder(CountingEmbedder(), path)
    v1 = first.embed(["x", "y"])
    first.close()
    inner = CountingEmbedder()
    v2 = CachedEmbedder(inner, path).embed(["y", "x"])
    assert inner.calls == []
    np.testing.assert_array_equal(v2, v1[::-1])


def test_empty_deepcopy_repr_default_path(tmp_path):
    cached = CachedEmbedder(CountingEmbedder(), tmp_path / "c.sqlite")
    assert cached.embed([]).shape == (0, 16)
    assert copy.deepcopy(cached) is cached
    assert repr(cached).startswith("CachedEmbedder(")
    assert default_cache_path().name == "embeddings.sqlite"


def test_concurrent_threads(tmp_path):
    inner = CountingEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "c.sqlite")
    texts = [f"t{i}" for i in range(50)]
    expected = CountingEmbedder().embed(texts)
    errors = []

    def work():
        try:
            np.testing.assert_allclose(cached.embed(texts), expected, rtol=1e-6)
        except Exception as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


@pytest.mark.slow  # a wall-clock figure: benchmarks/bench_embedding_cache.py measures it
def test_warm_lookup_of_2000_texts_is_fast(tmp_path):
    dim = 512
    texts = [f"客厅 device {i % 1500} 打开 switch-on {i % 7}" for i in range(2000)]
    path = tmp_path / "c.sqlite"
    CachedEmbedder(CountingEmbedder(dim=dim), path).embed(texts)
    inner = CountingEmbedder(dim=dim)
    cached = CachedEmbedder(inner, path)  # fresh instance: includes opening the database
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        out = cached.embed(texts)
        best = min(best, time.perf_counter() - start)
    assert inner.calls == [] and out.shape == (2000, dim)
    assert best < 0.2, f"warm cache lookup took {best:.3f}s"
