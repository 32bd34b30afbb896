"""The on-disk format of a CosineBank, and what keeps it safe to read while a writer replaces it.

This module is the only place that knows file names, the manifest and the .npy layout, so the bank
class deals in snapshots and rows, never in paths and bytes.

Every version of a bank is written into a fresh temporary sibling directory and swapped in with
renames, so a crash leaves the old or the new bank complete, and a version is never modified once
visible. Readers read all files of one load through one directory handle, so a concurrent swap cannot
mix files from two versions, and banks that are already open keep their (unlinked) memory map.
Writers serialise on a sibling lock file (``.<name>.lock``) and, once they hold it, finish whatever a
crashed writer left behind; readers never wait for it. A temporary directory records its writer (pid,
host, process start time) in ``.writer.json`` while it is written, and its name records the same from
the instant it exists until its swap (``.<name>.tmp-<pid>.<start>.<host tag>-<random>``), so a writer
killed just before its swap, its record already removed, is still known. A leftover is removed only when
that writer is gone (the process no longer runs on this host), when it is older than
:data:`STALE_TMP_SECONDS` (another host's writer), or when it holds no record and is older than
:data:`UNRECORDED_GRACE_SECONDS`: by the next writer, under the lock, and also by the next load
(:func:`remove_dead_writers_leftovers`), which removes only directories whose writer is known gone and
only if it can take the lock without waiting. So a live writer's directory is never touched, even where
the lock is not shared (a filesystem without working locks).

A bank reached through a symlink is the directory the link points to: every entry point resolves the
real path once (:func:`real_path`, logged as "bank <path> is <real path>"), so its lock, temp directories,
backup and swap are those of the real directory, every path to one bank shares one lock, and a write
through the link updates the real bank (the link stays a link).

A write that fails (a full disk, a refused permission) is one :class:`BankWriteError` line naming the file
and what to do ("<bank>/metadata.jsonl: not written (disk full); the bank at <bank> is unchanged; free
disk space and run again"); a damaged file is one :class:`BankError` line naming it, never numpy's or
faiss' own message.

Opening is O(1) in the bank's size. ``embeddings.npy`` is memory-mapped; ``ids.json`` and
``metadata.jsonl`` keep their plain JSON / JSON Lines form for users, and each version also holds
``ids.offsets.npy`` and ``metadata.offsets.npy`` (uint64, count + 1 entries: where each id's JSON
string and each line starts, then the end), memory-mapped too. An id or a metadata line is decoded
when a caller asks for that row (a search decodes only the rows it returns) and is then checked to sit
exactly where its index says (one JSON string; one line); the id -> row lookup (``in``, ``row_of``)
is built on first use. Integrity at open, without reading any file whole: the manifest; the .npy and
index headers against the manifest's count and the files' sizes; the norms of :data:`SAMPLE_ROWS`
sampled rows; that both indexes span their files; the id and line of :data:`LINE_SAMPLE_ROWS` sampled
rows; and the checksums. The manifest keeps a whole-file sha256 of every file (``checksums``, what
older readers verify) and, for files larger than :data:`WHOLE_READ_BYTES`, open verifies instead a
sampled checksum (``sampled_checksums``: the size and 256 blocks of 4 KiB spread over the file), the
embeddings checksum likewise covering its header and sampled rows. So a truncated, padded or rewritten
file is caught at open and an edit inside one row may only be caught when that row is decoded (the
documented limit, as for rows of the matrix outside the sample). Sampled rows are read with pread, not
through the maps, so the open does not fault page-cache folios into the process. Small banks (ids and
metadata within :data:`WHOLE_READ_BYTES`) and banks written before the indexes existed are read whole
and verified whole, as before; the next append writes the indexes.

Rows outside the sample are checked on first touch. A large bank (one whose open checks a sample, see
:func:`check_rows`) keeps :data:`BLOCKS`: the crc32 of each block of :data:`BLOCK_BYTES` of rows,
computed when the version is written (an append carries the copied blocks' sums over, so an old block
that was damaged stays detectable), named in the manifest (``block_checksums``) and covered by its
checksums. Each block is verified once per process (the verdict is kept per file, shared by every
snapshot of it) when a search first reads it: every block on the first exact search, the candidates'
blocks on an approximate one. A block that fails keeps the bank usable and its answers correct: all its
rows are left out of search results (one warning names the file, the block, its rows and any row that
is visibly not a unit vector) and a change that would move them into new blocks (``delete``,
``upsert_vectors``) is refused; failing the load instead was rejected, as the check happens after the
load and one bad block would make every other row unreachable. :class:`RowGuard` also takes the rows a
search finds scoring outside [-1, 1] (see :mod:`.bank_search`), so banks written before block checksums
(which still load, checked as before) and rows changed after they were verified never return an
impossible score either. Cost: the first exact search reads the matrix once more (crc32, ~4 GB/s a core,
split over the cores); afterwards a search compares one integer.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import logging
import mmap
import os
import re
import shutil
import socket
import stat
import tempfile
import threading
import time
import weakref
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..data_files.durable import fsync_dir
from ..data_files.processes import process_alive, process_start
from ..data_files.read_report import open_regular, regular_file
from ..embedding.embedders import Embedder, l2_normalize
from ..errors import TraceragError

try:  # POSIX only; without it writers are not serialised (documented single-writer fallback)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
EMBEDDINGS = "embeddings.npy"
IDS = "ids.json"
METADATA = "metadata.jsonl"
IDS_INDEX = "ids.offsets.npy"  # uint64 (count + 1): where each id's JSON string starts in ids.json, then the "]"
METADATA_INDEX = "metadata.offsets.npy"  # uint64 (count + 1): where each line starts in metadata.jsonl, then its size

_LOAD_ATTEMPTS = 20  # a load that races a writer's swap retries (10 ms apart)
WRITER = ".writer.json"  # inside a temp directory: the process writing it
STALE_TMP_SECONDS = 24 * 3600  # a temp dir untouched this long is left over whoever wrote it (pid reuse, other hosts)
UNRECORDED_GRACE_SECONDS = 600  # a temp dir without a writer record is left alone this long (it may be brand new)
CHECKSUMS = "checksums"  # manifest key: {file name: "sha256:<hex>"}, embeddings.npy as "sha256-rows:<hex>"
SAMPLE_ROWS = 1_024  # rows of a large bank checked (norm, checksum) on every load
FULL_CHECK_BYTES = 32 << 20  # a bank whose matrix is at most this large has every row checked
SAMPLED_CHECKSUMS = "sampled_checksums"  # manifest key: {file name: "sha256-sampled:<hex>"}, see _sampled_digest
WHOLE_READ_BYTES = 1 << 20  # ids.json + metadata.jsonl up to this size are read (and verified) whole at open
SAMPLED_BLOCKS = 256  # 4 KiB blocks of a large file read by its sampled checksum (1 MiB)
SAMPLED_BLOCK_BYTES = 4096
LINE_SAMPLE_ROWS = 64  # rows of a large bank whose id and metadata line are checked against the indexes at open
_NORM_TOLERANCE = 1e-3  # |norm - 1| allowed for a stored row (float32 rounding is ~1e-7)
_UNIT_TOLERANCE = 1e-4  # rows written whose |norm - 1| is within this are stored as given, not renormalised
_noted_unverified: set[str] = set()  # banks already reported as carrying no checksums (one note per process)
BLOCKS = "embeddings.blocks.npy"  # uint32 (blocks,): the crc32 of each block of rows of embeddings.npy (large banks)
BLOCK_CHECKSUMS = "block_checksums"  # manifest key: {"file": BLOCKS, "rows_per_block": n, "algorithm": "crc32"}
BLOCK_BYTES = 1 << 20  # a checksummed block is this many bytes of rows (rounded down to whole rows, at least one)
_PARALLEL_VERIFY_BYTES = 64 << 20  # blocks verified at once from this size on are split over threads
_noted_links: set[tuple[str, str]] = set()  # (path, real path) already logged (one line per process)
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


def real_path(path: str | Path) -> Path:
    """Where the bank at ``path`` really is: symlinks followed (also a link to a bank not created yet), so
    a write through a link updates the real directory (the link stays a link) and every path to one bank
    shares its lock. ``path`` itself when no link is involved; otherwise logged once per process."""
    path = Path(path)
    real = Path(os.path.realpath(path))
    if real == Path(os.path.abspath(path)):
        return path
    if (str(path), str(real)) not in _noted_links:
        _noted_links.add((str(path), str(real)))
        logger.info("bank %s is %s", path, real)
    return real


# ---------------------------------------------------------------------------------------------
# Reading one version.


class IdColumn:
    """The ids of one version in row order: a list, or decoded one row at a time from the bytes of
    ``ids.json`` through its offset index; the id -> row lookup is built on first use, not at open."""

    def __init__(self, where: Path, count: int, ids: list[str] | None = None, buffer: Any = None,
                 starts: np.ndarray | None = None, index_where: Path | None = None) -> None:
        self._where, self._count, self._list = where, count, ids
        self._buffer, self._starts, self._index_where = buffer, starts, index_where
        self._rows: dict[str, int] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, row: int) -> str:
        if self._list is not None:
            return self._list[row]
        if not 0 <= row < self._count:
            raise IndexError(f"row {row} out of range for {self._count} ids")
        raw = self._buffer[int(self._starts[row]) : int(self._starts[row + 1])].rstrip(b", ")
        try:
            value = json.loads(raw.decode("utf-8")) if raw[:1] == b'"' else None
        except ValueError:
            value = None
        if not isinstance(value, str):
            raise BankError(f"{self._index_where}: entry {row} does not point at an id in {IDS} "
                            "(index and file differ)")
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def take(self, rows: Sequence[int]) -> list[str]:
        """The ids of ``rows`` decoded in one JSON parse (a search's hits), checked as ``self[row]`` is."""
        if self._list is not None:
            return [self._list[r] for r in rows]
        buffer, rows = self._buffer, np.asarray(rows, dtype=np.int64)
        raw = [buffer[a:b].rstrip(b", ") for a, b in zip(self._starts[rows].tolist(), self._starts[rows + 1].tolist(),
                                                         strict=True)]
        try:
            ids = json.loads(b"[" + b",".join(raw) + b"]") if all(x[:1] == b'"' for x in raw) else None
        except ValueError:
            ids = None
        if isinstance(ids, list) and len(ids) == len(rows) and all(type(i) is str for i in ids):
            return ids
        return [self[r] for r in rows]  # names the entry that is wrong

    def tolist(self) -> list[str]:
        """Every id, decoded at once (one JSON parse of the file when it was not read at open)."""
        if self._list is not None:
            return list(self._list)
        ids = _parse_ids(bytes(self._buffer), self._where, self._count)
        return ids

    def row_of(self, id: object) -> int | None:
        """The row of ``id``, or None; the first call builds the lookup (and checks ids are unique)."""
        rows = self._rows
        if rows is None:
            with self._lock:
                if self._rows is None:
                    self._rows = _id_rows(self._list if self._list is not None else self.tolist(), self._where)
                rows = self._rows
        return rows.get(id)  # type: ignore[arg-type]

    def __contains__(self, id: object) -> bool:
        return self.row_of(id) is not None


class MetadataLines:
    """The lines of ``metadata.jsonl`` by row: its bytes (in memory, or a memory map) and the offset where
    each row's line starts (count + 1 entries, the last one the file size)."""

    def __init__(self, where: Path, buffer: Any, starts: np.ndarray, index_where: Path | None = None) -> None:
        self.where, self.buffer, self.starts, self._index_where = where, buffer, starts, index_where

    def line(self, row: int) -> bytes:
        """Row ``row``'s line with its newline; checked to be exactly one line when read through an index."""
        raw = self.buffer[int(self.starts[row]) : int(self.starts[row + 1])]
        if self._index_where is not None and (raw[-1:] != b"\n" or raw.find(b"\n", 0, len(raw) - 1) >= 0):
            raise BankError(f"{self._index_where}: entry {row} does not point at line {row + 1} of {METADATA} "
                            "(index and file differ)")
        return raw

    def decode_range(self, start: int, stop: int) -> list[dict[str, Any]]:
        """Rows ``start:stop`` decoded in one ``json.loads`` (the lines joined as a JSON list), falling back
        to :meth:`decode` row by row when that does not give one object per row."""
        if stop <= start:
            return []
        raw = bytes(self.buffer[int(self.starts[start]) : int(self.starts[stop])])
        if raw.count(b"\n") == stop - start and raw.endswith(b"\n"):
            try:
                values = json.loads(b"[" + raw[:-1].replace(b"\n", b",") + b"]")
            except ValueError:
                values = None
            if isinstance(values, list) and len(values) == stop - start and all(isinstance(v, dict) for v in values):
                return values
        return [self.decode(row) for row in range(start, stop)]

    def decode_rows(self, rows: Sequence[int]) -> list[dict[str, Any]]:
        """Each row's metadata (a fresh dict per entry, repeats included) decoded in one JSON parse."""
        buffer, rows = self.buffer, np.asarray(rows, dtype=np.int64)
        lines = [buffer[a:b] for a, b in zip(self.starts[rows].tolist(), self.starts[rows + 1].tolist(), strict=True)]
        joined = b"".join(lines)
        values = None
        # Each entry is exactly one line when every one ends with a newline and there are no others.
        if joined.count(b"\n") == len(lines) and all(line[-1:] == b"\n" for line in lines):
            try:
                values = json.loads(b"[" + joined[:-1].replace(b"\n", b",") + b"]")
            except ValueError:
                pass
        if isinstance(values, list) and len(values) == len(rows) and all(type(v) is dict for v in values):
            return values
        return [self.decode(r) for r in rows]  # names the line that is wrong

    def decode(self, row: int) -> dict[str, Any]:
        raw = self.line(row)[:-1]
        try:
            value = json.loads(raw.decode("utf-8"))
        except ValueError:
            value = None
        if not isinstance(value, dict):  # rare: build the message (and re-raise with details) only now
            return _json_object(raw, f"{self.where}: line {row + 1} is")
        return value


@dataclass(eq=False)
class Snapshot:
    """One immutable on-disk version, validated at open (see the module docstring for what is checked when)."""

    path: Path
    manifest: dict[str, Any]
    matrix: np.ndarray  # (count, dim) float32, C-contiguous, read-only (memory-mapped when count > 0)
    ids: IdColumn
    lines: MetadataLines
    guard: RowGuard | None = None  # what this process found out about its rows since (see RowGuard)

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def dim(self) -> int:
        return int(self.manifest["dim"])

    def metadata(self, row: int) -> dict[str, Any]:
        return self.lines.decode(row)


class _RowState:
    """What this process knows about the rows of one embeddings file (shared by every snapshot of that file):
    which blocks passed their checksum, which rows are corrupt. Verdicts are final: the file never changes."""

    def __init__(self, blocks: int) -> None:
        self.lock = threading.Lock()
        self.verified = np.zeros(blocks, dtype=bool)
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

    def touch(self, rows: np.ndarray) -> None:
        """Verify the blocks holding ``rows`` that are not verified yet (an approximate search's candidates)."""
        if self._state.pending and len(rows):
            self._verify(np.unique(np.asarray(rows, dtype=np.int64) // self._rows_per_block))

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


def load_snapshot(target: Path, embedder: Embedder | None = None) -> Snapshot:
    """Open and validate the current version at ``target`` (its real path: symlinks followed);
    ``embedder`` (optional) must match its manifest.

    A load that races a writer's swap is retried.
    """
    snap = _load_current(real_path(target))
    if embedder is not None:
        _check_embedder(snap, embedder)
    return snap


def _load_current(target: Path) -> Snapshot:
    for _ in range(_LOAD_ATTEMPTS):
        for path in (target, _backup_path(target)):  # the backup is complete if a writer died mid-swap
            if not path.is_dir():
                continue
            try:
                return _read_snapshot(path, is_backup=path != target)
            except _Raced:
                break
        else:
            if not target.exists():
                raise BankError(f"{target}: no bank (directory does not exist)")
            if not target.is_dir():
                raise BankError(f"{target}: not a directory")
        time.sleep(0.01)
    raise BankError(f"{target}: kept changing while loading (concurrent writers?)")


def read_manifest(target: Path) -> Any:
    """The decoded manifest currently at ``target``, or None if it cannot be read (cheap change check)."""
    try:
        with open_regular(real_path(target) / MANIFEST) as f:
            return json.loads(f.read())
    except (OSError, ValueError):  # FileProblem is a ValueError: a FIFO never blocks this check
        return None


def _check_embedder(snap: Snapshot, embedder: Embedder) -> None:
    where = snap.path / MANIFEST
    if embedder.id != snap.manifest["embedder"]:
        raise BankError(f"{where}: bank was built with embedder {snap.manifest['embedder']!r}, got {embedder.id!r}")
    if embedder.dim != snap.dim:
        raise BankError(f"{where}: bank has dim {snap.dim}, embedder {embedder.id!r} has dim {embedder.dim}")


def _json_object(raw: bytes, where: str) -> dict[str, Any]:
    """Decode one JSON object, or raise BankError naming where it came from ("file:" or "file: line 3 is")."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BankError(f"{where} not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise BankError(f"{where} a {type(value).__name__}, not a JSON object")
    return value


class _Dir:
    """Opens files relative to one directory handle, so every file comes from the same version."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd: int | None = None
        if os.open in os.supports_dir_fd:
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))

    def open(self, name: str) -> IO[bytes]:
        """``name`` opened for binary reading, when it is a regular file: a FIFO (which would block the
        load forever), a directory or a device is a BankError naming it. Opened non-blocking and checked
        on the open descriptor (``read_report.regular_file``); a missing file raises FileNotFoundError
        (a swap the load retries, or a BankError naming it)."""
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(self.path / name, flags) if self.fd is None else os.open(name, flags, dir_fd=self.fd)
        return regular_file(fd, self.path / name, BankError)

    def same_as_path(self) -> bool:
        """Whether ``path`` still names the directory we opened (False after a concurrent swap)."""
        if self.fd is None:  # pragma: no cover
            return True
        try:
            a, b = os.fstat(self.fd), os.stat(self.path)
        except FileNotFoundError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class _Raced(Exception):
    """The directory was swapped while being read; the load is retried."""


def _read_snapshot(path: Path, is_backup: bool = False) -> Snapshot:
    try:
        d = _Dir(path)
    except FileNotFoundError as exc:  # vanished between the caller's check and here (a swap)
        raise _Raced from exc
    except OSError as exc:  # e.g. no permission to read the directory
        raise BankError(f"{path}: cannot be opened ({exc.strerror or exc}); check its permissions") from exc
    try:
        return _read_files(d)
    except FileNotFoundError as exc:
        if is_backup or not d.same_as_path():  # a writer removes the backup right after its swap
            raise _Raced from exc
        raise BankError(f"{path}: missing {Path(exc.filename or '?').name} ({exc.strerror})") from exc
    except OSError as exc:  # a read refused or failed (permissions, an I/O error): name the file
        name = Path(exc.filename).name if isinstance(exc.filename, str) else None
        where = path / name if name else path
        raise BankError(f"{where}: cannot be read ({exc.strerror or exc}); check the file's permissions and the "
                        "disk, or restore the bank from a backup") from exc
    finally:
        d.close()


def _read_files(d: _Dir) -> Snapshot:
    path = d.path
    with d.open(MANIFEST) as f:
        raw_manifest = f.read()
    manifest = _json_object(raw_manifest, f"{path / MANIFEST}:")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BankError(f"{path / MANIFEST}: format_version is {version!r}, this library reads {FORMAT_VERSION}")
    for key, kind in (("embedder", str), ("dim", int), ("count", int)):
        if not isinstance(manifest.get(key), kind) or isinstance(manifest.get(key), bool):
            raise BankError(f"{path / MANIFEST}: {key!r} missing or not a {kind.__name__}: {manifest.get(key)!r}")
    count, dim = manifest["count"], manifest["dim"]
    if count < 0 or dim <= 0:
        raise BankError(f"{path / MANIFEST}: invalid count={count} / dim={dim}")

    sample = check_rows(count, dim)
    with d.open(EMBEDDINGS) as emb:
        matrix, header = _map_npy(emb, path / EMBEDDINGS, count, dim)
        picked = matrix if sample is None else _read_rows(emb, len(header), sample, dim)
        blocks = _read_block_sums(d, manifest, count, dim) if sample is not None else None

        with d.open(IDS) as ids_file, d.open(METADATA) as meta_file:
            ids_size, meta_size = os.fstat(ids_file.fileno()).st_size, os.fstat(meta_file.fileno()).st_size
            indexes = _open_indexes(d) if ids_size + meta_size > WHOLE_READ_BYTES else None
            if indexes is None:  # a small bank, or one written before the indexes existed: read both whole
                ids, lines, digests = _read_whole(path, ids_file, meta_file, count, CHECKSUMS in manifest)
            else:
                with indexes[0] as ids_index, indexes[1] as meta_index:
                    ids, lines, unmapped = _map_rows(path, count, ids_file, meta_file, ids_index, meta_index)
                    _check_vectors(picked, sample, path / EMBEDDINGS)
                    _verify_checksums(d, manifest, {}, header, picked)
                    _check_row_sample(path, *unmapped)  # after the checksums, which name a changed file precisely
                return Snapshot(path, manifest, matrix, ids, lines, _row_guard(path, emb, matrix, ids, blocks,
                                                                                 sample is None))
        _check_vectors(picked, sample, path / EMBEDDINGS)
        _verify_checksums(d, manifest, digests, header, picked)
        return Snapshot(path, manifest, matrix, ids, lines, _row_guard(path, emb, matrix, ids, blocks, sample is None))


def _read_block_sums(d: _Dir, manifest: dict[str, Any], count: int, dim: int) -> tuple[np.ndarray, int] | None:
    """(crc32 per block, rows per block) of a large bank's rows, or None for a bank written without them
    (read whole: 4 bytes per block; the manifest's checksum of the file is verified with the others)."""
    spec = manifest.get(BLOCK_CHECKSUMS)
    if spec is None:
        return None
    per = spec.get("rows_per_block") if isinstance(spec, dict) else None
    if (not isinstance(spec, dict) or spec.get("file") != BLOCKS or spec.get("algorithm") != "crc32"
            or not isinstance(per, int) or isinstance(per, bool) or per <= 0):
        raise BankError(f"{d.path / MANIFEST}: {BLOCK_CHECKSUMS!r} is not "
                        f'{{"file": "{BLOCKS}", "rows_per_block": <n>, "algorithm": "crc32"}}: {spec!r}')
    where, n_blocks = d.path / BLOCKS, -(-count // per)
    with d.open(BLOCKS) as f:
        shape, fortran, dtype = _read_npy_header(f, where)
        if dtype != np.dtype("<u4") or fortran or shape != (n_blocks,):
            raise BankError(f"{where}: expected {n_blocks} uint32 block checksums, got dtype={dtype}, shape={shape}; "
                            f"{_REBUILD}")
        raw = f.read(4 * n_blocks + 1)
    if len(raw) != 4 * n_blocks:
        raise BankError(f"{where}: holds {len(raw)} bytes of checksums, its header promises {4 * n_blocks} "
                        f"(truncated or padded); {_REBUILD}")
    return np.frombuffer(raw, dtype="<u4"), per


def _read_rows(f: IO[bytes], data_offset: int, rows: np.ndarray, dim: int) -> np.ndarray:
    """Rows of the .npy matrix in ``f``, read with pread (so the memory map is not touched at open)."""
    out = np.empty((len(rows), dim), dtype="<f4")
    fd, row_bytes = f.fileno(), dim * 4
    for i, row in enumerate(rows.tolist()):
        if os.preadv(fd, [memoryview(out[i]).cast("B")], data_offset + row * row_bytes) != row_bytes:
            raise BankError(f"{f.name}: row {row} could not be read")
    return out


def _parse_ids(raw: bytes, where: Path, count: int) -> list[str]:
    try:
        ids = json.loads(raw)
    except ValueError as exc:
        raise BankError(f"{where}: not valid JSON ({exc})") from exc
    if not isinstance(ids, list) or not all(isinstance(x, str) for x in ids):
        raise BankError(f"{where}: expected a JSON list of strings")
    if len(ids) != count:
        raise BankError(f"{where}: holds {len(ids)} ids but {MANIFEST} says count={count}")
    return ids


def _id_rows(ids: list[str], where: Path) -> dict[str, int]:
    rows = {x: i for i, x in enumerate(ids)}
    if len(rows) != len(ids):
        dupes = sorted(x for x, c in Counter(ids).items() if c > 1)[:5]
        raise BankError(f"{where}: ids are not unique, e.g. {dupes}")
    return rows


def _read_whole(path: Path, ids_file: IO[bytes], meta_file: IO[bytes], count: int,
                hash_them: bool) -> tuple[IdColumn, MetadataLines, dict[str, str]]:
    """Read, parse and (with ``hash_them``) hash ``ids.json`` and ``metadata.jsonl`` whole."""
    raw_ids, meta_raw = ids_file.read(), meta_file.read()
    # Hash the two files on another core while their contents are parsed (hashlib releases the GIL).
    digests: dict[str, str] = {}
    hasher = threading.Thread(target=lambda: digests.update({IDS: _sha256(raw_ids), METADATA: _sha256(meta_raw)}))
    if hash_them:
        hasher.start()
    ids = _parse_ids(raw_ids, path / IDS, count)
    column = IdColumn(path / IDS, count, ids=ids)
    column.row_of("")  # builds the lookup now: a small bank checks its ids are unique at open
    ends = np.flatnonzero(np.frombuffer(meta_raw, dtype=np.uint8) == 0x0A).astype(np.int64)
    if meta_raw and not meta_raw.endswith(b"\n"):
        raise BankError(
            f"{path / METADATA}: truncated (last line has no newline); {len(ends)} complete lines, "
            f"{MANIFEST} says count={count}"
        )
    if len(ends) != count:
        raise BankError(f"{path / METADATA}: holds {len(ends)} lines but {MANIFEST} says count={count}")
    if hasher.ident is not None:
        hasher.join()
    starts = np.concatenate([[0], ends + 1]).astype(np.int64)
    return column, MetadataLines(path / METADATA, meta_raw, starts), digests


def _open_indexes(d: _Dir) -> tuple[IO[bytes], IO[bytes]] | None:
    """Both offset indexes, open, or None when the version has none (written by an older version)."""
    try:
        ids_index = d.open(IDS_INDEX)
    except FileNotFoundError:
        return None
    try:
        return ids_index, d.open(METADATA_INDEX)
    except FileNotFoundError:
        ids_index.close()
        return None


def _map_rows(path: Path, count: int, ids_file: IO[bytes], meta_file: IO[bytes], ids_index: IO[bytes],
              meta_index: IO[bytes]) -> tuple[IdColumn, MetadataLines, tuple[IdColumn, MetadataLines]]:
    """Memory-map ids, metadata and their indexes, checking the indexes' headers; also returns the same
    columns read through the open files, for the checks at open.

    O(1) in the bank's size: no file is read whole; rows are decoded (and checked) when asked for.
    """
    ids_starts = _map_index(ids_index, path / IDS_INDEX, count)
    meta_starts = _map_index(meta_index, path / METADATA_INDEX, count)
    # The checks at open read through the file handles, not the maps: a mapped page faults in its whole
    # page-cache folio (up to megabytes), which would grow the process for rows nobody asked for.
    unmapped = (IdColumn(path / IDS, count, buffer=_FileBytes(ids_file), starts=_FileOffsets(ids_index, count),
                         index_where=path / IDS_INDEX),
                MetadataLines(path / METADATA, _FileBytes(meta_file), _FileOffsets(meta_index, count),
                              path / METADATA_INDEX))
    ids = IdColumn(path / IDS, count, buffer=_map_bytes(ids_file), starts=ids_starts, index_where=path / IDS_INDEX)
    return ids, MetadataLines(path / METADATA, _map_bytes(meta_file), meta_starts, path / METADATA_INDEX), unmapped


class _FileBytes:
    """Slices of an open file, read with pread (no memory map touched)."""

    def __init__(self, f: IO[bytes]) -> None:
        self.fd = f.fileno()
        self.size = os.fstat(self.fd).st_size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key: slice) -> bytes:
        start, stop, _ = key.indices(self.size)
        return os.pread(self.fd, max(0, stop - start), start)


class _FileOffsets:
    """Entries of an open offset index (its header already validated), read with pread."""

    def __init__(self, f: IO[bytes], count: int) -> None:
        self.fd, self.data = f.fileno(), os.fstat(f.fileno()).st_size - (count + 1) * 8

    def __getitem__(self, i: int) -> int:
        return int.from_bytes(os.pread(self.fd, 8, self.data + 8 * int(i)), "little")


def _check_row_sample(path: Path, ids: IdColumn, lines: MetadataLines) -> None:
    """Both indexes span their files, and :data:`LINE_SAMPLE_ROWS` rows (first and last included) hold
    an id and a one-line JSON object where the indexes say."""
    count, ids_buffer, ids_starts = len(ids), ids._buffer, ids._starts  # noqa: SLF001 (this module's own)
    meta_buffer, meta_starts = lines.buffer, lines.starts
    ids_end = len(ids_buffer) - 2  # ids.json ends with "]\n"
    if int(ids_starts[0]) != 1 or int(ids_starts[count]) != ids_end or ids_buffer[ids_end:] != b"]\n":
        raise BankError(f"{path / IDS_INDEX}: does not span {IDS} (first {int(ids_starts[0])}, last "
                        f"{int(ids_starts[count])}; the file has {len(ids_buffer)} bytes)")
    if int(meta_starts[0]) != 0 or int(meta_starts[count]) != len(meta_buffer):
        raise BankError(f"{path / METADATA_INDEX}: does not span {METADATA} (first {int(meta_starts[0])}, last "
                        f"{int(meta_starts[count])}; the file has {len(meta_buffer)} bytes)")
    if len(meta_buffer) and meta_buffer[-1:] != b"\n":
        raise BankError(f"{path / METADATA}: truncated (last line has no newline)")
    for row in np.unique(np.linspace(0, count - 1, min(count, LINE_SAMPLE_ROWS)).round().astype(np.int64)).tolist():
        ids[row]
        if lines.line(row)[:1] != b"{":
            raise BankError(f"{path / METADATA}: line {row + 1} is not a JSON object")


def _map_index(f: IO[bytes], where: Path, count: int) -> np.ndarray:
    """Validate an offset index's .npy header and memory-map its count + 1 uint64 entries."""
    shape, fortran, dtype = _read_npy_header(f, where)
    if dtype != np.dtype("<u8") or fortran or shape != (count + 1,):
        raise BankError(f"{where}: expected {count + 1} uint64 offsets (count + 1), got dtype={dtype}, shape={shape}")
    offset = f.tell()
    size = os.fstat(f.fileno()).st_size
    if size != offset + (count + 1) * 8:
        raise BankError(f"{where}: file is {size} bytes, header promises {offset + (count + 1) * 8} "
                        "(truncated or padded)")
    return np.memmap(f, dtype="<u8", mode="r", offset=offset, shape=(count + 1,)).view(np.ndarray)


def _map_bytes(f: IO[bytes]) -> Any:
    """The file's bytes as a read-only memory map (an empty bytes object for an empty file)."""
    if os.fstat(f.fileno()).st_size == 0:
        return b""
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def check_rows(count: int, dim: int) -> np.ndarray | None:
    """The rows every load checks and the embeddings checksum covers: None (all) for a small bank, else
    :data:`SAMPLE_ROWS` rows spread evenly from the first to the last (a function of the shape only)."""
    if count <= SAMPLE_ROWS or count * dim * 4 <= FULL_CHECK_BYTES:
        return None
    return np.unique(np.linspace(0, count - 1, SAMPLE_ROWS).round().astype(np.int64))


def _check_vectors(picked: np.ndarray, sample: np.ndarray | None, where: Path) -> None:
    """Every checked row is finite and unit-length (cosine scores, and so ``min_score``, rely on it)."""
    if not len(picked):
        return
    row_of = (lambda i: int(i)) if sample is None else (lambda i: int(sample[i]))
    finite = np.isfinite(picked).all(axis=1)
    if not finite.all():
        raise BankError(f"{where}: row {row_of(np.argmin(finite))} is not finite (NaN or infinity)")
    norms = np.sqrt(np.einsum("ij,ij->i", picked, picked, dtype=np.float64))
    bad = np.flatnonzero(np.abs(norms - 1.0) > _NORM_TOLERANCE)
    if len(bad):
        r, norm = row_of(bad[0]), norms[bad[0]]
        if norm == 0:
            raise BankError(f"{where}: row {r} is all zeros; bank rows are unit vectors")
        raise BankError(f"{where}: row {r} has norm {norm:.6g}, not 1; bank rows are L2-normalised "
                        "(scores would not be cosines)")


def _sha256(data: Any) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rows_digest(header: bytes, picked: np.ndarray) -> str:
    """The embeddings checksum: the .npy header and the checked rows (all rows of a small bank), so a
    load verifies it without reading the whole matrix."""
    digest = hashlib.sha256(header)
    digest.update(np.ascontiguousarray(picked, dtype="<f4").data)
    return "sha256-rows:" + digest.hexdigest()


def _verify_checksums(d: _Dir, manifest: dict[str, Any], known: dict[str, str], header: bytes,
                      picked: np.ndarray) -> None:
    """Compare the manifest's checksums with the files (``known``: digests already computed, by name).

    A file larger than :data:`WHOLE_READ_BYTES` with a sampled checksum is checked by that (O(1)), the
    rest by their whole-file checksum."""
    recorded = manifest.get(CHECKSUMS)
    where = d.path / MANIFEST
    if recorded is None:
        if str(d.path) not in _noted_unverified:
            _noted_unverified.add(str(d.path))
            logger.warning("%s: no checksums recorded (written by an older version); loaded with counts and "
                           "sampled rows checked only; the next append records them", where)
        return
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        raise BankError(f"{where}: {CHECKSUMS!r} is not an object of strings")
    sampled = manifest.get(SAMPLED_CHECKSUMS, {})
    if not isinstance(sampled, dict) or not all(isinstance(v, str) for v in sampled.values()):
        raise BankError(f"{where}: {SAMPLED_CHECKSUMS!r} is not an object of strings")
    for name, expected in sorted(recorded.items()):
        if name == EMBEDDINGS:
            actual = _rows_digest(header, picked)
            what = "its header and checked rows do not match"
        else:
            if Path(name).name != name or name in (MANIFEST, WRITER):
                raise BankError(f"{where}: {CHECKSUMS!r} names {name!r}, not a file of the bank")
            if name in known:
                actual = known[name]
            else:
                with d.open(name) as f:
                    if os.fstat(f.fileno()).st_size > WHOLE_READ_BYTES and name in sampled:
                        actual, expected = _sampled_digest(f), sampled[name]
                    else:
                        actual = _sha256(f.read())
            what = "its contents do not match"
        if actual != expected:
            raise BankError(f"{d.path / name}: {what} the checksum in {MANIFEST} (changed after it was written)")


def _sampled_digest(f: IO[bytes]) -> str:
    """A checksum of the file's size and :data:`SAMPLED_BLOCKS` blocks spread evenly over it (the whole
    file when that is smaller): a function of the size only, read in ~1 MiB whatever the file's size."""
    fd = f.fileno()
    size = os.fstat(fd).st_size
    digest = hashlib.sha256(size.to_bytes(8, "little"))
    if size <= SAMPLED_BLOCKS * SAMPLED_BLOCK_BYTES:
        digest.update(os.pread(fd, size, 0))
    else:
        for offset in np.linspace(0, size - SAMPLED_BLOCK_BYTES, SAMPLED_BLOCKS).astype(np.int64).tolist():
            digest.update(os.pread(fd, SAMPLED_BLOCK_BYTES, offset))
    return "sha256-sampled:" + digest.hexdigest()


def _sampled_checksums(directory: Path) -> dict[str, str]:
    """Sampled checksums of the files written into ``directory`` so far, but the manifest and embeddings."""
    out = {}
    for path in sorted(directory.iterdir()):
        if path.name not in (MANIFEST, WRITER, EMBEDDINGS):
            with open(path, "rb") as f:
                out[path.name] = _sampled_digest(f)
    return out


def _checksums(directory: Path) -> dict[str, str]:
    """Checksums of the files written into ``directory`` so far (all but the manifest): see ``CHECKSUMS``."""
    out = {}
    for path in sorted(directory.iterdir()):
        if path.name in (MANIFEST, WRITER):
            continue
        if path.name == EMBEDDINGS:
            with open(path, "rb") as f:
                count, dim = _npy_shape(f, path)
                matrix, header = _map_npy(f, path, count, dim)
            sample = check_rows(count, dim)
            out[EMBEDDINGS] = _rows_digest(header, matrix[sample] if sample is not None else matrix)
        else:
            out[path.name] = _sha256(path.read_bytes())
    return out


def _npy_shape(f: IO[bytes], where: Path) -> tuple[int, int]:
    shape, _, _ = _read_npy_header(f, where)
    f.seek(0)
    if len(shape) != 2:
        raise BankError(f"{where}: expected a matrix, got shape {shape}")
    return int(shape[0]), int(shape[1])


def _read_npy_header(f: IO[bytes], where: Path | None = None) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran_order, dtype); leaves ``f`` at the first data byte. A header that cannot be read is a
    ValueError, or with ``where`` a one-line BankError naming that file and what to do."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        if version == (1, 0):
            return fmt.read_array_header_1_0(f)
        if version == (2, 0):
            return fmt.read_array_header_2_0(f)
        raise ValueError(f"unsupported .npy version {version}")
    except Exception as exc:  # numpy raises ValueError, and tokenize/ast errors for some garbled headers
        if where is None:
            raise ValueError(_one_line(exc)) from exc
        raise BankError(f"{where}: not a readable .npy file ({_one_line(exc)}); {_REBUILD}") from exc


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line, at most 200 characters."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _map_npy(f: IO[bytes], where: Path, count: int, dim: int) -> tuple[np.ndarray, bytes]:
    """Validate the .npy header and memory-map the data (from the open handle, not the path); also
    returns the header bytes."""
    shape, fortran, dtype = _read_npy_header(f, where)
    if dtype != np.dtype(np.float32) or fortran or len(shape) != 2:
        raise BankError(
            f"{where}: expected a C-ordered float32 matrix, got dtype={dtype}, shape={shape}, fortran_order={fortran}"
        )
    if shape[1] != dim:
        raise BankError(f"{where}: rows have dim {shape[1]} but {MANIFEST} says dim={dim}")
    if shape[0] != count:
        raise BankError(f"{where}: holds {shape[0]} rows but {MANIFEST} says count={count}")
    offset = f.tell()
    size = os.fstat(f.fileno()).st_size
    expected = offset + count * dim * 4
    if size != expected:
        raise BankError(f"{where}: file is {size} bytes, header promises {expected} (truncated or padded)")
    f.seek(0)
    header = f.read(offset)
    if count == 0:
        return np.zeros((0, dim), dtype=np.float32), header
    mapped = np.memmap(f, dtype=np.float32, mode="r", offset=offset, shape=(count, dim), order="C")
    return mapped.view(np.ndarray), header  # plain ndarray view (cheaper slicing); keeps the mmap alive


