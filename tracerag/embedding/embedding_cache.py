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

A cache failure costs speed, never answers: whatever goes wrong with the file, :meth:`CachedEmbedder.embed`
returns the wrapped embedder's vectors (only an error of the wrapped embedder itself reaches the caller).
What happens, by cause (the ``cause`` label of :func:`cache_errors` and of ``/metrics``'
``tracerag_embedding_cache_errors_total``):

- ``corrupt`` (not an SQLite file, a damaged or truncated one) and ``schema`` (an ``entries`` table without
  this cache's columns): the file is closed and renamed beside itself, ``<name>.corrupt-<time>`` or
  ``<name>.schema-<time>`` (its ``-wal`` with it), and a fresh cache is started on the next call; only the
  newest set-aside copy is kept, so a failing disk does not fill up with them. Renamed only when the path
  still holds the file this process opened (another process may have set it aside and started afresh);
  after :data:`MAX_SET_ASIDE` set-asides in one process the cache is bypassed for the rest of it;
- ``full`` (ENOSPC, EDQUOT, SQLite's "database or disk is full"), ``read_only`` (a read-only file, directory
  or file system) and ``locked`` (still locked after the 30 s busy timeout): writes are bypassed, lookups
  continue while they work (a file that cannot be opened for writing is opened read-only); an unreadable
  cache is bypassed for lookups too;
- ``not_a_file`` (the path is a directory, a FIFO, ...; never moved: it is not the cache's) and ``io`` (any
  other error while opening, reading or writing): the cache is bypassed for what failed, the connection
  reopened when it is tried again;
- ``bad_row``: a stored vector of the wrong byte length or with a value that is not finite is a miss: it is
  embedded again and rewritten, never returned (a vector the wrapped embedder returns with a value not
  finite is returned as it is, and not stored).

Bypassed is not forever: what failed (reads, or writes) is tried again :data:`RETRY_AFTER` seconds later,
and after each further failure in a row twice as late, up to :data:`RETRY_MAX`; a success resets the wait.
So a broken disk costs one failed attempt per interval, not one per call. Each cause is logged as exactly
one warning per cache file and process, naming the file, what happened and what it costs; no traceback.
Every failure (and every bad row) is counted by cause: :attr:`CachedEmbedder.errors` per cache,
:func:`cache_errors` for the process.
"""

from __future__ import annotations

import errno
import glob
import hashlib
import logging
import math
import os
import sqlite3
import stat
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import numpy as np

from .embedders import Embedder

__all__ = ["CAUSES", "DEFAULT_MAX_MB", "ENV_CACHE_MAX_MB", "CachedEmbedder", "cache_errors", "default_cache_path"]

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
BUSY_TIMEOUT = 30.0  # seconds SQLite waits for another process's lock before "database is locked"
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries (id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash BLOB NOT NULL, "
    "vec BLOB NOT NULL, used INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX IF NOT EXISTS entries_by_key ON entries (model, hash)",
    "CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used)",
)
_COLUMNS = frozenset({"id", "model", "hash", "vec", "used"})

# Failures (see the module docstring)
CAUSES = ("corrupt", "schema", "full", "read_only", "locked", "not_a_file", "io", "bad_row")
RETRY_AFTER = 30.0  # seconds before what failed (reads or writes) is tried again ...
RETRY_MAX = 900.0  # ... doubling with each further failure in a row, up to this
MAX_SET_ASIDE = 3  # damaged files set aside per cache and process; past it the cache is bypassed
_clock = time.monotonic
_SET_ASIDE = {"corrupt": "corrupt", "schema": "schema"}  # cause -> the word in the set-aside file's name
_COUNTS: Counter[str] = Counter()  # failures of every cache in this process, by cause
_WARNED: set[tuple[str, str]] = set()  # (cache file, cause): warned once
_GLOBAL = threading.Lock()


def cache_errors() -> dict[str, int]:
    """Failures of the embedding caches of this process, by cause (every cause, 0 included): what
    ``/metrics`` reports as ``tracerag_embedding_cache_errors_total``."""
    with _GLOBAL:
        return {cause: _COUNTS[cause] for cause in CAUSES}


class _Unusable(Exception):
    """A cache file this module will not use, with its cause."""

    def __init__(self, cause: str, message: str) -> None:
        super().__init__(message)
        self.cause = cause


_CODE_CAUSE = {13: "full", 8: "read_only", 3: "read_only", 5: "locked", 6: "locked", 11: "corrupt", 26: "corrupt"}
_ERRNO_CAUSE = {errno.ENOSPC: "full", getattr(errno, "EDQUOT", errno.ENOSPC): "full", errno.EROFS: "read_only",
                errno.EACCES: "read_only", errno.EPERM: "read_only", errno.EISDIR: "not_a_file",
                errno.ENOTDIR: "not_a_file", errno.EEXIST: "not_a_file"}
_MESSAGE_CAUSE = (("disk is full", "full"), ("readonly", "read_only"), ("read-only", "read_only"),
                  ("locked", "locked"), ("malformed", "corrupt"), ("not a database", "corrupt"),
                  ("no such table", "schema"), ("no such column", "schema"), ("has no column", "schema"))


def _cause(exc: BaseException, path: Path) -> str:
    """The cause of a cache failure: by SQLite's error code or the errno, by the message when there is none."""
    if isinstance(exc, _Unusable):
        return exc.cause
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _CODE_CAUSE:
        return _CODE_CAUSE[code & 0xFF]
    if isinstance(exc, OSError) and exc.errno in _ERRNO_CAUSE:
        return _ERRNO_CAUSE[exc.errno]
    message = str(exc).lower()
    for words, cause in _MESSAGE_CAUSE:
        if words in message:
            return cause
    if "unable to open" in message and not os.access(path.parent, os.W_OK):
        return "read_only"  # SQLITE_CANTOPEN: a new file in a directory this process may not write
    return "io"


def _what(cause: str, exc: BaseException) -> str:
    detail = str(exc) if isinstance(exc, _Unusable) else f"{type(exc).__name__}: {exc}"
    return {"full": f"disk full ({detail})", "read_only": f"cannot be written ({detail})",
            "locked": f"locked by another process beyond the {BUSY_TIMEOUT:g} s wait ({detail})",
            "corrupt": f"not a readable cache file ({detail})",
            "schema": f"its table is not this cache's layout ({detail})",
            "not_a_file": f"unusable path ({detail})"}.get(cause, f"cache error ({detail})")


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
    past it the least recently used entries, of any embedder id, are dropped. A cache that fails is set aside
    or bypassed (module docstring): the vectors are then the wrapped embedder's, computed again."""

    def __init__(self, inner: Embedder, path: str | Path, *, max_mb: float | None = None) -> None:
        self.inner = inner
        self.path = Path(path)
        self.max_mb = _max_mb(max_mb)
        self._conn: sqlite3.Connection | None = None
        self._read_only = False  # the connection was opened read-only, writing having failed
        self._file: tuple[int, int] | None = None  # (device, inode) of the file opened: set aside only that one
        self._lock = threading.Lock()
        self._page_size = PAGE_SIZE
        self._entries = 0  # rows in the table, counted at open and kept up to date by this instance
        self._touched: dict[bytes, int] = {}  # hits whose last-use time is not written yet
        self.errors: Counter[str] = Counter()  # this cache's failures (and bad rows) by cause
        self._retry_at = {"read": 0.0, "write": 0.0}  # monotonic time before which it is bypassed; 0: in use
        self._strikes = {"read": 0, "write": 0}  # failures in a row
        self._set_asides = 0
        self._disabled = False  # bypassed for the rest of the process

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    # -- opening -----------------------------------------------------------------------------------------

    def _connect(self, write: bool = False) -> sqlite3.Connection:
        """The shared connection, opened (for writing when ``write``) if need be. Caller holds self._lock; one
        shared connection, serialised by that lock. Raises what opening raised."""
        if self._conn is not None and not (write and self._read_only):
            return self._conn
        self._drop_connection()  # a read-only one, and writing is to be tried again
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
            self._trim_log(conn)
        except BaseException:
            conn.close()
            raise
        self._conn, self._read_only = conn, False
        if self._file is None:  # a new file: the one to set aside should it be damaged
            self._file = self._identity()
        return conn

    def _identity(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def _connect_read_only(self) -> sqlite3.Connection:
        """The file opened for lookups only, when it cannot be opened for writing. Raises what opening raised."""
        self._drop_connection()
        self._check_path()
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT,
                               check_same_thread=False)
        try:
            self._check_schema(conn)
            self._page_size = conn.execute("PRAGMA page_size").fetchone()[0]
            conn.execute(f"PRAGMA mmap_size={int(self.max_mb * 1024 * 1024)}")
        except BaseException:
            conn.close()
            raise
        self._conn, self._read_only = conn, True
        return conn

    def _check_path(self) -> None:
        """Raise unless the path is a regular file or nothing yet (its directory then made); remember the file."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = None
            return
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a FIFO" if stat.S_ISFIFO(info.st_mode) else \
                "not a regular file"
            raise _Unusable("not_a_file", f"the path is {kind}")
        self._file = (info.st_dev, info.st_ino)

    @staticmethod
    def _check_schema(conn: sqlite3.Connection) -> None:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
        if not _COLUMNS <= columns:
            raise _Unusable("schema", f"table entries has columns {sorted(columns)}, not {sorted(_COLUMNS)}")

    def _drop_connection(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # noqa: BLE001 - a connection that fails to close is dropped all the same
                pass
            self._conn, self._read_only = None, False

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

    # -- failures ----------------------------------------------------------------------------------------

    def _may(self, channel: str) -> bool:
        """Whether ``channel`` ("read" or "write") is in use: not bypassed, or its wait is over."""
        at = self._retry_at[channel]
        return not self._disabled and (not at or _clock() >= at)

    def _worked(self, channel: str) -> None:
        if self._retry_at[channel]:
            self._retry_at[channel], self._strikes[channel] = 0.0, 0
            logger.info("tracerag cache %s: %ss work again", self.path, channel)

    def _hold(self, channel: str) -> float:
        """Bypass ``channel`` for a while, longer after each failure in a row; the seconds."""
        self._strikes[channel] += 1
        wait = min(RETRY_AFTER * 2 ** (self._strikes[channel] - 1), RETRY_MAX)
        self._retry_at[channel] = _clock() + wait
        return wait

    def _count(self, cause: str, n: int = 1) -> None:
        self.errors[cause] += n
        with _GLOBAL:
            _COUNTS[cause] += n

    def _warn(self, cause: str, message: str) -> None:
        """Log ``message`` as this cache file's one warning for ``cause`` (no traceback)."""
        key = (str(self.path), cause)
        with _GLOBAL:
            first = key not in _WARNED
            _WARNED.add(key)
        if first:
            logger.warning("tracerag cache %s: %s", self.path, message)
        else:
            logger.debug("tracerag cache %s: %s", self.path, message)

    def _failed(self, exc: Exception, op: str) -> None:
        """A failure while ``op`` ("open", "read" or "write"): count it, set the file aside or bypass what
        failed, and warn once. Caller holds the lock."""
        cause = _cause(exc, self.path)
        self._count(cause)
        what = _what(cause, exc)
        if cause in _SET_ASIDE:
            cost = self._set_aside(cause)
        elif cause in ("full", "read_only", "locked") and op != "read":
            wait = self._hold("write")
            if self._conn is not None and self._conn.in_transaction:
                try:
                    self._conn.rollback()
                except Exception:  # noqa: BLE001 - a connection that cannot roll back is not used again
                    self._drop_connection()
            if op == "open" or self._conn is None:
                try:
                    self._connect_read_only()
                except Exception:  # noqa: BLE001 - then lookups are bypassed too
                    self._hold("read")
            reads = "lookups continue" if self._conn is not None else "lookups are bypassed too"
            cost = (f"new embeddings are not stored and are computed again next time (slower) until it can be "
                    f"written; {reads}; writing is tried again in {wait:g} s, then at growing intervals up to "
                    f"{RETRY_MAX:g} s")
        else:
            held = ("read", "write") if op == "open" or cause == "not_a_file" else (op,)
            wait = max(self._hold(channel) for channel in held)
            if cause not in ("locked", "full", "read_only"):
                self._drop_connection()  # reopened when it is tried again
            cost = (f"embeddings are computed without the cache (slower); it is tried again in {wait:g} s, then "
                    f"at growing intervals up to {RETRY_MAX:g} s")
        self._warn(cause, f"{what}; {cost}")

    def _set_aside(self, cause: str) -> str:
        """Rename the damaged file beside itself, so that the next call starts a fresh cache; what it costs."""
        self._drop_connection()
        self._touched.clear()
        bypassed = "embeddings are computed without the cache (slower)"
        if self._set_asides >= MAX_SET_ASIDE:
            self._disabled = True
            return f"set aside {MAX_SET_ASIDE} times already: {bypassed} for the rest of this process"
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return "it is gone; a fresh cache is started"
        except OSError as exc:
            wait = max(self._hold("read"), self._hold("write"))
            return f"it cannot be moved aside ({exc}); {bypassed}; it is tried again in {wait:g} s"
        if self._file is not None and (info.st_dev, info.st_ino) != self._file:
            return "another process has replaced it; that file is used"
        target = self.path.with_name(f"{self.path.name}.{_SET_ASIDE[cause]}-{time.strftime('%Y%m%dT%H%M%S')}")
        try:
            os.replace(self.path, target)
        except OSError as exc:
            wait = max(self._hold("read"), self._hold("write"))
            return f"it cannot be moved aside ({exc}); {bypassed}; it is tried again in {wait:g} s"
        self._set_asides += 1
        self._file = None
        for suffix in ("-wal", "-shm"):  # a log belongs to its database: it must not be replayed into a new one
            companion = self.path.with_name(self.path.name + suffix)
            try:
                if suffix == "-wal":
                    os.replace(companion, target.with_name(target.name + suffix))
                else:
                    companion.unlink()
            except OSError:
                pass
        for older in self.path.parent.glob(f"{glob.escape(self.path.name)}.*-*"):  # keep the newest set-aside copy only
            name = older.name[len(self.path.name) + 1:]
            if name.split("-", 1)[0] in _SET_ASIDE.values() and not older.name.startswith(target.name):
                try:
                    older.unlink()
                except OSError:
                    pass
        return f"moved aside to {target.name}; a fresh cache is started (its embeddings are computed again once)"

    # -- embedding ---------------------------------------------------------------------------------------

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

    def _known_dim(self) -> int | None:
        """The wrapped embedder's width when it is known without asking it: an HTTP embedder not told its
        width learns it from its first answer, and asking would send a request a cached lookup never needs."""
        return None if getattr(self.inner, "_dim", 0) is None else self.dim

    def _lookup(self, texts: Sequence[str]) -> tuple[list[bytes], dict[bytes, str], Rows, list[bytes]]:
        """(key per text, text per unique key, cached rows by key, keys not cached). A cache that fails finds
        nothing: every text is a miss."""
        keys = [_key(t) for t in texts]
        unique = dict(zip(keys, texts, strict=True))
        found: Rows = {}
        if unique:
            with self._lock:
                if not self._may("read"):
                    pass
                elif (conn := self._open("read")) is not None:
                    try:
                        self._read(conn, list(unique), found)
                    except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
                        found.clear()
                        self._failed(exc, "read")
                    else:
                        self._worked("read")
                        self._touch(found)
        return keys, unique, found, [k for k in unique if k not in found]

    def _open(self, op: str) -> sqlite3.Connection | None:
        """The connection for ``op`` ("read" or "write"), or None when it cannot be had (failure handled)."""
        try:
            return self._connect(write=op == "write")
        except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
            self._failed(exc, "open")
        if op == "read" and self._conn is not None and self._may("read"):
            return self._conn  # opened read-only
        return None

    def _read(self, conn: sqlite3.Connection, pending: list[bytes], found: Rows) -> None:
        """Read the cached rows of ``pending`` into ``found``; a row of the wrong length or not finite is left
        out (a miss: embedded again and rewritten) and counted."""
        dim = self._known_dim()
        bad = 0
        for i in range(0, len(pending), _CHUNK):
            chunk = pending[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT hash, vec FROM entries WHERE model = ? AND hash IN ({marks})"
            rows = conn.execute(query, [self.inner.id, *chunk]).fetchall()
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
        if bad:
            self._bad_rows(bad)

    def _bad_rows(self, n: int) -> None:
        self._count("bad_row", n)
        self._warn("bad_row", f"{n} stored vector(s) damaged (wrong length, or a value not finite); they are "
                              "embedded again and rewritten, never returned (further damaged rows are counted in "
                              "tracerag_embedding_cache_errors_total{cause=\"bad_row\"})")

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
                self._bad_rows(len(wrong))
        return wrong

    def _touch(self, found: Rows) -> None:
        """Remember the hits' last-use time; write them once :data:`TOUCH_BATCH` wait. Caller holds the lock."""
        if not found:
            return
        now = _now()
        self._touched.update(dict.fromkeys(found, now))
        if len(self._touched) < TOUCH_BATCH:
            return
        if not self._may("write") or self._read_only:
            self._touched.clear()  # not written: only how recently these were used is lost
            return
        try:
            with self._conn:
                self._flush_touched(self._conn)
        except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
            self._touched.clear()
            self._failed(exc, "write")
        else:
            self._worked("write")

    def _store(self, found: Rows, misses: list[bytes], fresh: np.ndarray) -> None:
        fresh = np.asarray(fresh, dtype=np.float32)
        found.update(zip(misses, fresh, strict=True))
        pairs = zip(misses, fresh, strict=True)
        if not np.isfinite(fresh).all():  # the embedder's own NaN or infinity: returned as it is, never stored
            pairs = [(k, v) for k, v in zip(misses, fresh, strict=True) if np.isfinite(v).all()]
        with self._lock:
            if not self._may("write") or (conn := self._open("write")) is None:
                return
            entries, now = self._entries, _now()
            try:
                self._insert(conn, [(self.inner.id, k, v.tobytes(), now) for k, v in pairs])
                self._trim_log(conn)
            except Exception as exc:  # noqa: BLE001 - any cache failure costs speed, never answers
                self._entries = entries  # the transaction was rolled back
                self._failed(exc, "write")
            else:
                self._worked("write")

    def _insert(self, conn: sqlite3.Connection, rows: list[tuple[str, bytes, bytes, int]]) -> None:
        """Write the new entries, in parts of a tenth of the cap with the eviction that makes room for them
        between the parts, in one transaction. Caller holds the lock."""
        part = max(1, self.max_entries() // 10)
        with conn:
            for i in range(0, len(rows), part):
                conn.executemany("INSERT OR REPLACE INTO entries (model, hash, vec, used) VALUES (?, ?, ?, ?)",
                                 rows[i : i + part])
                self._entries += len(rows[i : i + part])
                self._evict_if_over(conn)

    def _rows(self, keys: list[bytes], found: Rows) -> np.ndarray:
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[k] for k in keys])

    def close(self) -> None:
        """Write the pending last-use times, truncate the log and close the file (a failure is counted and
        warned about, never raised)."""
        with self._lock:
            if self._conn is None:
                return
            try:
                if not self._read_only and self._may("write"):
                    with self._conn:
                        self._flush_touched(self._conn)
                    self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except Exception as exc:  # noqa: BLE001 - closing a cache never fails a caller
                self._failed(exc, "write")
            finally:
                self._touched.clear()
                self._drop_connection()

    def __deepcopy__(self, memo: dict) -> CachedEmbedder:
        return self

    def __repr__(self) -> str:
        return f"CachedEmbedder({self.inner!r}, path={str(self.path)!r}, max_mb={self.max_mb:g})"
