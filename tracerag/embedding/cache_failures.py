"""What a failing embedding cache file costs: its cause, a count, one warning, and what is bypassed or set aside.

Kept apart from :mod:`.cache_file` (the file format, which raises what SQLite and the file system raise) and
:mod:`.embedding_cache` (the embedder wrapper, which hands every failure here) because how a failure is told
apart, counted, reported and recovered from is one policy, the same for every operation on the file.

A cache failure costs speed, never answers: whatever goes wrong with the file,
:meth:`~.embedding_cache.CachedEmbedder.embed` returns the wrapped embedder's vectors (only an error of the
wrapped embedder itself reaches the caller). What happens, by cause (the ``cause`` label of :func:`cache_errors`
and of ``/metrics``' ``tracerag_embedding_cache_errors_total``):

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
Every failure (and every bad row) is counted by cause: :attr:`~.embedding_cache.CachedEmbedder.errors` per
cache, :func:`cache_errors` for the process.
"""

from __future__ import annotations

import errno
import glob
import logging
import os
import threading
import time
from collections import Counter
from pathlib import Path

from .cache_file import BUSY_TIMEOUT, CacheFile, Unusable

__all__ = ["CAUSES", "MAX_SET_ASIDE", "RETRY_AFTER", "RETRY_MAX", "CacheFailures", "cache_errors"]

logger = logging.getLogger(__name__)

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


_CODE_CAUSE = {13: "full", 8: "read_only", 3: "read_only", 5: "locked", 6: "locked", 11: "corrupt", 26: "corrupt"}
_ERRNO_CAUSE = {errno.ENOSPC: "full", getattr(errno, "EDQUOT", errno.ENOSPC): "full", errno.EROFS: "read_only",
                errno.EACCES: "read_only", errno.EPERM: "read_only", errno.EISDIR: "not_a_file",
                errno.ENOTDIR: "not_a_file", errno.EEXIST: "not_a_file"}
_MESSAGE_CAUSE = (("disk is full", "full"), ("readonly", "read_only"), ("read-only", "read_only"),
                  ("locked", "locked"), ("malformed", "corrupt"), ("not a database", "corrupt"),
                  ("no such table", "schema"), ("no such column", "schema"), ("has no column", "schema"))


def _cause(exc: BaseException, path: Path) -> str:
    """The cause of a cache failure: by SQLite's error code or the errno, by the message when there is none."""
    if isinstance(exc, Unusable):
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
    detail = str(exc) if isinstance(exc, Unusable) else f"{type(exc).__name__}: {exc}"
    return {"full": f"disk full ({detail})", "read_only": f"cannot be written ({detail})",
            "locked": f"locked by another process beyond the {BUSY_TIMEOUT:g} s wait ({detail})",
            "corrupt": f"not a readable cache file ({detail})",
            "schema": f"its table is not this cache's layout ({detail})",
            "not_a_file": f"unusable path ({detail})"}.get(cause, f"cache error ({detail})")


