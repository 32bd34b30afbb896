"""Opening one version of a numpy bank, consistently while writers swap new ones in, and checking it.

Every version is written into a fresh directory and swapped in with renames, never modified once visible
(:mod:`.bank_swap`). Readers read all files of one load through one directory handle, so a concurrent swap
cannot mix files from two versions (a load that races a swap is retried; the backup of a writer killed
between its renames is read), and banks that are already open keep their (unlinked) memory map. Readers
never wait for the writer lock.

Integrity at open, without reading any file whole: the manifest; the .npy and index headers against the
manifest's count and the files' sizes; the norms of :data:`~.bank_layout.SAMPLE_ROWS` sampled rows; that
both indexes span their files and the id and line of sampled rows (:mod:`.bank_columns`); and the
checksums. For files larger than :data:`WHOLE_READ_BYTES`, open verifies the sampled checksum instead of
the whole-file one, the embeddings checksum likewise covering its header and the sampled rows. So a
truncated, padded or rewritten file is caught at open and an edit inside one row may only be caught when
that row is decoded (the documented limit, as for rows of the matrix outside the sample, which
:mod:`.bank_row_guard` checks on first touch). Sampled rows are read with pread, not through the maps, so
the open does not fault page-cache folios into the process. Small banks (ids and metadata within
:data:`WHOLE_READ_BYTES`) and banks written before the indexes existed are read whole and verified whole.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..data_files.read_report import open_regular, regular_file
from ..embedding.embedders import Embedder
from .bank_columns import IdColumn, MetadataLines, _check_row_sample, _json_object, _map_rows, _read_whole
from .bank_errors import _REBUILD, BankError
from .bank_layout import (
    _NORM_TOLERANCE,
    BLOCK_CHECKSUMS,
    BLOCKS,
    CHECKSUMS,
    EMBEDDINGS,
    FORMAT_VERSION,
    IDS,
    IDS_INDEX,
    MANIFEST,
    METADATA,
    METADATA_INDEX,
    SAMPLED_CHECKSUMS,
    WRITER,
    _backup_path,
    _read_npy_header,
    _rows_digest,
    _sampled_digest,
    _sha256,
    check_rows,
    real_path,
)
from .bank_row_guard import RowGuard, _row_guard

logger = logging.getLogger(__name__)

_LOAD_ATTEMPTS = 20  # a load that races a writer's swap retries (10 ms apart)
WHOLE_READ_BYTES = 1 << 20  # ids.json + metadata.jsonl up to this size are read (and verified) whole at open
_noted_unverified: set[str] = set()  # banks already reported as carrying no checksums (one note per process)


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


def _npy_shape(f: IO[bytes], where: Path) -> tuple[int, int]:
    shape, _, _ = _read_npy_header(f, where)
    f.seek(0)
    if len(shape) != 2:
        raise BankError(f"{where}: expected a matrix, got shape {shape}")
    return int(shape[0]), int(shape[1])


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
