"""On-disk embedding cache, so re-indexing unchanged data costs lookups instead of model calls.

:class:`CachedEmbedder` wraps an embedder: a text whose vector this embedder id stored before is looked up, only
the others reach the wrapped embedder, and their vectors are stored. The file it keeps them in
(:mod:`.cache_file`: keyed by (embedder id, sha256(text)), so different models never share vectors, and bounded
by ``max_mb``, default 256 MB or ``TRACERAG_CACHE_MAX_MB``, past which the least recently used entries are
dropped) and what a failure of that file costs (:mod:`.cache_failures`: speed, never answers) each have a module
of their own; this one decides what is looked up, embedded and stored, and hands every failure on.
"""

from __future__ import annotations

import hashlib
import math
import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np

from ..errors import InvalidValue
from .cache_failures import CacheFailures
from .cache_file import CacheFile, Rows
from .embedders import Embedder

__all__ = ["DEFAULT_MAX_MB", "ENV_CACHE_MAX_MB", "CachedEmbedder", "default_cache_path"]

DEFAULT_MAX_MB = 256.0
ENV_CACHE_MAX_MB = "TRACERAG_CACHE_MAX_MB"
TOUCH_BATCH = 20_000  # hits whose last-use time waits in memory before it is written (~2 MB)


def default_cache_path() -> Path:
    return Path.home() / ".cache" / "tracerag" / "embeddings.sqlite"


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def _now() -> int:
    return time.time_ns() // 1000  # microseconds: shared by every process using the file


def _max_mb(value: float | None) -> float:
    if value is None:
        text = os.environ.get(ENV_CACHE_MAX_MB, "").strip()
        if not text:
            return DEFAULT_MAX_MB
        try:
            value = float(text)
        except ValueError:
            raise InvalidValue(f"{ENV_CACHE_MAX_MB}={text!r}: expected a number of megabytes, e.g. 256") from None
        where = ENV_CACHE_MAX_MB
    else:
        where = "max_mb"
    if not (value > 0 and math.isfinite(value)):
        raise InvalidValue(f"{where} must be a positive number of megabytes, not {value!r}")
    return float(value)


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache; only texts never seen by this embedder id reach it.

    ``max_mb``: the cap on the cache's files (default ``TRACERAG_CACHE_MAX_MB``, else :data:`DEFAULT_MAX_MB`);
    past it the least recently used entries, of any embedder id, are dropped. A cache that fails is set aside
    or bypassed (:mod:`.cache_failures`): the vectors are then the wrapped embedder's, computed again."""

    def __init__(self, inner: Embedder, path: str | Path, *, max_mb: float | None = None) -> None:
        self.inner = inner
        self.file = CacheFile(Path(path), _max_mb(max_mb), inner)
        self._failures = CacheFailures(self.file)
        self._lock = threading.Lock()  # one for the file and its failures: every call on them holds it

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def path(self) -> Path:
        return self.file.path

    @property
    def max_mb(self) -> float:
        return self.file.max_mb

    @property
    def errors(self) -> Counter[str]:
        """This cache's failures (and bad rows) by cause."""
        return self._failures.errors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys, unique, found, misses = self._lookup(texts)
        if misses:
            self._store(found, misses, self.inner.embed([unique[k] for k in misses]))
            wrong = self._other_width(found, misses)
            if wrong:
                self._store(found, wrong, self.inner.embed([unique[k] for k in wrong]))
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
            wrong = self._other_width(found, misses)
            if wrong:
                self._store(found, wrong, await self.inner.aembed([unique[k] for k in wrong]))
        return self._rows(keys, found)

    def _lookup(self, texts: Sequence[str]) -> tuple[list[bytes], dict[bytes, str], Rows, list[bytes]]:
        """(key per text, text per unique key, cached rows by key, keys not cached). A cache that fails finds
        nothing: every text is a miss."""
        keys = [_key(t) for t in texts]
        unique = dict(zip(keys, texts, strict=True))
        found: Rows = {}
        if unique:
            with self._lock:
                if not self._failures.may("read"):
                    pass
                elif (conn := self._open("read")) is not None:
                    try:
                        bad = self.file.read(conn, list(unique), found)
                        if bad:
                            self._failures.bad_rows(bad)
                    except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
                        found.clear()
                        self._failures.failed(exc, "read")
                    else:
                        self._failures.worked("read")
                        self._touch(found)
        return keys, unique, found, [k for k in unique if k not in found]

    def _open(self, op: str) -> sqlite3.Connection | None:
        """The connection for ``op`` ("read" or "write"), or None when it cannot be had (failure handled)."""
        try:
            return self.file.connect(write=op == "write")
        except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
            self._failures.failed(exc, "open")
        if op == "read" and self.file.conn is not None and self._failures.may("read"):
            return self.file.conn  # opened read-only
        return None

    def _other_width(self, found: Rows, misses: list[bytes]) -> list[bytes]:
        """Cached rows whose width is not the wrapped embedder's, now that it has answered (rows read before
        its width was known); they are dropped from ``found``, counted, and to be embedded again."""
        if not found or not misses:
            return []
        width = found[misses[0]].shape[0]
        wrong = [k for k, v in found.items() if v.shape[0] != width]
        for k in wrong:
            del found[k]
        if wrong:
            with self._lock:
                self._failures.bad_rows(len(wrong))
        return wrong

    def _touch(self, found: Rows) -> None:
        """Remember the hits' last-use time; write them once :data:`TOUCH_BATCH` wait. Caller holds the lock."""
        if not found:
            return
        now = _now()
        self.file.touched.update(dict.fromkeys(found, now))
        if len(self.file.touched) < TOUCH_BATCH:
            return
        if not self._failures.may("write") or self.file.read_only:
            self.file.touched.clear()  # not written: only how recently these were used is lost
            return
        try:
            with self.file.conn:
                self.file.flush_touched(self.file.conn)
        except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
            self.file.touched.clear()
            self._failures.failed(exc, "write")
        else:
            self._failures.worked("write")

    def _store(self, found: Rows, misses: list[bytes], fresh: np.ndarray) -> None:
        fresh = np.asarray(fresh, dtype=np.float32)
        found.update(zip(misses, fresh, strict=True))
        pairs = zip(misses, fresh, strict=True)
        if not np.isfinite(fresh).all():  # the embedder's own NaN or infinity: returned as it is, never stored
            pairs = [(k, v) for k, v in zip(misses, fresh, strict=True) if np.isfinite(v).all()]
        with self._lock:
            if not self._failures.may("write") or (conn := self._open("write")) is None:
                return
            entries, now = self.file.entries, _now()
            try:
                self.file.insert(conn, [(self.inner.id, k, v.tobytes(), now) for k, v in pairs])
                self.file.trim_log(conn)
            except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
                self.file.entries = entries  # the transaction was rolled back
                self._failures.failed(exc, "write")
            else:
                self._failures.worked("write")

    def _rows(self, keys: list[bytes], found: Rows) -> np.ndarray:
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        """Write the pending last-use times, truncate the log and close the file (a failure is counted and
        warned about, never raised)."""
        with self._lock:
            if self.file.conn is None:
                return
            try:
                if not self.file.read_only and self._failures.may("write"):
                    with self.file.conn:
                        self.file.flush_touched(self.file.conn)
                    self.file.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except Exception as exc:  # noqa: BLE001 - closing a cache never fails a caller
                self._failures.failed(exc, "write")
            finally:
                self.file.touched.clear()
                self.file.drop_connection()

    def __deepcopy__(self, memo: dict) -> CachedEmbedder:
        return self

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r}, max_mb={self.max_mb:g})"