# ---------------------------------------------------------------------------------------------
# Writing versions atomically.


def _backup_path(target: Path) -> Path:
    return target.parent / f".{target.name}.old"


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"


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


@contextlib.contextmanager
def _writing(path: str | Path | int) -> Iterator[None]:
    """Tag an OSError raised while ``path`` is written with its file name (for :func:`_write_failed`)."""
    try:
        yield
    except OSError as exc:
        if getattr(exc, "bank_file", None) is None and isinstance(path, str | Path):
            exc.bank_file = Path(path).name  # type: ignore[attr-defined]
        raise


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


# ---------------------------------------------------------------------------------------------
# Writing the files of one version (into the temp directory ``write_version`` hands out).


@contextlib.contextmanager
def write_embeddings(directory: Path, count: int, dim: int) -> Iterator[IO[bytes]]:
    """Open ``embeddings.npy`` for ``count`` rows and write its header; the caller writes the rows."""
    with _writing(directory / EMBEDDINGS):
        f = open(directory / EMBEDDINGS, "wb")  # noqa: SIM115 (closed below)
    with f:
        header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)), "fortran_order": False,
                  "shape": (count, dim)}
        with _writing(directory / EMBEDDINGS):
            np.lib.format.write_array_header_1_0(f, header)
        yield f  # an OSError of the caller's own (an embedder's connection) is not the file's
        _fsync_file(f)


