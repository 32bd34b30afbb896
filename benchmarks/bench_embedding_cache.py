"""The on-disk embedding cache under a unique-utterance load: its size on disk and its lookup times, in the
first layout (no cap; its SQL copied here as the baseline) and in the current one (LRU cap), same run.

    python benchmarks/bench_embedding_cache.py [--utterances 20000] [--batch 1] [--dim 512] [--caps 256,16]

Load: ``--utterances`` unique utterances, ``--batch`` per call (1: one request's utterance, as ``tracerag
serve`` sees them), from a fake embedder of ``--dim`` dimensions (512: the local encoder's), so only the cache
is timed (median store time per call, and the whole load). Then, on the warm cache: one recent utterance
looked up per call (median of 2,000 calls) and the 2,000 most recent in one call (median of 21). Size: the
database, its write-ahead log and shared-memory file after the load, before closing (what a running service
holds), and after closing.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tracerag.embedding.embedding_cache import CachedEmbedder  # noqa: E402


class FakeEmbedder:
    """Vectors from a text's hash: no model time in the figures."""

    def __init__(self, dim: int):
        self.id, self.dim = "fake-v1", dim

    def embed(self, texts):
        rows = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        return rows


class FirstLayoutCache:
    """The cache as it was before the cap (its SQL, unchanged): one WITHOUT ROWID table keyed by (model, hash),
    SQLite's default pages, every unique text kept."""

    def __init__(self, inner, path: Path):
        self.inner, self.path = inner, path
        self.conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, hash BLOB NOT NULL, "
                          "vec BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID")
        self.conn.commit()

    def embed(self, texts):
        keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).digest() for t in texts]
        unique = dict(zip(keys, texts, strict=True))
        found = {}
        pending = list(unique)
        for i in range(0, len(pending), 500):
            chunk = pending[i : i + 500]
            query = f"SELECT hash, vec FROM embeddings WHERE model = ? AND hash IN ({','.join('?' * len(chunk))})"
            found.update((h, np.frombuffer(v, dtype=np.float32))
                         for h, v in self.conn.execute(query, [self.inner.id, *chunk]))
        misses = [k for k in unique if k not in found]
        if misses:
            fresh = np.asarray(self.inner.embed([unique[k] for k in misses]), dtype=np.float32)
            found.update(zip(misses, fresh, strict=True))
            with self.conn:
                self.conn.executemany("INSERT OR REPLACE INTO embeddings (model, hash, vec) VALUES (?, ?, ?)",
                                      [(self.inner.id, k, v.tobytes()) for k, v in zip(misses, fresh, strict=True)])
        return np.stack([found[k] for k in keys])

    def close(self):
        self.conn.close()


def _on_disk(path: Path) -> tuple[int, int]:
    """(database bytes, log + shared-memory bytes)."""
    files = {p.name[len(path.name):]: p.stat().st_size for p in path.parent.glob(path.name + "*")}
    return files.get("", 0), files.get("-wal", 0) + files.get("-shm", 0)


def run(name: str, make, utterances: list[str], batch: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "embeddings.sqlite"
        cache = make(path)
        stores = []
        for i in range(0, len(utterances), batch):
            t0 = time.perf_counter()
            cache.embed(utterances[i : i + batch])
            stores.append(time.perf_counter() - t0)
        recent = utterances[-2000:]
        singles = []
        for text in recent:
            t0 = time.perf_counter()
            cache.embed([text])
            singles.append(time.perf_counter() - t0)
        batches = []
        for _ in range(21):
            t0 = time.perf_counter()
            cache.embed(recent)
            batches.append(time.perf_counter() - t0)
        db, log = _on_disk(path)
        cache.close()
        closed = sum(_on_disk(path))
        table = "embeddings" if isinstance(cache, FirstLayoutCache) else "entries"
        with sqlite3.connect(path) as conn:
            entries = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        conn.close()
    return {"name": name, "entries": entries, "db_mb": db / 2**20, "log_mb": log / 2**20, "closed_mb": closed / 2**20,
            "bytes_per_entry": db / max(entries, 1), "store_ms": statistics.median(stores) * 1000,
            "store_total_s": sum(stores),
            "hit_us": statistics.median(singles) * 1e6, "batch_ms": statistics.median(batches) * 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--caps", default="256,16", help="MB caps for the current layout, comma-separated")
    args = parser.parse_args(argv)
    inner = FakeEmbedder(args.dim)
    utterances = [f"把{i % 97}号房间的灯调到{i % 100}% please, request {i}" for i in range(args.utterances)]
    results = [run("first layout, no cap", lambda p: FirstLayoutCache(inner, p), utterances, args.batch)]
    for cap in (float(c) for c in args.caps.split(",") if c):
        results.append(run(f"LRU cap {cap:g} MB", lambda p, cap=cap: CachedEmbedder(inner, p, max_mb=cap),
                           utterances, args.batch))
    print(f"{args.utterances} unique utterances, {args.batch} per call, {args.dim} dimensions\n")
    print("| cache | entries kept | database MB | log + shm MB (open) | MB after close | bytes per entry "
          "| store ms per call (median) | load s (total) | 1-text hit µs (median) | 2,000-text hit ms (median) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['name']} | {r['entries']} | {r['db_mb']:.1f} | {r['log_mb']:.1f} | {r['closed_mb']:.1f} "
              f"| {r['bytes_per_entry']:.0f} | {r['store_ms']:.2f} | {r['store_total_s']:.1f} | {r['hit_us']:.0f} "
              f"| {r['batch_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
