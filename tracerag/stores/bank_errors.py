"""The numpy bank's errors: one line each, naming the file and what to do, never numpy's or faiss' message.

A write that fails (a full disk, a refused permission) is one :class:`BankWriteError` line naming the file
and what to do ("<bank>/metadata.jsonl: not written (disk full); the bank at <bank> is unchanged; free
disk space and run again": :func:`~.bank_swap.write_version` words it from the file that :func:`_writing`
tagged); a damaged file is one :class:`BankError` line naming it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from ..errors import TraceragError

_REBUILD = "rebuild the bank or restore it from a backup"  # what to do about a damaged file


class BankError(TraceragError, RuntimeError):
    """A bank directory is missing, inconsistent or does not match the embedder it is used with."""


class BankExists(BankError):
    """A new bank was asked for where one already is (another writer may have created it first)."""


class BankRestored(BankExists):
    """A new bank was asked for where a writer's interrupted swap had hidden an existing one, now restored."""


class BankWriteError(BankError, OSError):
    """A bank write that did not happen (a full disk, a refused permission): the previous version is intact.
    One line naming the file and what to do; ``errno`` is the underlying error's."""


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line, at most 200 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


@contextlib.contextmanager
def _writing(path: str | Path | int) -> Iterator[None]:
    """Tag an OSError raised while ``path`` is written with its file name (for :func:`~.bank_swap._write_failed`)."""
    try:
        yield
    except OSError as exc:
        if getattr(exc, "bank_file", None) is None and isinstance(path, str | Path):
            exc.bank_file = Path(path).name  # type: ignore[attr-defined]
        raise
