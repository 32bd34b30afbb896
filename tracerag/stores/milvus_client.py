"""How a Milvus store reaches the engine: one pymilvus client, whose failures are one line.

One ``pymilvus.MilvusClient`` speaks to Milvus Lite (an embedded engine in one local ``.db`` file, started
in this process) and to a Milvus server (by URI; token from ``TRACERAG_MILVUS_TOKEN``). pymilvus is imported
lazily, so tracerag works without it until a ``milvus:`` URI is opened. Every call of the client goes
through :class:`_OneLineErrors`: a server failure (connection lost, collection dropped, a server error, a
full disk, a damaged file found by :mod:`.milvus_lite_files`) is one :mod:`.milvus_errors` line naming
the store.

Milvus Lite admits one process per file. When the last store of this process on a file closes
(:func:`_disconnect`), the embedded engine pymilvus started for it is stopped and its lock freed, so this
process or another can open the file again (pymilvus itself keeps the engine until the process exits).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from .milvus_errors import (
    StoreDamaged,
    StoreDiskFull,
    StoreLocked,
    _disk_full,
    _engine_call,
    _engine_message,
    _one_line,
)
from .milvus_lite_files import _damaged, _lite_crash_marks, _lite_damage, _lock_holder
from .vector_store import TOKEN_ENV, StoreError, StoreTarget

logger = logging.getLogger(__name__)

_INSTALL_HINT = 'the Milvus backend needs pymilvus and milvus-lite: pip install -e ".[milvus]"'


def _pymilvus(lite: bool) -> Any:
    try:
        import pymilvus
    except ImportError:
        raise StoreError(_INSTALL_HINT) from None
    if lite and importlib.util.find_spec("milvus_lite") is None:
        raise StoreError(_INSTALL_HINT + " (milvus-lite is missing)")
    return pymilvus


class _OneLineErrors:
    """The client, whose server failures (connection lost, collection dropped, a server error, a full disk, a
    damaged file) are one :class:`StoreError` line naming the store (see :func:`_translate`), never a pymilvus /
    gRPC stack trace. Argument mistakes (a TypeError of ours) pass unchanged."""

    def __init__(self, client: Any, target: StoreTarget) -> None:
        self._client, self._target = client, target

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                with _engine_call():
                    return attr(*args, **kwargs)
            except StoreError:
                raise
            except Exception as e:
                if not _server_failure(e):
                    raise
                collection = args[0] if args and isinstance(args[0], str) else None
                raise _translate(self._target, name, e, collection) from None

        return call


def _server_failure(e: BaseException) -> bool:
    module = type(e).__module__ or ""
    return (module.startswith(("pymilvus", "grpc", "milvus_lite")) or isinstance(e, ConnectionError | TimeoutError)
            or _disk_full(e, ""))


_DAMAGE_WORDS = re.compile(r"parquet|magic bytes|\bEOF\b|corrupt|failed to load|not valid JSON|truncat|array header|"
                           r"ArrowInvalid|Invalid IPC|unexpected end|read_index|Expected to read|JSONDecode", re.I)


def _translate(target: StoreTarget, op: str, e: BaseException, collection: str | None = None) -> StoreError:
    """An engine failure as one line: a full disk, a damaged Milvus Lite file (found by :func:`_lite_damage`,
    looking first at ``collection``'s files), else the engine's message. ``reason`` on the error is that
    message without the store's name."""
    reason = _engine_message(e)
    if _disk_full(e, reason):
        place = (f"the disk holding {target.location}" if target.backend == "milvus-lite"
                 else "the Milvus server reports its disk full")
        error: StoreError = StoreDiskFull(f"{target}: {op} failed: disk full ({place}): free space, then retry",
                                          path=target.location)
        reason = "disk full"
    elif target.backend == "milvus-lite" and _DAMAGE_WORDS.search(reason) and (
            found := _lite_damage(Path(target.location), collection)) is not None:
        error = _damaged(target, *found)
        reason = error.detail
    else:
        error = StoreError(f"{target}: {op} failed: {reason}")
    logger.debug("%s: %s failed in the engine: %s", target, op, reason)
    error.reason = reason  # type: ignore[attr-defined]
    return error


_AUTH_WORDS = ("unauthenticated", "permission_denied", "auth check fail", "authenticat")


def _refused_credentials(e: BaseException) -> bool:
    """Whether a connect failure (or what caused it: pymilvus wraps the gRPC error) is the server refusing the
    token rather than an unreachable server."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if any(word in str(e).lower() for word in _AUTH_WORDS):
            return True
        e = e.__cause__ or e.__context__
    return False


def _connect(target: StoreTarget, create: bool) -> tuple[_OneLineErrors, dict[str, str], str | None]:
    """(the client, marks of a writer killed mid-flush by collection (Milvus Lite), the Lite file's key when
    this store holds it open: pass it to :func:`_disconnect`)."""
    pymilvus = _pymilvus(lite=target.backend == "milvus-lite")
    if target.backend == "milvus-lite":
        return _connect_lite(pymilvus, target, create)
    try:
        with _engine_call():
            client = pymilvus.MilvusClient(uri=target.location, token=os.environ.get(TOKEN_ENV, ""))
    except Exception as e:
        hint = f"; the server refused the credentials: check {TOKEN_ENV}" if _refused_credentials(e) else ""
        raise StoreError(f"{target}: cannot connect to Milvus: {_engine_message(e)}{hint}") from None
    return _OneLineErrors(client, target), {}, None


def _disconnect(client: Any, lite_key: str | None) -> None:
    try:
        client.close()
    except StoreError as e:
        logger.debug("closing the client: %s", e)
    finally:
        if lite_key is not None:
            _release_lite(lite_key)


def _load(client: Any, name: str, target: StoreTarget) -> None:
    """Load the collection (a fresh client, or process, finds collections released). On Milvus Lite a damaged
    index file (derived from the rows, written in place: a kill leaves it truncated) is deleted, and the
    engine builds it again from the rows."""
    for _ in range(8):
        if _load_state(client, name) == "Loaded":
            return
        try:
            client.load_collection(name)
            return
        except StoreDamaged as e:
            if e.kind != "index":
                raise
            os.remove(e.file)
            logger.warning("%s: deleted the damaged index file %s (%s; a writer killed while saving it?): the engine "
                           "builds it again from the rows", target, e.file, e.detail)
    client.load_collection(name)


def _load_state(client: Any, name: str) -> str:
    state = client.get_load_state(name).get("state")
    return getattr(state, "name", str(state))


# ---------------------------------------------------------------------------------------------
# Milvus Lite: one process per file, the engine in this process.

_LITE_LOCK = threading.Lock()
_LITE_USERS: dict[str, int] = {}  # Lite file -> stores of this process holding it open
_LITE_OWNED: set[str] = set()  # Lite files whose engine a store of this process started (so may stop)


def _lite_servers() -> dict[str, Any] | None:
    """pymilvus' embedded engines by file (milvus_lite's server manager), None when not reachable."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return None
    servers = getattr(server_manager_instance, "_servers", None)
    return servers if isinstance(servers, dict) else None


