"""Which rows of a bank version a search may return: those of a large bank are checked on first touch.

The load checks a sample of a large bank's rows (see :func:`~.bank_layout.check_rows`); the others are
checked here. Such a bank keeps :data:`~.bank_layout.BLOCKS`: the crc32 of each block of
:data:`~.bank_layout.BLOCK_BYTES` of rows, computed when the version is written (an append carries the
copied blocks' sums over, so an old block that was damaged stays detectable), named in the manifest
(``block_checksums``) and covered by its checksums. Each block is verified once per process (the verdict
is kept per file, shared by every snapshot of it) when a search first reads it: every block on the first
exact search, the candidates' blocks on an approximate one. A block that fails keeps the bank usable and
its answers correct: all its rows are left out of search results (one warning names the file, the block,
its rows and any row that is visibly not a unit vector) and a change that would move them into new blocks
(``delete``, ``upsert_vectors``) is refused; failing the load instead was rejected, as the check happens
after the load and one bad block would make every other row unreachable. :class:`RowGuard` also takes the
rows a search finds scoring outside [-1, 1] (see :mod:`.bank_search`), so banks written before block
checksums (which still load, checked as before) and rows changed after they were verified never return an
impossible score either. Cost: the first exact search reads the matrix once more (crc32, ~4 GB/s a core,
split over the cores); afterwards a search compares one integer.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import numpy as np

from .bank_columns import IdColumn
from .bank_errors import BankError
from .bank_layout import _NORM_TOLERANCE, BLOCKS, EMBEDDINGS

logger = logging.getLogger(__name__)

_PARALLEL_VERIFY_BYTES = 64 << 20  # blocks verified at once from this size on are split over threads


class _RowState:
    """What this process knows about the rows of one embeddings file (shared by every snapshot of that file):
    which blocks passed their checksum, which rows are corrupt. Verdicts are final: the file never changes."""

    def __init__(self, blocks: int) -> None:
        self.lock = threading.Lock()
        self.verified = np.zeros(blocks, dtype=bool)
        self.seen = memoryview(self.verified)  # the same flags, read one at a time without numpy's calls
        self.pending = blocks  # blocks not verified yet: 0 on the warm path (one int compared per search)
        self.failed: set[int] = set()  # blocks whose checksum did not match
        self.corrupt: dict[int, str] = {}  # row -> why it is left out of results
        self.excluded: np.ndarray | None = None  # sorted rows never returned; None while there are none


_row_states: weakref.WeakValueDictionary[tuple[Any, ...], _RowState] = weakref.WeakValueDictionary()
_row_states_lock = threading.Lock()


class RowGuard:
    """Keeps a version's search results to rows known to be intact (the ``screen`` of
    :func:`~.bank_search.cosine_scores`).

    A large bank's blocks are verified against :data:`BLOCKS` on first touch (every block by the first exact
    search, the candidates' blocks by an approximate one), once per process per file; a block that fails
    has all its rows left out of results, and a row whose score is impossible for a cosine (the search
    reports it) is left out too. Each finding is one warning naming the file and the rows."""

    def __init__(self, where: Path, matrix: np.ndarray, ids: IdColumn, sums: np.ndarray | None,
                 rows_per_block: int, state: _RowState) -> None:
        self.where, self._matrix, self._ids = where, matrix, ids
        self._sums, self._rows_per_block, self._state = sums, rows_per_block, state

    @property
    def excluded(self) -> np.ndarray | None:
        """The rows no search returns (sorted), or None when every row may be returned."""
        return self._state.excluded

    @property
    def corrupt_rows(self) -> dict[int, str]:
        """Row -> why it is left out of results (found so far in this process)."""
        return dict(self._state.corrupt)

    @property
    def failed_blocks(self) -> list[int]:
        """The blocks that failed their checksum (found so far in this process)."""
        return sorted(self._state.failed)

    def verify_all(self) -> None:
        """Verify every block not verified yet (the first exact search touches every row)."""
        if self._state.pending:
            self._verify(np.arange(len(self._state.verified)))

    def touch(self, rows: np.ndarray | list[int]) -> None:
        """Verify the blocks holding ``rows`` that are not verified yet (an approximate search's candidates)."""
        state = self._state
        if state.pending and len(rows):
            if type(rows) is list:  # one query's dozen rows: a Python loop costs less than numpy's calls
                per, seen = self._rows_per_block, state.seen
                if all(seen[r // per] for r in rows):
                    return
            blocks = np.asarray(rows, dtype=np.int64) // self._rows_per_block
            if not state.verified[blocks].all():  # warm: one look, no lock (a flag is only ever set)
                self._verify(np.unique(blocks))

    def _verify(self, blocks: np.ndarray) -> None:
        state, sums = self._state, self._sums
        with state.lock:  # a concurrent first search waits for the verdict instead of computing it again
            todo = blocks[~state.verified[blocks]].tolist()
            if not todo:
                return
            bad = []
            if sums is not None and len(self._matrix):
                with memoryview(self._matrix) as view, view.cast("B") as data:  # the mapped rows, not copied
                    found = _block_crcs(data, self._matrix.shape[1] * 4, len(self._matrix), self._rows_per_block, todo)
                bad = [b for b, crc in zip(todo, found, strict=True) if crc != int(sums[b])]
            state.verified[todo] = True
            state.pending -= len(todo)
            if bad:
                self._exclude_blocks(bad)

    def _exclude_blocks(self, blocks: list[int]) -> None:
        """Leave every row of ``blocks`` (failed their checksum) out of results; one warning (lock held)."""
        state, per, count = self._state, self._rows_per_block, len(self._matrix)
        total = len(state.verified)
        spans = [(b * per, min(count, (b + 1) * per)) for b in blocks]
        rows = np.concatenate([np.arange(lo, hi) for lo, hi in spans])
        state.failed.update(blocks)
        for b, (lo, hi) in zip(blocks, spans, strict=True):
            for row in range(lo, hi):
                state.corrupt.setdefault(row, f"block {b} failed its checksum in {BLOCKS}")
        self._set_excluded(rows)
        with np.errstate(all="ignore"):  # which rows are visibly broken (the others may differ subtly)
            norms = np.sqrt(np.einsum("ij,ij->i", self._matrix[rows], self._matrix[rows], dtype=np.float64))
        off = np.flatnonzero(~(np.abs(norms - 1.0) <= _NORM_TOLERANCE))
        detail = ""
        if len(off):
            named = ", ".join(f"row {rows[i]} ({self._name(int(rows[i]))}, norm {norms[i]:.3g})"
                              for i in off[:3].tolist())
            detail = f"; not unit vectors: {named}" + (f" and {len(off) - 3} more" if len(off) > 3 else "")
        shown = ", ".join(f"{b} (rows {lo}-{hi - 1})" for b, (lo, hi) in list(zip(blocks, spans, strict=True))[:5])
        more = f" and {len(blocks) - 5} more" if len(blocks) > 5 else ""
        plural = len(blocks) > 1
        logger.warning("%s: block%s %s%s of %d %s not match %s recorded when it was written (damaged since)%s: "
                       "%d rows are left out of search results; rebuild the bank to restore them", self.where,
                       "s" if plural else "", shown, more, total, "do" if plural else "does", BLOCKS, detail, len(rows))

    def report(self, rows: np.ndarray, scores: np.ndarray) -> None:
        """Rows a search scored outside [-1, 1] (or NaN): corrupt; left out of results from now on, with one
        warning naming them (rows already left out are not reported again)."""
        state = self._state
        with state.lock:
            new = [(int(r), float(s)) for r, s in zip(np.asarray(rows).tolist(), np.asarray(scores).tolist(),
                                                      strict=True) if int(r) not in state.corrupt]
            if not new:
                return
            for r, score in new:
                state.corrupt[r] = f"scored {score:.3g}, impossible for a cosine"
            rows = np.array([r for r, _ in new], dtype=np.int64)
            self._set_excluded(rows)
            with np.errstate(all="ignore"):  # the norm of a corrupt row may overflow: it is reported as inf
                norms = np.sqrt(np.einsum("ij,ij->i", self._matrix[rows[:5]], self._matrix[rows[:5]],
                                          dtype=np.float64))
            named = ", ".join(f"row {r} ({self._name(r)}, norm {norm:.3g}) scored {score:.3g}"
                              for (r, score), norm in zip(new[:5], norms.tolist(), strict=False))
            more = f" and {len(new) - 5} more" if len(new) > 5 else ""
            total = len(state.corrupt)
            logger.warning("%s: %s%s, impossible for a cosine of unit rows (which lies in [-1, 1]): %s corrupt and "
                           "left out of search results (%d corrupt row%s in this bank); rebuild the bank to restore "
                           "%s", self.where, named, more, "the row is" if len(new) == 1 else "the rows are",
                           total, "" if total == 1 else "s", "it" if len(new) == 1 else "them")

    def _set_excluded(self, rows: np.ndarray) -> None:
        state = self._state
        old = state.excluded if state.excluded is not None else np.zeros(0, dtype=np.int64)
        state.excluded = np.union1d(old, rows).astype(np.int64)  # a new array: searches in flight keep theirs

    def _name(self, row: int) -> str:
        try:
            return f"id {self._ids[row]!r}"
        except (BankError, IndexError):
            return "id unreadable"


def _block_crcs(data: memoryview, row_bytes: int, count: int, rows_per_block: int, blocks: list[int]) -> list[int]:
    """crc32 of each of ``blocks`` (of ``rows_per_block`` rows; the last may be shorter) of the rows in ``data``;
    split over threads when there is much to read (zlib releases the GIL)."""
    step = rows_per_block * row_bytes

    def crc(b: int) -> int:
        return zlib.crc32(data[b * step : min(count * row_bytes, (b + 1) * step)])

    workers = min(8, _cpus())
    if workers < 2 or len(blocks) * step < _PARALLEL_VERIFY_BYTES:
        return [crc(b) for b in blocks]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bank-verify") as pool:
        return list(pool.map(crc, blocks, chunksize=max(1, len(blocks) // (4 * workers))))


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1


def _row_guard(path: Path, f: IO[bytes], matrix: np.ndarray, ids: IdColumn,
               blocks: tuple[np.ndarray, int] | None, verified: bool) -> RowGuard:
    """The guard of a version whose embeddings file is open as ``f``; the state is shared with every other
    snapshot of the same file in this process (``verified``: every row was checked at open)."""
    info = os.fstat(f.fileno())
    sums, per = blocks if blocks is not None and not verified else (None, 1 << 62)
    n_blocks = 0 if sums is None else len(sums)
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, per, n_blocks)
    with _row_states_lock:
        state = _row_states.get(key)
        if state is None:
            state = _RowState(n_blocks)
            _row_states[key] = state
    return RowGuard(path / EMBEDDINGS, matrix, ids, sums, per, state)
