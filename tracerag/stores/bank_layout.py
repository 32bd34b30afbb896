"""The on-disk layout of a numpy bank: the files of one version, the manifest's keys and checksums, and what
a writer keeps beside the bank.

These modules are the only place that knows file names, the manifest and the .npy layout, so the bank
class deals in snapshots and rows, never in paths and bytes: this one names the files and defines their
checksums, :mod:`.bank_reading` opens and checks a version, :mod:`.bank_writing` writes the files of one
and :mod:`.bank_swap` makes it the bank.

A version is one directory: ``manifest.json``, ``embeddings.npy`` (memory-mapped), ``ids.json`` and
``metadata.jsonl`` (plain JSON / JSON Lines for users), their offset indexes ``ids.offsets.npy`` and
``metadata.offsets.npy`` (uint64, count + 1 entries: where each id's JSON string and each line starts,
then the end) and, for a large bank, :data:`BLOCKS`. The manifest keeps a whole-file sha256 of every file
(``checksums``, what older readers verify) and a sampled one (``sampled_checksums``: the size and 256
blocks of 4 KiB spread over the file), the embeddings checksum covering the .npy header and the rows
:func:`check_rows` picks. Beside the bank ``<name>`` a writer keeps its lock ``.<name>.lock``, its
temporary directories ``.<name>.tmp-...`` and, during a swap, the previous version ``.<name>.old``.

A bank reached through a symlink is the directory the link points to: every entry point resolves the
real path once (:func:`real_path`, logged as "bank <path> is <real path>"), so its lock, temp directories,
backup and swap are those of the real directory, every path to one bank shares one lock, and a write
through the link updates the real bank (the link stays a link).
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import InvalidValue
from .bank_errors import _REBUILD, BankError, _one_line

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
EMBEDDINGS = "embeddings.npy"
IDS = "ids.json"
METADATA = "metadata.jsonl"
IDS_INDEX = "ids.offsets.npy"  # uint64 (count + 1): where each id's JSON string starts in ids.json, then the "]"
METADATA_INDEX = "metadata.offsets.npy"  # uint64 (count + 1): where each line starts in metadata.jsonl, then its size
WRITER = ".writer.json"  # inside a temp directory: the process writing it
CHECKSUMS = "checksums"  # manifest key: {file name: "sha256:<hex>"}, embeddings.npy as "sha256-rows:<hex>"
SAMPLE_ROWS = 1_024  # rows of a large bank checked (norm, checksum) on every load
FULL_CHECK_BYTES = 32 << 20  # a bank whose matrix is at most this large has every row checked
SAMPLED_CHECKSUMS = "sampled_checksums"  # manifest key: {file name: "sha256-sampled:<hex>"}, see _sampled_digest
SAMPLED_BLOCKS = 256  # 4 KiB blocks of a large file read by its sampled checksum (1 MiB)
SAMPLED_BLOCK_BYTES = 4096
_NORM_TOLERANCE = 1e-3  # |norm - 1| allowed for a stored row (float32 rounding is ~1e-7)
BLOCKS = "embeddings.blocks.npy"  # uint32 (blocks,): the crc32 of each block of rows of embeddings.npy (large banks)
BLOCK_CHECKSUMS = "block_checksums"  # manifest key: {"file": BLOCKS, "rows_per_block": n, "algorithm": "crc32"}
BLOCK_BYTES = 1 << 20  # a checksummed block is this many bytes of rows (rounded down to whole rows, at least one)
_noted_links: set[tuple[str, str]] = set()  # (path, real path) already logged (one line per process)


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


def _backup_path(target: Path) -> Path:
    return target.parent / f".{target.name}.old"


def _tmp_prefix(target: Path) -> str:
    return f".{target.name}.tmp-"


def check_rows(count: int, dim: int) -> np.ndarray | None:
    """The rows every load checks and the embeddings checksum covers: None (all) for a small bank, else
    :data:`SAMPLE_ROWS` rows spread evenly from the first to the last (a function of the shape only)."""
    if count <= SAMPLE_ROWS or count * dim * 4 <= FULL_CHECK_BYTES:
        return None
    return np.unique(np.linspace(0, count - 1, SAMPLE_ROWS).round().astype(np.int64))


def rows_per_block(dim: int) -> int:
    """Rows in one checksummed block of a bank of dimension ``dim`` (:data:`BLOCK_BYTES` of rows)."""
    return max(1, BLOCK_BYTES // (dim * 4))


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
        raise InvalidValue(f"unsupported .npy version {version}")
    except Exception as exc:  # numpy raises ValueError, and tokenize/ast errors for some garbled headers
        if where is None:
            raise InvalidValue(_one_line(exc)) from exc
        raise BankError(f"{where}: not a readable .npy file ({_one_line(exc)}); {_REBUILD}") from exc


def _sha256(data: Any) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rows_digest(header: bytes, picked: np.ndarray) -> str:
    """The embeddings checksum: the .npy header and the checked rows (all rows of a small bank), so a
    load verifies it without reading the whole matrix."""
    digest = hashlib.sha256(header)
    digest.update(np.ascontiguousarray(picked, dtype="<f4").data)
    return "sha256-rows:" + digest.hexdigest()


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