def write_rows(f: IO[bytes], vectors: np.ndarray, dim: int, what: str) -> None:
    """Check ``vectors`` and append them as little-endian float32 unit rows.

    The embedder contract promises unit rows, so rows whose norm is already 1 (within
    :data:`_UNIT_TOLERANCE`) are written as given; only the others are normalised (one vectorised norm
    pass decides, and it also finds non-finite and all-zero rows).
    """
    vectors = np.asarray(vectors)
    if vectors.ndim != 2 or vectors.shape[1] != dim:
        raise BankError(f"{what}: expected vectors of shape (n, {dim}), got {vectors.shape}")
    rows = np.ascontiguousarray(vectors, dtype="<f4")
    norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    if not np.isfinite(norms).all() and not np.isfinite(vectors).all():
        raise BankError(f"{what}: vectors contain NaN or infinity")
    if (norms == 0).any():
        zero = np.flatnonzero(~vectors.any(axis=1))
        if len(zero):
            raise BankError(f"{what}: vector {int(zero[0])} of this batch is all zeros; "
                            "a bank row must have a direction")
    off = ~(np.abs(norms - 1.0) <= _UNIT_TOLERANCE)
    if off.any():
        rows = rows.copy() if rows is vectors else rows
        rows[off] = l2_normalize(rows[off])
    with _writing(f.name):
        f.write(memoryview(rows).cast("B"))