class CacheFailures:
    """The failures of one cache file: counted by cause, warned about once, and what failed (reads or writes)
    bypassed until its wait is over. Every method is called with the cache's lock held."""

    def __init__(self, file: CacheFile) -> None:
        self.file = file
        self.path = file.path
        self.errors: Counter[str] = Counter()  # this cache's failures (and bad rows) by cause
        self._retry_at = {"read": 0.0, "write": 0.0}  # monotonic time before which it is bypassed; 0: in use
        self._strikes = {"read": 0, "write": 0}  # failures in a row
        self._set_asides = 0
        self._disabled = False  # bypassed for the rest of the process

    def may(self, channel: str) -> bool:
        """Whether ``channel`` ("read" or "write") is in use: not bypassed, or its wait is over."""
        at = self._retry_at[channel]
        return not self._disabled and (not at or _clock() >= at)

    def worked(self, channel: str) -> None:
        if self._retry_at[channel]:
            self._retry_at[channel], self._strikes[channel] = 0.0, 0
            logger.info("tracerag cache %s: %ss work again", self.path, channel)

    def hold(self, channel: str) -> float:
        """Bypass ``channel`` for a while, longer after each failure in a row; the seconds."""
        self._strikes[channel] += 1
        wait = min(RETRY_AFTER * 2 ** (self._strikes[channel] - 1), RETRY_MAX)
        self._retry_at[channel] = _clock() + wait
        return wait

    def count(self, cause: str, n: int = 1) -> None:
        self.errors[cause] += n
        with _GLOBAL:
            _COUNTS[cause] += n

    def warn(self, cause: str, message: str) -> None:
        """Log ``message`` as this cache file's one warning for ``cause`` (no traceback)."""
        key = (str(self.path), cause)
        with _GLOBAL:
            first = key not in _WARNED
            _WARNED.add(key)
        if first:
            logger.warning("tracerag cache %s: %s", self.path, message)
        else:
            logger.debug("tracerag cache %s: %s", self.path, message)

    def failed(self, exc: Exception, op: str) -> None:
        """A failure while ``op`` ("open", "read" or "write"): count it, set the file aside or bypass what
        failed, and warn once. Caller holds the cache's lock."""
        cause = _cause(exc, self.path)
        self.count(cause)
        what = _what(cause, exc)
        if cause in _SET_ASIDE:
            cost = self._set_aside(cause)
        elif cause in ("full", "read_only", "locked") and op != "read":
            wait = self.hold("write")
            if self.file.conn is not None and self.file.conn.in_transaction:
                try:
                    self.file.conn.rollback()
                except Exception:  # noqa: BLE001 - a connection that cannot roll back is not used again
                    self.file.drop_connection()
            if op == "open" or self.file.conn is None:
                try:
                    self.file.connect_read_only()
                except Exception:  # noqa: BLE001 - then lookups are bypassed too
                    self.hold("read")
            reads = "lookups continue" if self.file.conn is not None else "lookups are bypassed too"
            cost = (f"new embeddings are not stored and are computed again next time (slower) until it can be "
                    f"written; {reads}; writing is tried again in {wait:g} s, then at growing intervals up to "
                    f"{RETRY_MAX:g} s")
        else:
            held = ("read", "write") if op == "open" or cause == "not_a_file" else (op,)
            wait = max(self.hold(channel) for channel in held)
            if cause not in ("locked", "full", "read_only"):
                self.file.drop_connection()  # reopened when it is tried again
            cost = (f"embeddings are computed without the cache (slower); it is tried again in {wait:g} s, then "
                    f"at growing intervals up to {RETRY_MAX:g} s")
        self.warn(cause, f"{what}; {cost}")

    def _set_aside(self, cause: str) -> str:
        """Rename the damaged file beside itself, so that the next call starts a fresh cache; what it costs."""
        self.file.drop_connection()
        self.file.touched.clear()
        bypassed = "embeddings are computed without the cache (slower)"
        if self._set_asides >= MAX_SET_ASIDE:
            self._disabled = True
            return f"set aside {MAX_SET_ASIDE} times already: {bypassed} for the rest of this process"
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return "it is gone; a fresh cache is started"
        except OSError as exc:
            wait = max(self.hold("read"), self.hold("write"))
            return f"it cannot be moved aside ({exc}); {bypassed}; it is tried again in {wait:g} s"
        if self.file.opened is not None and (info.st_dev, info.st_ino) != self.file.opened:
            return "another process has replaced it; that file is used"
        target = self.path.with_name(f"{self.path.name}.{_SET_ASIDE[cause]}-{time.strftime('%Y%m%dT%H%M%S')}")
        try:
            os.replace(self.path, target)
        except OSError as exc:
            wait = max(self.hold("read"), self.hold("write"))
            return f"it cannot be moved aside ({exc}); {bypassed}; it is tried again in {wait:g} s"
        self._set_asides += 1
        self.file.opened = None
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

    def bad_rows(self, n: int) -> None:
        """``n`` stored vectors read as damaged (left out of a lookup): count them, warn once."""
        self.count("bad_row", n)
        self.warn("bad_row", f"{n} stored vector(s) damaged (wrong length, or a value not finite); they are "
                             "embedded again and rewritten, never returned (further damaged rows are counted in "
                             "tracerag_embedding_cache_errors_total{cause=\"bad_row\"})")