def _connect_lite(pymilvus: Any, target: StoreTarget, create: bool) -> tuple[_OneLineErrors, dict[str, str], str]:
    path = Path(target.location)
    if not path.exists():
        if not create:
            raise StoreError(f"{target}: no Milvus Lite file {path}; open it with create=True to make one")
        path.parent.mkdir(parents=True, exist_ok=True)
    elif not path.is_dir():
        raise StoreDamaged(f"{path}: not a Milvus Lite store (a file, where Milvus Lite 3 keeps a directory: written "
                           f"by Milvus Lite 2, or damaged): restore it from a copy, or delete {path} to start a new "
                           "store", path=str(path), file=str(path), kind="store", detail="not a directory")
    key = os.path.abspath(path)
    with _LITE_LOCK:
        servers = _lite_servers()
        running = servers is not None and key in servers
        crashed = {} if running else _lite_crash_marks(path, target.collection or "tracerag")
        caught: list[BaseException] = []
        try:
            with _engine_call(caught):
                client = pymilvus.MilvusClient(str(path))
        except Exception as e:
            if not running and servers is not None and key in servers:  # the engine started, the client did not
                _LITE_OWNED.add(key)
                _LITE_USERS[key] = 1
                _release_lite(key, locked=True)
            raise _lite_open_error(target, path, caught[-1] if caught else e) from None
        if not running and servers is not None and key in servers:
            _LITE_OWNED.add(key)
        _LITE_USERS[key] = _LITE_USERS.get(key, 0) + 1
    return _OneLineErrors(client, target), crashed, key


def _release_lite(key: str, *, locked: bool = False) -> None:
    """One store of this process closed the file: the last one stops the engine it started, freeing the lock.
    ``locked``: the caller holds ``_LITE_LOCK``."""
    if not locked:
        with _LITE_LOCK:
            _release_lite(key, locked=True)
        return
    users = _LITE_USERS.get(key, 0) - 1
    if users > 0:
        _LITE_USERS[key] = users
        return
    _LITE_USERS.pop(key, None)
    if key not in _LITE_OWNED:
        return
    _LITE_OWNED.discard(key)
    try:
        from milvus_lite.server_manager import server_manager_instance

        with _engine_call():
            server_manager_instance.release_server(key)
    except Exception as e:  # the engine stops at process exit anyway
        logger.warning("%s: stopping the Milvus Lite engine failed (%s); the file stays locked until this "
                       "process exits", key, _one_line(e))


def _lite_open_error(target: StoreTarget, path: Path, e: BaseException) -> StoreError:
    """Why the embedded engine did not start (pymilvus says only "Open local milvus failed"), as one line."""
    holder = _lock_holder(path)
    if holder is not None:
        if f"pid {os.getpid()}: this process" in holder:  # e.g. a milvus_lite.MilvusLite of its own on the file
            return StoreLocked(f"{target}: locked by this process ({holder}) outside tracerag's stores: close that "
                               "engine, then retry", path=str(path), holder=holder)
        return StoreLocked(f"{target}: locked by another process ({holder}): Milvus Lite lets one process open a "
                           "store at a time; close the store there (or stop that process) and retry, or serve the "
                           "file with a Milvus server", path=str(path), holder=holder)
    if _disk_full(e, ""):
        return StoreDiskFull(f"{target}: cannot open {path}: disk full: free space on that disk, then retry",
                             path=str(path))
    if isinstance(e, PermissionError):
        return StoreError(f"{target}: cannot open {path}: permission denied ({_one_line(e)})")
    if isinstance(e, NotADirectoryError | FileExistsError):
        return StoreDamaged(f"{path}: not a Milvus Lite store (a file where a directory belongs): restore it from a "
                            f"copy, or delete it to start a new store", path=str(path), file=str(path), kind="store",
                            detail=_one_line(e))
    found = _lite_damage(path)
    if found is not None:
        return _damaged(target, *found)
    return StoreError(f"{target}: cannot open the Milvus Lite file {path}: {_engine_message(e)}")