def copy_rows(source: Path, dst: IO[bytes], count: int, dim: int) -> None:
    """Append the first ``count`` rows of the bank directory ``source`` to ``dst`` (in-kernel when possible)."""
    with open(source / EMBEDDINGS, "rb") as src:
        _read_npy_header(src, source / EMBEDDINGS)
        _copy_range(src, dst, src.tell(), count * dim * 4)


def _copy_range(src: IO[bytes], dst: IO[bytes], offset: int, length: int) -> None:
    """Copy ``length`` bytes from ``src`` at ``offset`` to the end of ``dst``; leaves ``dst`` at its end."""
    with _writing(dst.name):
        _copy_bytes(src, dst, offset, length)


def _copy_bytes(src: IO[bytes], dst: IO[bytes], offset: int, length: int) -> None:
    dst.flush()
    src_fd, dst_fd = src.fileno(), dst.fileno()
    done = 0
    if hasattr(os, "copy_file_range"):
        try:
            while done < length:
                n = os.copy_file_range(src_fd, dst_fd, length - done, offset + done)
                if n == 0:
                    break
                done += n
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                raise
    dst.seek(0, os.SEEK_END)
    src.seek(offset + done)
    while done < length:
        chunk = src.read(min(8 << 20, length - done))
        if not chunk:
            raise BankError(f"{src.name}: ended {length - done} bytes early while copying")
        dst.write(chunk)
        done += len(chunk)


