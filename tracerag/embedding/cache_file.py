"""The embedding cache's SQLite file: its layout, opening it, its cap, and reading and writing its entries.

Entries are keyed by (embedder id, sha256(text)), so different models never share vectors and the file stays
valid across processes and library versions as long as the embedder id is stable. Kept apart from
:mod:`.embedding_cache` (which decides what to look up and store) and :mod:`.cache_failures` (what a failure
costs) because this is the file format alone: everything here raises what SQLite or the file system raises.

The file is bounded by ``max_mb``: past it the least recently used entries are dropped, so a service answering
unique utterances for months keeps a fixed footprint. Why the details:

- the cap is kept as an entry count, from an estimate of an entry's bytes on disk (:meth:`CacheFile.entry_bytes`):
  SQLite does not shrink its file when rows are deleted, it reuses the freed pages, so the file stays at
  the size the capped entries need instead of being measured and vacuumed;
- entries live in a rowid table with 16 KiB pages, so a vector of up to ~4,000 dimensions is stored in its
  page: the first layout (a table keyed by (model, hash), 4 KiB pages) put every 512-dimensional vector
  partly in an overflow page of its own, 5 KB an entry; a cache in that layout is moved over once, on open;
- a hit's last-use time is remembered in memory (:attr:`CacheFile.touched`) and written just before entries
  are dropped, at close, or once ``TOUCH_BATCH`` (:mod:`.embedding_cache`) of them wait, so a lookup that hits
  stays a read (a process that dies loses only how recently its hits were used, not entries);
- a call with more new texts than a tenth of the cap stores them a tenth at a time, dropping the least
  recently used between the parts, so one large call cannot grow the file past the cap;
- lookups read the file through ``mmap`` (up to the cap), so a hit copies no page.
- the write-ahead log gets an eighth of the cap (at most 4 MB): a write that leaves it larger is followed
  by a checkpoint that truncates it, so after every call the database, its log and SQLite's 32 KiB
  shared-memory file together stay under the cap (during one write the log holds the pages it changes).
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
import stat
from collections import Counter
from pathlib import Path

import numpy as np

from ..errors import TraceragError
from .embedders import Embedder

__all__ = ["BUSY_TIMEOUT", "CacheFile", "Rows", "Unusable"]

logger = logging.getLogger(__name__)

Rows = dict[bytes, np.ndarray]  # embedding by text key
_CHUNK = 500  # bound parameters per lookup query (SQLite's limit is 999 on old builds)
PAGE_SIZE = 16384  # a vector of up to ~4,000 float32 fits in a table page
EVICT_TO = 0.9  # eviction drops entries to this share of the cap, so it runs once per 10% of new entries
_ROW_FILL = 0.75  # how full pages are reckoned where rows go in order (rowid, last use) and leave oldest first
_KEY_FILL = 0.5  # ... and where they go in by a random hash (the key index)
_FIXED_PAGES = 4  # the schema page and a partly filled last page per B-tree
_SHM_BYTES = 32 * 1024  # the -shm file next to a database in WAL mode
BUSY_TIMEOUT = 30.0  # seconds SQLite waits for another process's lock before "database is locked"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash BLOB NOT NULL, "
    "vec BLOB NOT NULL, used INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS entries_by_key ON entries (model, hash)",
    "CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used)",
)
_COLUMNS = frozenset({"id", "model", "hash", "vec", "used"})


class Unusable(TraceragError):
    """A cache file this module will not use, with its cause (the cache then costs speed, never answers:
    it is handled where the cache is used and never reaches a caller)."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


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


