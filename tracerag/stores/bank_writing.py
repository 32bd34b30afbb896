"""Writing the files of one numpy bank version into the temporary directory that
:func:`~.bank_swap.write_version` hands out: the rows, ids, metadata and their offset indexes, the views,
the block checksums of a large bank and, last, the manifest recording every file's checksums.

An append copies the old version's row and metadata bytes as they are (in-kernel with
``copy_file_range`` where the filesystem allows) and encodes only the new rows; a splice
(:func:`write_spliced_rows`) does the same for the runs of rows it keeps. Every file is fsynced, and an
OSError is tagged with the file it was writing, so a failed write is one line naming it
(:mod:`.bank_errors`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import mmap
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..embedding.embedders import l2_normalize
from ..errors import InvalidValue
from .bank_columns import MetadataLines
from .bank_errors import BankError, _writing
from .bank_layout import (
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
    _read_npy_header,
    _rows_digest,
    _sampled_digest,
    _sha256,
    check_rows,
    rows_per_block,
)
from .bank_reading import Snapshot, _map_npy, _npy_shape
from .bank_row_guard import _block_crcs

_UNIT_TOLERANCE = 1e-4  # rows written whose |norm - 1| is within this are stored as given, not renormalised


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
            raise InvalidValue(f"metadata for row {first_row + i} is not JSON-serialisable: {exc}") from exc
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


def _sampled_checksums(directory: Path) -> dict[str, str]:
    """Sampled checksums of the files written into ``directory`` so far, but the manifest and embeddings."""
    out = {}
    for path in sorted(directory.iterdir()):
        if path.name not in (MANIFEST, WRITER, EMBEDDINGS):
            with open(path, "rb") as f:
                out[path.name] = _sampled_digest(f)
    return out


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