_ROW_BREAK = "\x00tracerag row break"  # placed between rows to encode them in one json.dumps call
_ROW_BREAK_JSON = "," + json.dumps(_ROW_BREAK) + ","


def metadata_lines(metadata: Sequence[dict[str, Any]], first_row: int) -> bytes:
    """``metadata.jsonl`` bytes for rows numbered from ``first_row`` (the number names a bad row).

    All rows are encoded by one ``json.dumps`` of the list with a marker string between rows, then split
    at the markers: ``,"\\u0000tracerag row break",`` can only be such a list element, so the split is
    exact unless a row itself holds that element (then, as when a row does not encode, row by row).
    """
    n = len(metadata)
    if n == 0:
        return b""
    items: list[Any] = [_ROW_BREAK] * (2 * n - 1)
    items[::2] = metadata
    try:
        body = json.dumps(items, ensure_ascii=False, separators=(",", ":"))[1:-1]
        if body.count(_ROW_BREAK_JSON) == n - 1:
            return (body.replace(_ROW_BREAK_JSON, "\n") + "\n").encode("utf-8")
    except (TypeError, ValueError):
        pass
    out = []
    for i, item in enumerate(metadata):
        try:
            out.append(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata for row {first_row + i} is not JSON-serialisable: {exc}") from exc
    return ("\n".join(out) + "\n").encode("utf-8")


def write_ids_metadata_manifest(
    directory: Path,
    ids: list[str],
    old_metadata: MetadataLines | None,
    new_metadata: bytes,
    *,
    embedder_id: str,
    dim: int,
    created: str | None = None,
    kept: tuple[Snapshot, int] | None = None,
) -> None:
    """Write the files besides the embeddings, the manifest last; metadata is the old lines, then the new.

    ``ids.json`` and ``metadata.jsonl`` get their offset indexes. The manifest records checksums of every
    file already in ``directory`` (views included), so views must be written before. ``kept``: see
    :func:`write_manifest`."""
    _write_ids(directory, ids)
    _write_metadata(directory, old_metadata, new_metadata)
    write_manifest(directory, len(ids), embedder_id=embedder_id, dim=dim, created=created, kept=kept)


def write_manifest(directory: Path, count: int, *, embedder_id: str, dim: int, created: str | None = None,
                   kept: tuple[Snapshot, int] | None = None) -> None:
    """Write ``manifest.json`` last: it records checksums of every file already in ``directory``.

    A large bank also gets its block checksums (:data:`BLOCKS`) first; ``kept`` = (the previous version, n)
    says its first n rows were copied unchanged, so their blocks' checksums are carried over, not computed
    again (a block damaged in the old file stays detectable in the new one)."""
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
    blocks = _write_block_sums(directory, count, dim, kept)
    manifest = {"format_version": FORMAT_VERSION, "embedder": embedder_id, "dim": dim, "count": count,
                "created": created or now, "updated": now, CHECKSUMS: _checksums(directory),
                SAMPLED_CHECKSUMS: _sampled_checksums(directory)}
    if blocks is not None:
        manifest[BLOCK_CHECKSUMS] = blocks
    write_json(directory / MANIFEST, manifest)


def rows_per_block(dim: int) -> int:
    """Rows in one checksummed block of a bank of dimension ``dim`` (:data:`BLOCK_BYTES` of rows)."""
    return max(1, BLOCK_BYTES // (dim * 4))


def _write_block_sums(directory: Path, count: int, dim: int, kept: tuple[Snapshot, int] | None) -> dict | None:
    """Write :data:`BLOCKS` for the ``embeddings.npy`` in ``directory`` when the bank is large (its load
    checks a sample of rows, not all); returns the manifest entry describing it, or None."""
    if count == 0 or check_rows(count, dim) is None:
        return None
    per = rows_per_block(dim)
    sums = np.empty(-(-count // per), dtype="<u4")
    done = 0
    old = kept[0].guard if kept is not None and kept[0].guard is not None else None
    if old is not None and old._sums is not None and old._rows_per_block == per:  # noqa: SLF001 (this module's)
        done = min(kept[1], kept[0].count) // per  # type: ignore[index]  # whole blocks copied unchanged
        sums[:done] = old._sums[:done]  # noqa: SLF001
    if done < len(sums):
        with open(directory / EMBEDDINGS, "rb") as f:
            _read_npy_header(f, directory / EMBEDDINGS)
            base = f.tell()
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                data = memoryview(mapped)
                try:
                    sums[done:] = _block_crcs(data[base:], dim * 4, count, per, list(range(done, len(sums))))
                finally:
                    data.release()
    _write_index(directory / BLOCKS, sums, "<u4")
    return {"file": BLOCKS, "rows_per_block": per, "algorithm": "crc32"}


def link_version_files(source: Path, directory: Path, skip: Sequence[str]) -> None:
    """Put every file of the version at ``source`` (but the manifest and ``skip``) into ``directory``: hard
    links, since a version's files never change once visible (a copy where the filesystem cannot link)."""
    for path in sorted(source.iterdir()):
        if path.name in (MANIFEST, WRITER, *skip) or not path.is_file():
            continue
        try:
            os.link(path, directory / path.name)
        except OSError:
            with _writing(directory / path.name):
                shutil.copyfile(path, directory / path.name)


def write_manifest_adding(directory: Path, manifest: dict[str, Any], names: Sequence[str]) -> None:
    """Write ``manifest`` (a previous version's, whose other files ``directory`` holds unchanged) with the
    checksums of the files ``names`` added and ``updated`` set to now: no other file is read again."""
    now = _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
    checksums = dict(manifest.get(CHECKSUMS) or {})
    sampled = dict(manifest.get(SAMPLED_CHECKSUMS) or {})
    for name in names:
        with open(directory / name, "rb") as f:
            checksums[name] = "sha256:" + hashlib.file_digest(f, "sha256").hexdigest()  # streamed: may be GBs
            sampled[name] = _sampled_digest(f)
    write_json(directory / MANIFEST, {**manifest, "updated": now, CHECKSUMS: checksums, SAMPLED_CHECKSUMS: sampled})


# A new version spliced from an old one: runs of old rows kept unchanged (``range``: copied as bytes, in-kernel
# where the filesystem allows) and new rows (``list``: indices into the caller's new vectors and metadata).
Piece = range | list[int]


def write_spliced_rows(
    directory: Path,
    source: Path,
    snap: Snapshot,
    pieces: Sequence[Piece],
    vectors: np.ndarray,
    metadata: Sequence[dict[str, Any]],
    ids: list[str],
    what: str,
) -> None:
    """Write ``embeddings.npy``, ``metadata.jsonl``, ``ids.json`` and their indexes of a version made of
    ``pieces`` (see :data:`Piece`); ``ids`` are the new version's ids in row order.

    ``source`` must hold exactly ``snap``'s version (the caller holds the writer lock and checked the
    manifest). Cost: the kept rows' vector and metadata bytes are copied without decoding (O(n) bytes,
    ``copy_file_range``), only the new rows are encoded, and ``ids.json`` is written anew (one JSON encode).
    """
    dim, row_bytes = snap.dim, snap.dim * 4
    count = sum(len(p) for p in pieces)
    if count != len(ids):
        raise BankError(f"{what}: {len(ids)} ids for {count} rows")
    with write_embeddings(directory, count, dim) as f, open(source / EMBEDDINGS, "rb") as src:
        _read_npy_header(src, source / EMBEDDINGS)
        base = src.tell()
        for piece in pieces:
            if isinstance(piece, range):
                if len(piece):
                    _copy_range(src, f, base + piece.start * row_bytes, len(piece) * row_bytes)
            elif piece:
                write_rows(f, vectors[piece], dim, what)
    old_starts, parts, size = snap.lines.starts, [], 0
    with _writing(directory / METADATA), open(directory / METADATA, "wb") as f, open(source / METADATA, "rb") as src:
        for piece in pieces:
            if isinstance(piece, range):
                if not len(piece):
                    continue
                a, b = int(old_starts[piece.start]), int(old_starts[piece.stop])
                _copy_range(src, f, a, b - a)
                parts.append(np.asarray(old_starts[piece.start : piece.stop], dtype=np.int64) - a + size)
                size += b - a
            elif piece:
                raw = metadata_lines([metadata[i] for i in piece], 0)
                ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x0A)
                parts.append(np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) + size)
                f.write(raw)
                size += len(raw)
        _fsync_file(f)
    _write_index(directory / METADATA_INDEX, np.concatenate([*parts, [size]]).astype("<u8"))
    _write_ids(directory, ids)


def _write_ids(directory: Path, ids: list[str]) -> None:
    """``ids.json`` exactly as ``json.dumps(ids)`` writes it, and the offset of every id in it."""
    # With "\n" as item separator every id's JSON string is one line (JSON strings hold no raw newline),
    # so the newline positions give each id's offset; the file uses json.dumps' default ", " instead.
    text = json.dumps(ids, ensure_ascii=False, separators=("\n", ":"))
    newlines = np.flatnonzero(np.frombuffer(text.encode("utf-8"), dtype=np.uint8) == 0x0A)
    raw = text.replace("\n", ", ").encode("utf-8") + b"\n"
    starts = np.empty(len(ids) + 1, dtype="<u8")
    starts[0] = 1  # after "["
    starts[1 : len(ids)] = newlines + 2 + np.arange(len(newlines))  # each earlier separator grew by one byte
    starts[len(ids)] = len(raw) - 2  # the closing "]"
    _write_bytes(directory / IDS, raw)
    _write_index(directory / IDS_INDEX, starts)


def _write_metadata(directory: Path, head: MetadataLines | None, tail: bytes) -> None:
    """``metadata.jsonl`` (the old lines ``head``, then ``tail``) and where each line starts in it."""
    head_size = len(head.buffer) if head is not None else 0
    tail_ends = np.flatnonzero(np.frombuffer(tail, dtype=np.uint8) == 0x0A)
    head_starts = head.starts[:-1] if head is not None else np.zeros(0, dtype="<u8")
    starts = np.concatenate([head_starts.astype("<u8"), [head_size], tail_ends + 1 + head_size]).astype("<u8")
    with _writing(directory / METADATA), open(directory / METADATA, "wb") as f:
        if head_size:
            f.write(head.buffer)  # type: ignore[union-attr]
        f.write(tail)
        _fsync_file(f)
    _write_index(directory / METADATA_INDEX, starts)


def _write_index(path: Path, values: np.ndarray, dtype: str | None = None) -> None:
    """An offset index (uint64) or, with ``dtype``, another 1-D array as a .npy file."""
    with _writing(path), open(path, "wb") as f:
        np.save(f, np.ascontiguousarray(values, dtype=dtype or "<u8"))
        _fsync_file(f)


def _write_bytes(path: Path, raw: bytes) -> None:
    with _writing(path), open(path, "wb") as f:
        f.write(raw)
        _fsync_file(f)


def write_json(path: Path, value: Any) -> None:
    with _writing(path), open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(value, ensure_ascii=False) + "\n")  # dumps: C encoder; dump() streams in Python
        _fsync_file(f)


def _fsync_file(f: IO[Any]) -> None:
    with _writing(f.name):
        f.flush()
        os.fsync(f.fileno())