class CacheFile:
    """One cache file, as the cache of ``embedder``'s vectors (its id keys the entries it reads and writes,
    its width sizes an entry), capped at ``max_mb``. One shared connection, opened on first use; every method
    is called with the cache's lock held."""

    def __init__(self, path: Path, max_mb: float, embedder: Embedder) -> None:
        self.path = path
        self.max_mb = max_mb
        self.embedder = embedder
        self.conn: sqlite3.Connection | None = None
        self.read_only = False  # the connection was opened read-only, writing having failed
        self.opened: tuple[int, int] | None = None  # (device, inode) of the file opened: set aside only that one
        self.page_size = PAGE_SIZE
        self.entries = 0  # rows in the table, counted at open and kept up to date by this instance
        self.touched: dict[bytes, int] = {}  # hits whose last-use time is not written yet

    # -- opening -----------------------------------------------------------------------------------------

    def connect(self, write: bool = False) -> sqlite3.Connection:
        """The shared connection, opened (for writing when ``write``) if need be. Caller holds the cache's
        lock; one shared connection, serialised by that lock. Raises what opening raised."""
        if self.conn is not None and not (write and self.read_only):
            return self.conn
        self.drop_connection()  # a read-only one, and writing is to be tried again
        self._check_path()
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA page_size={PAGE_SIZE}")  # takes effect only on a new, empty database
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA[0])
            self._check_schema(conn)
            for statement in _SCHEMA[1:]:
                conn.execute(statement)
            conn.commit()
            moved = self._move_first_layout(conn)
            self.page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            self.entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            with conn:
                self._evict_if_over(conn)  # also trims a cache written under a larger cap
            if moved:
                self._compact(conn)
                self.page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA journal_size_limit={self._wal_limit()}")
            conn.execute(f"PRAGMA wal_autocheckpoint={max(1, self._wal_limit() // self.page_size)}")
            conn.execute(f"PRAGMA mmap_size={int(self.max_mb * 1024 * 1024)}")
            self.trim_log(conn)
        except BaseException:
            conn.close()
            raise
        self.conn, self.read_only = conn, False
        if self.opened is None:  # a new file: the one to set aside should it be damaged
            self.opened = self._identity()
        return conn

    def _identity(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def connect_read_only(self) -> sqlite3.Connection:
        """The file opened for lookups only, when it cannot be opened for writing. Raises what opening raised."""
        self.drop_connection()
        self._check_path()
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT,
                               check_same_thread=False)
        try:
            self._check_schema(conn)
            self.page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA mmap_size={int(self.max_mb * 1024 * 1024)}")
        except BaseException:
            conn.close()
            raise
        self.conn, self.read_only = conn, True
        return conn

    def _check_path(self) -> None:
        """Raise unless the path is a regular file or nothing yet (its directory then made); remember the file."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.opened = None
            return
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else \
                "not a regular file"
            raise Unusable("not_a_file", f"the path is {kind}")
        self.opened = (info.st_dev, info.st_ino)

    @staticmethod
    def _check_schema(conn: sqlite3.Connection) -> None:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
        if not _COLUMNS <= columns:
            raise Unusable("schema", f"table entries has columns {sorted(columns)}, not {sorted(_COLUMNS)}")

    def drop_connection(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - a connection that fails to close is dropped all the same
                pass
            self.conn, self.read_only = None, False

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

    # -- the cap -----------------------------------------------------------------------------------------

    def _wal_limit(self) -> int:
        """The log's share of the cap: an eighth, at most 4 MB."""
        return int(min(self.max_mb / 8, 4.0) * 1024 * 1024)

    def entry_bytes(self) -> int:
        """One entry's bytes on disk, reckoned from the file format: its row and its two index entries, in
        pages as full as :data:`_ROW_FILL` and :data:`_KEY_FILL` say."""
        key = 3 + len(self.embedder.id.encode()) + 33  # model id and hash, with their record header bytes
        row = _table_cell_bytes(4 * self.embedder.dim + 3 + key + 8 + 3, self.page_size)
        by_key, by_use = key + 9 + 4 + 2, 8 + 9 + 4 + 2  # (model, hash, id) and (used, id), with cell headers
        return math.ceil((row + by_use) / _ROW_FILL + by_key / _KEY_FILL)

    def max_entries(self) -> int:
        """How many entries fit in the cap, less the log's share, SQLite's 32 KiB shared-memory file and
        the pages any database has."""
        budget = self.max_mb * 1024 * 1024 - self._wal_limit() - _SHM_BYTES - _FIXED_PAGES * self.page_size
        return max(1, int(budget // self.entry_bytes()))

    def _evict_if_over(self, conn: sqlite3.Connection) -> None:
        """Drop the least recently used entries once there are more than :meth:`max_entries`, down to
        :data:`EVICT_TO` of it. Caller holds the cache's lock and commits."""
        cap = self.max_entries()
        if self.entries <= cap:
            return
        self.entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]  # other processes write too
        if self.entries <= cap:
            return
        self.flush_touched(conn)
        drop = self.entries - int(cap * EVICT_TO)
        conn.execute("DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY used LIMIT ?)", (drop,))
        self.entries -= drop

    def trim_log(self, conn: sqlite3.Connection) -> None:
        """Checkpoint and truncate the write-ahead log once a write has left it over its share of the cap
        (SQLite's own checkpoints empty it but leave the file at its largest size until the next write)."""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            over = wal.stat().st_size > self._wal_limit()
        except OSError:
            return
        if over:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def flush_touched(self, conn: sqlite3.Connection) -> None:
        """Write the remembered hits' last-use times. Caller holds the cache's lock and commits."""
        if self.touched:
            conn.executemany("UPDATE entries SET used = ? WHERE model = ? AND hash = ?",
                             [(used, self.embedder.id, key) for key, used in self.touched.items()])
            self.touched.clear()

    # -- entries -----------------------------------------------------------------------------------------

    def _known_dim(self) -> int | None:
        """The wrapped embedder's width when it is known without asking it: an HTTP embedder not told its
        width learns it from its first answer, and asking would send a request a cached lookup never needs."""
        return None if getattr(self.embedder, "_dim", 0) is None else self.embedder.dim

    def read(self, conn: sqlite3.Connection, pending: list[bytes], found: Rows) -> int:
        """Read the cached rows of ``pending`` into ``found``; a row of the wrong length or not finite is left
        out (a miss: embedded again and rewritten). How many were left out."""
        dim = self._known_dim()
        bad = 0
        for i in range(0, len(pending), _CHUNK):
            chunk = pending[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT hash, vec FROM entries WHERE model = ? AND hash IN ({marks})"
            rows = conn.execute(query, [self.embedder.id, *chunk]).fetchall()
            if not rows:
                continue
            if dim is None:  # width unknown yet: the most common one; a row of another is checked after embedding
                widths = Counter(len(v) for _, v in rows if isinstance(v, bytes) and len(v) and not len(v) % 4)
                if not widths:
                    bad += len(rows)
                    continue
                dim = widths.most_common(1)[0][0] // 4
            size = 4 * dim
            hashes, blobs = zip(*rows, strict=True)
            if not ({*map(type, blobs)} == {bytes} and {*map(len, blobs)} == {size}):  # some of the wrong length
                kept = [(h, v) for h, v in rows if isinstance(v, bytes) and len(v) == size]
                bad += len(rows) - len(kept)
                if not kept:
                    continue
                hashes, blobs = zip(*kept, strict=True)
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
            if math.isfinite(np.add.reduce(matrix, axis=None)):  # a NaN or an infinity anywhere makes the sum one
                found.update(zip(hashes, matrix, strict=True))
            else:
                finite = np.isfinite(matrix).all(axis=1)
                found.update((h, row) for h, row, ok in zip(hashes, matrix, finite, strict=True) if ok)
                bad += int((~finite).sum())
        return bad

    def insert(self, conn: sqlite3.Connection, rows: list[tuple[str, bytes, bytes, int]]) -> None:
        """Write the new entries, in parts of a tenth of the cap with the eviction that makes room for them
        between the parts, in one transaction. Caller holds the cache's lock."""
        part = max(1, self.max_entries() // 10)
        with conn:
            for i in range(0, len(rows), part):
                conn.executemany("INSERT OR REPLACE INTO entries (model, hash, vec, used) VALUES (?, ?, ?, ?)",
                                 rows[i : i + part])
                self.entries += len(rows[i : i + part])
                self._evict_if_over(conn)

