"""Making a new version the bank, atomically: one writer at a time, a temporary sibling directory swapped in
with renames, and what a crashed writer left behind cleaned up.

Every version of a bank is written into a fresh temporary sibling directory and swapped in with renames
(:func:`write_version`), so a crash leaves the old or the new bank complete, and a version is never
modified once visible. Writers serialise on a sibling lock file (``.<name>.lock``, :func:`writer_lock`)
and, once they hold it, finish whatever a crashed writer left behind; readers never wait for it. A
temporary directory records its writer (pid, host, process start time) in ``.writer.json`` while it is
written, and its name records the same from the instant it exists until its swap
(``.<name>.tmp-<pid>.<start>.<host tag>-<random>``), so a writer killed just before its swap, its record
already removed, is still known. A leftover is removed only when that writer is gone (the process no longer
runs on this host), when it is older than :data:`STALE_TMP_SECONDS` (another host's writer), or when it
holds no record and is older than :data:`UNRECORDED_GRACE_SECONDS`: by the next writer, under the lock, and
also by the next load (:func:`remove_dead_writers_leftovers`), which removes only directories whose writer
is known gone and only if it can take the lock without waiting. So a live writer's directory is never
touched, even where the lock is not shared (a filesystem without working locks).

A write that fails (a full disk, a refused permission) is one :class:`~.bank_errors.BankWriteError` line
naming the file and what to do (:func:`_write_failed`); the previous version is intact.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..data_files.durable import fsync_dir
from ..data_files.processes import process_alive, process_start
from ..data_files.read_report import open_regular
from .bank_errors import BankError, BankExists, BankRestored, BankWriteError, _one_line, _writing
from .bank_layout import MANIFEST, WRITER, _backup_path, _tmp_prefix, real_path

try:  # POSIX only; without it writers are not serialised (documented single-writer fallback)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

STALE_TMP_SECONDS = 24 * 3600  # a temp dir untouched this long is left over whoever wrote it (pid reuse, other hosts)
UNRECORDED_GRACE_SECONDS = 600  # a temp dir without a writer record is left alone this long (it may be brand new)


def _temp_dirs(target: Path) -> list[Path]:
    """The temporary directories writers of ``target`` made (and any leftover of theirs)."""
    prefix = _tmp_prefix(target)
    try:
        with os.scandir(target.parent) as entries:
            return [Path(e.path) for e in entries if e.name.startswith(prefix)]
    except OSError:
        return []


@contextlib.contextmanager
def writer_lock(target: Path) -> Iterator[bool]:
    """Hold the exclusive writer lock of ``target`` (of its real path: every path to a bank shares one lock)
    and finish what a crashed writer left behind; yields whether that put back a bank a writer killed
    between its two renames had moved aside."""
    target = real_path(target)
    lock_path = target.parent / f".{target.name}.lock"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = open(lock_path, "a+b") if fcntl is not None else None  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise _write_failed(target, exc, lock_path) from exc
    if lock is None:  # pragma: no cover
        yield _recover(target)
        return
    with lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield _recover(target)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _recover(target: Path) -> bool:
    """Finish what a crashed writer left behind (caller holds the writer lock); True if the bank was
    restored from its backup."""
    backup = _backup_path(target)
    restored = False
    if backup.exists():
        if target.exists():  # crashed after the swap, before removing the old version
            shutil.rmtree(backup, ignore_errors=True)
        else:  # crashed between the two renames: the old version is complete, put it back
            logger.warning("restoring %s from %s left by an interrupted write", target, backup)
            os.rename(backup, target)
            fsync_dir(target.parent)
            restored = True
    now = time.time()
    for tmp in _temp_dirs(target):
        why = _leftover(tmp, now, target)
        if why:
            logger.info("removing %s left by an interrupted write (%s)", tmp, why)
            shutil.rmtree(tmp, ignore_errors=True)
    return restored


def remove_dead_writers_leftovers(target: Path) -> None:
    """Remove, without waiting for the writer lock, the temp directories of ``target`` whose writer is known
    to be gone (a process of this host that no longer runs): what a writer killed before its swap leaves.

    Called on load. Only a dead writer's directory goes: its writer can never use it again. And only when
    the writer lock is free at that instant (taken without waiting, released at once): a writer the pid
    check cannot see (another pid namespace under the same host name) holds the lock while its directory
    exists. Backups and directories that only age tells apart are left to the next writer (:func:`_recover`).
    """
    target = real_path(target)
    found = _temp_dirs(target)
    if not found or fcntl is None:
        return
    now = time.time()
    leftovers = [(tmp, why) for tmp in found if (why := _leftover(tmp, now, target, known_dead_only=True))]
    if not leftovers:
        return
    try:
        lock = open(target.parent / f".{target.name}.lock", "a+b")  # noqa: SIM115 (closed below)
    except OSError:  # a read-only directory: the next writer cleans up
        return
    with lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a writer holds it: it cleans up itself
            return
        try:
            for tmp, why in leftovers:
                logger.info("removing %s left by an interrupted write (%s)", tmp, why)
                shutil.rmtree(tmp, ignore_errors=True)
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


def _writer_record() -> bytes:
    pid = os.getpid()
    return json.dumps({"pid": pid, "host": socket.gethostname(), "start": process_start(pid),
                       "created": time.time()}).encode()


def _host_tag(host: str | None = None) -> str:
    return hashlib.sha256((host or socket.gethostname()).encode("utf-8", "replace")).hexdigest()[:8]


# A temp directory's name records its writer too (pid, process start or "x", host tag), from the instant it
# exists until its swap, so a writer killed at any point (even after removing its record) is known gone.
_NAMED_WRITER = re.compile(r"(\d+)\.(\d+|x)\.([0-9a-f]{8})-")


def _writer_tag() -> str:
    pid = os.getpid()
    return f"{pid}.{process_start(pid) or 'x'}.{_host_tag()}-"


def _leftover(tmp: Path, now: float, target: Path | None = None, *, known_dead_only: bool = False) -> str:
    """Why the temp directory ``tmp`` is a leftover safe to remove, or "" while its writer may be alive.

    The writer is read from its record (``.writer.json``) or, without one, from the directory's name.
    ``known_dead_only``: only a writer of this host that is gone counts (not the age of a directory)."""
    try:
        info = tmp.lstat()
    except OSError:
        return ""
    if not stat.S_ISDIR(info.st_mode):
        return ""  # not one of ours: never remove what we did not create
    age = now - info.st_mtime
    try:
        with open_regular(tmp / WRITER) as f:
            record = json.loads(f.read())
    except (OSError, ValueError):  # FileProblem is a ValueError: a FIFO never blocks the clean-up
        record = None
    here = isinstance(record, dict) and record.get("host") == socket.gethostname()
    named = _NAMED_WRITER.match(tmp.name[len(_tmp_prefix(target)) :]) if target is not None else None
    if (not isinstance(record, dict) or not isinstance(record.get("pid"), int) or record["pid"] <= 0) and named:
        record = {"pid": int(named[1]), "start": None if named[2] == "x" else named[2]}
        here = named[3] == _host_tag()
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int) or record["pid"] <= 0:
        if known_dead_only:
            return ""
        return f"no writer record, {age:.0f} s old" if age > UNRECORDED_GRACE_SECONDS else ""
    if age > STALE_TMP_SECONDS and not known_dead_only:
        return f"untouched for {age / 3600:.0f} h"
    if not here:
        return ""  # another machine's writer: only its age can tell
    if process_alive(record["pid"], record.get("start")):
        return ""
    return f"its writer, pid {record['pid']}, is gone"


def _swap_in(tmp: Path, target: Path) -> None:
    """Make ``tmp`` the bank at ``target``; at every instant one complete version exists on disk."""
    if not target.exists():
        os.rename(tmp, target)
        fsync_dir(target.parent)
        return
    backup = _backup_path(target)
    os.rename(target, backup)
    try:
        os.rename(tmp, target)
    except BaseException:
        os.rename(backup, target)
        raise
    fsync_dir(target.parent)
    shutil.rmtree(backup, ignore_errors=True)


# Errors of a write itself (not, say, an embedder's refused connection raised while rows are written).
_WRITE_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EIO, errno.EACCES, errno.EPERM,
                 errno.EROFS, errno.EFBIG, errno.EMFILE, errno.ENFILE, errno.ENAMETOOLONG}


def _write_failed(target: Path, exc: OSError, where: Path | None = None) -> BankWriteError:
    """The one-line error for a write of the bank ``target`` that failed with ``exc``: the file, why and
    what to do."""
    if where is None:
        name, prefix = getattr(exc, "bank_file", None), _tmp_prefix(target)
        failed = Path(exc.filename) if name is None and isinstance(exc.filename, str) else None
        if failed is not None and failed.parent.name.startswith(prefix):  # a file of the version being written
            name = failed.name
        elif failed is not None and not failed.name.startswith(prefix) and failed != _backup_path(target):
            where = failed  # some other file (a temp directory, the backup: the bank itself is named)
        where = where or (target / name if name else target)
    full = exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
    why = "disk full" if full else _one_line(exc) if exc.strerror is None else exc.strerror
    todo = ("free disk space and run again" if full
            else "check the permissions of the bank's directory and run again"
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS) else "run again")
    error = BankWriteError(f"{where}: not written ({why}); the bank at {target} is unchanged; {todo}")
    error.errno = exc.errno
    return error


def write_version(target: Path, write: Callable[[Path], None]) -> None:
    """Let ``write`` fill a temp sibling directory (same filesystem, its name and a record inside saying
    which process writes it), fsync it, swap it in.

    The caller holds :func:`writer_lock`. An OSError (a full disk, a refused permission) becomes one
    :class:`BankWriteError` naming the file; the previous version is intact and the temp directory removed.
    """
    target = real_path(target)
    tmp = None
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(target) + _writer_tag(), dir=target.parent))
        with _writing(tmp / WRITER):
            (tmp / WRITER).write_bytes(_writer_record())  # so a later writer knows whether this one is gone
        write(tmp)
        (tmp / WRITER).unlink()  # not part of the version (the directory's name still says who writes it)
        fsync_dir(tmp)
        _swap_in(tmp, target)
    except BaseException as exc:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and not isinstance(exc, BankError) and (
                getattr(exc, "bank_file", None) or exc.filename or exc.errno in _WRITE_ERRNOS):
            raise _write_failed(target, exc) from exc
        raise


def write_new_bank(target: Path, write: Callable[[Path], None], overwrite: bool) -> None:
    """:func:`write_version` for a new bank; replaces an existing bank only with ``overwrite``, other data never."""
    target = real_path(target)
    with writer_lock(target) as restored:
        if target.exists():
            if not target.is_dir():
                raise BankError(f"{target}: exists and is not a directory")
            is_bank = (target / MANIFEST).exists()
            if is_bank and not overwrite and restored:  # the caller saw no bank: a crash had moved it aside
                raise BankRestored(f"{target}: a bank already exists (restored from an interrupted write)")
            if is_bank and not overwrite:
                raise BankExists(f"{target}: a bank already exists; pass overwrite=True to replace it or use append")
            if not is_bank and any(target.iterdir()):
                raise BankError(f"{target}: exists, is not empty and holds no {MANIFEST}; refusing to replace it")
        write_version(target, write)
