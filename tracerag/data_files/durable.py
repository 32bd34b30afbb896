"""Every file the library writes, written so that a kill or a full disk never loses the previous version.

``write_durably(path, data)`` writes a temp file in the same directory, fsyncs it, renames it over the target
and fsyncs the directory: a reader sees the old file or the new one, never half of either, and a failure
leaves the old one as it was (the temp file is removed, the error names the file and, for a full disk, says
so). A symlinked target is written through its link (the link stays, the file it points to is replaced).

``sha256_of(data)`` is the checksum a writer records beside what it writes (an artifact's metadata, a
bank's manifest) and ``verify_sha256`` is what its reader checks, so a file damaged after it was written is
named, never used. Readers open files with ``read_report.open_regular`` (never blocking on a FIFO).

The numpy bank writes whole directories the same way (``stores.bank_swap.write_version``, with its lock
and its recovery of a writer killed between renames); both fsync directories with ``fsync_dir``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
from pathlib import Path

from ..errors import InvalidValue, TraceragError

__all__ = ["DurableWriteError", "fsync_dir", "sha256_of", "verify_sha256", "write_durably"]


class DurableWriteError(TraceragError, OSError):
    """A write that did not happen: the previous version of the file is intact. Names the file."""


def fsync_dir(path: str | Path) -> None:
    """Make a rename in ``path`` durable (a no-op where directories cannot be opened or synced)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - e.g. Windows cannot open directories
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on directories
        pass
    finally:
        os.close(fd)


def write_durably(path: str | Path, data: bytes | str) -> Path:
    """Replace ``path`` with ``data`` (str is written as UTF-8) atomically and durably; the path written.

    On any failure the previous file is untouched, no temp file is left, and ``DurableWriteError`` names the
    file ("disk full" for ENOSPC/EDQUOT)."""
    path = Path(path)
    target = path.resolve() if path.is_symlink() else path
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
        tmp = None
        fsync_dir(target.parent)
    except OSError as exc:
        full = exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
        why = "disk full" if full else (exc.strerror or str(exc))
        raise DurableWriteError(exc.errno, f"{path}: not written ({why}); the previous version is intact") from exc
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
    return target


def sha256_of(data: bytes | str) -> str:
    """The hex SHA-256 of ``data`` (str as UTF-8): what a writer records and a reader verifies."""
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def verify_sha256(data: bytes | str, expected: str | None, where: str | Path) -> None:
    """Raise ``ValueError`` naming ``where`` when ``data`` does not have the recorded checksum (None: nothing
    was recorded, as in files written before checksums; accepted)."""
    if expected is not None and sha256_of(data) != expected:
        raise InvalidValue(f"{where}: its content does not match the checksum recorded when it was written "
                           f"(damaged or changed since); write it again")
