"""The errors of a Milvus store, and what keeps the engine's own failures to one line.

Errors are one line (:class:`~.vector_store.StoreError` and its subclasses here), naming the file or URI and
what to do, never a pymilvus / gRPC / engine traceback: :class:`StoreLocked` (Milvus Lite admits one process
per store: the holder's pid and command line are read from ``/proc/locks``, else from this user's
``/proc/*/fd``: :mod:`.milvus_lite_files`), :class:`StoreDamaged`, :class:`StoreDiskFull`, and
:class:`StoreWriteFailed` for an upsert or delete that failed, saying how far it got. A write that failed
while its rows were being sent **may still be applied**: Milvus Lite logs the rows before answering and
replays that log on the next open, and a server may apply a call whose answer was lost; undoing it would
need the old rows and space to write them, which a full disk does not give. So the message says the rows
may be applied, that upserts and deletes are idempotent (run it again), and the journal entry it leaves
makes the next open bring the word index in line with whatever rows landed. A write that failed before
sending any row (``applied == "none"``, e.g. its journal entry could not be written) changed nothing.

The client's failures become these errors in :mod:`.milvus_client`; the engine's own error log lines for a
failure tracerag reports are dropped here (:class:`_EngineNoise`; ``logging.DEBUG`` on this module shows
their first line).
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .vector_store import StoreError

__all__ = ["StoreDamaged", "StoreDiskFull", "StoreLocked", "StoreWriteFailed"]

logger = logging.getLogger(__name__)


class StoreLocked(StoreError):
    """Another process holds the Milvus Lite store (the engine admits one); ``holder`` says which, if found."""

    def __init__(self, message: str, *, path: str = "", holder: str = "") -> None:
        super().__init__(message)
        self.path, self.holder = path, holder


class StoreDamaged(StoreError):
    """A file of the Milvus Lite store cannot be read; ``file`` is it, ``kind`` what it holds ("rows", "index",
    "words", "manifest", "schema", "store")."""

    def __init__(self, message: str, *, path: str = "", file: str = "", kind: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.path, self.file, self.kind, self.detail = path, file, kind, detail


class StoreDiskFull(StoreError):
    """The disk holding the store (or the server's) is full."""

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class StoreWriteFailed(StoreError):
    """An upsert or delete failed. ``applied``: "none" (no row was sent), "maybe" (the failed call's rows may
    still land, e.g. when Milvus Lite replays its log on the next open) or "rows" (the rows changed, what
    follows them, e.g. the word index, did not); ``cause`` is the engine's error as one line."""

    def __init__(self, message: str, *, applied: str, cause: StoreError | None = None) -> None:
        super().__init__(message)
        self.applied, self.cause = applied, cause


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300]


def _engine_message(e: BaseException) -> str:
    """The engine's own words, one line (pymilvus' ``message``, not its ``<MilvusException: (code=...`` repr)."""
    message = getattr(e, "message", None)
    return _one_line(message if isinstance(message, str) and message else e)


def _disk_full(e: BaseException | None, text: str) -> bool:
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        text += " " + str(e)
        e = e.__cause__ or e.__context__
    return any(w in text for w in ("No space left on device", "[Errno 28]", "Disk quota exceeded"))


# ---------------------------------------------------------------------------------------------
# The engine's own error logs, for failures tracerag reports as one line.


class _EngineNoise(logging.Filter):
    """Drops the ERROR records (with tracebacks) pymilvus and Milvus Lite log for a failure while a tracerag
    call is waiting for it: that call raises it as one line. pymilvus logs in the calling thread (so only that
    thread's calls count); the embedded engine in its server threads (any tracerag call in flight counts, so an
    error another user of the engine meets in that moment is not logged either)."""

    def __init__(self) -> None:
        super().__init__()
        self.local = threading.local()
        self.in_flight = 0
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        mine = getattr(self.local, "depth", 0) > 0
        if not (mine or (self.in_flight > 0 and record.name.startswith(("milvus_lite", "grpc._server")))):
            return True
        caught = getattr(self.local, "caught", None) if mine else None
        if caught is not None and record.exc_info and record.exc_info[1] is not None:
            caught.append(record.exc_info[1])
        logger.debug("engine log (%s): %s", record.name, record.getMessage().split("\n", 1)[0][:300])
        return False


_NOISE = _EngineNoise()
# grpc._server: the embedded engine's gRPC server, which logs each call of a method Lite lacks (pymilvus asks for
# AllocTimestamp after creating an index, then goes on without it)
for _name in ("pymilvus.decorators", "milvus_lite.server_manager", "milvus_lite.adapter.grpc.servicer", "grpc._server"):
    logging.getLogger(_name).addFilter(_NOISE)


@contextmanager
def _engine_call(caught: list[BaseException] | None = None) -> Iterator[None]:
    """A call into the engine whose failure tracerag reports (see :class:`_EngineNoise`); ``caught`` collects
    the exceptions the engine logged meanwhile (pymilvus reports "Open local milvus failed" and logs why)."""
    local = _NOISE.local
    outer = getattr(local, "caught", None)
    local.depth = getattr(local, "depth", 0) + 1
    if caught is not None:
        local.caught = caught
    with _NOISE.lock:
        _NOISE.in_flight += 1
    try:
        yield
    finally:
        with _NOISE.lock:
            _NOISE.in_flight -= 1
        local.depth -= 1
        local.caught = outer
