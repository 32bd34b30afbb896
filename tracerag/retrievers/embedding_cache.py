"""On-disk embedding cache, so re-indexing unchanged data costs lookups instead of model calls.

Entries are keyed by (embedder id, sha256(text)), so different models never share vectors and the
cache stays valid across processes and library versions as long as the embedder id is stable.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np

from .embedders import Embedder

__all__ = ["CachedEmbedder", "default_cache_path"]

Rows = dict[bytes, np.ndarray]  # embedding by text key
_CHUNK = 500  # bound parameters per lookup query (SQLite's limit is 999 on old builds)


def default_cache_path() -> Path:
    return Path.home() / ".cache" / "tracerag" / "embeddings.sqlite"


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache; only texts never seen by this embedder id reach it."""

    def __init__(self, inner: Embedder, path: str | Path) -> None:
        self.inner = inner
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _connect(self) -> sqlite3.Connection:
        # Caller holds self._lock; one shared connection, serialised by that lock.
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, hash BLOB NOT NULL, "
                "vec BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID"
            )
            conn.commit()
            self._conn = conn
        return self._conn

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys, unique, found, misses = self._lookup(texts)
        if misses:
            self._store(found, misses, self.inner.embed([unique[k] for k in misses]))
        return self._rows(keys, found)

    @property
    def aembed(self) -> Callable[[Sequence[str]], Awaitable[np.ndarray]] | None:
        """``embed`` for an event loop when the wrapped embedder has one (a remote service): the misses
        are awaited without holding a thread; the cache's SQLite lookups and writes stay local and short.
        None for a local model, whose work belongs in a worker thread."""
        return self._aembed if getattr(self.inner, "aembed", None) is not None else None

    async def _aembed(self, texts: Sequence[str]) -> np.ndarray:
        keys, unique, found, misses = self._lookup(texts)
        if misses:
            self._store(found, misses, await self.inner.aembed([unique[k] for k in misses]))
        return self._rows(keys, found)

    def _lookup(self, texts: Sequence[str]) -> tuple[list[bytes], dict[bytes, str], Rows, list[bytes]]:
        """(key per text, text per unique key, cached rows by key, keys not cached)."""
        keys = [_key(t) for t in texts]
        unique = dict(zip(keys, texts, strict=True))
        found: Rows = {}
        if unique:
            with self._lock:
                conn = self._connect()
                pending = list(unique)
                for i in range(0, len(pending), _CHUNK):
                    chunk = pending[i : i + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    query = f"SELECT hash, vec FROM embeddings WHERE model = ? AND hash IN ({marks})"
                    rows = conn.execute(query, [self.inner.id, *chunk])
                    found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
        return keys, unique, found, [k for k in unique if k not in found]

    def _store(self, found: Rows, misses: list[bytes], fresh: np.ndarray) -> None:
        fresh = np.asarray(fresh, dtype=np.float32)
        found.update(zip(misses, fresh, strict=True))
        with self._lock:
            conn = self._connect()
            with conn:  # one transaction
                conn.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, hash, vec) VALUES (?, ?, ?)",
                    [(self.inner.id, k, v.tobytes()) for k, v in zip(misses, fresh, strict=True)],
                )

    def _rows(self, keys: list[bytes], found: Rows) -> np.ndarray:
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __deepcopy__(self, memo: dict) -> CachedEmbedder:
        return self

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r})"
