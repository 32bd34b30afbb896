"""The ids and metadata of one bank version, decoded a row at a time: ``ids.json`` and ``metadata.jsonl``
read whole, or memory-mapped and reached through their offset indexes.

Opening is O(1) in the bank's size: ``ids.json`` and ``metadata.jsonl`` keep their plain JSON / JSON Lines
form for users, and their offset indexes (``ids.offsets.npy``, ``metadata.offsets.npy``) are
memory-mapped too. An id or a metadata line is decoded when a caller asks for that row (a search decodes
only the rows it returns) and is then checked to sit exactly where its index says (one JSON string; one
line); the id -> row lookup (``in``, ``row_of``) is built on first use. At open, without reading either
file whole, both indexes are checked to span their files and the id and line of :data:`LINE_SAMPLE_ROWS`
sampled rows to be where the indexes say (:func:`_check_row_sample`). Small banks (ids and metadata within
:data:`~.bank_reading.WHOLE_READ_BYTES`) and banks written before the indexes existed are read whole
(:func:`_read_whole`); the next append writes the indexes.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import OutOfRange
from .bank_errors import BankError
from .bank_layout import IDS, IDS_INDEX, MANIFEST, METADATA, METADATA_INDEX, _read_npy_header, _sha256

LINE_SAMPLE_ROWS = 64  # rows of a large bank whose id and metadata line are checked against the indexes at open


class IdColumn:
    """The ids of one version in row order: a list, or decoded one row at a time from the bytes of
    ``ids.json`` through its offset index; the id -> row lookup is built on first use, not at open."""

    def __init__(self, where: Path, count: int, ids: list[str] | None = None, buffer: Any = None,
                 starts: np.ndarray | None = None, index_where: Path | None = None) -> None:
        self._where, self._count, self._list = where, count, ids
        self._buffer, self._starts, self._index_where = buffer, starts, index_where
        self._bounds = _row_bounds(starts)
        self._rows: dict[str, int] | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, row: int) -> str:
        if self._list is not None:
            return self._list[row]
        if not 0 <= row < self._count:
            raise OutOfRange(f"row {row} out of range for {self._count} ids")
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
        buffer, bounds = self._buffer, self._bounds
        raw = [buffer[bounds[r] : bounds[r + 1]].rstrip(b", ") for r in rows]
        try:
            ids = json.loads((b"[" + b",".join(raw) + b"]").decode("utf-8", "surrogatepass")) \
                if all(x[:1] == b'"' for x in raw) else None  # decoded as json.loads would (it first guesses how)
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
        self._bounds = _row_bounds(starts)

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
        buffer, bounds = self.buffer, self._bounds
        lines = [buffer[bounds[r] : bounds[r + 1]] for r in rows]
        joined = b"".join(lines)
        values = None
        # Each entry is exactly one line when every one ends with a newline and there are no others.
        if joined.count(b"\n") == len(lines) and all(line[-1:] == b"\n" for line in lines):
            try:
                values = json.loads((b"[" + joined[:-1].replace(b"\n", b",") + b"]").decode("utf-8", "surrogatepass"))
            except ValueError:
                pass
        if isinstance(values, list) and len(values) == len(rows) and all(type(v) is dict for v in values):
            return values
        return [self.decode(r) for r in rows]  # names the line that is wrong

    def decode_later(self, rows: Sequence[int]) -> list[partial[dict[str, Any]]]:
        """Per row, a call giving its metadata (a fresh dict per entry): the first call decodes every row's
        line in one parse (:meth:`decode_rows`), for the hits of one search read after it (see
        :class:`~.bank_search.Hit`). A damaged line raises for its own rows only."""
        value = _DecodedTogether(self, rows).value
        return [partial(value, i) for i in range(len(rows))]

    def decode(self, row: int) -> dict[str, Any]:
        raw = self.line(row)[:-1]
        try:
            value = json.loads(raw.decode("utf-8"))
        except ValueError:
            value = None
        if not isinstance(value, dict):  # rare: build the message (and re-raise with details) only now
            return _json_object(raw, f"{self.where}: line {row + 1} is")
        return value


def _row_bounds(starts: Any) -> Any:
    """The offsets ``starts`` read one at a time as Python ints: an array's memoryview (no copy), which reads
    the dozen offsets of a search's hits without numpy's cost per call (fancy indexing, ``tolist``); offsets
    read from a file (the checks at open) already are."""
    return memoryview(np.ascontiguousarray(starts)) if isinstance(starts, np.ndarray) else starts


class _DecodedTogether:
    """The metadata of some rows, decoded in one parse when the first of them is asked for."""

    __slots__ = ("_lines", "_rows", "_values")

    def __init__(self, lines: MetadataLines, rows: Sequence[int]) -> None:
        self._lines, self._rows = lines, rows
        self._values: list[dict[str, Any]] | None = None

    def value(self, i: int) -> dict[str, Any]:
        """The metadata of ``rows[i]`` (each entry is handed out once: a hit keeps it)."""
        values = self._values
        if values is None:
            try:
                values = self._values = self._lines.decode_rows(self._rows)
            except BankError:  # a damaged line: the others still read, the damaged one raises naming itself
                return self._lines.decode(self._rows[i])
        return values[i]


def _json_object(raw: bytes, where: str) -> dict[str, Any]:
    """Decode one JSON object, or raise BankError naming where it came from ("file:" or "file: line 3 is")."""
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BankError(f"{where} not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise BankError(f"{where} a {type(value).__name__}, not a JSON object")
    return value


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
