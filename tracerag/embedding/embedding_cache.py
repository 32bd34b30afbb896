"""On-disk embedding cache, so re-indexing unchanged data costs lookups instead of model calls.

Entries are keyed by (embedder id, sha256(text)), so different models never share vectors and the
cache stays valid across processes and library versions as long as the embedder id is stable.

The cache is bounded: past ``max_mb`` (default 256 MB, or ``TRACERAG_CACHE_MAX_MB``) the least recently
used entries are dropped, so a service answering unique utterances for months keeps a fixed footprint.
Why the details:

- the cap is kept as an entry count, from an estimate of an entry's bytes on disk (:meth:`entry_bytes`):
  SQLite does not shrink its file when rows are deleted, it reuses the freed pages, so the file stays at
  the size the capped entries need instead of being measured and vacuumed;
- entries live in a rowid table with 16 KiB pages, so a vector of up to ~4,000 dimensions is stored in its
  page: the first layout (a table keyed by (model, hash), 4 KiB pages) put every 512-dimensional vector
  partly in an overflow page of its own, 5 KB an entry; a cache in that layout is moved over once, on open;
- a hit's last-use time is remembered in memory and written just before entries are dropped, at
  close, or once ``TOUCH_BATCH`` of them wait, so a lookup that hits stays a read (a process that dies
  loses only how recently its hits were used, not entries);
- a call with more new texts than a tenth of the cap stores them a tenth at a time, dropping the least
  recently used between the parts, so one large call cannot grow the file past the cap;
- lookups read the file through ``mmap`` (up to the cap), so a hit copies no page.
- the write-ahead log gets an eighth of the cap (at most 4 MB): a write that leaves it larger is followed
  by a checkpoint that truncates it, so after every call the database, its log and SQLite's 32 KiB
  shared-memory file together stay under the cap (during one write the log holds the pages it changes).
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np

from .embedders import Embedder

__all__ = ["DEFAULT_MAX_MB", "ENV_CACHE_MAX_MB", "CachedEmbedder", "default_cache_path"]

logger = logging.getLogger(__name__)

Rows = dict[bytes, np.ndarray]  # embedding by text key
_CHUNK = 500  # bound parameters per lookup query (SQLite's limit is 999 on old builds)
DEFAULT_MAX_MB = 256.0
ENV_CACHE_MAX_MB = "TRACERAG_CACHE_MAX_MB"
TOUCH_BATCH = 20_000  # hits whose last-use time waits in memory before it is written (~2 MB)
PAGE_SIZE = 16384  # a vector of up to ~4,000 float32 fits in a table page
EVICT_TO = 0.9  # eviction drops entries to this share of the cap, so it runs once per 10% of new entries
_ROW_FILL = 0.75  # how full pages are reckoned where rows go in order (rowid, last use) and leave oldest first
_KEY_FILL = 0.5  # ... and where they go in by a random hash (the key index)
_FIXED_PAGES = 4  # the schema page and a partly filled last page per B-tree
_SHM_BYTES = 32 * 1024  # the -shm file next to a database in WAL mode
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash BLOB NOT NULL, "
    "vec BLOB NOT NULL, used INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS entries_by_key ON entries (model, hash)",
    "CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used)",
)


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
            raise ValueError(f"{ENV_CACHE_MAX_MB}={text!r}: expected a number of megabytes, e.g. 256") from None
        where = ENV_CACHE_MAX_MB
    else:
        where = "max_mb"
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{where} must be a positive number of megabytes, not {value!r}")
    return float(value)


def _table_cell_bytes(payload: int, page_size: int) -> int:
    """Bytes a table row of ``payload`` bytes takes: what stays in its page, plus whole overflow pages for
    the rest (SQLite's file format, "B-tree pages")."""
    usable = page_size
    most, least = usable - 35, (usable - 12) * 32 // 255 - 23
    if payload <= most:
        return payload + 4 + 9 + 2  # header varints, cell pointer
    local = least + (payload - least) % (usable - 4)
    local = local if local <= most else least
    return local + 4 + 9 + 2 + 4 + math.ceil((payload - local) / (usable - 4)) * page_size


class CachedEmbedder:
    """Wraps an embedder with a SQLite cache; only texts never seen by this embedder id reach it.

    ``max_mb``: the cap on the cache's files (default ``TRACERAG_CACHE_MAX_MB``, else :data:`DEFAULT_MAX_MB`);
    past it the least recently used entries, of any embedder id, are dropped."""

    def __init__(self, inner: Embedder, path: str | Path, *, max_mb: float | None = None) -> None:
        self.inner = inner
        self.path = Path(path)
        self.max_mb = _max_mb(max_mb)
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._page_size = PAGE_SIZE
        self._entries = 0  # rows in the table, counted at open and kept up to date by this instance
        self._touched: dict[bytes, int] = {}  # hits whose last-use time is not written yet

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
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only on a new, empty database
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.commit()
            moved = self._move_first_layout(conn)
            self._page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            self._entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            with conn:
                self._evict_if_over(conn)  # also trims a cache written under a larger cap
            if moved:
                self._compact(conn)
                self._page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA journal_size_limit={self._wal_limit()}")
            conn.execute(f"PRAGMA wal_autocheckpoint={max(1, self._wal_limit() // self._page_size)}")
            conn.execute(f"PRAGMA mmap_size={int(self.max_mb * 1024 * 1024)}")
            self._conn = conn
            self._trim_log(conn)
        return self._conn

    def _move_first_layout(self, conn: sqlite3.Connection) -> bool:
        """Move the entries of a cache written in the first layout into ``entries``, as least recently used;
        True when there was one (once, on open)."""
        if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'").fetchone():
            return False
        with conn:
            conn.execute("INSERT OR IGNORE INTO entries (model, hash, vec, used) "
                         "SELECT model, hash, vec, 0 FROM embeddings")
            conn.execute("DROP TABLE embeddings")
        return True

    def _compact(self, conn: sqlite3.Connection) -> None:
        """Rewrite the file with this layout's page size and without the pages the move freed."""
        try:  # the page size changes only outside WAL mode, and only with no other process reading the file
            conn.execute("PRAGMA journal_mode=DELETE")
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
            conn.execute("VACUUM")
        except sqlite3.OperationalError as exc:
            logger.info("embedding cache %s keeps its page size for now: %s", self.path, exc)
        finally:
            conn.execute("PRAGMA journal_mode=WAL")

    def _wal_limit(self) -> int:
        """The log's share of the cap: an eighth, at most 4 MB."""
        return int(min(self.max_mb / 8, 4.0) * 1024 * 1024)

    def entry_bytes(self) -> int:
        """One entry's bytes on disk, reckoned from the file format: its row and its two index entries, in
        pages as full as :data:`_ROW_FILL` and :data:`_KEY_FILL` say."""
        key = 3 + len(self.inner.id.encode()) + 33  # model id and hash, with their record header bytes
        row = _table_cell_bytes(4 * self.dim + 3 + key + 8 + 3, self._page_size)
        by_key, by_use = key + 9 + 4 + 2, 8 + 9 + 4 + 2  # (model, hash, id) and (used, id), with cell headers
        return math.ceil((row + by_use) / _ROW_FILL + by_key / _KEY_FILL)

    def max_entries(self) -> int:
        """How many entries fit in the cap, less the log's share, SQLite's 32 KiB shared-memory file and
        the pages any database has."""
        budget = self.max_mb * 1024 * 1024 - self._wal_limit() - _SHM_BYTES - _FIXED_PAGES * self._page_size
        return max(1, int(budget // self.entry_bytes()))

    def _evict_if_over(self, conn: sqlite3.Connection) -> None:
        """Drop the least recently used entries once there are more than :meth:`max_entries`, down to
        :data:`EVICT_TO` of it. Caller holds the lock and commits."""
        cap = self.max_entries()
        if self._entries <= cap:
            return
        self._entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]  # other processes write too
        if self._entries <= cap:
            return
        self._flush_touched(conn)
        drop = self._entries - int(cap * EVICT_TO)
        conn.execute("DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY used LIMIT ?)", (drop,))
        self._entries -= drop

    def _trim_log(self, conn: sqlite3.Connection) -> None:
        """Checkpoint and truncate the write-ahead log once a write has left it over its share of the cap
        (SQLite's own checkpoints empty it but leave the file at its largest size until the next write)."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            over = wal.stat().st_size > self._wal_limit()
        except OSError:
            return
        if over:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _flush_touched(self, conn: sqlite3.Connection) -> None:
        """Write the remembered hits' last-use times. Caller holds the lock and commits."""
        if self._touched:
            conn.executemany("UPDATE entries SET used = ? WHERE model = ? AND hash = ?",
                             [(used, self.inner.id, key) for key, used in self._touched.items()])
            self._touched.clear()

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
                    query = f"SELECT hash, vec FROM entries WHERE model = ? AND hash IN ({marks})"
                    rows = conn.execute(query, [self.inner.id, *chunk])
                    found.update((h, np.frombuffer(v, dtype=np.float32)) for h, v in rows)
                if found:
                    now = _now()
                    self._touched.update(dict.fromkeys(found, now))
                    if len(self._touched) >= TOUCH_BATCH:
                        with conn:
                            self._flush_touched(conn)
        return keys, unique, found, [k for k in unique if k not in found]

    def _store(self, found: Rows, misses: list[bytes], fresh: np.ndarray) -> None:
        fresh = np.asarray(fresh, dtype=np.float32)
        found.update(zip(misses, fresh, strict=True))
        with self._lock:
            conn = self._connect()
            now = _now()
            rows = [(self.inner.id, k, v.tobytes(), now) for k, v in zip(misses, fresh, strict=True)]
            part = max(1, self.max_entries() // 10)
            with conn:  # one transaction: the new entries, and the eviction that makes room for them
                for i in range(0, len(rows), part):
                    conn.executemany("INSERT OR REPLACE INTO entries (model, hash, vec, used) VALUES (?, ?, ?, ?)",
                                     rows[i : i + part])
                    self._entries += len(rows[i : i + part])
                    self._evict_if_over(conn)
            self._trim_log(conn)

    def _rows(self, keys: list[bytes], found: Rows) -> np.ndarray:
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        """Write the pending last-use times, truncate the log and close the file."""
        with self._lock:
            if self._conn is not None:
                try:
                    with self._conn:
                        self._flush_touched(self._conn)
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    self._conn.close()
                    self._conn = None

    def __deepcopy__(self, memo: dict) -> CachedEmbedder:
        return self

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r}, max_mb={self.max_mb:g})"
