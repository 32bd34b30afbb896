"""A persisted, memory-mapped, exact-cosine vector store (experience memory bank, RAG chunk store).

Why exact search: at up to ~1M x 512 rows one BLAS matrix-vector product streams the whole matrix at
memory bandwidth (tens of milliseconds), which is fast enough and never loses a neighbour the way an
approximate index can. The bank is a plain directory::

    manifest.json    {"format_version": 1, "embedder": id, "dim", "count", "created", "updated", "checksums"}
    embeddings.npy   float32 (count, dim), rows L2-normalised, opened with mmap
    ids.json         list[str], unique, row order
    metadata.jsonl   one JSON object per row, row order
    ids.offsets.npy, metadata.offsets.npy   uint64 offset of each row in those two files (+ the end)

Opening reads none of them whole (see :mod:`.bank_reading`): ids and metadata are decoded per returned
row, so a 1M-row bank opens in milliseconds whatever its metadata holds. A large bank also holds
``embeddings.blocks.npy`` (a checksum per block of rows, verified on first touch); a row found damaged
(a failed block, a score no cosine can have) is never returned (:attr:`CosineBank.corrupt_rows`). A
bank reached through a symlink is read and written in the directory the link points to.

An optional approximate index (``ann.faiss``, ``ann.json``: :mod:`.bank_ann`) can sit beside the rows:
:meth:`CosineBank.build_ann` writes it, appends extend it, a replace or delete rebuilds it, and searches
use it on banks of :data:`~.bank_ann.ANN_MIN_ROWS` rows or more (or when asked: ``exact=False``).

This module is the bank's API: building, growing and reading; its searches and approximate index are in
:mod:`.bank_queries`, the checks of what a write is handed and the embedding of texts in
:mod:`.bank_input`. The files of a version are named in
:mod:`.bank_layout`, read and checked in :mod:`.bank_reading` (ids and metadata: :mod:`.bank_columns`;
rows checked on first touch: :mod:`.bank_row_guard`), written in :mod:`.bank_writing` and swapped in
atomically in :mod:`.bank_swap`; scoring and top-k selection are in :mod:`.bank_search`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, ClassVar

import numpy as np

from ..embedding.embedders import Embedder
from ..errors import InvalidValue, OutOfRange, UnknownKey
from .bank_ann import AnnIndex
from .bank_errors import BankError, BankRestored, BankWriteError
from .bank_input import Progress, _check_rows, _check_text_rows, _embed_into
from .bank_layout import EMBEDDINGS, real_path
from .bank_queries import BankQueries
from .bank_reading import Snapshot, load_snapshot, read_manifest
from .bank_search import Hit
from .bank_swap import remove_dead_writers_leftovers, write_new_bank, write_version, writer_lock
from .bank_writing import (
    copy_rows,
    metadata_lines,
    write_embeddings,
    write_ids_metadata_manifest,
    write_json,
    write_manifest,
    write_rows,
    write_spliced_rows,
)
from .read_on_first_use import deferred_calls

__all__ = ["BankError", "BankRows", "BankWriteError", "CosineBank", "ExperienceBank", "Hit", "SpliceReport"]

logger = logging.getLogger(__name__)

_WRITE_CHUNK = 65_536  # rows normalised/written at a time by from_vectors (bounds temporary memory)


class BankRows(tuple):
    """One batch of :meth:`CosineBank.iter_rows`: ``(ids, metadata, vectors)``; vectors is None unless asked."""

    __slots__ = ()

    def __new__(cls, ids: list[str], metadata: list[dict[str, Any]], vectors: np.ndarray | None) -> BankRows:
        return super().__new__(cls, (ids, metadata, vectors))

    @property
    def ids(self) -> list[str]:
        return self[0]

    @property
    def metadata(self) -> list[dict[str, Any]]:
        return self[1]

    @property
    def vectors(self) -> np.ndarray | None:
        return self[2]


class SpliceReport(tuple):
    """What :meth:`CosineBank.upsert_vectors` / :meth:`CosineBank.delete` changed: (added, replaced, deleted)."""

    __slots__ = ()

    def __new__(cls, added: int = 0, replaced: int = 0, deleted: int = 0) -> SpliceReport:
        return super().__new__(cls, (added, replaced, deleted))

    added = property(lambda self: self[0])
    replaced = property(lambda self: self[1])
    deleted = property(lambda self: self[2])


class CosineBank(BankQueries):
    """Exact cosine search over a persisted bank; see the module docstring for the directory layout.

    Build with :meth:`create` (texts + embedder) or :meth:`from_vectors` (precomputed vectors), open
    with :meth:`load`, grow with :meth:`append` / :meth:`append_vectors`. An instance always reads one
    immutable version; ``append`` moves this instance to the new version, other open instances keep
    theirs until :meth:`refresh`. Searches and the approximate index: :class:`~.bank_queries.BankQueries`.
    """

    # Extra JSON files written into every version for other tools to read: file name -> "id" (the ids
    # in row order) or a metadata key ({id: value} for rows that have it). The bank never reads them.
    views: ClassVar[dict[str, str]] = {}

    def __init__(self, snapshot: Snapshot, embedder: Embedder | None = None, directory: Path | None = None,
                 *, exact: bool | None = None) -> None:
        self._snap = snapshot
        self._directory = directory or snapshot.path
        self.embedder = embedder
        self._write_lock = threading.Lock()
        # How searches run unless a call says: True exact, False the ANN index, None (auto) the index when
        # the bank has one and at least ANN_MIN_ROWS rows.
        self.exact = exact
        self._ann: tuple[Snapshot, AnnIndex] | None = None  # the index read for one version, kept
        self._ann_failed: Snapshot | None = None  # the version whose index could not be read (searched exactly)
        self._ann_lock = threading.Lock()

    # -- construction ----------------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: str | Path,
        embedder: Embedder,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        batch_size: int = 256,
        progress: Progress = None,
        overwrite: bool = False,
    ) -> CosineBank:
        """Embed ``texts`` in batches and write a new bank (metadata defaults to ``{"text": text}``).

        An existing bank at ``directory`` is replaced atomically only with ``overwrite=True``. A bank that
        a writer killed between its two renames had moved aside counts as absent (so callers that check
        for ``manifest.json`` call this): it is restored and the rows are appended to it, in one run.
        """
        ids, texts, meta = _check_text_rows(ids, texts, metadata)
        target = Path(directory)
        dim = embedder.dim

        def write(tmp: Path) -> None:
            with write_embeddings(tmp, len(ids), dim) as f:
                _embed_into(f, embedder, texts, batch_size, progress, str(target))
            cls._write_views(tmp, ids, meta.__getitem__)
            write_ids_metadata_manifest(tmp, ids, None, metadata_lines(meta, 0), embedder_id=embedder.id, dim=dim)

        try:
            write_new_bank(target, write, overwrite)
        except BankRestored:
            return cls._add_to_restored(target, embedder, len(ids), lambda bank: bank.append(
                ids, texts, meta, batch_size=batch_size, progress=progress))
        logger.info("created bank %s: %d rows embedded with %s", target, len(ids), embedder.id)
        return cls.load(target, embedder)

    @classmethod
    def from_vectors(
        cls,
        directory: str | Path,
        vectors: np.ndarray,
        ids: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        embedder_id: str,
        embedder: Embedder | None = None,
        overwrite: bool = False,
    ) -> CosineBank:
        """Low-level constructor from precomputed (n, dim) vectors, normalised here; no embedding.

        ``embedder_id`` is recorded in the manifest; pass ``embedder`` too if the bank should be able
        to embed (``search_texts`` / ``append``).
        """
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] == 0:
            raise InvalidValue(f"vectors must have shape (n, dim), got {vectors.shape}")
        n, dim = vectors.shape
        ids, meta = _check_rows(ids, n, metadata, "vectors")
        if embedder is not None and (embedder.id != embedder_id or embedder.dim != dim):
            raise BankError(f"embedder {embedder.id!r} (dim {embedder.dim}) does not match {embedder_id!r} (dim {dim})")
        target = Path(directory)

        def write(tmp: Path) -> None:
            with write_embeddings(tmp, n, dim) as f:
                for start in range(0, n, _WRITE_CHUNK):
                    write_rows(f, vectors[start : start + _WRITE_CHUNK], dim, str(target))
            cls._write_views(tmp, ids, meta.__getitem__)
            write_ids_metadata_manifest(tmp, ids, None, metadata_lines(meta, 0), embedder_id=embedder_id, dim=dim)

        try:
            write_new_bank(target, write, overwrite)
        except BankRestored:
            return cls._add_to_restored(target, embedder, n, lambda bank: bank.append_vectors(ids, vectors, meta))
        return cls.load(target, embedder)

    @classmethod
    def _add_to_restored(
        cls, target: Path, embedder: Embedder | None, rows: int, add: Callable[[CosineBank], int]
    ) -> CosineBank:
        """The caller saw no bank only because a writer died between its two renames; the recovery put
        the bank back, so the new rows are added to it as by ``append`` (nothing existing is replaced)."""
        bank = cls.load(target, embedder)
        before = len(bank)
        added = add(bank)
        logger.warning("%s: restored the bank an interrupted write had moved aside (%d rows) and added %d new "
                       "rows to it (%d already present)", target, before, added, rows - added)
        return bank

    @classmethod
    def load(cls, directory: str | Path, embedder: Embedder | None = None, *, exact: bool | None = None) -> CosineBank:
        """Open and validate a bank; ``embedder`` (optional) must match the manifest's id and dim.

        ``exact`` sets how this instance searches (see :attr:`exact`); ``False`` needs an index
        (:meth:`build_ann`).
        """
        target = Path(directory)
        remove_dead_writers_leftovers(target)  # a writer killed before its swap left a full temp copy
        bank = cls(load_snapshot(target, embedder), embedder, target, exact=exact)
        if exact is False and not bank.has_ann:
            raise BankError(f"{target}: has no approximate index; build one with CosineBank.build_ann()")
        return bank

    def refresh(self) -> CosineBank:
        """Move this instance to the newest version on disk (e.g. after another process appended)."""
        self._snap = load_snapshot(real_path(self._directory), self.embedder)
        return self

    # -- growth ----------------------------------------------------------------------------------

    def append(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        metadata: Sequence[dict[str, Any]] | None = None,
        *,
        batch_size: int = 256,
        progress: Progress = None,
    ) -> int:
        """Embed and add the rows whose id is not in the bank yet; returns how many were added.

        Existing ids are skipped, not updated. Cost: embedding the new texts, an in-kernel copy of the
        old ``embeddings.npy``/``metadata.jsonl`` bytes (no re-read through Python, no re-embedding)
        and rewriting ``ids.json``.
        """
        embedder = self._require_embedder()
        ids, texts, meta = _check_text_rows(ids, texts, metadata)

        def new_rows(f: IO[bytes], keep: list[int]) -> None:
            _embed_into(f, embedder, [texts[i] for i in keep], batch_size, progress, str(self._directory))

        return self._append(ids, meta, new_rows)

    def append_vectors(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> int:
        """Like :meth:`append` with precomputed vectors (normalised here); returns how many were added."""
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InvalidValue(f"vectors must have shape (n, {self.dim}), got {vectors.shape}")
        ids, meta = _check_rows(ids, len(vectors), metadata, "vectors")

        def new_rows(f: IO[bytes], keep: list[int]) -> None:
            for start in range(0, len(keep), _WRITE_CHUNK):
                write_rows(f, vectors[keep[start : start + _WRITE_CHUNK]], self.dim, str(self._directory))

        return self._append(ids, meta, new_rows)

    def _append(
        self, ids: list[str], meta: list[dict[str, Any]], new_rows: Callable[[IO[bytes], list[int]], None]
    ) -> int:
        target = real_path(self._directory)  # once: the lock, the copy and the swap are all of one directory
        with self._write_lock, writer_lock(target):
            if read_manifest(target) != self._snap.manifest:  # another writer got there first: build on theirs
                self.refresh()
            snap = self._snap
            keep = [i for i, x in enumerate(ids) if x not in snap.ids]
            if not keep:
                return 0
            total = snap.count + len(keep)
            all_ids = snap.ids.tolist() + [ids[i] for i in keep]
            tail = metadata_lines([meta[i] for i in keep], snap.count)

            ann = self._ann_to_extend(snap) if self._has_ann(snap) else None

            def write(tmp: Path) -> None:
                with write_embeddings(tmp, total, snap.dim) as f:
                    if snap.count:  # target holds exactly this snapshot's version (checked above)
                        copy_rows(target, f, snap.count, snap.dim)
                    new_rows(f, keep)
                if ann is not None:  # the new rows join the graph; the old version's file stays as it was
                    ann.add(np.load(tmp / EMBEDDINGS, mmap_mode="r")[snap.count :])
                    ann.write(tmp)
                added = [meta[i] for i in keep]
                type(self)._write_views(tmp, all_ids,
                                        lambda r: snap.metadata(r) if r < snap.count else added[r - snap.count])
                write_ids_metadata_manifest(
                    tmp, all_ids, snap.lines, tail, embedder_id=snap.manifest["embedder"], dim=snap.dim,
                    created=snap.manifest.get("created"), kept=(snap, snap.count),
                )

            write_version(target, write)
            self._snap = load_snapshot(target)
            if ann is not None:
                ann.share(self._snap.matrix)  # faiss' copy of the rows is dropped for the new version's
                self._ann = (self._snap, ann)
        logger.info("appended %d rows to %s (%d skipped as present)", len(keep), target, len(ids) - len(keep))
        return len(keep)

    # -- replacing and deleting rows ----------------------------------------------------------------

    def upsert_vectors(
        self, ids: Sequence[str], vectors: np.ndarray, metadata: Sequence[dict[str, Any]] | None = None
    ) -> SpliceReport:
        """Replace the rows of ids already in the bank (in place: same row) and append the others.

        Unlike :meth:`append_vectors`, a present id is overwritten (vector and metadata), even when
        unchanged: callers that want idempotent writes compare first (the numpy store does). The new
        version is written as :meth:`delete` describes, in one atomic swap.
        """
        vectors = np.asarray(vectors)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise InvalidValue(f"vectors must have shape (n, {self.dim}), got {vectors.shape}")
        ids, meta = _check_rows(ids, len(vectors), metadata, "vectors")
        return self._splice(ids, vectors, meta, [])

    def delete(self, ids: Sequence[str]) -> int:
        """Remove the rows with these ids (unknown ids are ignored); returns how many were removed.

        Rows after a removed one move up (row numbers are not stable across versions; ids are). The new
        version is written atomically like an append, and readers holding the old one keep it. Cost: the
        kept rows are copied as bytes (embeddings and metadata lines, in-kernel with ``copy_file_range``
        where the filesystem allows; nothing is decoded or re-embedded), ``ids.json`` is re-encoded and
        every file is checksummed: O(n) bytes per call whatever the number of rows changed, so batch
        changes into few calls (1M x 512 rows: about 2 GB written).
        """
        drop = [x for x in dict.fromkeys(ids) if isinstance(x, str)]
        return self._splice([], np.zeros((0, self.dim), np.float32), [], drop).deleted

    def _splice(self, ids: list[str], vectors: np.ndarray, meta: list[dict[str, Any]],
                drop_ids: list[str]) -> SpliceReport:
        target = real_path(self._directory)  # once: the lock, the copy and the swap are all of one directory
        with self._write_lock, writer_lock(target):
            if read_manifest(target) != self._snap.manifest:  # another writer got there first: build on theirs
                self.refresh()
            snap = self._snap
            replace: dict[int, int] = {}
            append: list[int] = []
            for i, x in enumerate(ids):
                row = snap.ids.row_of(x)
                if row is None:
                    append.append(i)
                else:
                    replace[row] = i
            drop = {row for x in drop_ids if (row := snap.ids.row_of(x)) is not None}
            if not (replace or append or drop):
                return SpliceReport()
            pieces: list[range | list[int]] = []
            previous = 0
            for row in sorted(set(replace) | drop):
                if row > previous:
                    pieces.append(range(previous, row))
                if row in replace:
                    if pieces and isinstance(pieces[-1], list) and previous == row:
                        pieces[-1].append(replace[row])  # consecutive replaced rows: one write
                    else:
                        pieces.append([replace[row]])
                previous = row + 1
            if previous < snap.count:
                pieces.append(range(previous, snap.count))
            if append:
                pieces.append(list(append))
            old_ids = snap.ids.tolist()
            out_ids: list[str] = []
            for piece in pieces:
                out_ids.extend(old_ids[piece.start : piece.stop] if isinstance(piece, range)
                               else [ids[i] for i in piece])
            changed = {ids[i]: meta[i] for i in (*replace.values(), *append)}
            removed = {old_ids[row] for row in drop}

            had_ann = self._has_ann(snap)
            # Rows after the first change move, so their blocks get new checksums: first make sure the old
            # rows copied there are intact (a damaged block would otherwise be carried over as if sound).
            same = pieces[0].stop if isinstance(pieces[0], range) and pieces[0].start == 0 else 0
            if any(isinstance(piece, range) and len(piece) and (i or piece.start) for i, piece in enumerate(pieces)):
                _refuse_damaged(snap)

            def write(tmp: Path) -> None:
                write_spliced_rows(tmp, target, snap, pieces, vectors, meta, out_ids, str(target))
                type(self)._patch_views(tmp, snap, out_ids, changed, removed)
                if had_ann:  # rows moved or changed: the graph is rebuilt (HNSW cannot remove a row)
                    old = self._ann_of_version(snap)
                    AnnIndex.build(np.load(tmp / EMBEDDINGS, mmap_mode="r"), old.m, old.ef_construction).write(tmp)
                write_manifest(tmp, len(out_ids), embedder_id=snap.manifest["embedder"], dim=snap.dim,
                               created=snap.manifest.get("created"), kept=(snap, same))

            write_version(target, write)
            self._snap = load_snapshot(target)
        logger.info("%s: %d rows added, %d replaced, %d deleted", target, len(append), len(replace), len(drop))
        return SpliceReport(len(append), len(replace), len(drop))

    @classmethod
    def _patch_views(cls, directory: Path, snap: Snapshot, ids: list[str], changed: dict[str, dict[str, Any]],
                     removed: set[str]) -> None:
        """The views of a spliced version: the previous version's view files with the changed rows patched
        in (no per-row metadata decoding), or built from every row's metadata when a view file is missing."""
        for name, key in cls.views.items():
            if key == "id":
                write_json(directory / name, ids)
                continue
            try:
                old = json.loads((snap.path / name).read_bytes())
            except (OSError, ValueError):
                old = None
            if not isinstance(old, dict):
                old = {x: value for r, x in enumerate(snap.ids.tolist())
                       if (value := snap.metadata(r).get(key)) is not None}
            values = {x: v for x, v in old.items() if x not in removed and x not in changed}
            values.update({x: m[key] for x, m in changed.items() if m.get(key) is not None})
            write_json(directory / name, {x: values[x] for x in ids if x in values})

    # -- reading every row ------------------------------------------------------------------------

    def iter_rows(self, batch_size: int = 1000, *, with_vectors: bool = False) -> Iterator[BankRows]:
        """Every row in row order, ``batch_size`` at a time, all from the version current at the call
        (an append or splice meanwhile does not show). Metadata is decoded one batch per ``json.loads``;
        vectors (when asked) are copies of the memory-mapped rows."""
        if batch_size <= 0:
            raise InvalidValue(f"batch_size must be positive, got {batch_size}")
        snap = self._snap
        ids = snap.ids.tolist() if snap.count else []
        for start in range(0, snap.count, batch_size):
            stop = min(start + batch_size, snap.count)
            vectors = np.array(snap.matrix[start:stop], dtype=np.float32) if with_vectors else None
            yield BankRows(ids[start:stop], snap.lines.decode_range(start, stop), vectors)

    @classmethod
    def _write_views(cls, directory: Path, ids: list[str], metadata_of: Callable[[int], dict[str, Any]]) -> None:
        for name, key in cls.views.items():
            if key == "id":
                write_json(directory / name, ids)
                continue
            rows = ((x, metadata_of(r).get(key)) for r, x in enumerate(ids))
            write_json(directory / name, {x: value for x, value in rows if value is not None})

    def _require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise BankError(f"{self._directory}: bank was loaded without an embedder; pass one to CosineBank.load")
        return self.embedder

    # -- access ----------------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        return self._directory

    @property
    def manifest(self) -> dict[str, Any]:
        return dict(self._snap.manifest)

    @property
    def embedder_id(self) -> str:
        return str(self._snap.manifest["embedder"])

    @property
    def dim(self) -> int:
        return self._snap.dim

    @property
    def ids(self) -> list[str]:
        return self._snap.ids.tolist()

    @property
    def vectors(self) -> np.ndarray:
        """The (count, dim) read-only, memory-mapped matrix."""
        return self._snap.matrix

    def row_of(self, id: str) -> int:
        """The row of ``id`` (the first call on a large bank builds the id lookup: one parse of ids.json)."""
        row = self._snap.ids.row_of(id)
        if row is None:
            raise UnknownKey(f"{id!r} is not in bank {self._directory}")
        return row

    def id_at(self, row: int) -> str:
        """The id of row ``row`` (decoded alone; no full read of ``ids.json``)."""
        snap = self._snap
        if not 0 <= row < snap.count:
            raise OutOfRange(f"row {row} out of range for a bank of {snap.count}")
        return snap.ids[row]

    def metadata(self, row: int) -> dict[str, Any]:
        snap = self._snap
        if not 0 <= row < snap.count:
            raise OutOfRange(f"row {row} out of range for a bank of {snap.count}")
        return snap.metadata(row)

    def metadata_reader(self, rows: Sequence[int]) -> Callable[[int], dict[str, Any]]:
        """A call decoding a row's metadata from this version of the bank, for ``rows`` read later (a search's
        caller may need only ids and scores): the rows are checked now, each line when it is decoded (a
        damaged one raises then, as :meth:`metadata` does)."""
        snap = self._snap
        if len(rows) and not 0 <= min(rows) <= max(rows) < snap.count:
            raise OutOfRange(f"rows {min(rows)}..{max(rows)} out of range for a bank of {snap.count}")
        return snap.lines.decode

    def metadata_readers(self, rows: Sequence[int]) -> list[Callable[[], dict[str, Any]]]:
        """Per row, a call that decodes its metadata from this version of the bank when made (a search's
        caller may need only ids and scores; a chunk's text is the bulk of what decoding costs). The rows
        are checked now, each line when it is decoded (a damaged one raises then, as :meth:`metadata` does)."""
        snap = self._snap
        if len(rows) and not 0 <= min(rows) <= max(rows) < snap.count:
            raise OutOfRange(f"rows {min(rows)}..{max(rows)} out of range for a bank of {snap.count}")
        return deferred_calls(snap.lines.decode, rows)

    @property
    def corrupt_rows(self) -> dict[int, str]:
        """Rows of this version left out of search results because they were found damaged (a block that
        failed its checksum, a score impossible for a cosine), with why; found so far in this process."""
        guard = self._snap.guard
        return guard.corrupt_rows if guard is not None else {}

    def __len__(self) -> int:
        return self._snap.count

    def __contains__(self, id: object) -> bool:
        return id in self._snap.ids

    def __deepcopy__(self, memo: dict) -> CosineBank:
        return self

    def __repr__(self) -> str:
        return f"CosineBank({str(self._directory)!r}, count={len(self)}, dim={self.dim}, embedder={self.embedder_id!r})"


def _refuse_damaged(snap: Snapshot) -> None:
    """Raise when a block of ``snap``'s rows failed its checksum (verifying every block not verified yet):
    a change that moves rows would give the damaged rows fresh checksums in the new version."""
    guard = snap.guard
    if guard is None:
        return
    guard.verify_all()
    failed = guard.failed_blocks
    if failed:
        shown = ", ".join(str(b) for b in failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
        raise BankError(f"{guard.where}: block{'s' if len(failed) > 1 else ''} {shown} of its rows failed the "
                        "checksum recorded when written (damaged since); this change would carry the damage into the "
                        "new version: rebuild the bank")


class ExperienceBank(CosineBank):
    """A CosineBank of solved traces (built by ``tracerag.memory.experience_bank``), which also writes the
    ``task_ids.json`` / ``captions.json`` views; here so a store reopening such a directory keeps them."""

    views = {"task_ids.json": "id", "captions.json": "caption"}
