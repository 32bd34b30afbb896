"""The embedding cache stays under its cap: least recently used entries go, recently used ones stay, the
write-ahead log is truncated, hits do not write, and a cache written before the cap is trimmed on open."""

from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pytest

from tracerag.embedding.embedding_cache import ENV_CACHE_MAX_MB, CachedEmbedder


class TinyEmbedder:
    """A fast fake: a text's vector is its length and first character code, padded; counts what it embeds."""

    id, dim = "tiny-v1", 32

    def __init__(self):
        self.embedded = 0

    def embed(self, texts):
        self.embedded += len(texts)
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rows[i, 0], rows[i, 1] = len(text), ord(text[0]) if text else 0
        return rows


def _on_disk(path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))  # the file, its -wal and -shm


def _entries(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]


@pytest.mark.parametrize(("utterances", "cap_mb"), [(4000, 0.75), pytest.param(20_000, 1.0, marks=pytest.mark.slow)])
def test_unique_utterances_stay_under_the_cap(utterances, cap_mb, tmp_path):
    path, batch = tmp_path / "c.sqlite", 500
    cached = CachedEmbedder(TinyEmbedder(), path, max_mb=cap_mb)
    assert 2 * batch < cached.file.max_entries() < utterances / 2  # the cap, not the load, bounds this run
    largest = 0
    for start in range(0, utterances, batch):
        texts = [f"turn on lamp {i} in room {i % 37}" for i in range(start, start + batch)]
        assert cached.embed(texts).shape == (batch, TinyEmbedder.dim)
        largest = max(largest, _on_disk(path))  # after every call: the file, its log and shared memory
    cached.close()
    assert largest <= cap_mb * 1024 * 1024, largest
    assert _entries(path) <= cached.file.max_entries()
    assert not path.with_name(path.name + "-wal").exists() or path.with_name(path.name + "-wal").stat().st_size == 0


def test_one_call_larger_than_the_cap_does_not_grow_the_file_past_it(tmp_path):
    path = tmp_path / "c.sqlite"
    cached = CachedEmbedder(TinyEmbedder(), path, max_mb=0.3)
    texts = [f"index text {i}" for i in range(4 * cached.file.max_entries())]
    assert cached.embed(texts).shape == (len(texts), TinyEmbedder.dim)  # every vector returned
    assert _on_disk(path) <= 0.3 * 1024 * 1024
    cached.close()


def test_recently_used_entries_stay_and_the_least_recently_used_go(tmp_path):
    inner = TinyEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "c.sqlite", max_mb=0.2)
    cap = cached.file.max_entries()
    old = [f"old {i}" for i in range(cap)]
    cached.embed(old)
    kept = old[: cap // 4]
    for _ in range(3):  # used again and again while new utterances arrive
        cached.embed(kept)
        cached.embed([f"new {i} {_}" for i in range(cap // 3)])
    before = inner.embedded
    cached.embed(kept)
    assert inner.embedded == before  # all still cached
    cached.embed(old[-10:])
    assert inner.embedded == before + 10  # never used again: dropped


def test_hits_do_not_write_until_a_batch_of_them_is_due(tmp_path, monkeypatch):
    from tracerag.embedding import embedding_cache

    monkeypatch.setattr(embedding_cache, "TOUCH_BATCH", 50)
    path = tmp_path / "c.sqlite"
    cached = CachedEmbedder(TinyEmbedder(), path)
    cached.embed([f"t{i}" for i in range(60)])
    wal = path.with_name(path.name + "-wal")
    size = wal.stat().st_size
    with sqlite3.connect(path) as conn:
        version = conn.execute("PRAGMA data_version").fetchone()[0]  # changes when another connection writes
        for _ in range(5):
            cached.embed([f"t{i}" for i in range(49)])  # fewer distinct hits than a batch: kept in memory
        assert conn.execute("PRAGMA data_version").fetchone()[0] == version and wal.stat().st_size == size
        cached.embed(["t49"])  # the fiftieth: the batch is written
        assert conn.execute("PRAGMA data_version").fetchone()[0] != version
        cached.embed(["t55"])
        cached.close()  # and what waits is written at close
        used = dict(conn.execute("SELECT hash, used FROM entries").fetchall())
    conn.close()
    by_text = {f"t{i}": used[hashlib.sha256(f"t{i}".encode()).digest()] for i in range(60)}
    assert by_text["t55"] > by_text["t49"] > by_text["t50"] and by_text["t0"] > by_text["t59"]


def _first_layout(path, rows):
    """A cache as the first layout wrote it: keyed by (model, hash), no last-use time, 4 KiB pages."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE embeddings (model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL, "
                     "PRIMARY KEY (model, hash)) WITHOUT ROWID")
        conn.executemany("INSERT INTO embeddings VALUES (?, ?, ?)", rows)
    conn.close()


def test_a_cache_in_the_first_layout_is_moved_over_on_open(tmp_path):
    path, inner = tmp_path / "c.sqlite", TinyEmbedder()
    vectors = TinyEmbedder().embed(["lamp on", "tv off"])
    _first_layout(path, [("tiny-v1", hashlib.sha256(t.encode()).digest(), v.tobytes())
                         for t, v in zip(["lamp on", "tv off"], vectors, strict=True)])
    cached = CachedEmbedder(inner, path)
    np.testing.assert_array_equal(cached.embed(["tv off", "lamp on"]), vectors[::-1])
    assert inner.embedded == 0  # hits: nothing re-embedded
    cached.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 16384
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'embeddings'").fetchone()
    conn.close()


def test_a_cache_over_its_cap_is_trimmed_on_open(tmp_path):
    path = tmp_path / "c.sqlite"
    _first_layout(path, [("tiny-v1", i.to_bytes(32, "big"), bytes(128)) for i in range(5000)])
    cached = CachedEmbedder(TinyEmbedder(), path, max_mb=0.2)
    assert cached.embed(["fresh"]).shape == (1, 32)
    cached.close()
    assert _entries(path) <= cached.file.max_entries() < 5000
    assert _on_disk(path) <= 0.2 * 1024 * 1024


def test_the_cap_comes_from_the_argument_or_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_CACHE_MAX_MB, raising=False)
    assert CachedEmbedder(TinyEmbedder(), tmp_path / "c.sqlite").max_mb == 256
    monkeypatch.setenv(ENV_CACHE_MAX_MB, "64")
    assert CachedEmbedder(TinyEmbedder(), tmp_path / "c.sqlite").max_mb == 64
    assert CachedEmbedder(TinyEmbedder(), tmp_path / "c.sqlite", max_mb=8).max_mb == 8
    monkeypatch.setenv(ENV_CACHE_MAX_MB, "lots")
    with pytest.raises(ValueError, match="TRACERAG_CACHE_MAX_MB='lots'"):
        CachedEmbedder(TinyEmbedder(), tmp_path / "c.sqlite")
    with pytest.raises(ValueError, match="max_mb must be a positive number"):
        CachedEmbedder(TinyEmbedder(), tmp_path / "c.sqlite", max_mb=0)
